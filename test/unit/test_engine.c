/*
 * The engine and the triggers over hand-built views of the model's 4-node machine (distances
 * 10/21/30 as in docs/model.md). Requests run as dry runs against this test's own process (its
 * pages are all on node 0 here), so planning is checked exactly and nothing needs a second node.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "np_test.h"
#include "numaplace/engine.h"

#define MiB (1024ull * 1024ull)
#define GiB (1024ull * MiB)

static pid_t self_pid[1];

static const uint8_t sandman[4][4] = {
    {10, 21, 21, 30}, {21, 10, 30, 21}, {21, 30, 10, 21}, {30, 21, 21, 10}};

static struct np_job_view jobs[6];
static struct np_node_view view;

/* Jobs: id, class, CPUs on node, pages on node 0, bandwidth. */
static void setup_view(void)
{
    static const struct {
        enum np_class cls;
        unsigned cpu_node;
        uint64_t pages0;
        double bw;
    } spec[] = {
        {NP_CLASS_LOW, 1, 50, 500},    /* 1: gains by 0 -> 1 */
        {NP_CLASS_LOW, 1, 100, 2000},  /* 2: gains, heavier */
        {NP_CLASS_LOW, 2, 40, 300},    /* 3: neutral */
        {NP_CLASS_HIGH, 1, 500, 9000}, /* 4: high: never a candidate */
        {NP_CLASS_LOW, 0, 70, 50},     /* 5: loses */
        {NP_CLASS_HIGH, 3, 0, 100},    /* 6: high, some pages far away (node 0 has none) */
    };
    memset(&view, 0, sizeof(view));
    memset(jobs, 0, sizeof(jobs));
    self_pid[0] = getpid();
    view.nnodes = 4;
    for (unsigned a = 0; a < 4; a++) {
        view.total_bytes[a] = 64 * GiB;
        view.free_bytes[a] = 32 * GiB;
        for (unsigned b = 0; b < 4; b++)
            view.distance[a][b] = sandman[a][b];
    }
    for (size_t i = 0; i < 6; i++) {
        jobs[i].job_id = (uint32_t)(i + 1);
        jobs[i].id = (uint64_t)(i + 1) << 16;
        jobs[i].job_class = spec[i].cls;
        jobs[i].cpu_nodes = 1ull << spec[i].cpu_node;
        jobs[i].pids = self_pid;
        jobs[i].npids = 1;
        jobs[i].pages_on_node[0] = spec[i].pages0;
        jobs[i].bandwidth = spec[i].bw;
    }
    jobs[5].pages_on_node[2] = 300; /* job 6 (high, CPUs on 3) has pages on node 2 */
    view.jobs = jobs;
    view.njobs = 6;
}

static const struct {
    const char *order;
    uint64_t pages;
    const char *expected; /* job:planned,... */
    uint64_t planned;
} request_cases[] = {
    {"best-plus", 120, "2:100,1:20", 120},
    {"best-plus", 1000, "2:100,1:50,3:40,5:70", 260}, /* ends short; high job 4 untouched */
    {"best", 160, "2:100,1:50,5:10", 160},            /* others ascending: 5 (50) before 3 (300) */
    {"worst-plus", 80, "5:70,3:10", 80},
    {"worst", 45, "3:40,5:5", 45},
};

#define NCASES (sizeof(request_cases) / sizeof(request_cases[0]))

