/*
 * numaplaced's protocol ops with made-up peers (no socket): who may register, report, end,
 * look, change classes and migrate, and what each op does to the registry.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "ops.h"
#include "np_daemon_test.h"
#include "user_names.h"

#define USER_A  4242u /* no such users: only root and the ids below matter */
#define USER_B  4343u
#define NOGROUP 4444u

static struct np_test_daemon t;
static char admin_group[64]; /* a group that exists here: the test process's own */
static gid_t admin_gid;

static void setup(void)
{
    const struct group *gr = getgrgid(getgid());

    ck_assert_ptr_nonnull(gr);
    snprintf(admin_group, sizeof(admin_group), "%s", gr->gr_name);
    admin_gid = gr->gr_gid;
    np_test_daemon_init(&t);
}

static void teardown(void)
{
    np_test_daemon_fini(&t);
}

static json_t *register_task(uid_t peer_uid, uint32_t job_id, uid_t owner)
{
    const struct np_peer peer = np_test_peer(1, peer_uid, peer_uid);
    struct np_task_reg r = {.job_id = job_id, .uid = owner, .pid = NP_TEST_LIVE_PID};

    snprintf(r.cpus, sizeof(r.cpus), "0");
    snprintf(r.policy_requested, sizeof(r.policy_requested), "local");
    snprintf(r.sensitivity, sizeof(r.sensitivity), "low");
    return op_register(t.d, &peer, &r);
}

/* Nobody waits for register's answer: a task that runs its own program already (its exe is not
 * its registrar's) has its counters marked late; one still in slurmstepd's image has not.
 * Fixture: pid 200 runs slurmstepd, pid 300 its program. */
START_TEST(register_marks_counters_opened_after_exec)
{
    const struct np_peer stepd = np_test_peer(200, 0, 0), same = np_test_peer(300, 0, 0);
    struct np_task_reg r = {.job_id = 40, .uid = USER_A, .pid = NP_TEST_LIVE_PID};
    json_t *reply;

    snprintf(r.policy_requested, sizeof(r.policy_requested), "local");
    snprintf(r.sensitivity, sizeof(r.sensitivity), "low");
    reply = op_register(t.d, &stepd, &r);
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
    ck_assert(json_is_true(json_object_get(
        json_array_get(registry_find(&t.d->registry, 40, 0)->tasks, 0), "counters_late")));
    r.job_id = 41;
    reply = op_register(t.d, &same, &r);
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
    ck_assert_ptr_null(json_object_get(
        json_array_get(registry_find(&t.d->registry, 41, 0)->tasks, 0), "counters_late"));
}
END_TEST

/* A task that ended before its registration was read (nobody waits for the answer) is no
 * error: the answer says it is gone, and the step lists it, uncounted, with the tasks after it. */
START_TEST(register_of_an_ended_task_is_no_error)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    struct np_task_reg r = {.job_id = 50, .uid = USER_A, .pid = 99999};
    struct np_daemon_job *j;
    json_t *reply;

    snprintf(r.policy_requested, sizeof(r.policy_requested), "local");
    snprintf(r.sensitivity, sizeof(r.sensitivity), "low");
    reply = op_register(t.d, &root, &r);
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    ck_assert(json_is_true(json_object_get(reply, "gone")));
    json_decref(reply);
    ck_assert_ptr_nonnull(j = registry_find(&t.d->registry, 50, 0));
    ck_assert_uint_eq(j->sampler.ntasks, 0);
    ck_assert(json_is_true(json_object_get(json_array_get(j->tasks, 0), "ended_before_read")));
    r.pid = NP_TEST_LIVE_PID; /* a live task of the same step after it: counted, in the same step */
    r.task_id = 1;
    reply = op_register(t.d, &root, &r);
    ck_assert_ptr_null(json_object_get(reply, "gone"));
    json_decref(reply);
    ck_assert_ptr_eq(registry_find(&t.d->registry, 50, 0), j);
    ck_assert_uint_eq(j->sampler.ntasks, 1);
    ck_assert_uint_eq(json_array_size(j->tasks), 2);
    ck_assert_ptr_null(json_object_get(json_array_get(j->tasks, 1), "ended_before_read"));
}
END_TEST

