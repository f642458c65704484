/*
 * numaplaced's side of migration without the worker: a finished request booked into its jobs'
 * figures, and the triggers' back-off (a request that moved nothing waits 30 s; a homecoming
 * waits per job).
 */
#include <check.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "np_daemon_test.h"
#include "ops.h"

#define NOW 1000.0

static struct np_test_daemon t;
static struct np_daemon_job *job1, *job2;

static void setup(void)
{
    struct np_err err = {0};

    np_test_daemon_init(&t);
    job1 = job_new(t.d, 1, 0, getuid(), "", "", "high", &err);
    job2 = job_new(t.d, 2, 0, getuid(), "", "", "high", &err);
    ck_assert_ptr_nonnull(job1);
    ck_assert_ptr_nonnull(job2);
}

static void teardown(void)
{
    np_test_daemon_fini(&t);
}

/* A finished request on a view of jobs 1 and 2 (in that order), one outcome per moved job. */
static void finished(struct migrator_done *done, enum np_trigger_kind trigger, long target,
                     uint64_t moved_job1, bool dry_run)
{
    memset(done, 0, sizeof(*done));
    done->view = migrator_view_new(2);
    ck_assert_ptr_nonnull(done->view);
    done->view->nnodes = 2;
    done->view->njobs = 2;
    done->view->jobs[0].job_id = 1;
    done->view->jobs[1].job_id = 2;
    done->result.request = (struct np_request){
        .src = 0, .dst = 1, .pages = 100, .trigger = trigger, .target_job = target};
    done->result.dry_run = dry_run;
    done->result.moved = dry_run ? 0 : moved_job1;
    if (moved_job1) {
        done->result.outcomes = calloc(1, sizeof(*done->result.outcomes));
        ck_assert_ptr_nonnull(done->result.outcomes);
        done->result.noutcomes = 1;
        done->result.outcomes[0].job_index = 0;
        done->result.outcomes[0].planned = moved_job1;
        done->result.outcomes[0].moved.pages_moved = moved_job1;
    }
}

/* Which back-off a finished request leaves. */
static const struct {
    enum np_trigger_kind trigger;
    uint64_t moved;
    bool trigger_waits; /* the trigger as a whole */
    bool job1_waits;    /* homecoming of job 1 only */
} backoff_cases[] = {
    {NP_TRIGGER_PRESSURE, 0, true, false},   {NP_TRIGGER_BANDWIDTH, 0, true, false},
    {NP_TRIGGER_HOMECOMING, 0, false, true}, {NP_TRIGGER_ADMIN, 0, false, false},
    {NP_TRIGGER_PRESSURE, 64, false, false}, {NP_TRIGGER_HOMECOMING, 64, false, false},
};

START_TEST(nothing_moved_backs_off)
{
    const enum np_trigger_kind kind = backoff_cases[_i].trigger;
    struct migrator_done done;

    finished(&done, kind, kind == NP_TRIGGER_HOMECOMING ? 0 : -1, backoff_cases[_i].moved, false);
    migration_book(t.d, &done, NOW);
    ck_assert(migration_trigger_ready(t.d, kind, NOW + NPD_TRIGGER_BACKOFF_S));
    ck_assert_int_eq(migration_trigger_ready(t.d, kind, NOW + NPD_TRIGGER_BACKOFF_S - 0.5),
                     !backoff_cases[_i].trigger_waits);
    ck_assert_int_eq(job1->homecoming_quiet_until > NOW, backoff_cases[_i].job1_waits);
    if (backoff_cases[_i].job1_waits)
        ck_assert_double_eq(job1->homecoming_quiet_until, NOW + 30.0);
    ck_assert_double_eq(job2->homecoming_quiet_until, 0); /* one stuck job holds no other back */
    /* the other triggers are never held back by this one */
    for (int k = NP_TRIGGER_PRESSURE; k < NP_TRIGGER_COUNT; k++)
        if (k != (int)kind)
            ck_assert(migration_trigger_ready(t.d, (enum np_trigger_kind)k, NOW));
    migrator_done_fini(&done);
}
END_TEST

