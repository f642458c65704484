/*
 * A step registered with CPUs on two nodes whose tasks are bound to one (task/affinity after
 * the allocation): after a detail interval its local nodes, hence its move group in the
 * migration view, the status reply, the report and the trace's replay, are that one node's;
 * the registered CPUs and nodes stay beside them. Fixture tree roots/affinity; CPUs 0-3 are
 * node 0's and 4-7 node 1's.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ops.h"
#include "daemon.h"
#include "np_daemon_test.h"

static struct np_test_daemon t;

static void setup(void)
{
    const char *root;

    np_test_daemon_init(&t);
    root = np_test_root("affinity"); /* a static buffer: after the init's own use of it */
    ck_assert_uint_lt(strlen(root), sizeof(t.d->cfg.proc_root));
    memcpy(t.d->cfg.proc_root, root, strlen(root) + 1);
    t.d->ncpus = 8;
    t.d->cpu_node = malloc(8 * sizeof(int));
    ck_assert_ptr_nonnull(t.d->cpu_node);
    for (int c = 0; c < 8; c++)
        t.d->cpu_node[c] = c / 4;
}

static void teardown(void)
{
    np_test_daemon_fini(&t);
}

static const struct {
    const char *name;
    pid_t task;
    uint64_t local_nodes;        /* after a detail interval */
    enum np_move_group group0_1; /* its move group for a request from node 0 to node 1 */
    const char *shared_cpus;     /* of the helper's CPUs 1 and 5, those the job may run on */
} cases[] = {
    {"bound to node 0", 510, 1u << 0, NP_GROUP_LOSE, "1"},
    {"bound to node 1", 550, 1u << 1, NP_GROUP_GAIN, "5"},
    {"bound outside its CPUs: registered kept", 540, 3u, NP_GROUP_NEUTRAL, "1,5"},
};

static struct np_daemon_job *step(pid_t task)
{
    struct np_err err = {0};
    struct np_daemon_job *j = job_new(t.d, 7, 0, getuid(), "0-7", "", "high", &err);

    ck_assert_msg(j != NULL, "%s", err.msg);
    ck_assert_msg(np_sampler_add_task(&j->sampler, task, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(j->meta.local_nodes, 3u); /* registered: both nodes */
    return j;
}

START_TEST(local_nodes_follow_the_binding)
{
    struct np_daemon_job *j = step(cases[_i].task);
    struct np_node_view *view;

    ck_assert_int_eq(hwloc_bitmap_list_sscanf(t.d->helper_cpus, "1,5"), 0);
    sampling_sample_job(t.d, j, np_monotonic_s(), false, false); /* the first is a detail one */
    ck_assert_uint_eq(j->meta.local_nodes, cases[_i].local_nodes);
    /* the report's "shared with the helper" is of the CPUs the tasks may run on */
    ck_assert_str_eq(j->meta.shared_cpus, cases[_i].shared_cpus);
    ck_assert_uint_eq(j->stats.local_nodes, cases[_i].local_nodes);
    ck_assert_uint_eq(j->meta.registered_nodes, 3u);
    ck_assert_str_eq(j->meta.cpus, "0-7");
    view = migration_build_view(t.d);
    ck_assert_ptr_nonnull(view);
    ck_assert_uint_eq(view->njobs, 1);
    ck_assert_uint_eq(view->jobs[0].cpu_nodes, cases[_i].local_nodes);
    ck_assert_int_eq(np_move_group_of(view->jobs[0].cpu_nodes, 0, 1), cases[_i].group0_1);
    migrator_view_free(view);
}
END_TEST

/* A task that reports where it runs (applied, from the plugin's task_init, after Slurm bound
 * it) has its affinity read at the next interval, not a detail interval later. */
START_TEST(applied_reads_the_affinity_at_once)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    struct np_task_applied a = {.job_id = 7, .step_id = 0, .pid = 510};
    struct np_daemon_job *j = step(540); /* bound outside its CPUs: registered kept */
    struct np_err err = {0};
    json_t *reply;
    double now = np_monotonic_s();

    sampling_sample_job(t.d, j, now, false, false);
    ck_assert_uint_eq(j->meta.local_nodes, 3u);
    /* a second task, bound to node 0 */
    ck_assert_int_eq(np_sampler_add_task(&j->sampler, 510, &err), 0);
    json_array_append_new(j->tasks, json_pack("{s:i}", "pid", 510));
    sampling_sample_job(t.d, j, now += 0.5, false, false); /* no detail interval yet */
    ck_assert_uint_eq(j->meta.local_nodes, 3u);
    snprintf(a.cpus, sizeof(a.cpus), "0-1");
    reply = op_applied(t.d, &root, &a);
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
    sampling_sample_job(t.d, j, now + 0.5, false, false);
    ck_assert_uint_eq(j->meta.local_nodes, 1u << 0);
    ck_assert_str_eq(j->meta.effective_cpus, "0-3"); /* 510 and its child 511 */
}
END_TEST

static json_t *job_of_status(void)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    json_t *reply = op_status(t.d, &root, 0);
    json_t *job = json_incref(json_array_get(json_object_get(reply, "jobs"), 0));

    json_decref(reply);
    ck_assert_ptr_nonnull(job);
    return job;
}

static int keep_report(json_t *report, void *arg)
{
    *(json_t **)arg = json_incref(report);
    return 0;
}

/* Status, report and trace say both: what was registered and where the tasks may run; the
 * replay of the trace gives the report the helper wrote. */
START_TEST(status_report_and_trace_carry_both)
{
    struct np_daemon_job *j;
    json_t *job, *report = NULL;
    struct np_err err = {0};
    char path[512], cmd[1100];
    FILE *in;

    snprintf(path, sizeof(path), "%s/trace.jsonl", t.dir);
    t.d->trace = fopen(path, "w");
    ck_assert_ptr_nonnull(t.d->trace);
    j = step(510);
    sampling_sample_job(t.d, j, np_monotonic_s(), false, false);
    job = job_of_status();
    ck_assert_str_eq(json_string_value(json_object_get(job, "cpus")), "0-7");
    ck_assert_str_eq(json_string_value(json_object_get(job, "effective_cpus")), "0-3");
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(job, "local_nodes"), 0)), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(job, "local_nodes")), 1);
    ck_assert_uint_eq(json_array_size(json_object_get(job, "registered_nodes")), 2);
    json_decref(job);
    job_finish(t.d, j, true);
    fclose(t.d->trace);
    t.d->trace = NULL;

    in = fopen(path, "r");
    ck_assert_ptr_nonnull(in);
    ck_assert_int_eq(np_trace_replay(in, path, keep_report, &report, &err), 1);
    fclose(in);
    ck_assert_ptr_nonnull(report);
    ck_assert_str_eq(json_string_value(json_object_get(report, "effective_cpus")), "0-3");
    ck_assert_uint_eq(json_array_size(json_object_get(report, "local_nodes")), 1);
    ck_assert_uint_eq(json_array_size(json_object_get(report, "registered_nodes")), 2);
    json_decref(report);
    /* the report the helper wrote says the same */
    snprintf(cmd, sizeof(cmd), "grep -q '\"effective_cpus\": *\"0-3\"' %s/spool/7.0.testhost.json",
             t.dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("daemon_affinity");
    TCase *tc = tcase_create("daemon_affinity");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, local_nodes_follow_the_binding, 0,
                        (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, applied_reads_the_affinity_at_once);
    tcase_add_test(tc, status_report_and_trace_carry_both);
    suite_add_tcase(suite, tc);
    return np_test_run(suite);
}
