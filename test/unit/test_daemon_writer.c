/*
 * numaplaced's writer thread: files are written durably off the
 * loop and handed back in order; a step_end waits for its report while a registration is answered
 * at once; a kill -9 at any point of a report's write loses no finished report; a registry.json
 * written meanwhile keeps the journal's newer lines. Writes are held back through the writer's
 * test hook (a pipe: one byte lets one write go), never by timing.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "np_daemon_test.h"
#include "ops.h"
#include "writer.h"

/* One byte in the pipe lets one write go. */
static void gate_hook(void *arg, const struct writer_job *job)
{
    const int *fds = arg;
    char c;

    (void)job;
    while (read(fds[0], &c, 1) < 0 && errno == EINTR)
        ;
}

static void gate_open(const int *gate, unsigned writes)
{
    for (unsigned i = 0; i < writes; i++)
        ck_assert_int_eq(write(gate[1], "x", 1), 1);
}

/* Wait until the writer says something is done (a guard against a hang, not a time limit). */
static void wait_done(struct writer *w)
{
    struct pollfd p = {.fd = writer_fd(w), .events = POLLIN};

    ck_assert_int_eq(poll(&p, 1, 30000), 1);
}

/* Collect until @p n completions ran. */
static void collect(struct writer *w, void *ctx, unsigned n)
{
    unsigned got = 0;

    while (got < n) {
        wait_done(w);
        got += writer_collect(w, ctx);
    }
    ck_assert_uint_eq(got, n);
}