/* Steps 10.0 of USER_A and 20.0 of USER_B, registered by root. */
static void two_jobs(void)
{
    json_t *a = register_task(0, 10, USER_A), *b = register_task(0, 20, USER_B);

    ck_assert_msg(np_test_reply_ok(a), "%s", np_test_reply_error(a));
    ck_assert_msg(np_test_reply_ok(b), "%s", np_test_reply_error(b));
    json_decref(a);
    json_decref(b);
    ck_assert_uint_eq(t.d->registry.count, 2);
}

START_TEST(register_root_only)
{
    json_t *reply = register_task(USER_A, 10, USER_A);

    ck_assert(!np_test_reply_ok(reply));
    ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), "only root (slurmstepd)"));
    ck_assert_uint_eq(t.d->registry.count, 0);
    json_decref(reply);
    reply = register_task(0, 10, USER_A);
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
    ck_assert_ptr_nonnull(registry_find(&t.d->registry, 10, 0));
    /* the same step for another user is refused */
    reply = register_task(0, 10, USER_B);
    ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), "is registered for uid 4242"));
    json_decref(reply);
}
END_TEST

/* applied: who reports for task pid 300 of job 10 (USER_A's). */
static const struct {
    pid_t peer_pid;
    uid_t peer_uid;
    const char *refused; /* NULL: accepted */
} applied_cases[] = {
    {NP_TEST_LIVE_PID, USER_A, NULL},
    {1, 0, NULL}, /* root speaks for any task */
    {NP_TEST_LIVE_PID + 1, USER_A, "may report only itself"},
    {NP_TEST_LIVE_PID, USER_B, "is not yours"},
};

START_TEST(applied_by_the_task_itself)
{
    const struct np_peer peer =
        np_test_peer(applied_cases[_i].peer_pid, applied_cases[_i].peer_uid, NOGROUP);
    struct np_task_applied a = {.job_id = 10, .pid = NP_TEST_LIVE_PID};
    json_t *reply, *task;

    two_jobs();
    snprintf(a.policy, sizeof(a.policy), "interleave");
    reply = op_applied(t.d, &peer, &a);
    task = json_array_get(registry_find(&t.d->registry, 10, 0)->tasks, 0);
    if (applied_cases[_i].refused) {
        ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), applied_cases[_i].refused));
        ck_assert_ptr_null(json_object_get(task, "policy"));
    } else {
        ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
        ck_assert_str_eq(json_string_value(json_object_get(task, "policy")), "interleave");
        ck_assert_ptr_null(json_object_get(task, "auto")); /* not auto: no facts */
    }
    json_decref(reply);
}
END_TEST

/* auto's facts land in the task's entry (the report's policy.tasks[]) as fields. */
START_TEST(applied_keeps_auto_facts)
{
    const struct np_peer peer = np_test_peer(NP_TEST_LIVE_PID, USER_A, NOGROUP);
    struct np_task_applied a = {.job_id = 10, .pid = NP_TEST_LIVE_PID};
    struct np_applied_auto facts;
    json_t *reply, *task;

    two_jobs();
    snprintf(a.policy, sizeof(a.policy), "local");
    snprintf(a.reason, sizeof(a.reason), "auto: local: CPUs span nodes 0,1");
    a.auto_facts = (struct np_applied_auto){
        .given = true, .sensitivity = "high", .task_nodes = 0x2, .allowed_nodes = 0x3};
    reply = op_applied(t.d, &peer, &a);
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    task = json_array_get(registry_find(&t.d->registry, 10, 0)->tasks, 0);
    ck_assert_int_eq(np_proto_applied_auto_from_json(json_object_get(task, "auto"), &facts, NULL),
                     0);
    ck_assert_str_eq(facts.sensitivity, "high");
    ck_assert_uint_eq(facts.task_nodes, 0x2);
    ck_assert_uint_eq(facts.allowed_nodes, 0x3);
    ck_assert_uint_eq(facts.loaded_nodes, 0);
    json_decref(reply);
}
END_TEST