START_TEST(test_request_plans_in_order)
{
    /* Each case twice: shared pages left (the default), then allowed to move (move_shared):
     * the plan and the path are the same. */
    const size_t c = (size_t)_i % NCASES;
    struct np_engine_config cfg = {.dry_run = true, .move_shared = (size_t)_i >= NCASES};
    struct np_request req = {.src = 0, .dst = 1, .target_job = -1};
    struct np_request_result res;
    struct np_err err = {0};
    char got[128] = "";

    if (np_test_numa_syscalls_missing("test_request_plans_in_order"))
        return;

    setup_view();
    cfg.order = np_order_lookup(request_cases[c].order);
    req.pages = request_cases[c].pages;
    ck_assert_int_eq(np_engine_run_request(&view, &cfg, &req, NULL, NULL, &res, &err), 0);
    ck_assert_uint_eq(res.candidates, 4);
    ck_assert_uint_eq(res.planned, request_cases[c].planned);
    for (size_t i = 0; i < res.noutcomes; i++) {
        char one[32];
        snprintf(one, sizeof(one), "%s%u:%llu", i ? "," : "",
                 jobs[res.outcomes[i].job_index].job_id,
                 (unsigned long long)res.outcomes[i].planned);
        strcat(got, one);
        /* A job taken whole moves whatever it has on S at move time (the view is a snapshot;
         * this process has more than the view says); a partial share moves exactly the plan. */
        if (res.outcomes[i].planned == jobs[res.outcomes[i].job_index].pages_on_node[0]) {
            ck_assert(res.outcomes[i].moved.whole);
            ck_assert_uint_ge(res.outcomes[i].moved.pages_moved, res.outcomes[i].planned);
        } else {
            ck_assert(!res.outcomes[i].moved.whole);
            ck_assert_uint_eq(res.outcomes[i].moved.pages_moved, res.outcomes[i].planned);
        }
    }
    ck_assert_str_eq(got, request_cases[c].expected);
    if (res.planned < req.pages)
        ck_assert_ptr_nonnull(strstr(res.summary, "ended short"));
    np_request_result_fini(&res);
}
END_TEST

/* 'predicted' through the engine: jobs 1 (3.0x) and 2 (1.05x) gain, so 1 goes first despite
 * its lower bandwidth; the summary counts the candidates without a prediction (only for an order
 * that ranks by one). Predictions per job 1, 2, 3, 5 (0: none). */
static const struct {
    const char *order;
    double predicted[4];
    const char *expected;
    uint64_t unpredicted;
    const char *summary; /* NULL: no mention */
} prediction_cases[] = {
    {"predicted",
     {3.0, 1.05, 0, 0},
     "1:50,2:70",
     2,
     "2 candidates without a predicted effect: best-plus's rule for them"},
    {"predicted", {3.0, 1.05, 2.0, 1.5}, "1:50,2:70", 0, NULL},
    {"predicted", {0, 0, 0, 0}, "2:100,1:20", 4, "4 candidates without"}, /* best-plus's */
    {"best-plus", {3.0, 1.05, 0, 0}, "2:100,1:20", 0, NULL},
};

START_TEST(test_prediction_in_summary)
{
    static const size_t low[4] = {0, 1, 2, 4};
    struct np_engine_config cfg = {.dry_run = true};
    struct np_request req = {.src = 0, .dst = 1, .pages = 120, .target_job = -1};
    struct np_request_result res;
    struct np_err err = {0};
    char got[128] = "";

    setup_view();
    for (size_t k = 0; k < 4; k++) {
        jobs[low[k]].has_prediction = prediction_cases[_i].predicted[k] > 0;
        jobs[low[k]].predicted_remote = prediction_cases[_i].predicted[k];
    }
    cfg.order = np_order_lookup(prediction_cases[_i].order);
    ck_assert_ptr_nonnull(cfg.order);
    ck_assert_int_eq(np_engine_run_request(&view, &cfg, &req, NULL, NULL, &res, &err), 0);
    for (size_t i = 0; i < res.noutcomes; i++) {
        char one[32];
        snprintf(one, sizeof(one), "%s%u:%llu", i ? "," : "",
                 jobs[res.outcomes[i].job_index].job_id,
                 (unsigned long long)res.outcomes[i].planned);
        strcat(got, one);
    }
    ck_assert_str_eq(got, prediction_cases[_i].expected);
    ck_assert_uint_eq(res.unpredicted, prediction_cases[_i].unpredicted);
    if (prediction_cases[_i].summary)
        ck_assert_msg(strstr(res.summary, prediction_cases[_i].summary), "%s", res.summary);
    else
        ck_assert_msg(!strstr(res.summary, "predicted effect"), "%s", res.summary);
    np_request_result_fini(&res);
}
END_TEST