static char *read_file(const char *path)
{
    static char buf[16384];
    FILE *f = fopen(path, "r");
    size_t n;

    if (!f)
        return NULL;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* --- the writer alone ------------------------------------------------------------------------ */

struct outcome {
    unsigned runs;
    int rc;
    char order[16];
};

static void record(void *ctx, struct writer_job *job)
{
    struct outcome *o = ctx;
    const size_t len = strlen(o->order);

    o->rc = job->rc;
    if (len + 1 < sizeof(o->order))
        o->order[len] = job->name[0];
    o->runs++;
}

enum dir_kind { DIR_TRUSTED, DIR_MISSING, DIR_GROUP_WRITABLE };
static const struct {
    const char *name;
    enum dir_kind dir;
    int rc; /* what the completion is told */
} write_cases[] = {
    {"a trusted directory: written whole", DIR_TRUSTED, 0},
    {"no such directory: the error, nothing written", DIR_MISSING, -ENOENT},
    {"a directory others may write: refused, nothing written", DIR_GROUP_WRITABLE, -EPERM},
};

START_TEST(test_write_outcome)
{
    char top[] = "/tmp/np-writer-test.XXXXXX", dir[64], path[128];
    struct outcome o = {0};
    struct writer *w;
    char *text = strdup("{\"a\": 1}\n");

    ck_assert_ptr_nonnull(mkdtemp(top));
    snprintf(dir, sizeof(dir), "%s/d", top);
    if (write_cases[_i].dir != DIR_MISSING)
        ck_assert_int_eq(mkdir(dir, 0755), 0);
    if (write_cases[_i].dir == DIR_GROUP_WRITABLE)
        ck_assert_int_eq(chmod(dir, 0775), 0);
    ck_assert_int_eq(writer_start(&w), 0);
    writer_submit(w,
                  writer_job_new(dir, "r.json", text, strlen(text), (uid_t)-1, 0600, record, NULL));
    ck_assert_uint_eq(writer_pending(w), 1);
    collect(w, &o, 1);
    ck_assert_uint_eq(writer_pending(w), 0);
    ck_assert_msg(o.rc == write_cases[_i].rc, "%s: rc %d", write_cases[_i].name, o.rc);
    snprintf(path, sizeof(path), "%s/r.json", dir);
    if (write_cases[_i].rc == 0)
        ck_assert_str_eq(read_file(path), "{\"a\": 1}\n");
    else
        ck_assert_int_ne(access(path, F_OK), 0);
    writer_free(w);
    if (write_cases[_i].dir != DIR_MISSING) {
        chmod(dir, 0755);
        unlink(path);
        rmdir(dir);
    }
    rmdir(top);
}
END_TEST

/* Completions come in submission order; a stop writes everything still queued. */
START_TEST(test_order_and_stop_drains)
{
    char dir[] = "/tmp/np-writer-test.XXXXXX", path[128];
    const char *names = "abcde";
    struct outcome o = {0};
    struct writer *w;
    int gate[2];

    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(chmod(dir, 0755), 0);
    ck_assert_int_eq(pipe(gate), 0);
    ck_assert_int_eq(writer_start(&w), 0);
    writer_set_hook(w, gate_hook, gate);
    for (const char *n = names; *n; n++) {
        char name[8] = {*n, '\0'};
        writer_submit(w, writer_job_new(dir, name, strdup(name), 1, (uid_t)-1, 0600, record, NULL));
    }
    ck_assert_uint_eq(writer_pending(w), 5);
    gate_open(gate, 5);
    writer_stop(w); /* returns once the queue is written */
    for (const char *n = names; *n; n++) {
        snprintf(path, sizeof(path), "%s/%c", dir, *n);
        ck_assert_msg(access(path, F_OK) == 0, "%s not written at stop", path);
    }
    ck_assert_uint_eq(writer_collect(w, &o), 5);
    ck_assert_str_eq(o.order, names);
    writer_free(w);
    for (const char *n = names; *n; n++) {
        snprintf(path, sizeof(path), "%s/%c", dir, *n);
        unlink(path);
    }
    rmdir(dir);
    close(gate[0]);
    close(gate[1]);
}
END_TEST

/* --- the daemon with its writer -------------------------------------------------------------- */

static struct np_test_daemon t;
static int daemon_gate[2];

static void daemon_setup(void)
{
    np_test_daemon_init(&t);
    ck_assert_int_eq(pipe(daemon_gate), 0);
    ck_assert_int_eq(writer_start(&t.d->writer), 0);
    writer_set_hook(t.d->writer, gate_hook, daemon_gate);
}

static void daemon_teardown(void)
{
    gate_open(daemon_gate, 64); /* whatever is still queued may go */
    np_test_daemon_fini(&t);
    close(daemon_gate[0]);
    close(daemon_gate[1]);
}

/* A root client slot (slurmstepd) on one end of a socketpair; the other end is returned. */
static int connect_root(struct np_daemon_client *c)
{
    int sv[2];

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    *c = (struct np_daemon_client){.fd = sv[0], .cred = np_test_peer(1, 0, 0)};
    return sv[1];
}

/* Send @p line as the client's request and let the daemon read it. */
static void request(struct np_daemon_client *c, int peer, const char *line)
{
    ck_assert_int_eq(write(peer, line, strlen(line)), (ssize_t)strlen(line));
    server_read(t.d, c);
}

/* The reply the client has received so far ("" when none yet). */
static const char *reply_of(int peer)
{
    static char buf[4096];
    const ssize_t n = recv(peer, buf, sizeof(buf) - 1, MSG_DONTWAIT);

    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static void register_step(uint32_t job)
{
    char line[256];
    struct np_daemon_client *c = &t.d->clients[0];
    int peer = connect_root(c);

    snprintf(line, sizeof(line),
             "{\"v\":1,\"op\":\"register\",\"job\":%u,\"step\":0,\"uid\":%u,\"pid\":%d,"
             "\"sensitivity\":\"low\",\"cpus\":\"0\"}\n",
             job, (unsigned)getuid(), NP_TEST_LIVE_PID);
    request(c, peer, line);
    ck_assert_ptr_nonnull(strstr(reply_of(peer), "\"ok\":true"));
    close(peer);
}

/* The outcome the churn benchmark measures as a time: a registration that arrives while a report
 * is being flushed is answered before that step_end is. */
START_TEST(test_register_answered_while_report_is_written)
{
    struct np_daemon_client *ending = &t.d->clients[1], *arriving = &t.d->clients[2];
    int ending_peer, arriving_peer;

    register_step(60);
    ending_peer = connect_root(ending);
    request(ending, ending_peer, "{\"v\":1,\"op\":\"step_end\",\"job\":60,\"step\":0}\n");
    /* its report is with the writer, held back: no reply yet, the step still known */
    ck_assert_str_eq(reply_of(ending_peer), "");
    ck_assert_int_ge(ending->fd, 0);
    ck_assert_ptr_nonnull(registry_find(&t.d->registry, 60, 0));
    ck_assert(!np_test_report_exists(&t, "60.0"));
    /* a new step registers meanwhile, and hears back at once */
    arriving_peer = connect_root(arriving);
    request(arriving, arriving_peer,
            "{\"v\":1,\"op\":\"register\",\"job\":61,\"step\":0,\"uid\":0,\"pid\":300,"
            "\"sensitivity\":\"low\",\"cpus\":\"0\"}\n");
    ck_assert_ptr_nonnull(strstr(reply_of(arriving_peer), "\"ok\":true"));
    ck_assert_str_eq(reply_of(ending_peer), "");
    /* the waiting client sends more: dropped, its step_end is not handled a second time */
    request(ending, ending_peer, "{\"v\":1,\"op\":\"step_end\",\"job\":60,\"step\":0}\n");
    ck_assert_str_eq(reply_of(ending_peer), "");
    ck_assert_int_ge(ending->fd, 0);
    /* the report reaches the disk: then, and only then, step_end is answered */
    gate_open(daemon_gate, 1);
    collect(t.d->writer, t.d, 1);
    ck_assert(np_test_report_exists(&t, "60.0"));
    ck_assert_ptr_nonnull(strstr(reply_of(ending_peer), "\"ok\":true"));
    ck_assert_ptr_null(registry_find(&t.d->registry, 60, 0));
    close(ending_peer);
    close(arriving_peer);
}
END_TEST

/* The tick found the step's processes gone and ended it before slurmstepd's step_end came: that
 * step_end waits for the same report, as if it had come first, and is answered once it is on
 * disk (it used to be refused as "ended already", answered before the report was durable). */
START_TEST(test_step_end_after_the_tick_ended_it)
{
    struct np_daemon_client *ending = &t.d->clients[1];
    struct np_daemon_job *j;
    int peer;

    register_step(66);
    j = registry_find(&t.d->registry, 66, 0);
    ck_assert_ptr_nonnull(j);
    j->ended = true;
    job_finish(t.d, j, true); /* as sampling_tick does */
    ck_assert_ptr_nonnull(j = registry_find(&t.d->registry, 66, 0));
    ck_assert(j->finishing);
    peer = connect_root(ending);
    request(ending, peer, "{\"v\":1,\"op\":\"step_end\",\"job\":66,\"step\":0}\n");
    ck_assert_str_eq(reply_of(peer), "");
    gate_open(daemon_gate, 1);
    collect(t.d->writer, t.d, 1);
    ck_assert(np_test_report_exists(&t, "66.0"));
    ck_assert_ptr_nonnull(strstr(reply_of(peer), "\"ok\":true"));
    close(peer);
}
END_TEST

/* Whether status shows job @p job's step 0 as "ending" (true) or running (false); -1: absent. */
static int status_ending(uint32_t job)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    json_t *reply = op_status(t.d, &root, job);
    json_t *step = json_array_get(json_object_get(reply, "jobs"), 0);
    const int ending = step ? json_is_true(json_object_get(step, "ending")) : -1;

    json_decref(reply);
    return ending;
}

/* The plugin's step_end ("wait_report": false) is answered at once, its report still with the
 * writer; status shows the step "ending" until the report is on disk, then not at all. */
START_TEST(test_step_end_answered_at_the_end)
{
    struct np_daemon_client *ending = &t.d->clients[1];
    int peer;

    register_step(68);
    ck_assert_int_eq(status_ending(68), 0);
    peer = connect_root(ending);
    request(ending, peer,
            "{\"v\":1,\"op\":\"step_end\",\"job\":68,\"step\":0,\"wait_report\":false}\n");
    ck_assert_ptr_nonnull(strstr(reply_of(peer), "\"ok\":true"));
    ck_assert(!np_test_report_exists(&t, "68.0"));
    ck_assert_int_eq(status_ending(68), 1);
    close(peer);
    /* a second one (slurmstepd retrying) is answered the same */
    peer = connect_root(&t.d->clients[2]);
    request(&t.d->clients[2], peer,
            "{\"v\":1,\"op\":\"step_end\",\"job\":68,\"step\":0,\"wait_report\":false}\n");
    ck_assert_ptr_nonnull(strstr(reply_of(peer), "\"ok\":true"));
    gate_open(daemon_gate, 1);
    collect(t.d->writer, t.d, 1);
    ck_assert(np_test_report_exists(&t, "68.0"));
    ck_assert_int_eq(status_ending(68), -1);
    close(peer);
}
END_TEST

/* slurmstepd tells srun before it sends step_end: a step whose tasks are all gone is listed
 * "ending" already, so `numaplace report` right after srun waits for its report. */
START_TEST(test_status_ending_once_the_tasks_are_gone)
{
    struct np_daemon_job *j;

    register_step(69);
    ck_assert_int_eq(status_ending(69), 0);
    j = registry_find(&t.d->registry, 69, 0);
    ck_assert_ptr_nonnull(j);
    /* its one task reaped: no such process in the fixture's /proc */
    json_object_set_new(json_array_get(j->tasks, 0), "pid", json_integer(999999));
    ck_assert_int_eq(status_ending(69), 1);
}
END_TEST

/* numaplaced stops while a report is with the writer and the journal has passed its bound: the
 * save that the report's completion starts is written at once (it was queued to the stopped
 * writer and dropped, and with it the final save at stop). */
START_TEST(test_stop_saves_what_completions_start)
{
    struct np_daemon_client *ending = &t.d->clients[1];
    const unsigned long saves = t.d->registry.saves;
    char path[4200];
    int peer;

    register_step(67);
    peer = connect_root(ending);
    request(ending, peer, "{\"v\":1,\"op\":\"step_end\",\"job\":67,\"step\":0}\n");
    gate_open(daemon_gate, 1);
    t.d->registry.journal_bytes = (size_t)1 << 30; /* the next line folds the journal */
    np_daemon_stop_writer(t.d);
    ck_assert_ptr_null(t.d->writer);
    ck_assert(!t.d->registry.save_in_flight);
    ck_assert_uint_gt(t.d->registry.saves, saves);
    snprintf(path, sizeof(path), "%s/registry.json", t.d->cfg.state_dir);
    ck_assert_ptr_null(strstr(read_file(path), "\"job\":67")); /* its end is in the snapshot */
    close(peer);
}
END_TEST

/* A reload moves state_dir while registry.json is with the writer: the snapshot is the old
 * directory's, so the new directory's journal (a step registered after the reload) stays whole. */
START_TEST(test_state_dir_moved_during_a_save)
{
    char moved[sizeof(t.d->cfg.state_dir)], path[4200];

    register_step(68);
    registry_flush(t.d); /* queued to the writer, held back */
    ck_assert(t.d->registry.save_in_flight);
    snprintf(moved, sizeof(moved), "%s/moved-state", t.dir);
    ck_assert_int_eq(mkdir(moved, 0700), 0);
    memcpy(t.d->cfg.state_dir, moved, sizeof(moved)); /* as a SIGHUP with a new state_dir */
    register_step(69);
    gate_open(daemon_gate, 1);
    collect(t.d->writer, t.d, 1);
    snprintf(path, sizeof(path), "%s/registry.journal", moved);
    ck_assert_msg(read_file(path) && strstr(read_file(path), "\"job\":69"),
                  "the step registered after the reload is gone from %s", path);
    ck_assert(t.d->registry.dirty); /* the next tick saves in the new directory */
}
END_TEST

/* kill -9 while the writer has the report (before its write, or after it but before the step's
 * end is journaled), the step_end answered or still waiting: the restarted helper writes the
 * report the step ended with (journaled before any answer, with every sample), or keeps the one
 * written. Never lost, never degraded, and the log says which. */
static const struct {
    const char *name;
    unsigned writes;      /* let go before the kill */
    bool answer_at_end;   /* the plugin's step_end ("wait_report": false), answered already */
    const char *restored; /* what the restart's log says */
} kill_cases[] = {
    {"killed before the report's write", 0, false,
     "the report kept in the registry goes to the spool now"},
    {"killed before the report's write, the early answer given", 0, true,
     "the report kept in the registry goes to the spool now"},
    {"killed after the report is durable, before its end is journaled", 1, false,
     "is already written; kept"},
};

START_TEST(test_kill_while_report_is_written)
{
    struct np_daemon_client *ending = &t.d->clients[1];
    struct np_test_daemon after;
    struct np_daemon_job *j;
    char path[2048], count[64], duration[64];
    const char *text;
    json_t *report;
    int peer;

    register_step(62);
    peer = connect_root(ending);
    request(ending, peer,
            kill_cases[_i].answer_at_end
                ? "{\"v\":1,\"op\":\"step_end\",\"job\":62,\"step\":0,\"wait_report\":false}\n"
                : "{\"v\":1,\"op\":\"step_end\",\"job\":62,\"step\":0}\n");
    if (kill_cases[_i].answer_at_end)
        ck_assert_ptr_nonnull(strstr(reply_of(peer), "\"ok\":true"));
    else
        ck_assert_str_eq(reply_of(peer), "");
    /* the figures the step ended with */
    ck_assert_ptr_nonnull(j = registry_find(&t.d->registry, 62, 0));
    ck_assert_uint_gt(j->stats.samples, 0);
    snprintf(count, sizeof(count), "\"count\": %u", j->stats.samples);
    report = json_object_get(j->final_report, "duration_s");
    ck_assert_ptr_nonnull(report);
    snprintf(duration, sizeof(duration), "\"duration_s\": %.17g", json_real_value(report));
    gate_open(daemon_gate, kill_cases[_i].writes);
    if (kill_cases[_i].writes)
        wait_done(t.d->writer); /* written and flushed; the loop has not collected it */
    /* kill -9 here: a new helper on the same directories, the step's processes gone */
    np_test_daemon_init(&after);
    memcpy(after.d->cfg.state_dir, t.d->cfg.state_dir, sizeof(after.d->cfg.state_dir));
    memcpy(after.d->cfg.spool_dir, t.d->cfg.spool_dir, sizeof(after.d->cfg.spool_dir));
    snprintf(after.d->cfg.proc_root, sizeof(after.d->cfg.proc_root), "%s", after.dir);
    registry_restore(after.d);
    snprintf(path, sizeof(path), "%s/62.0.testhost.json", t.d->cfg.spool_dir);
    text = read_file(path);
    ck_assert_msg(text != NULL, "%s: the report is lost", kill_cases[_i].name);
    ck_assert_msg(strstr(text, "\"complete\": true") && strstr(text, count) &&
                      strstr(text, duration),
                  "%s: the report is not the step's final one (%s, %s): %s", kill_cases[_i].name,
                  count, duration, text);
    ck_assert_msg(strstr(after.log.text, kill_cases[_i].restored), "%s: the log: %s",
                  kill_cases[_i].name, after.log.text);
    ck_assert_msg(!strstr(after.log.text, "1 ended while the helper was down"), "%s: the log: %s",
                  kill_cases[_i].name, after.log.text);
    ck_assert_ptr_null(registry_find(&after.d->registry, 62, 0));
    np_test_daemon_fini(&after);
    close(peer);
}
END_TEST

/* A full spool with the writer: the refused reports are held, their steps still listed ending;
 * a retry the spool still refuses holds the report again; once it takes one, each one written
 * sends the next, all on the writer's thread, and the steps leave as their reports land. */
START_TEST(test_held_reports_retried_on_the_writer)
{
    char spool[sizeof(t.d->cfg.spool_dir)];

    memcpy(spool, t.d->cfg.spool_dir, sizeof(spool));
    ck_assert_int_eq(rmdir(spool), 0); /* refuses everything */
    for (uint32_t job = 71; job <= 73; job++) {
        struct np_daemon_client *c = &t.d->clients[1];
        char line[128];
        int peer;
        register_step(job);
        peer = connect_root(c);
        snprintf(line, sizeof(line),
                 "{\"v\":1,\"op\":\"step_end\",\"job\":%u,\"step\":0,\"wait_report\":false}\n",
                 job);
        request(c, peer, line);
        ck_assert_ptr_nonnull(strstr(reply_of(peer), "\"ok\":true"));
        close(peer);
        gate_open(daemon_gate, 1);
        collect(t.d->writer, t.d, 1);
        ck_assert_int_eq(status_ending(job), 1);
    }
    ck_assert_uint_eq(t.d->report_hold.count, 3);
    /* the interval's retry: the spool still refuses it, held again */
    report_hold_retry(t.d);
    ck_assert(t.d->report_hold.retrying);
    report_hold_retry(t.d); /* one at a time: nothing more queued */
    ck_assert_uint_eq(writer_pending(t.d->writer), 1);
    gate_open(daemon_gate, 1);
    collect(t.d->writer, t.d, 1);
    ck_assert(!t.d->report_hold.retrying);
    ck_assert_uint_eq(t.d->report_hold.count, 3);
    ck_assert_int_eq(status_ending(71), 1);
    /* room again: the oldest first, each one written sending the next */
    ck_assert_int_eq(mkdir(spool, 0755), 0);
    report_hold_retry(t.d);
    for (uint32_t job = 71; job <= 73; job++) {
        char name[16];
        gate_open(daemon_gate, 1);
        collect(t.d->writer, t.d, 1);
        snprintf(name, sizeof(name), "%u.0", job);
        ck_assert(np_test_report_exists(&t, name));
        ck_assert_int_eq(status_ending(job), -1);
    }
    ck_assert_uint_eq(t.d->report_hold.count, 0);
    ck_assert_uint_eq(writer_pending(t.d->writer), 0);
    ck_assert_ptr_nonnull(strstr(t.log.text, "takes reports again: 3 held report(s) written"));
}
END_TEST

/* registry.json goes to the writer; a request's journal line appended while it is being written
 * follows that snapshot and must survive its completion (which otherwise drops the journal). */
START_TEST(test_journal_kept_past_a_save_in_flight)
{
    struct np_test_daemon after;
    struct np_daemon_job *j;
    char path[4200], *text;

    register_step(63);
    registry_flush(t.d); /* the tick: serialised here, queued */
    ck_assert(t.d->registry.save_in_flight);
    register_step(64);   /* journaled while the writer holds the snapshot without it */
    registry_flush(t.d); /* one save at a time: this one waits for the next tick */
    ck_assert(t.d->registry.dirty);
    gate_open(daemon_gate, 1);
    collect(t.d->writer, t.d, 1);
    ck_assert(!t.d->registry.save_in_flight);
    ck_assert_uint_eq(t.d->registry.saves, 1);
    /* the journal keeps only what the snapshot lacks: under steady requests it would only grow */
    snprintf(path, sizeof(path), "%s/registry.journal", t.d->cfg.state_dir);
    text = read_file(path);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "\"job\":64") && !strstr(text, "\"job\":63"), "journal: %s", text);
    /* kill -9 here */
    np_test_daemon_init(&after);
    memcpy(after.d->cfg.state_dir, t.d->cfg.state_dir, sizeof(after.d->cfg.state_dir));
    memcpy(after.d->cfg.spool_dir, t.d->cfg.spool_dir, sizeof(after.d->cfg.spool_dir));
    registry_restore(after.d);
    ck_assert_ptr_nonnull(registry_find(&after.d->registry, 63, 0));
    j = registry_find(&after.d->registry, 64, 0);
    ck_assert_msg(j != NULL, "the step registered during the save is lost");
    np_test_daemon_fini(&after);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_writer");
    TCase *alone = tcase_create("writer"), *daemon = tcase_create("daemon");

    tcase_add_loop_test(alone, test_write_outcome, 0,
                        (int)(sizeof(write_cases) / sizeof(write_cases[0])));
    tcase_add_test(alone, test_order_and_stop_drains);
    suite_add_tcase(s, alone);
    tcase_add_checked_fixture(daemon, daemon_setup, daemon_teardown);
    tcase_add_test(daemon, test_register_answered_while_report_is_written);
    tcase_add_loop_test(daemon, test_kill_while_report_is_written, 0,
                        (int)(sizeof(kill_cases) / sizeof(kill_cases[0])));
    tcase_add_test(daemon, test_journal_kept_past_a_save_in_flight);
    tcase_add_test(daemon, test_step_end_after_the_tick_ended_it);
    tcase_add_test(daemon, test_step_end_answered_at_the_end);
    tcase_add_test(daemon, test_status_ending_once_the_tasks_are_gone);
    tcase_add_test(daemon, test_stop_saves_what_completions_start);
    tcase_add_test(daemon, test_state_dir_moved_during_a_save);
    tcase_add_test(daemon, test_held_reports_retried_on_the_writer);
    suite_add_tcase(s, daemon);
    return np_test_run(s);
}