START_TEST(step_end_root_only)
{
    const struct np_peer user = np_test_peer(1, USER_A, NOGROUP), root = np_test_peer(1, 0, 0);
    uint64_t pending = 0;
    json_t *reply;

    /* owned by whoever runs the test: its report can be given to them without root */
    reply = register_task(0, 30, getuid());
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
    reply = op_step_end(t.d, &user, &pending, 30, 0, false);
    ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), "only root (slurmstepd) may end"));
    json_decref(reply);
    ck_assert_ptr_nonnull(registry_find(&t.d->registry, 30, 0));
    reply = op_step_end(t.d, &root, &pending, 30, 0, false);
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
    ck_assert_ptr_null(registry_find(&t.d->registry, 30, 0));
    ck_assert(np_test_report_exists(&t, "30.0"));
    reply = op_step_end(t.d, &root, &pending, 30, 0, false);
    ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), "is not tracked here"));
    json_decref(reply);
}
END_TEST

/* status: which jobs each peer sees (job 0 = all). */
static const struct {
    uid_t peer_uid;
    uint32_t job_id;
    int nseen;           /* -1: refused */
    uint32_t first_seen; /* its job id */
    int counted;         /* the helper's "jobs": the steps the peer may know of */
    const char *refused;
} status_cases[] = {
    {0, 0, 2, 10, 2, NULL},
    {USER_A, 0, 1, 10, 1, NULL},
    {USER_B, 0, 1, 20, 1, NULL},
    {NOGROUP, 0, 0, 0, 0, NULL},
    {USER_A, 10, 1, 10, 1, NULL},
    /* another user's job and no job at all: the same answer, so a user learns nothing */
    {USER_A, 20, -1, 0, 0, "no job 20 of yours is tracked on this node"},
    {USER_A, 30, -1, 0, 0, "no job 30 of yours is tracked on this node"},
    {0, 30, -1, 0, 0, "job 30 is not tracked on this node"},
};

START_TEST(status_shows_own_jobs)
{
    const struct np_peer peer = np_test_peer(1, status_cases[_i].peer_uid, NOGROUP);
    json_t *reply;

    two_jobs();
    reply = op_status(t.d, &peer, status_cases[_i].job_id);
    if (status_cases[_i].nseen < 0) {
        ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), status_cases[_i].refused));
        /* the refusal names no other user's uid */
        ck_assert_ptr_null(strstr(np_test_reply_error(reply), "4343"));
    } else {
        const json_t *jobs = json_object_get(reply, "jobs");
        ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
        ck_assert_int_eq((int)json_array_size(jobs), status_cases[_i].nseen);
        if (status_cases[_i].nseen)
            ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(jobs, 0), "job")),
                             status_cases[_i].first_seen);
        /* a user counts their own steps only: whether others run here is not theirs to know */
        ck_assert_int_eq(
            json_integer_value(json_object_get(json_object_get(reply, "helper"), "jobs")),
            status_cases[_i].counted);
        /* the node's memory traffic is shown to every peer (it names no job) */
        ck_assert(json_is_array(json_object_get(reply, "memory_nodes")));
    }
    json_decref(reply);
}
END_TEST

/* set_class and migrate: who counts as an administrator. */
enum peer_kind { PEER_ROOT, PEER_ADMIN_PRIMARY, PEER_OTHER, PEER_OTHER_NO_GROUP_SET };
static const struct {
    enum peer_kind peer;
    bool group_set; /* admin_group configured */
    bool allowed;
} admin_cases[] = {
    {PEER_ROOT, false, true},         {PEER_ROOT, true, true},
    {PEER_ADMIN_PRIMARY, true, true}, {PEER_ADMIN_PRIMARY, false, false},
    {PEER_OTHER, true, false},        {PEER_OTHER_NO_GROUP_SET, false, false},
};