START_TEST(homecoming_pauses_its_job_in_the_view)
{
    struct migrator_done done;
    struct np_node_view *view;

    finished(&done, NP_TRIGGER_HOMECOMING, 1, 0, false);
    /* the view is of jobs with processes: give job 2 one so it appears */
    job2->sampler.pids = malloc(sizeof(pid_t));
    ck_assert_ptr_nonnull(job2->sampler.pids);
    job2->sampler.pids[0] = getpid();
    job2->sampler.starttimes = malloc(sizeof(uint64_t));
    ck_assert_ptr_nonnull(job2->sampler.starttimes);
    job2->sampler.starttimes[0] = 4242;
    job2->sampler.npids = 1;
    migration_book(t.d, &done, np_monotonic_s());
    view = migration_build_view(t.d);
    ck_assert_ptr_nonnull(view);
    ck_assert_uint_eq(view->njobs, 1);
    ck_assert_uint_eq(view->jobs[0].job_id, 2);
    ck_assert(view->jobs[0].homecoming_paused);
    /* the mover is told who each pid must still be */
    ck_assert_ptr_nonnull(view->jobs[0].starttimes);
    ck_assert_uint_eq(view->jobs[0].starttimes[0], 4242);
    ck_assert_uint_eq(view->jobs[0].uid, getuid());
    migrator_view_free(view);
    migrator_done_fini(&done);
}
END_TEST

/* The view is of jobs with processes: job 2's is this one. */
static void give_job2_this_process(void)
{
    job2->sampler.pids = malloc(sizeof(pid_t));
    job2->sampler.starttimes = calloc(1, sizeof(uint64_t));
    ck_assert_ptr_nonnull(job2->sampler.pids);
    ck_assert_ptr_nonnull(job2->sampler.starttimes);
    job2->sampler.pids[0] = getpid();
    job2->sampler.npids = 1;
}

/* Sandman's topology, and job 2 (this process) on node 0 with 4 GB/s of LLC misses and its pages
 * 3:1 on nodes 1 and 2. */
static void sandman_job2_on_nodes_1_and_2(void)
{
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    struct np_err err = {0};

    ck_assert_int_eq(np_topology_load(&t.d->topology, NP_TOPOLOGY_XML,
                                      np_test_fixture("topology/sandman.xml"), &err),
                     0);
    give_job2_this_process();
    job2->stats.local_nodes = 1u << 0;
    job2->stats.bw_intervals = 1;
    job2->stats.bw_last_total = 4e9;
    job2->stats.pages_end[1] = 300 * page;
    job2->stats.pages_end[2] = 100 * page;
}

/* The view's node traffic is the memory node's: job 2 runs on node 0 with its pages 3:1 on nodes
 * 1 and 2, so its 4 GB/s of LLC misses load nodes 1 and 2, not its CPUs' node 0. */
START_TEST(view_spreads_bandwidth_over_memory_nodes)
{
    struct np_node_view *view;
    json_t *nodes;

    sandman_job2_on_nodes_1_and_2();
    job2->stats.bw_last[0] = 4e9; /* the misses, counted on the CPUs' node */
    if (_i == 2) /* asked for at registration, before any task said what it applied */
        snprintf(job2->meta.policy_requested, sizeof(job2->meta.policy_requested), "fast-tier");
    view = migration_build_view(t.d);
    ck_assert_ptr_nonnull(view);
    ck_assert_uint_eq(view->nnodes, 4);
    ck_assert(view->node_bandwidth_available);
    ck_assert_double_eq_tol(view->node_bandwidth[0], 0, 1);
    ck_assert_double_eq_tol(view->node_bandwidth[1], 3e9, 1);
    ck_assert_double_eq_tol(view->node_bandwidth[2], 1e9, 1);
    ck_assert_str_eq(np_bandwidth_source_name(view->node_bandwidth_source[1]), "misses");
    ck_assert_str_eq(np_bandwidth_source_name(view->node_bandwidth_source[2]), "misses");
    /* this fixture's proc root has no node meminfo: no memory known, nothing to say */
    ck_assert_str_eq(np_bandwidth_source_name(view->node_bandwidth_source[3]), "unavailable");
    migrator_view_free(view);
    /* what `numaplace status` shows: MB/s only for a measured source, else the reason */
    nodes = migration_node_traffic_json(t.d);
    ck_assert_uint_eq(json_array_size(nodes), 4);
    ck_assert_double_eq_tol(
        json_number_value(json_object_get(json_array_get(nodes, 1), "bytes_per_s")), 3e9, 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(nodes, 1), "source")),
                     "misses");
    ck_assert_ptr_null(json_object_get(json_array_get(nodes, 3), "bytes_per_s"));
    ck_assert_ptr_nonnull(json_object_get(json_array_get(nodes, 3), "unavailable"));
    json_decref(nodes);
}
END_TEST

/* Where the memory controllers count (uncore_bw_apply), their figure replaces the estimate node by
 * node; a controller without a rate yet, or on a node it does not serve, changes nothing. */
