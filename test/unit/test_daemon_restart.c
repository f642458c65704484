/*
 * numaplaced after a restart: a saved pid is adopted only while it is still
 * the job's task (its user, its start time), and a step that ended while the helper was down
 * never has its complete report replaced by an empty one.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "np_daemon_test.h"
#include "ops.h"

#include <sys/stat.h>

/* The fixture task (roots/host/proc/300) runs as uid 0 and started at tick 987654. */
static const struct {
    const char *name;
    unsigned job_uid;
    const char *starts; /* the registry's "starts" member, or "" for a registry without it */
    bool adopted;
} cases[] = {
    {"the same task", 0, ", \"starts\": [987654]", true},
    {"a recycled pid: another start time", 0, ", \"starts\": [111]", false},
    {"another user's process (registry without start times)", 4242, "", false},
    {"the job's user, registry without start times", 0, "", true},
};

START_TEST(test_restore_checks_each_pid)
{
    struct np_test_daemon t;
    char path[1200], text[512];
    struct np_daemon_job *j;
    FILE *f;

    np_test_daemon_init(&t);
    snprintf(path, sizeof(path), "%s/registry.json", t.d->cfg.state_dir);
    snprintf(text, sizeof(text),
             "{\"schema\": \"numaplace.state/1\", \"jobs\": [{\"job\": 42, \"step\": 0, \"uid\": "
             "%u, \"cpus\": \"0\", \"pids\": [%d]%s}]}",
             cases[_i].job_uid, NP_TEST_LIVE_PID, cases[_i].starts);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    registry_restore(t.d);
    j = registry_find(&t.d->registry, 42, 0);
    if (cases[_i].adopted) {
        ck_assert_ptr_nonnull(j);
        ck_assert_uint_eq(j->sampler.ntasks, 1);
    } else {
        /* nothing of it left: the step is ended, with an incomplete report */
        ck_assert_ptr_null(j);
        ck_assert_ptr_nonnull(strstr(t.log.text, "is no longer its task"));
    }
    np_test_daemon_fini(&t);
}
END_TEST

START_TEST(test_complete_report_survives_restart)
{
    struct np_test_daemon t;
    struct np_err err = {0};
    struct np_daemon_job *j;
    char path[2048], buf[8192] = "";
    FILE *f;

    np_test_daemon_init(&t);
    j = job_new(t.d, 7, 0, getuid(), "0", "local", "low", &err);
    ck_assert_ptr_nonnull(j);
    report_out_write(t.d, j, true);  /* the step ended and its report was written ... */
    report_out_write(t.d, j, false); /* ... then, after a kill -9, seen as ended while down */
    snprintf(path, sizeof(path), "%s/7.0.testhost.json", t.d->cfg.spool_dir);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_gt(fread(buf, 1, sizeof(buf) - 1, f), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "\"complete\": true"));
    ck_assert_ptr_nonnull(strstr(t.log.text, "already written; kept"));
    np_test_daemon_fini(&t);
}
END_TEST

/* A kill -9 during a step loses its counters up to the restart: its report, written at its real
 * end, says it is incomplete (docs/report-schema.md: "the helper ... restarted before the step
 * ended"). */
START_TEST(test_restored_step_report_incomplete)
{
    struct np_test_daemon t;
    char path[1200], buf[8192] = "";
    struct np_daemon_job *j;
    FILE *f;

    np_test_daemon_init(&t);
    snprintf(path, sizeof(path), "%s/registry.json", t.d->cfg.state_dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "{\"schema\": \"numaplace.state/1\", \"jobs\": [{\"job\": 43, \"step\": 0, \"uid\": 0, "
            "\"cpus\": \"0\", \"pids\": [%d], \"starts\": [987654]}]}",
            NP_TEST_LIVE_PID);
    fclose(f);
    registry_restore(t.d);
    j = registry_find(&t.d->registry, 43, 0);
    ck_assert_ptr_nonnull(j);
    job_finish(t.d, j, true); /* step_end from slurmstepd */
    snprintf(path, sizeof(path), "%s/43.0.testhost.json", t.d->cfg.spool_dir);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_gt(fread(buf, 1, sizeof(buf) - 1, f), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "\"complete\": false"));
    np_test_daemon_fini(&t);
}
END_TEST

/* The journal (kill -9 at any moment): what a request changed is back after a restart
 * even when no interval tick wrote registry.json, and nothing older than registry.json wins. */