static struct np_peer admin_case_peer(int i)
{
    if (admin_cases[i].group_set) {
        snprintf(t.d->cfg.admin_group, sizeof(t.d->cfg.admin_group), "%s", admin_group);
        while (admin_group_has(admin_group, 0, 0, NULL, 0) ==
               -EAGAIN) /* the lookup's thread answers */
            usleep(1000);
    }
    switch (admin_cases[i].peer) {
    case PEER_ROOT:
        return np_test_peer(1, 0, 0);
    case PEER_ADMIN_PRIMARY:
        return np_test_peer(1, USER_A, admin_gid);
    case PEER_OTHER:
    case PEER_OTHER_NO_GROUP_SET:
        break;
    }
    return np_test_peer(1, USER_B, admin_gid == NOGROUP ? NOGROUP + 1 : NOGROUP);
}

START_TEST(set_class_admins_only)
{
    const struct np_peer peer = admin_case_peer(_i);
    json_t *reply;

    two_jobs();
    reply = op_set_class(t.d, &peer, 10, "high");
    if (admin_cases[_i].allowed) {
        ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
        ck_assert_int_eq(json_integer_value(json_object_get(reply, "steps")), 1);
        ck_assert_int_eq(registry_find(&t.d->registry, 10, 0)->job_class, NP_CLASS_HIGH);
    } else {
        ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), "only root or members of"));
        ck_assert_int_eq(registry_find(&t.d->registry, 10, 0)->job_class, NP_CLASS_LOW);
    }
    ck_assert_int_eq(registry_find(&t.d->registry, 20, 0)->job_class, NP_CLASS_LOW);
    json_decref(reply);
}
END_TEST

START_TEST(set_class_checks_its_input)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    json_t *reply;

    two_jobs();
    reply = op_set_class(t.d, &root, 10, "medium");
    ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), "accepted: high, low"));
    json_decref(reply);
    reply = op_set_class(t.d, &root, 30, "high");
    ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), "job 30 is not tracked"));
    json_decref(reply);
}
END_TEST

/* With migration off, an administrator gets past the check to "migration is off". */
START_TEST(migrate_admins_only)
{
    const struct np_peer peer = admin_case_peer(_i);
    struct np_proto_request req = {.op = NP_OP_MIGRATE};
    uint64_t pending = 0;
    json_t *reply;

    req.migrate.from = 0;
    req.migrate.to = 1;
    req.migrate.pages = 10;
    reply = op_migrate(t.d, &peer, &pending, &req);
    ck_assert_ptr_nonnull(reply);
    ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), admin_cases[_i].allowed
                                                                 ? "migration is off"
                                                                 : "only root or members of"));
    ck_assert_uint_eq(pending, 0);
    json_decref(reply);
}
END_TEST