START_TEST(controllers_replace_the_estimate)
{
    struct np_node_view *view;

    sandman_job2_on_nodes_1_and_2();
    t.d->ncpus = 64; /* Sandman: node k holds CPUs 8k..8k+7 and 32+8k..39+8k */
    t.d->cpu_node = malloc(64 * sizeof(int));
    ck_assert_ptr_nonnull(t.d->cpu_node);
    for (int c = 0; c < 64; c++)
        t.d->cpu_node[c] = (c % 32) / 8;
    t.d->uncore.boxes = calloc(2, sizeof(*t.d->uncore.boxes));
    ck_assert_ptr_nonnull(t.d->uncore.boxes);
    t.d->uncore.nboxes = 2;
    t.d->uncore.boxes[0] = (struct np_uncore_box){.cpu = 40, .fd = {-1, -1}, .bytes_per_s = 5e9};
    t.d->uncore.boxes[1] = (struct np_uncore_box){.cpu = 16, .fd = {-1, -1}, .bytes_per_s = -1};
    view = migration_build_view(t.d);
    ck_assert_ptr_nonnull(view);
    ck_assert_double_eq_tol(view->node_bandwidth[1], 5e9, 1); /* CPU 40 is node 1's */
    ck_assert_str_eq(np_bandwidth_source_name(view->node_bandwidth_source[1]), "uncore");
    ck_assert_double_eq_tol(view->node_bandwidth[2], 1e9, 1); /* no rate yet: the estimate */
    ck_assert_str_eq(np_bandwidth_source_name(view->node_bandwidth_source[2]), "misses");
    migrator_view_free(view);
}
END_TEST

/* The controllers are read every interval with no job too: status and metrics show the traffic
 * now, not the rate from when the last job ran. Pipes stand in for the two counters. */
START_TEST(controllers_are_read_with_no_job)
{
    struct np_test_daemon idle;
    struct np_uncore_box *box;
    int fds[2][2];

    np_test_daemon_init(&idle);
    ck_assert_uint_eq(idle.d->registry.count, 0);
    idle.d->uncore.boxes = calloc(1, sizeof(*idle.d->uncore.boxes));
    ck_assert_ptr_nonnull(idle.d->uncore.boxes);
    idle.d->uncore.nboxes = 1;
    box = &idle.d->uncore.boxes[0];
    *box = (struct np_uncore_box){.last = {0, 0}, .last_t = 1.0, .bytes_per_s = 5e9};
    for (int k = 0; k < 2; k++) {
        const uint64_t count = 1000;
        ck_assert_int_eq(pipe(fds[k]), 0);
        ck_assert_int_eq(write(fds[k][1], &count, sizeof(count)), (ssize_t)sizeof(count));
        box->fd[k] = fds[k][0];
    }
    sampling_tick(idle.d);
    ck_assert_msg(box->last_t > 1.0, "no job: the counters were not read");
    ck_assert_uint_eq(box->last[0], 1000);
    ck_assert(box->bytes_per_s < 5e9); /* 2000 lines over the seconds since 1.0 */
    for (int k = 0; k < 2; k++)
        close(fds[k][1]);
    np_test_daemon_fini(&idle); /* closes the read ends */
}
END_TEST

START_TEST(moves_are_booked_into_the_job)
{
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    struct migrator_done done;
    json_t *req;

    job1->last_pages_mono = 5.0;
    finished(&done, NP_TRIGGER_PRESSURE, -1, 512, _i == 1);
    migration_book(t.d, &done, job1->registered_mono + 3.0);
    ck_assert_uint_eq(json_array_size(job1->stats.migration_requests), 1);
    req = json_array_get(job1->stats.migration_requests, 0);
    ck_assert_str_eq(json_string_value(json_object_get(req, "trigger")), "memory-pressure");
    ck_assert_int_eq(json_is_true(json_object_get(req, "dry_run")), _i == 1);
    ck_assert_int_eq(json_integer_value(json_object_get(req, "moved_pages")), 512);
    ck_assert_ptr_null(job2->stats.migration_requests);
    if (_i == 0) {
        ck_assert_uint_eq(job1->stats.pages_out[0], 512 * page);
        ck_assert_uint_eq(job1->stats.pages_in[1], 512 * page);
        ck_assert_uint_eq(job1->stats.nevents, 1);
        ck_assert_double_eq_tol(job1->stats.events[0].t, 3.0, 1e-9);
        ck_assert_double_eq(job1->last_pages_mono, -1e9); /* pages read again next sample */
    } else {
        ck_assert_uint_eq(job1->stats.pages_out[0], 0); /* a dry run moves nothing */
        ck_assert_uint_eq(job1->stats.nevents, 0);
        ck_assert_double_eq(job1->last_pages_mono, 5.0);
    }
    migrator_done_fini(&done);
}
END_TEST