enum journal_case {
    REGISTERED,
    ENDED,
    CLASS_AFTER_TICK,
    STALE_LINE,
    CUT_LINE,
    AFTER_FAILED_SAVE,
    APPLIED_AFTER_TICK
};
static const struct {
    const char *name;
    enum journal_case what;
    bool tracked;      /* job 44 tracked after the restart */
    enum np_class cls; /* its class, when tracked */
} journal_cases[] = {
    {"registered, killed before the tick", REGISTERED, true, NP_CLASS_LOW},
    {"registered and ended, killed before the tick", ENDED, false, NP_CLASS_LOW},
    {"a class set after the tick, killed before the next", CLASS_AFTER_TICK, true, NP_CLASS_HIGH},
    {"a line of an older registry.json (power loss after its rename)", STALE_LINE, true,
     NP_CLASS_HIGH},
    {"a line cut short, and the next one", CUT_LINE, true, NP_CLASS_HIGH},
    {"lines after a save that failed (past its rename, at the directory's flush)",
     AFTER_FAILED_SAVE, true, NP_CLASS_HIGH},
    /* journalled as the task's entry alone (registry_note_task) */
    {"a task's applied after the tick, killed before the next", APPLIED_AFTER_TICK, true,
     NP_CLASS_LOW},
};