/* With the worker running on a 4-node topology, a request is queued and answered later. */
START_TEST(migrate_queues_for_the_worker)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    struct np_proto_request req = {.op = NP_OP_MIGRATE};
    struct np_err err = {0};
    struct pollfd done;
    uint64_t pending = 0;
    json_t *reply;

    ck_assert_int_eq(np_topology_load(&t.d->topology, NP_TOPOLOGY_XML,
                                      np_test_fixture("topology/sandman.xml"), &err),
                     0);
    t.d->cfg.migration = true;
    ck_assert_int_eq(migrator_start(&t.d->migration.migrator, 0, &t.d->log), 0);
    req.migrate.from = 0;
    req.migrate.to = 7; /* no such node */
    reply = op_migrate(t.d, &root, &pending, &req);
    ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), "(nodes 0,1,2,3)"));
    json_decref(reply);
    req.migrate.to = 1;
    req.migrate.dry_run = true;
    ck_assert_ptr_null(op_migrate(t.d, &root, &pending, &req));
    ck_assert_uint_ne(pending, 0);
    done = (struct pollfd){.fd = migrator_fd(t.d->migration.migrator), .events = POLLIN};
    ck_assert_int_eq(poll(&done, 1, 10000), 1);
    migration_collect(t.d);
    ck_assert(!migrator_busy(t.d->migration.migrator));
    ck_assert_ptr_nonnull(strstr(t.log.text, "administrator (uid 0), dry run"));
    /* --tier on a machine of one tier: nowhere to go, said; on no such node: said */
    req.migrate.to = NP_PROTO_NO_NODE;
    snprintf(req.migrate.tier, sizeof(req.migrate.tier), "down");
    reply = op_migrate(t.d, &root, &pending, &req);
    ck_assert_ptr_nonnull(
        strstr(np_test_reply_error(reply), "node 0 (tier 0): no node one tier down has memory"));
    json_decref(reply);
    req.migrate.from = 9;
    reply = op_migrate(t.d, &root, &pending, &req);
    ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply),
                                 "node 9: not a NUMA node of this machine (nodes 0,1,2,3)"));
    json_decref(reply);
    migration_stop(t.d);
}
END_TEST

/* An administrator's destination is kept, but a saturated one is warned about. */
START_TEST(migrate_warns_of_a_saturated_destination)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    struct np_proto_request req = {.op = NP_OP_MIGRATE};
    struct np_err err = {0};
    struct np_daemon_job *j;
    struct pollfd done;
    uint64_t pending = 0;

    ck_assert_int_eq(np_topology_load(&t.d->topology, NP_TOPOLOGY_XML,
                                      np_test_fixture("topology/sandman.xml"), &err),
                     0);
    two_jobs();
    j = registry_find(&t.d->registry, 10, 0);
    ck_assert_ptr_nonnull(j);
    free(j->sampler.pids);
    free(j->sampler.starttimes);
    j->sampler.pids = malloc(sizeof(pid_t));
    j->sampler.starttimes = calloc(1, sizeof(uint64_t));
    ck_assert_ptr_nonnull(j->sampler.pids);
    ck_assert_ptr_nonnull(j->sampler.starttimes);
    j->sampler.pids[0] = getpid();
    j->sampler.npids = 1;
    j->stats.bw_intervals = 1;
    j->stats.bw_last_total = 4e9;
    j->stats.pages_end[1] = 100 * page; /* all its traffic is node 1's memory */
    t.d->cfg.bandwidth_threshold_mb_s = 1000;
    t.d->cfg.migration = true;
    ck_assert_int_eq(migrator_start(&t.d->migration.migrator, 0, &t.d->log), 0);
    for (unsigned to = 2; to >= 1; to--) {
        req.migrate.from = 0;
        req.migrate.to = to;
        req.migrate.dry_run = true;
        ck_assert_ptr_null(op_migrate(t.d, &root, &pending, &req));
        done = (struct pollfd){.fd = migrator_fd(t.d->migration.migrator), .events = POLLIN};
        ck_assert_int_eq(poll(&done, 1, 10000), 1);
        migration_collect(t.d);
        /* node 2 serves nothing: no warning; node 1 serves 4000 MB/s: kept, and warned */
        ck_assert_int_eq(strstr(t.log.text,
                                "destination node 1 is saturated (4000 MB/s, misses; threshold "
                                "1000)") != NULL,
                         to == 1);
    }
    migration_stop(t.d);
}
END_TEST

/* advise: root only; the nodes' traffic every time; a user's history of a job name once a run
 * of it ended labelled, and never another user's. */