START_TEST(test_reused_pid_is_not_touched)
{
    /* Job 2's pid now has another start time than the one sampled: the engine hands the job's
     * start times and uid to the mover, which leaves that pid alone; job 1 still moves. */
    static const uint64_t other_start[1] = {1};
    struct np_engine_config cfg = {.dry_run = true};
    struct np_request req = {.src = 0, .dst = 1, .pages = 120, .target_job = -1};
    struct np_request_result res;

    if (np_test_numa_syscalls_missing("test_reused_pid_is_not_touched"))
        return;

    setup_view();
    jobs[1].starttimes = other_start;
    jobs[1].uid = getuid();
    ck_assert_int_eq(np_engine_run_request(&view, &cfg, &req, NULL, NULL, &res, NULL), 0);
    ck_assert_uint_eq(res.noutcomes, 2);
    ck_assert_uint_eq(jobs[res.outcomes[0].job_index].job_id, 2);
    ck_assert(res.outcomes[0].moved.replaced);
    ck_assert(res.outcomes[0].moved.process_gone);
    ck_assert_uint_eq(res.outcomes[0].moved.pages_moved, 0);
    ck_assert_uint_eq(res.outcomes[1].moved.pages_moved, 20);
    np_request_result_fini(&res);
}
END_TEST

START_TEST(test_floor_caps_request)
{
    struct np_engine_config cfg = {.dry_run = true, .free_floor_bytes = 1 * GiB};
    struct np_request req = {.src = 0, .dst = 1, .pages = 100, .target_job = -1};
    struct np_request_result res;
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

    setup_view();
    view.free_bytes[1] = 1 * GiB + 30 * page; /* room for 30 pages above the floor */
    ck_assert_int_eq(np_engine_run_request(&view, &cfg, &req, NULL, NULL, &res, NULL), 0);
    ck_assert_uint_eq(res.planned, 30);
    ck_assert_uint_eq(res.capped_by_floor, 70);
    ck_assert_ptr_nonnull(strstr(res.summary, "free floor"));
    np_request_result_fini(&res);
}
END_TEST

static const struct {
    unsigned src, dst;
} bad_requests[] = {{0, 0}, {4, 1}, {0, 9}};

START_TEST(test_bad_request)
{
    struct np_engine_config cfg = {.dry_run = true};
    struct np_request req = {
        .src = bad_requests[_i].src, .dst = bad_requests[_i].dst, .pages = 1, .target_job = -1};
    struct np_request_result res;
    struct np_err err = {0};

    setup_view();
    ck_assert_int_eq(np_engine_run_request(&view, &cfg, &req, NULL, NULL, &res, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "nodes 0-3"));
    np_request_result_fini(&res);
}
END_TEST

START_TEST(test_proxy_is_reported)
{
    struct np_engine_config cfg = {.dry_run = true};
    struct np_request req = {.src = 0, .dst = 1, .pages = 10, .target_job = -1};
    struct np_request_result res;

    setup_view();
    jobs[1].bandwidth_is_proxy = true;
    ck_assert_int_eq(np_engine_run_request(&view, &cfg, &req, NULL, NULL, &res, NULL), 0);
    ck_assert(res.used_proxy);
    ck_assert_ptr_nonnull(strstr(res.summary, "proxy"));
    np_request_result_fini(&res);
    ck_assert(np_bandwidth_proxy(2.0, 100) > np_bandwidth_proxy(1.0, 100));
    ck_assert(np_bandwidth_proxy(0, 100) == 0.0);
}
END_TEST