static void copy_file(const char *from, const char *to)
{
    char buf[65536];
    FILE *in = fopen(from, "r"), *out = fopen(to, "w");
    size_t n;

    ck_assert_ptr_nonnull(in);
    ck_assert_ptr_nonnull(out);
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

START_TEST(test_journal_after_kill)
{
    struct np_test_daemon a, b;
    struct np_err err = {0};
    struct np_daemon_job *j;
    char journal[1200], kept[1300];
    FILE *f;

    np_test_daemon_init(&a);
    snprintf(journal, sizeof(journal), "%s/registry.journal", a.d->cfg.state_dir);
    snprintf(kept, sizeof(kept), "%s.kept", journal);
    j = job_new(a.d, 44, 0, 0, "0", "local", "low", &err);
    ck_assert_msg(j != NULL, "%s", err.msg);
    ck_assert_int_eq(np_sampler_add_task(&j->sampler, NP_TEST_LIVE_PID, &err), 0);
    registry_note(a.d, j); /* op_register's */
    switch (journal_cases[_i].what) {
    case REGISTERED:
        break;
    case ENDED:
        registry_remove(&a.d->registry, j);
        registry_note_end(a.d, 44, 0); /* job_finish's */
        job_free(j);
        break;
    case CLASS_AFTER_TICK:
        registry_flush(a.d);
        job_set_class(j, NP_CLASS_HIGH);
        registry_note(a.d, j);
        break;
    case STALE_LINE: /* the journal of generation 0 outlives the unlink registry.json 1 made */
        copy_file(journal, kept);
        job_set_class(j, NP_CLASS_HIGH);
        registry_flush(a.d);
        ck_assert_int_eq(rename(kept, journal), 0);
        break;
    case CUT_LINE: /* a write cut short (a full disk), then the next request's line */
        f = fopen(journal, "a");
        ck_assert_ptr_nonnull(f);
        fputs("\n{\"gen\": 0, \"entry\": {\"job\": 44, \"step\": 0, \"ui", f);
        fclose(f);
        job_set_class(j, NP_CLASS_HIGH);
        registry_note(a.d, j);
        break;
    case APPLIED_AFTER_TICK: {
        json_t *task = json_pack("{s:i, s:i}", "task", 0, "pid", NP_TEST_LIVE_PID);
        json_array_append_new(j->tasks, task);
        registry_note(a.d, j);
        registry_flush(a.d);
        json_object_set_new(task, "policy", json_string("interleave"));
        registry_note_task(a.d, j, task); /* op_applied's */
        break;
    }
    case AFTER_FAILED_SAVE: /* registry.json says 1; the failed save moved on to 2 */
        registry_flush(a.d);
        a.d->registry.generation++;
        job_set_class(j, NP_CLASS_HIGH);
        registry_note(a.d, j);
        break;
    }
    /* kill -9 here: nothing of a's memory survives, only its state directory */
    np_test_daemon_init(&b);
    snprintf(b.d->cfg.state_dir, sizeof(b.d->cfg.state_dir), "%s", a.d->cfg.state_dir);
    registry_restore(b.d);
    j = registry_find(&b.d->registry, 44, 0);
    ck_assert_msg((j != NULL) == journal_cases[_i].tracked, "%s: tracked %d",
                  journal_cases[_i].name, j != NULL);
    if (j)
        ck_assert_int_eq(j->job_class, journal_cases[_i].cls);
    if (journal_cases[_i].what == APPLIED_AFTER_TICK) {
        const json_t *task = job_task_entry(j, NP_TEST_LIVE_PID);
        ck_assert_ptr_nonnull(task);
        ck_assert_str_eq(json_string_value(json_object_get(task, "policy")), "interleave");
        ck_assert_uint_eq(json_array_size(j->tasks), 1);
    }
    if (journal_cases[_i].what == CUT_LINE)
        ck_assert_ptr_nonnull(strstr(b.log.text, "1 line(s) skipped"));
    /* the restore wrote registry.json: the journal is folded in and gone */
    ck_assert_int_ne(access(journal, F_OK), 0);
    np_test_daemon_fini(&b);
    np_test_daemon_fini(&a);
}
END_TEST

/* A step resumed after a restart still adds to auto's history at its end: its job name is kept
 * in the registry (a name with a control character, planted, is not taken). */
static const char *const kept_names[] = {"lbm", "x\\u001b]0;owned\\u0007"};

START_TEST(test_job_name_survives_restart)
{
    struct np_test_daemon a, b;
    struct np_err err = {0};
    struct np_daemon_job *j;

    np_test_daemon_init(&a);
    if (_i == 0) {
        j = job_new(a.d, 45, 0, 0, "0", "local", "low", &err);
        ck_assert_msg(j != NULL, "%s", err.msg);
        ck_assert_int_eq(np_sampler_add_task(&j->sampler, NP_TEST_LIVE_PID, &err), 0);
        snprintf(j->job_name, sizeof(j->job_name), "%s", kept_names[_i]);
        registry_note(a.d, j); /* op_register's; then kill -9 */
    } else {
        char path[1200], text[512];
        FILE *f;
        snprintf(path, sizeof(path), "%s/registry.json", a.d->cfg.state_dir);
        snprintf(text, sizeof(text),
                 "{\"schema\": \"numaplace.state/1\", \"jobs\": [{\"job\": 45, \"step\": 0, "
                 "\"uid\": 0, \"cpus\": \"0\", \"pids\": [%d], \"job_name\": \"%s\"}]}",
                 NP_TEST_LIVE_PID, kept_names[_i]);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        fclose(f);
    }
    np_test_daemon_init(&b);
    snprintf(b.d->cfg.state_dir, sizeof(b.d->cfg.state_dir), "%s", a.d->cfg.state_dir);
    registry_restore(b.d);
    j = registry_find(&b.d->registry, 45, 0);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(j->job_name, _i == 0 ? "lbm" : "");
    hint_remember(b.d, j); /* at its end */
    ck_assert_uint_eq(b.d->hint.nhistory, _i == 0 ? 1 : 0);
    if (_i == 0)
        ck_assert_int_ge(history_find(&b.d->hint, 0, "lbm"), 0);
    np_test_daemon_fini(&b);
    np_test_daemon_fini(&a);
}
END_TEST

/* A root whose /proc holds @p n tasks, pids 1000 on, each the fixture task (uid 0, started at
 * tick 987654), for a step of many tasks; it becomes @p t's proc_root. */
#define MANY_PID0 1000
static void many_tasks_root(struct np_test_daemon *t, unsigned n)
{
    char path[1200], fixture[1200];

    snprintf(path, sizeof(path), "%s/root/proc", t->dir);
    ck_assert_int_eq(np_daemon_mkdir_p(path, 0755), 0);
    snprintf(fixture, sizeof(fixture), "%s/proc/%d", t->d->cfg.proc_root, NP_TEST_LIVE_PID);
    for (unsigned i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/root/proc/%u", t->dir, MANY_PID0 + i);
        ck_assert_int_eq(symlink(fixture, path), 0);
    }
    snprintf(t->d->cfg.proc_root, sizeof(t->d->cfg.proc_root), "%s/root", t->dir);
}

/* slurmstepd's register for task @p i of job 46. */
static void register_many(struct np_test_daemon *t, unsigned i)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    struct np_task_reg r = {
        .job_id = 46, .uid = 0, .pid = (pid_t)(MANY_PID0 + i), .task_id = (int)i};
    json_t *reply;

    snprintf(r.cpus, sizeof(r.cpus), "0");
    snprintf(r.policy_requested, sizeof(r.policy_requested), "local");
    snprintf(r.sensitivity, sizeof(r.sensitivity), "low");
    reply = op_register(t->d, &root, &r);
    ck_assert_msg(np_test_reply_ok(reply), "task %u: %s", i, np_test_reply_error(reply));
    json_decref(reply);
}