START_TEST(advise_root_only_with_history)
{
    const struct np_peer user = np_test_peer(1, USER_A, NOGROUP), root = np_test_peer(1, 0, 0);
    struct np_task_reg r = {.job_id = 30, .uid = USER_A, .pid = NP_TEST_LIVE_PID};
    struct np_proto_hint advice;
    struct np_err err = {0};
    json_t *reply = op_advise(t.d, &user, 30, 0, USER_A, "lbm");

    ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), "only root"));
    json_decref(reply);
    reply = op_advise(t.d, &root, 30, 0, USER_A, "lbm");
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    ck_assert_msg(np_proto_hint_decode(reply, &advice, &err) == 0, "%s", err.msg);
    ck_assert(!advice.history_known); /* no run of it has ended yet */
    json_decref(reply);
    snprintf(r.cpus, sizeof(r.cpus), "0");
    snprintf(r.policy_requested, sizeof(r.policy_requested), "auto");
    snprintf(r.sensitivity, sizeof(r.sensitivity), "high");
    reply = op_register(t.d, &root, &r);
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
    ck_assert_str_eq(registry_find(&t.d->registry, 30, 0)->job_name, "lbm");
    hint_remember(t.d, registry_find(&t.d->registry, 30, 0));
    reply = op_advise(t.d, &root, 31, 0, USER_A, "lbm");
    ck_assert_int_eq(np_proto_hint_decode(reply, &advice, &err), 0);
    ck_assert(advice.history_known);
    ck_assert_str_eq(advice.history, "high");
    ck_assert_uint_eq(advice.history_runs, 1);
    json_decref(reply);
    reply = op_advise(t.d, &root, 32, 0, USER_B, "lbm"); /* another user's job of that name */
    ck_assert_int_eq(np_proto_hint_decode(reply, &advice, &err), 0);
    ck_assert(!advice.history_known);
    json_decref(reply);
}
END_TEST

/* auto_load=cpu-busy: a node whose CPUs were busy all interval is loaded by the proxy, and the
 * advice names it as one; with the default (measured) the same node is not loaded. */
static void write_stat_idle(const char *root, unsigned busy, unsigned idle)
{
    char path[1200];
    FILE *f;

    snprintf(path, sizeof(path), "%s/proc/stat", root);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "cpu  %u 0 0 %u 0 0 0 0 0 0\ncpu0 %u 0 0 %u 0 0 0 0 0 0\n"
            "cpu1 %u 0 0 %u 0 0 0 0 0 0\n",
            2 * busy, 2 * idle, busy, idle, busy, idle);
    fclose(f);
}

static void write_stat(const char *root, unsigned busy)
{
    write_stat_idle(root, busy, 500);
}

/* An interval's reading of /proc/stat into the node counters, then the proxy's update from it,
 * as sampling_tick does. */
static void proxy_tick(struct np_daemon *d)
{
    np_node_counters_read_cpu(&d->counters, d->cfg.proc_root);
    hint_tick(d);
}