START_TEST(outcome_of_an_ended_job_is_dropped)
{
    struct migrator_done done;

    finished(&done, NP_TRIGGER_BANDWIDTH, -1, 64, false);
    job_finish(t.d, job1, false);
    migration_book(t.d, &done, NOW); /* job 1 is gone: nothing to book, nothing to crash */
    ck_assert_ptr_null(registry_find(&t.d->registry, 1, 0));
    ck_assert_ptr_null(job2->stats.migration_requests);
    ck_assert_uint_eq(t.log.errors, 0);
    migrator_done_fini(&done);
}
END_TEST

START_TEST(queue_is_bounded)
{
    const struct np_request r = {.src = 0, .dst = 1, .pages = 1, .target_job = -1};

    for (int i = 0; i < NPD_QUEUE_MAX; i++)
        ck_assert_int_eq(migration_enqueue(t.d, &r, NULL, false, (uint64_t)i + 1), 0);
    ck_assert_int_eq(migration_enqueue(t.d, &r, NULL, false, 99), -EBUSY);
    ck_assert_uint_eq(t.d->migration.nqueued, NPD_QUEUE_MAX);
    migration_submit_next(t.d); /* no worker (migration off): the queue stays */
    ck_assert_uint_eq(t.d->migration.nqueued, NPD_QUEUE_MAX);
}
END_TEST

/* What an order by prediction is told (fill_job_view): the sensitivity model's prediction from
 * the step's cumulative counters, or none. The hand-made model: ln(s) = 0.5 + 0.2 ln(mpki + 0.01).
 */
static const struct {
    const char *what;
    bool loaded;
    bool have_llc;
    uint64_t instructions, misses;
    bool expected;
} prediction_cases[] = {
    {"counters and a model", true, true, 1000000, 1000, true},
    {"no model loaded", false, true, 1000000, 1000, false},
    {"no LLC counter", true, false, 1000000, 1000, false},
    {"no instructions counted", true, true, 0, 0, false},
};

START_TEST(view_carries_the_prediction)
{
    struct np_sample *last = &job1->stats.last;
    struct np_node_view *view;

    t.d->sens_model = (struct np_sens_model){
        .features = NP_SENS_LOG_MPKI, .coef = {0.5, 0.2}, .threshold = 1.5, .rows = 10};
    t.d->sens_loaded = prediction_cases[_i].loaded;
    job1->sampler.pids = malloc(sizeof(pid_t));
    job1->sampler.starttimes = calloc(1, sizeof(uint64_t));
    ck_assert_ptr_nonnull(job1->sampler.pids);
    ck_assert_ptr_nonnull(job1->sampler.starttimes);
    job1->sampler.pids[0] = getpid();
    job1->sampler.npids = 1;
    last->have_perf[NP_PERF_CYCLES] = last->have_perf[NP_PERF_INSTRUCTIONS] = true;
    last->have_perf[NP_PERF_LLC_LOAD_MISSES] = prediction_cases[_i].have_llc;
    last->have_perf[NP_PERF_LLC_STORE_MISSES] = true;
    last->perf[NP_PERF_CYCLES] = 2 * prediction_cases[_i].instructions;
    last->perf[NP_PERF_INSTRUCTIONS] = prediction_cases[_i].instructions;
    last->perf[NP_PERF_LLC_LOAD_MISSES] = prediction_cases[_i].misses;
    last->perf[NP_PERF_LLC_STORE_MISSES] = 0;
    view = migration_build_view(t.d);
    ck_assert_ptr_nonnull(view);
    ck_assert_uint_eq(view->njobs, 1);
    ck_assert_msg(view->jobs[0].has_prediction == prediction_cases[_i].expected, "%s",
                  prediction_cases[_i].what);
    if (prediction_cases[_i].expected) /* 1 miss per kilo-instruction */
        ck_assert_double_eq_tol(view->jobs[0].predicted_remote, exp(0.5 + 0.2 * log1p(0.01)), 1e-9);
    migrator_view_free(view);
}
END_TEST

/* On a captured tiered guest (HBM nodes 2-3 in the kernel's fast tier): the view carries each
 * node's tier, a step placed by fast-tier wants the fast tier, and the kernel tiers nothing. */