/* A step registered task by task, each task journalled alone (registry_note_task_added), is back
 * whole after a kill -9 at any point: every task so far, its pid adopted, with or without an
 * interval's snapshot between. */
static const struct {
    const char *name;
    unsigned tasks;   /* registered before the kill */
    unsigned tick_at; /* registry.json written after this many (0: never) */
} step_cases[] = {
    {"one task, killed before the tick", 1, 0},
    {"six tasks, killed before the tick", 6, 0},
    {"six tasks, the tick after two", 6, 2},
    {"six tasks, the tick after the sixth", 6, 6},
};

START_TEST(test_step_registered_task_by_task)
{
    struct np_test_daemon a, b;
    struct np_daemon_job *j;

    np_test_daemon_init(&a);
    many_tasks_root(&a, step_cases[_i].tasks);
    for (unsigned i = 0; i < step_cases[_i].tasks; i++) {
        register_many(&a, i);
        if (i + 1 == step_cases[_i].tick_at)
            registry_flush(a.d);
    }
    /* kill -9 here: only the state directory survives */
    np_test_daemon_init(&b);
    snprintf(b.d->cfg.state_dir, sizeof(b.d->cfg.state_dir), "%s", a.d->cfg.state_dir);
    snprintf(b.d->cfg.proc_root, sizeof(b.d->cfg.proc_root), "%s", a.d->cfg.proc_root);
    registry_restore(b.d);
    j = registry_find(&b.d->registry, 46, 0);
    ck_assert_msg(j != NULL, "%s: step lost; log: %s", step_cases[_i].name, b.log.text);
    ck_assert_uint_eq(j->sampler.ntasks, step_cases[_i].tasks);
    ck_assert_uint_eq(json_array_size(j->tasks), step_cases[_i].tasks);
    for (unsigned i = 0; i < step_cases[_i].tasks; i++) {
        const json_t *task = job_task_entry(j, (pid_t)(MANY_PID0 + i));
        ck_assert_msg(task != NULL, "%s: task %u lost", step_cases[_i].name, i);
        ck_assert_int_eq(json_integer_value(json_object_get(task, "task")), i);
        ck_assert_int_eq(j->sampler.tasks[i].pid, MANY_PID0 + i);
    }
    np_test_daemon_fini(&b);
    np_test_daemon_fini(&a);
}
END_TEST

/* A step of 500 tasks journals each task's register in a bounded line: the journal grows by the
 * same few bytes per task, not by the whole step each time (quadratic), and never needs folding
 * into registry.json within the interval. */
#define LINEAR_TASKS          500
#define LINEAR_BYTES_PER_TASK 160 /* a task line is under 100 bytes */

START_TEST(test_register_journal_linear)
{
    struct np_test_daemon t;

    np_test_daemon_init(&t);
    many_tasks_root(&t, LINEAR_TASKS);
    register_many(&t, 0);
    for (unsigned i = 1; i < LINEAR_TASKS; i++) {
        const size_t before = t.d->registry.journal_bytes;
        register_many(&t, i);
        ck_assert_msg(t.d->registry.journal_bytes > before &&
                          t.d->registry.journal_bytes - before <= LINEAR_BYTES_PER_TASK,
                      "task %u's register grew the journal from %zu to %zu bytes", i, before,
                      t.d->registry.journal_bytes);
    }
    ck_assert_uint_eq(t.d->registry.saves, 0);
    ck_assert_uint_le(t.d->registry.journal_bytes, LINEAR_TASKS * LINEAR_BYTES_PER_TASK);
    np_test_daemon_fini(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_restart");
    TCase *tc = tcase_create("restart");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_restore_checks_each_pid, 0,
                        (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, test_complete_report_survives_restart);
    tcase_add_test(tc, test_restored_step_report_incomplete);
    tcase_add_loop_test(tc, test_journal_after_kill, 0,
                        (int)(sizeof(journal_cases) / sizeof(journal_cases[0])));
    tcase_add_loop_test(tc, test_job_name_survives_restart, 0,
                        (int)(sizeof(kept_names) / sizeof(kept_names[0])));
    tcase_add_loop_test(tc, test_step_registered_task_by_task, 0,
                        (int)(sizeof(step_cases) / sizeof(step_cases[0])));
    tcase_add_test(tc, test_register_journal_linear);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