START_TEST(advise_cpu_busy_proxy)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    struct np_proto_hint advice;
    struct np_err err = {0};
    char dir[1200];
    json_t *reply;

    snprintf(dir, sizeof(dir), "%s/root", t.dir);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(dir, sizeof(dir), "%s/root/proc", t.dir);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(dir, sizeof(dir), "%s/root", t.dir);
    ck_assert_uint_lt(strlen(dir), sizeof(t.d->cfg.proc_root));
    memcpy(t.d->cfg.proc_root, dir, strlen(dir) + 1);
    free(t.d->cpu_node);
    t.d->cpu_node = calloc(2, sizeof(int)); /* CPUs 0 and 1 on node 0 */
    ck_assert_ptr_nonnull(t.d->cpu_node);
    t.d->ncpus = 2;
    t.d->cfg.auto_load = NP_AUTO_LOAD_CPU_BUSY;
    hint_load(t.d); /* the threshold: the reference penalty without a profile */
    write_stat(dir, 100);
    proxy_tick(t.d);
    usleep(100 * 1000);
    write_stat(dir, 100 + 100000); /* both CPUs busy all the while (clipped to 100%) */
    proxy_tick(t.d);
    reply = op_advise(t.d, &root, 40, 0, USER_A, "");
    ck_assert_msg(np_proto_hint_decode(reply, &advice, &err) == 0, "%s", err.msg);
    ck_assert(advice.node[0].present && advice.node[0].cpu_busy && advice.node[0].loaded);
    ck_assert_double_eq_tol(advice.node[0].utilisation, 1.0, 1e-9);
    json_decref(reply);
    /* A starved virtual machine: in half a second its kernel accounted 10 busy and 10 idle
     * ticks per CPU, not the 50 the tick rate gives: half busy, as the kernel counted it. */
    proxy_tick(t.d);
    usleep(500 * 1000);
    write_stat_idle(dir, 100 + 100000 + 10, 500 + 10);
    proxy_tick(t.d);
    reply = op_advise(t.d, &root, 42, 0, USER_A, "");
    ck_assert_msg(np_proto_hint_decode(reply, &advice, &err) == 0, "%s", err.msg);
    ck_assert_double_eq_tol(advice.node[0].utilisation, 0.5, 1e-9);
    json_decref(reply);
    t.d->cfg.auto_load = NP_AUTO_LOAD_MEASURED;
    reply = op_advise(t.d, &root, 41, 0, USER_A, "");
    ck_assert_int_eq(np_proto_hint_decode(reply, &advice, &err), 0);
    ck_assert(advice.node[0].present && !advice.node[0].cpu_busy && !advice.node[0].loaded);
    json_decref(reply);
}
END_TEST

START_TEST(dispatch_decodes_and_pings)
{
    const struct np_peer peer = np_test_peer(1, USER_A, NOGROUP);
    const char ping[] = "{\"v\":1,\"op\":\"ping\"}\n", bad[] = "{\"v\":1,\"op\":\"dance\"}\n";
    uint64_t pending = 0;
    json_t *reply = handlers_dispatch(t.d, &peer, &pending, ping, sizeof(ping) - 1);

    ck_assert(np_test_reply_ok(reply));
    ck_assert_int_eq(json_integer_value(json_object_get(reply, "version")), NP_PROTO_VERSION);
    json_decref(reply);
    reply = handlers_dispatch(t.d, &peer, &pending, bad, sizeof(bad) - 1);
    ck_assert(!np_test_reply_ok(reply));
    ck_assert_ptr_nonnull(strstr(t.log.text, "bad request from pid 1 uid 4242"));
    json_decref(reply);
}
END_TEST

/* registry.json is written per interval tick, not per request (a task sending
 * `applied` in a loop made 18 MiB of writes in 5 s). */
static struct stat registry_file(void)
{
    char path[1200];
    struct stat st;

    snprintf(path, sizeof(path), "%s/registry.json", t.d->cfg.state_dir);
    ck_assert_int_eq(stat(path, &st), 0);
    return st;
}

/* applied is sent once per task, before exec: a task's program repeating it (in a loop, with
 * the longest reason) is refused after the first, and neither the journal nor registry.json grows
 * with it; the one accepted is journalled as that task's entry alone. */