START_TEST(test_homecoming_trigger)
{
    const struct np_trigger_ops *t = np_trigger_lookup("homecoming");
    struct np_trigger_config tc = {0};
    char state[NP_TRIGGER_STATE_SIZE] = {0}, why[128] = "";
    struct np_request out[8];
    int n;

    setup_view();
    ck_assert_ptr_nonnull(t);
    n = t->propose(&view, &tc, state, out, 8, why, sizeof(why));
    /* High job 4 (CPUs on 1) has 500 pages on node 0; high job 6 (CPUs on 3) 300 on node 2. */
    ck_assert_int_eq(n, 2);
    ck_assert_uint_eq(out[0].src, 0);
    ck_assert_uint_eq(out[0].dst, 1);
    ck_assert_uint_eq(out[0].pages, 500);
    ck_assert_int_eq(out[0].target_job, 3);
    ck_assert_uint_eq(out[1].src, 2);
    ck_assert_uint_eq(out[1].dst, 3);
    ck_assert_uint_eq(out[1].pages, 300);
    ck_assert_ptr_nonnull(strstr(out[0].reason, "away from its CPUs"));

    /* A job whose last homecoming moved nothing is left alone while paused; a remote share
     * under NP_HOMECOMING_MIN_PAGES (shared libraries' page cache) is not worth a request. */
    jobs[3].homecoming_paused = true;
    jobs[5].pages_on_node[2] = NP_HOMECOMING_MIN_PAGES - 1;
    ck_assert_int_eq(t->propose(&view, &tc, state, out, 8, why, sizeof(why)), 0);
    jobs[5].pages_on_node[2] = NP_HOMECOMING_MIN_PAGES;
    ck_assert_int_eq(t->propose(&view, &tc, state, out, 8, why, sizeof(why)), 1);
    ck_assert_int_eq(out[0].target_job, 5);
}
END_TEST

START_TEST(test_homecoming_moves_only_its_job)
{
    struct np_engine_config cfg = {.dry_run = true};
    struct np_request req = {.src = 0, .dst = 1, .pages = 500, .target_job = 3};
    struct np_request_result res;

    setup_view();
    ck_assert_int_eq(np_engine_run_request(&view, &cfg, &req, NULL, NULL, &res, NULL), 0);
    ck_assert_uint_eq(res.candidates, 1);
    ck_assert_uint_eq(res.noutcomes, 1);
    ck_assert_uint_eq(res.outcomes[0].job_index, 3);
    ck_assert_uint_eq(res.planned, 500);
    np_request_result_fini(&res);
}
END_TEST

/* Memory pressure on node 1 (home of high job 4): free below the floor. */
static const struct {
    uint64_t free1, free0, free2, free3;
    int dst;        /* -1: no request */
    uint64_t pages; /* in MiB */
} pressure_cases[] = {
    {1 * GiB, 32 * GiB, 32 * GiB, 32 * GiB, 0, 1024}, /* 0 and 3 are near (21); 0 wins the tie
                                                          as the lower index with equal free */
    {1 * GiB, 3 * GiB, 32 * GiB, 32 * GiB, 3, 1024},  /* 0 has no room: nearest with room is 3 */
    {3 * GiB, 1 * GiB, 1 * GiB, 1 * GiB, -1, 0},      /* above the floor: nothing */
    {1 * GiB, 2 * GiB + 512 * MiB, 2 * GiB + 256 * MiB, 0, 0, 1024}, /* nobody has room for all:
                                                          most free above the floor */
};