START_TEST(view_carries_tiers_and_fast_tier_steps)
{
    const char *root = np_test_root("qemu-hbm-6.12");
    struct np_node_view *view;
    struct np_err err = {0};

    memcpy(t.d->cfg.proc_root, root, strlen(root) + 1);
    setenv("HWLOC_FSROOT", root, 1); /* a single-threaded test: hwloc reads the captured tree */
    ck_assert_int_eq(np_topology_load(&t.d->topology, NP_TOPOLOGY_LIVE, root, &err), 0);
    unsetenv("HWLOC_FSROOT");
    migration_read_tier_figures(t.d); /* as main does after the topology loads */
    give_job2_this_process();
    ck_assert_int_eq(
        json_array_append_new(job2->tasks, json_pack("{s:i, s:s}", "pid", (int)getpid(), "policy",
                                                     _i ? "fast-tier" : "local")),
        0);
    if (_i == 2) /* asked for at registration, before any task said what it applied */
        snprintf(job2->meta.policy_requested, sizeof(job2->meta.policy_requested), "fast-tier");
    view = migration_build_view(t.d);
    ck_assert_ptr_nonnull(view);
    ck_assert_uint_eq(view->nnodes, 4);
    for (unsigned n = 0; n < 4; n++)
        ck_assert_uint_eq(view->tier[n], n < 2 ? 1 : 0);
    ck_assert_uint_eq(view->njobs, 1);
    ck_assert(view->jobs[0].wants_fast_tier == (_i >= 1));
    ck_assert_str_eq(view->kernel_tiering, ""); /* demotion off, NUMA balancing mode 1 */
    /* HMAT as the guest's firmware gave it: HBM 120 ns and 80 GB/s beside DRAM's 100 and 20 */
    ck_assert_float_eq_tol(view->latency_ratio[0][2], 1.2f, 1e-6f);
    ck_assert_float_eq_tol(view->latency_ratio[1][3], 1.2f, 1e-6f);
    ck_assert_float_eq(view->latency_ratio[0][1], 0.0f);              /* not in HMAT: SLIT counts */
    ck_assert_double_eq_tol(view->capacity[0], 20480 * 1048576.0, 1); /* hwloc's MiB/s */
    ck_assert_double_eq_tol(view->capacity[2], 81920 * 1048576.0, 1);
    migrator_view_free(view);
    if (_i == 0) { /* status shows the step's pages per tier beside its pages per node */
        const struct np_peer root_peer = np_test_peer(1, 0, 0);
        json_t *reply, *by_tier = NULL, *entry;
        size_t k;
        job2->stats.pages_end[0] = 4096;
        job2->stats.pages_end[1] = 1024;
        job2->stats.pages_end[2] = 8192;
        reply = op_status(t.d, &root_peer, 0);
        json_array_foreach(json_object_get(reply, "jobs"), k, entry)
        {
            if (json_integer_value(json_object_get(entry, "job")) == job2->meta.job_id)
                by_tier = json_object_get(entry, "pages_by_tier");
        }
        ck_assert_ptr_nonnull(by_tier);
        ck_assert_int_eq(json_integer_value(json_object_get(by_tier, "0")), 8192); /* HBM */
        ck_assert_int_eq(json_integer_value(json_object_get(by_tier, "1")), 5120); /* DRAM */
        ck_assert_uint_eq(json_object_size(by_tier), 2);
        json_decref(reply);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_migration");
    TCase *tc = tcase_create("booking");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, nothing_moved_backs_off, 0,
                        (int)(sizeof(backoff_cases) / sizeof(backoff_cases[0])));
    tcase_add_test(tc, homecoming_pauses_its_job_in_the_view);
    tcase_add_test(tc, view_spreads_bandwidth_over_memory_nodes);
    tcase_add_test(tc, controllers_replace_the_estimate);
    tcase_add_loop_test(tc, moves_are_booked_into_the_job, 0, 2);
    tcase_add_test(tc, outcome_of_an_ended_job_is_dropped);
    tcase_add_test(tc, queue_is_bounded);
    tcase_add_loop_test(tc, view_carries_the_prediction, 0,
                        sizeof(prediction_cases) / sizeof(prediction_cases[0]));
    tcase_add_loop_test(tc, view_carries_tiers_and_fast_tier_steps, 0, 3);
    suite_add_tcase(s, tc);
    tc = tcase_create("idle");
    tcase_add_test(tc, controllers_are_read_with_no_job);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