START_TEST(applied_in_a_loop_writes_nothing)
{
    const struct np_peer task = np_test_peer(NP_TEST_LIVE_PID, USER_A, NOGROUP);
    struct np_task_applied a = {.job_id = 10, .pid = NP_TEST_LIVE_PID};
    struct stat before, after;
    size_t journal_after_first;
    json_t *entry;

    two_jobs();
    ck_assert_uint_eq(t.d->registry.saves, 0); /* registering wrote nothing yet */
    registry_flush(t.d);                       /* the tick */
    ck_assert_uint_eq(t.d->registry.saves, 1);
    snprintf(a.policy, sizeof(a.policy), "interleave");
    memset(a.reason, 'r', sizeof(a.reason) - 1);
    {
        json_t *reply = op_applied(t.d, &task, &a);
        ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
        json_decref(reply);
    }
    journal_after_first = t.d->registry.journal_bytes;
    ck_assert_uint_gt(journal_after_first, 0);
    ck_assert_uint_lt(journal_after_first, 2 * sizeof(a.reason)); /* the task's entry, no more */
    before = registry_file();
    for (int i = 0; i < 1000; i++) {
        json_t *reply;
        snprintf(a.policy, sizeof(a.policy), i % 2 ? "interleave" : "local");
        reply = op_applied(t.d, &task, &a);
        ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), "said what it applied already"));
        json_decref(reply);
    }
    ck_assert_uint_eq(t.d->registry.journal_bytes, journal_after_first); /* nothing more */
    ck_assert_uint_eq(t.d->registry.saves, 1);
    after = registry_file();
    ck_assert_uint_eq(before.st_ino, after.st_ino); /* never replaced */
    entry = job_task_entry(registry_find(&t.d->registry, 10, 0), NP_TEST_LIVE_PID);
    ck_assert_str_eq(json_string_value(json_object_get(entry, "policy")), "interleave");
    /* the journal's one line since the tick is that task's entry (test_daemon_restart reads it) */
    {
        char path[1200], line[2048];
        FILE *f;
        snprintf(path, sizeof(path), "%s/registry.journal", t.d->cfg.state_dir);
        ck_assert_ptr_nonnull(f = fopen(path, "r"));
        ck_assert_ptr_nonnull(fgets(line, sizeof(line), f)); /* the newline a line starts with */
        ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
        ck_assert_ptr_nonnull(strstr(line, "{\"task\":{"));
        ck_assert_ptr_null(fgets(line, sizeof(line), f));
        fclose(f);
    }
}
END_TEST

/* What a restart needs does mark it: a class set, a step ended. */
START_TEST(restart_changes_are_written_at_the_tick)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    uint64_t pending = 0;
    json_t *reply;

    two_jobs();
    registry_flush(t.d);
    reply = op_set_class(t.d, &root, 10, "high");
    json_decref(reply);
    ck_assert(t.d->registry.dirty);
    registry_flush(t.d);
    ck_assert_uint_eq(t.d->registry.saves, 2);
    reply = op_step_end(t.d, &root, &pending, 20, 0, false);
    json_decref(reply);
    ck_assert(t.d->registry.dirty);
    registry_flush(t.d);
    registry_flush(t.d);
    ck_assert_uint_eq(t.d->registry.saves, 3);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_handlers");
    TCase *tc = tcase_create("ops");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, register_root_only);
    tcase_add_test(tc, register_marks_counters_opened_after_exec);
    tcase_add_test(tc, register_of_an_ended_task_is_no_error);
    tcase_add_loop_test(tc, applied_by_the_task_itself, 0,
                        (int)(sizeof(applied_cases) / sizeof(applied_cases[0])));
    tcase_add_test(tc, applied_keeps_auto_facts);
    tcase_add_test(tc, step_end_root_only);
    tcase_add_loop_test(tc, status_shows_own_jobs, 0,
                        (int)(sizeof(status_cases) / sizeof(status_cases[0])));
    tcase_add_loop_test(tc, set_class_admins_only, 0,
                        (int)(sizeof(admin_cases) / sizeof(admin_cases[0])));
    tcase_add_test(tc, set_class_checks_its_input);
    tcase_add_loop_test(tc, migrate_admins_only, 0,
                        (int)(sizeof(admin_cases) / sizeof(admin_cases[0])));
    tcase_add_test(tc, migrate_queues_for_the_worker);
    tcase_add_test(tc, migrate_warns_of_a_saturated_destination);
    tcase_add_test(tc, dispatch_decodes_and_pings);
    tcase_add_test(tc, advise_root_only_with_history);
    tcase_add_test(tc, advise_cpu_busy_proxy);
    tcase_add_test(tc, applied_in_a_loop_writes_nothing);
    tcase_add_test(tc, restart_changes_are_written_at_the_tick);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