START_TEST(test_pressure_trigger)
{
    const struct np_trigger_ops *t = np_trigger_lookup("memory-pressure");
    struct np_trigger_config tc = {.free_floor_bytes = 2 * GiB};
    char state[NP_TRIGGER_STATE_SIZE] = {0}, why[128] = "";
    struct np_request out[8];
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    int n;

    setup_view();
    jobs[5].job_class = NP_CLASS_LOW; /* only node 1 hosts a high job */
    view.free_bytes[0] = pressure_cases[_i].free0;
    view.free_bytes[1] = pressure_cases[_i].free1;
    view.free_bytes[2] = pressure_cases[_i].free2;
    view.free_bytes[3] = pressure_cases[_i].free3;
    n = t->propose(&view, &tc, state, out, 8, why, sizeof(why));
    if (pressure_cases[_i].dst < 0) {
        ck_assert_int_eq(n, 0);
        return;
    }
    ck_assert_int_eq(n, 1);
    ck_assert_uint_eq(out[0].src, 1);
    ck_assert_uint_eq(out[0].dst, (unsigned)pressure_cases[_i].dst);
    ck_assert_uint_eq(out[0].pages, pressure_cases[_i].pages * MiB / page);
    ck_assert_ptr_nonnull(strstr(out[0].reason, "below the 2048 MiB floor"));
}
END_TEST

START_TEST(test_bandwidth_trigger)
{
    const struct np_trigger_ops *t = np_trigger_lookup("bandwidth");
    struct np_trigger_config tc = {.bandwidth_threshold = 10e9, .bandwidth_intervals = 3};
    char state[NP_TRIGGER_STATE_SIZE] = {0}, why[160] = "";
    struct np_request out[4];

    setup_view();
    ck_assert_int_eq(t->propose(&view, &tc, state, out, 4, why, sizeof(why)), 0);
    ck_assert_ptr_nonnull(strstr(why, "no per-node memory bandwidth is measured"));

    view.node_bandwidth_available = true;
    view.node_bandwidth[0] = 12e9;
    view.node_bandwidth[1] = 5e9;
    view.node_bandwidth[2] = 2e9;
    view.node_bandwidth[3] = 8e9;
    for (unsigned n = 0; n < 4; n++)
        view.node_bandwidth_source[n] = NP_BW_SOURCE_MISSES;
    ck_assert_int_eq(t->propose(&view, &tc, state, out, 4, why, sizeof(why)), 0);
    ck_assert_int_eq(t->propose(&view, &tc, state, out, 4, why, sizeof(why)), 0);
    ck_assert_int_eq(t->propose(&view, &tc, state, out, 4, why, sizeof(why)), 1);
    ck_assert_uint_eq(out[0].src, 0);
    ck_assert_uint_eq(out[0].dst, 2);
    ck_assert_uint_eq(out[0].pages, (50 + 100 + 40 + 70) / 2); /* half the low jobs' pages */
    /* The count restarts after acting. */
    ck_assert_int_eq(t->propose(&view, &tc, state, out, 4, why, sizeof(why)), 0);
}
END_TEST

START_TEST(test_class_names)
{
    enum np_class c;
    struct np_err err = {0};

    ck_assert_int_eq(np_class_from_name("high", &c, &err), 0);
    ck_assert_int_eq(c, NP_CLASS_HIGH);
    ck_assert_int_eq(np_class_from_name("medium", &c, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "'medium'"));
    ck_assert_ptr_nonnull(strstr(err.msg, "high, low"));
    ck_assert_ptr_null(np_trigger_lookup("nope"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("engine");
    tcase_add_loop_test(tc, test_request_plans_in_order, 0, 2 * NCASES);
    tcase_add_test(tc, test_reused_pid_is_not_touched);
    tcase_add_loop_test(tc, test_prediction_in_summary, 0,
                        sizeof(prediction_cases) / sizeof(prediction_cases[0]));
    tcase_add_loop_test(tc, test_bad_request, 0, sizeof(bad_requests) / sizeof(bad_requests[0]));
    tcase_add_loop_test(tc, test_pressure_trigger, 0,
                        sizeof(pressure_cases) / sizeof(pressure_cases[0]));
    tcase_add_test(tc, test_floor_caps_request);
    tcase_add_test(tc, test_proxy_is_reported);
    tcase_add_test(tc, test_homecoming_trigger);
    tcase_add_test(tc, test_homecoming_moves_only_its_job);
    tcase_add_test(tc, test_bandwidth_trigger);
    tcase_add_test(tc, test_class_names);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
