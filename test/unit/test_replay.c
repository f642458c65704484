/*
 * The replay (policies/sim/replay.c): small hand-made sets whose outcome is known from the
 * model by hand, in both ways of carrying a request out; the footprint table it reads.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numaplace/footprint.h"
#include "numaplace/replay.h"
#include "numaplace/replay_scenario.h"
#include "numaplace/tables.h"
#include "numaplace/scenario_file.h"

/* A sensitive job (x2 fully remote, x1.5 interleaved: s = 1 + remote share) and an insensitive
 * one; bandwidth decides the orders. */
static const struct np_model_row sensitive = {
    .benchmark = "sens", .remote = 2.0, .interleave = 1.5, .bw_mbps = 1000};
static const struct np_model_row quiet = {
    .benchmark = "quiet", .remote = 1.0, .interleave = 1.0, .bw_mbps = 10};

static struct np_replay_job job(const struct np_model_row *row, double work, unsigned cpu,
                                unsigned mem, uint64_t pages)
{
    return (struct np_replay_job){.row = row,
                                  .work_s = work,
                                  .node = cpu,
                                  .memory_node = mem,
                                  .pages = pages,
                                  .job_class = NP_CLASS_LOW};
}

static struct np_replay_config config(enum np_replay_way way, double rate_pages_s)
{
    struct np_replay_config c;

    np_replay_config_sandman(&c, way);
    c.rate_bytes_s = rate_pages_s * NP_REPLAY_PAGE_BYTES;
    return c;
}

static struct np_replay_result replay(const struct np_replay_job *jobs, size_t njobs,
                                      const struct np_replay_request *reqs, size_t nreqs,
                                      const struct np_replay_config *c, const char *order,
                                      uint64_t seed)
{
    const struct np_replay_set set = {4, jobs, njobs, reqs, nreqs};
    struct np_replay_result r;
    struct np_err err = {0};

    ck_assert_msg(np_replay_run(&set, c, np_order_lookup(order), seed, &r, &err) == 0, "%s",
                  err.msg);
    ck_assert_uint_eq(r.njobs, njobs);
    return r;
}

/* A job alone finishes at work / rate: rate 1 / (slowdown where its pages are x co-run x
 * noise). */
static const struct {
    unsigned cpu, mem;
    double corun, noise, expected;
} alone_cases[] = {
    {0, 0, 0, 0, 100.0},                   /* local */
    {0, 1, 0, 0, 200.0},                   /* near (21): the table's remote */
    {0, 3, 0, 0, 100.0 * (1 + 2.0 / 1.1)}, /* far (30): the excess scaled by (3.0-1)/(2.1-1) */
    {1, 2, 0, 0, 100.0 * (1 + 2.0 / 1.1)}, /* 1-2 is far on Sandman too */
    {2, 3, 0, 0, 200.0},
    {0, 0, 1, 0, 100.0},     /* a factor of 1 is none */
    {0, 0, 2.5, 0, 250.0},   /* co-located: 2.5 times slower */
    {0, 1, 2.5, 0, 500.0},   /* and remote */
    {0, 0, 0, 1.25, 125.0},  /* a noise draw of 1.25: 1.25 times slower */
    {0, 1, 0, 0.8, 160.0},   /* remote, and a draw below 1 speeds it up */
    {0, 1, 2.5, 1.1, 550.0}, /* all three multiply */
};

START_TEST(test_job_finishes_at_work_over_rate)
{
    struct np_replay_job jobs[] = {
        job(&sensitive, 100, alone_cases[_i].cpu, alone_cases[_i].mem, 1000)};

    jobs[0].corun = alone_cases[_i].corun;
    jobs[0].noise = alone_cases[_i].noise;
    for (int way = 0; way < NP_REPLAY_WAY_COUNT; way++) {
        const struct np_replay_config c = config((enum np_replay_way)way, 0);
        struct np_replay_result r = replay(jobs, 1, NULL, 0, &c, "best-plus", 1);
        ck_assert_double_eq_tol(r.job_time_s[0], alone_cases[_i].expected, 1e-9);
        ck_assert_double_eq_tol(r.makespan_s, alone_cases[_i].expected, 1e-9);
        np_replay_result_fini(&r);
    }
}
END_TEST

/* On the contention model too, a job's noise draw divides its speed: alone and local its time is
 * its solved slowdown's times the draw. */
START_TEST(test_noise_on_contention)
{
    struct np_contention_params p;
    struct np_replay_job jobs[] = {job(&sensitive, 100, 0, 0, 1000)};
    struct np_replay_config c = config(NP_REPLAY_NUMAPLACE, 0);
    struct np_replay_result plain, noisy;

    np_contention_params_sandman(&p);
    c.contention = &p;
    plain = replay(jobs, 1, NULL, 0, &c, "best-plus", 1);
    jobs[0].noise = 1.5;
    noisy = replay(jobs, 1, NULL, 0, &c, "best-plus", 1);
    ck_assert_double_eq_tol(noisy.job_time_s[0], 1.5 * plain.job_time_s[0], 1e-6);
    np_replay_result_fini(&plain);
    np_replay_result_fini(&noisy);
}
END_TEST

/* The hot-share law in the replay: a job all memory-bound (remote 2x, no bandwidth: m = 1, every
 * other effect off), 1,000 pages on its CPUs' node 0, 100 s of work; at 0 s a request moves
 * exactly 500 of them to node 1 at once. A quarter of its pages (250) hot with 80% of the
 * traffic: moved last, the 500 are cold, 0.2 x 500/750 of its accesses go remote and it runs at
 * 1 + 0.1333; moved first, the 250 hot and 250 cold go, 0.8 + 0.2 x 250/750 remote, 1.8667.
 * Uniform: half its accesses, 1.5. */
static const struct {
    double fraction, share;
    bool first;
    double expected_s;
} hot_cases[] = {
    {1.0, 1.0, false, 150.0},
    {0.25, 0.25, true, 150.0}, /* hot share = hot fraction: uniform whatever moves first */
    {0.25, 0.8, false, 100 * (1 + 0.2 * 500 / 750)},
    {0.25, 0.8, true, 100 * (1 + 0.8 + 0.2 * 250 / 750)},
};

START_TEST(test_hot_share_in_replay)
{
    static const struct np_model_row bound = {
        .benchmark = "bound", .remote = 2.0, .interleave = 1.5, .bw_mbps = 0};
    const struct np_replay_job jobs[] = {job(&bound, 100, 0, 0, 1000)};
    const struct np_replay_request reqs[] = {{0, 0, 1, 500}};
    struct np_contention_params p = {.mc_capacity_mbps = 1e12,
                                     .link_capacity_mbps = 1e12,
                                     .remote_latency = 2.0,
                                     .max_utilisation = 0.95,
                                     .llc_half_mbps = 500,
                                     .omp_exponent = 0.5,
                                     .hot_fraction = hot_cases[_i].fraction,
                                     .hot_share = hot_cases[_i].share,
                                     .hot_moves_first = hot_cases[_i].first,
                                     .cpus_per_node = 16};
    struct np_replay_config c = config(NP_REPLAY_NUMAPLACE, 0);
    struct np_replay_result r, again;

    c.contention = &p;
    r = replay(jobs, 1, reqs, 1, &c, "best-plus", 1);
    ck_assert_uint_eq(r.pages_moved, 500);
    ck_assert_double_eq_tol(r.job_time_s[0], hot_cases[_i].expected_s, 1e-6);
    /* deterministic: the same set, config and seed give the same time to the last bit */
    again = replay(jobs, 1, reqs, 1, &c, "random", 7);
    np_replay_result_fini(&r);
    r = replay(jobs, 1, reqs, 1, &c, "random", 7);
    ck_assert(r.job_time_s[0] == again.job_time_s[0]);
    np_replay_result_fini(&r);
    np_replay_result_fini(&again);
}
END_TEST

/* A growth curve: linear between points, flat before the first and past the last, never
 * shrinking (a lower share holds the earlier maximum). */
static const struct np_replay_growth rising = {3, {0, 0.5, 1.0}, {0.1, 0.5, 1.0}},
                                     late = {2, {0.2, 0.6}, {0.4, 0.8}},
                                     shrinking = {2, {0, 0.5}, {0.5, 0.2}};
static const struct {
    const struct np_replay_growth *growth;
    double progress, expected;
} growth_cases[] = {
    {&rising, 0, 0.1},      {&rising, 0.25, 0.3}, {&rising, 0.75, 0.75}, {&rising, 1, 1},
    {&late, 0, 0.4},        {&late, 0.4, 0.6},    {&late, 0.9, 0.8},     {&shrinking, 0.25, 0.5},
    {&shrinking, 0.9, 0.5}, {NULL, 0.3, 1.0},
};

START_TEST(test_growth_curve)
{
    ck_assert_double_eq_tol(np_replay_growth_at(growth_cases[_i].growth, growth_cases[_i].progress),
                            growth_cases[_i].expected, 1e-12);
}
END_TEST

/* A sensitive job (x2 remote) of 1,000 pages holding half of them until half its work is done,
 * then all. At 0 s the thesis's way moves its whole share on node 0 (500 pages) to node 1: it
 * runs all remote, 50 s of work in 100 s (and the next 1-s step, still remote, 0.5 s of work);
 * then its new 500 pages come on its start node, half remote: the other 49.5 s take 74.25 s.
 * Without growth all 1,000 pages move and it runs remote throughout: 200 s. */
START_TEST(test_growth_allocates_on_start_node)
{
    static const struct np_replay_growth half_then_all = {3, {0, 0.5, 0.50001}, {0.5, 0.5, 1.0}};
    struct np_replay_job jobs[] = {job(&sensitive, 100, 0, 0, 1000)};
    const struct np_replay_request reqs[] = {{0, 0, 1, 500}};
    const struct np_replay_config c = config(NP_REPLAY_THESIS, 0);
    struct np_replay_result r = replay(jobs, 1, reqs, 1, &c, "worst", 1);

    ck_assert_double_eq_tol(r.job_time_s[0], 200, 1e-9);
    np_replay_result_fini(&r);
    jobs[0].growth = &half_then_all;
    r = replay(jobs, 1, reqs, 1, &c, "worst", 1);
    ck_assert_uint_eq(r.pages_moved, 500);
    ck_assert_double_eq_tol(r.job_time_s[0], 101 + 49.5 * 1.5, 1e-9);
    np_replay_result_fini(&r);
}
END_TEST

START_TEST(test_bad_growth)
{
    static const struct np_replay_growth descending = {2, {0.5, 0.2}, {0.5, 1}},
                                         empty = {0, {0}, {0}}, zero = {1, {0}, {0}};
    const struct np_replay_growth *bad[] = {&descending, &empty, &zero};
    struct np_replay_job jobs[] = {job(&sensitive, 100, 0, 0, 1000)};
    const struct np_replay_config c = config(NP_REPLAY_THESIS, 0);

    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        const struct np_replay_set set = {4, jobs, 1, NULL, 0};
        struct np_replay_result r;
        struct np_err err = {0};
        jobs[0].growth = bad[k];
        ck_assert_int_eq(np_replay_run(&set, &c, NULL, 1, &r, &err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "jobs[0].growth"));
    }
}
END_TEST

/* L (CPUs on 1, pages on 0) and R (CPUs and pages on 0); at 10 s one request moves L's share
 * from 0 to 1. Best(+) take L, which turns local: 10 s at half speed, then 95 s. Worst(+) take
 * R, which turns remote: 10 s, then 90 s of work at half speed. */
static const struct {
    const char *order;
    double l_time, r_time;
} gain_cases[] = {
    {"best-plus", 105, 100},
    {"best", 105, 100},
    {"worst", 200, 190},
    {"worst-plus", 200, 190},
};

START_TEST(test_request_making_l_local_speeds_it_up)
{
    const struct np_replay_job jobs[] = {job(&sensitive, 100, 1, 0, 1000),
                                         job(&sensitive, 100, 0, 0, 1000)};
    const struct np_replay_request reqs[] = {{10, 0, 1, 1000}};

    for (int way = 0; way < NP_REPLAY_WAY_COUNT; way++) {
        const struct np_replay_config c = config((enum np_replay_way)way, 0);
        struct np_replay_result r = replay(jobs, 2, reqs, 1, &c, gain_cases[_i].order, 1);
        ck_assert_double_eq_tol(r.job_time_s[0], gain_cases[_i].l_time, 1e-9);
        ck_assert_double_eq_tol(r.job_time_s[1], gain_cases[_i].r_time, 1e-9);
        ck_assert_double_eq_tol(r.total_job_s, gain_cases[_i].l_time + gain_cases[_i].r_time, 1e-9);
        ck_assert_uint_eq(r.pages_moved, 1000);
        np_replay_result_fini(&r);
    }
}
END_TEST

/* Three low jobs on node 0 (600, 300, 100 pages; best-plus takes the lowest bandwidth first
 * among neutral jobs, all of equal bandwidth here: by id). The thesis moves whole shares until
 * N is reached; numaplace moves exactly N (instant here). */
static const struct {
    enum np_replay_way way;
    uint64_t asked, moved;
    size_t overshot, short_;
} cover_cases[] = {
    {NP_REPLAY_THESIS, 100, 600, 1, 0},    /* one whole share for 100 pages */
    {NP_REPLAY_THESIS, 600, 600, 0, 0},    /* exactly one share */
    {NP_REPLAY_THESIS, 700, 900, 1, 0},    /* stops once reached: not the third */
    {NP_REPLAY_THESIS, 5000, 1000, 0, 1},  /* everything, short */
    {NP_REPLAY_NUMAPLACE, 100, 100, 0, 0}, /* exactly N */
    {NP_REPLAY_NUMAPLACE, 700, 700, 0, 0}, {NP_REPLAY_NUMAPLACE, 5000, 1000, 0, 1},
};

START_TEST(test_cover_whole_shares_or_exact)
{
    const struct np_replay_job jobs[] = {job(&quiet, 100, 2, 0, 600), job(&quiet, 100, 2, 0, 300),
                                         job(&quiet, 100, 2, 0, 100)};
    const struct np_replay_request reqs[] = {{0, 0, 1, cover_cases[_i].asked}};
    const struct np_replay_config c = config(cover_cases[_i].way, 0);
    struct np_replay_result r = replay(jobs, 3, reqs, 1, &c, "best-plus", 1);

    ck_assert_uint_eq(r.pages_asked, cover_cases[_i].asked);
    ck_assert_uint_eq(r.pages_moved, cover_cases[_i].moved);
    ck_assert_uint_eq(r.requests_overshot, cover_cases[_i].overshot);
    ck_assert_uint_eq(r.requests_short, cover_cases[_i].short_);
    ck_assert_uint_eq(r.requests_fired, 1);
    np_replay_result_fini(&r);
}
END_TEST

/* numaplace keeps the destination's free floor; the thesis fills it up to the node's memory. */
START_TEST(test_free_floor_and_capacity)
{
    const struct np_replay_job jobs[] = {job(&quiet, 100, 0, 0, 2000),
                                         job(&quiet, 100, 1, 1, 1000)};
    const struct np_replay_request reqs[] = {{0, 0, 1, 2000}};
    struct np_replay_config c = config(NP_REPLAY_NUMAPLACE, 0);
    struct np_replay_result r;

    c.node_pages = 3000;
    c.free_floor_pages = 500; /* node 1: 1000 used, 500 kept free: 1500 may come */
    r = replay(jobs, 2, reqs, 1, &c, "best-plus", 1);
    ck_assert_uint_eq(r.pages_moved, 1500);
    ck_assert_uint_eq(r.requests_short, 1);
    np_replay_result_fini(&r);
    c.way = NP_REPLAY_THESIS; /* no floor: up to the 2000 free pages */
    r = replay(jobs, 2, reqs, 1, &c, "best-plus", 1);
    ck_assert_uint_eq(r.pages_moved, 2000);
    np_replay_result_fini(&r);
    c.node_pages = 2500; /* only 1500 free: the kernel could place no more */
    r = replay(jobs, 2, reqs, 1, &c, "best-plus", 1);
    ck_assert_uint_eq(r.pages_moved, 1500);
    np_replay_result_fini(&r);
}
END_TEST

/* Two requests, 1000 pages of one sensitive job (CPUs on 0) to node 1 at 0 s, back 5 s later.
 * The thesis: both at once, 5 s after the first's issue: 5 s remote (2.5 s of work), then
 * local. numaplace at 100 pages/s: the first answers at 10 s, the second is issued 5 s after
 * that answer (15 s) and answers at 25 s; with 1 s steps the job runs at 1/(1 + k/10) in the
 * k-th second of each move. */
/* The thesis's manager loop on one insensitive job (no slowdown): passes of poll_s + pass_work_s
 * (+ the copy), a request at the first pass 30 s after the previous issue, the moved job stalled
 * while its 1,000 pages copy. */
static const struct {
    double pass_work_s, mover_pages_s;
    double spacing_s, job_s;
} loop_cases[] = {
    {0, 0, 30, 1000},   /* passes every 5 s: requests at 30, 60, 90 */
    {2, 0, 35, 1000},   /* passes every 7 s: at 35 (the first past 30), then 70, 105 */
    {0, 100, 30, 1010}, /* at 30 the whole share copies in 10 s: the job waits 10 s */
};

START_TEST(test_thesis_loop)
{
    const struct np_replay_job jobs[] = {job(&quiet, 1000, 0, 0, 1000)};
    const struct np_replay_request reqs[] = {{30, 0, 1, 1}, {30, 0, 1, 1}, {30, 0, 1, 1}};
    struct np_replay_config c = config(NP_REPLAY_THESIS, 0);
    struct np_replay_result r;

    c.poll_s = 5;
    c.pass_work_s = loop_cases[_i].pass_work_s;
    c.mover_rate_bytes_s = loop_cases[_i].mover_pages_s * NP_REPLAY_PAGE_BYTES;
    r = replay(jobs, 1, reqs, 3, &c, "best", 1);
    ck_assert_uint_eq(r.requests_fired, 3);
    ck_assert_uint_eq(r.spacing_n, 2);
    ck_assert_double_eq_tol(r.spacing_sum_s / 2, loop_cases[_i].spacing_s, 1e-9);
    ck_assert_double_eq_tol(r.job_time_s[0], loop_cases[_i].job_s, 1e-6);
    ck_assert_double_eq_tol(r.first_end_s, loop_cases[_i].job_s, 1e-6);
    np_replay_result_fini(&r);
}
END_TEST

START_TEST(test_delay_from_issue_or_answer)
{
    const struct np_replay_job jobs[] = {job(&sensitive, 100, 0, 0, 1000)};
    const struct np_replay_request reqs[] = {{0, 0, 1, 1000}, {5, 1, 0, 1000}};
    struct np_replay_config c = config(NP_REPLAY_THESIS, 100);
    struct np_replay_result r = replay(jobs, 1, reqs, 2, &c, "best-plus", 1);
    double work = 0;

    ck_assert_double_eq_tol(r.job_time_s[0], 5 + (100 - 2.5), 1e-9);
    ck_assert_double_eq_tol(r.moving_s, 0, 1e-12);
    np_replay_result_fini(&r);

    c.way = NP_REPLAY_NUMAPLACE;
    r = replay(jobs, 1, reqs, 2, &c, "best-plus", 1);
    for (int k = 0; k < 10; k++)
        work += 1.0 / (1.0 + k / 10.0); /* moving away */
    work += 5 * 0.5;                    /* remote until the second request */
    for (int k = 0; k < 10; k++)
        work += 1.0 / (2.0 - k / 10.0); /* moving back */
    ck_assert_double_eq_tol(r.job_time_s[0], 25 + (100 - work), 1e-9);
    ck_assert_double_eq_tol(r.moving_s, 20, 1e-9);
    ck_assert_uint_eq(r.pages_moved, 2000);
    ck_assert_uint_eq(r.requests_fired, 2);
    np_replay_result_fini(&r);
}
END_TEST

/* Random: the same seed gives the same run; different seeds differ; best-plus ignores it. */
START_TEST(test_random_reproducible_per_seed)
{
    struct np_replay_job jobs[8];
    const struct np_replay_request reqs[] = {{5, 0, 1, 500}, {5, 0, 2, 500}, {5, 0, 3, 500}};
    const struct np_replay_config c = config(NP_REPLAY_THESIS, 0);
    struct np_replay_result a, b;
    int differ = 0;

    for (unsigned j = 0; j < 8; j++)
        jobs[j] = job(&sensitive, 50 + 10 * j, j % 4, 0, 400 + 50 * j);
    for (uint64_t seed = 1; seed <= 10; seed++) {
        a = replay(jobs, 8, reqs, 3, &c, "random", seed);
        b = replay(jobs, 8, reqs, 3, &c, "random", seed);
        ck_assert_mem_eq(a.job_time_s, b.job_time_s, 8 * sizeof(double));
        np_replay_result_fini(&b);
        b = replay(jobs, 8, reqs, 3, &c, "random", seed + 100);
        differ += memcmp(a.job_time_s, b.job_time_s, 8 * sizeof(double)) != 0;
        np_replay_result_fini(&a);
        np_replay_result_fini(&b);
    }
    ck_assert_int_gt(differ, 0);
    a = replay(jobs, 8, reqs, 3, &c, "best-plus", 1);
    b = replay(jobs, 8, reqs, 3, &c, "best-plus", 2);
    ck_assert_mem_eq(a.job_time_s, b.job_time_s, 8 * sizeof(double));
    np_replay_result_fini(&a);
    np_replay_result_fini(&b);
}
END_TEST

/* A request due after every job ended never fires; a job's pages leave with it. */
START_TEST(test_requests_after_the_end)
{
    const struct np_replay_job jobs[] = {job(&quiet, 10, 0, 0, 100)};
    const struct np_replay_request reqs[] = {{5, 0, 1, 10}, {20, 0, 1, 10}};
    const struct np_replay_config c = config(NP_REPLAY_THESIS, 0);
    struct np_replay_result r = replay(jobs, 1, reqs, 2, &c, "best-plus", 1);

    ck_assert_uint_eq(r.requests_fired, 1);
    ck_assert_uint_eq(r.pages_moved, 100); /* the whole share for 10 */
    ck_assert_double_eq_tol(r.job_time_s[0], 10, 1e-9);
    np_replay_result_fini(&r);
}
END_TEST

static const struct {
    struct np_replay_job job;
    struct np_replay_request req;
    const char *message;
} bad_cases[] = {
    {{.row = &quiet, .work_s = 10, .node = 4, .memory_node = 0, .pages = 1, .corun = 0},
     {0, 0, 1, 1},
     "jobs[0].node: 4 is not a node (0-3)"},
    {{.row = &quiet, .work_s = 10, .node = 0, .memory_node = 9, .pages = 1, .corun = 0},
     {0, 0, 1, 1},
     "jobs[0].memory_node: 9 is not a node"},
    {{.row = &quiet, .work_s = 0, .node = 0, .memory_node = 0, .pages = 1, .corun = 0},
     {0, 0, 1, 1},
     "jobs[0].work_s: 0 is not a time > 0 s"},
    {{.row = NULL, .work_s = 10, .node = 0, .memory_node = 0, .pages = 1, .corun = 0},
     {0, 0, 1, 1},
     "jobs[0]: no model row"},
    {{.row = &quiet, .work_s = 10, .node = 0, .memory_node = 0, .pages = 1, .corun = 0.5},
     {0, 0, 1, 1},
     "jobs[0].corun: 0.5 is not a factor"},
    {{.row = &quiet, .work_s = 10, .node = 0, .memory_node = 0, .pages = 1u << 30, .corun = 0},
     {0, 0, 1, 1},
     "node 0: its jobs start with"},
    {{.row = &quiet, .work_s = 10, .node = 0, .memory_node = 0, .pages = 1, .corun = 0},
     {0, 2, 2, 1},
     "requests[0]: from 2 to 2: nodes must"},
    {{.row = &quiet, .work_s = 10, .node = 0, .memory_node = 0, .pages = 1, .corun = 0},
     {-1, 0, 1, 1},
     "requests[0].delay_s: -1 is not a"},
    {{.row = &quiet, .work_s = 10, .node = 0, .memory_node = 0, .pages = 1, .noise = -1},
     {0, 0, 1, 1},
     "jobs[0].noise: -1 is not a factor"},
    {{.row = &quiet, .work_s = 10, .node = 0, .memory_node = 0, .pages = 1, .noise = INFINITY},
     {0, 0, 1, 1},
     "jobs[0].noise: inf is not a factor"},
};

START_TEST(test_bad_sets)
{
    const struct np_replay_set set = {4, &bad_cases[_i].job, 1, &bad_cases[_i].req, 1};
    const struct np_replay_config c = config(NP_REPLAY_THESIS, 0);
    struct np_replay_result r;
    struct np_err err = {0};

    ck_assert_int_eq(np_replay_run(&set, &c, NULL, 0, &r, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, bad_cases[_i].message), "%s", err.msg);
    ck_assert_ptr_null(r.job_time_s);
    np_replay_result_fini(NULL);
}
END_TEST

/* A job slowed past any end stops the replay with a reason instead of looping for ever. */
START_TEST(test_no_end_in_sight)
{
    const struct np_replay_job slow = {
        .row = &quiet, .work_s = 10, .node = 0, .memory_node = 0, .pages = 1, .corun = 1e300};
    const struct np_replay_set set = {4, &slow, 1, NULL, 0};
    const struct np_replay_config c = config(NP_REPLAY_THESIS, 0);
    struct np_replay_result r;
    struct np_err err = {0};

    ck_assert_int_eq(np_replay_run(&set, &c, NULL, 0, &r, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "jobs still running after 10000000 steps"), "%s", err.msg);
    ck_assert_ptr_null(r.job_time_s);
}
END_TEST

/* Two jobs whose pages sum past 2^64 are refused, not wrapped to a small start. */
START_TEST(test_start_sum_cannot_wrap)
{
    const struct np_replay_job half = {
        .row = &quiet, .work_s = 10, .node = 0, .memory_node = 0, .pages = UINT64_C(1) << 63};
    const struct np_replay_job jobs[2] = {half, half};
    const struct np_replay_set set = {4, jobs, 2, NULL, 0};
    const struct np_replay_config c = config(NP_REPLAY_THESIS, 0);
    struct np_replay_result r;
    struct np_err err = {0};

    ck_assert_int_eq(np_replay_run(&set, &c, NULL, 0, &r, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "node 0: its jobs start with more pages than its memory"), "%s",
                  err.msg);
}
END_TEST

START_TEST(test_figure_and_names)
{
    const double times[] = {2, 8}, best[] = {1, 2}, zero[] = {0, 1};

    ck_assert_double_eq_tol(np_replay_figure(times, best, 2), sqrt(8.0), 1e-12);
    ck_assert(isnan(np_replay_figure(times, zero, 2)));
    ck_assert(isnan(np_replay_figure(times, best, 0)));
    ck_assert_str_eq(np_replay_way_name(NP_REPLAY_THESIS), "thesis");
    ck_assert_str_eq(np_replay_way_name(NP_REPLAY_NUMAPLACE), "numaplace");
    ck_assert_str_eq(np_replay_way_name(NP_REPLAY_WAY_COUNT), "unknown");
}
END_TEST

/* The shipped footprint table, beside the model table NUMAPLACE_MODEL_DATA names. */
START_TEST(test_shipped_footprints)
{
    const char *model = getenv("NUMAPLACE_MODEL_DATA");
    char path[4096];
    struct np_footprints fp;
    struct np_err err = {0};

    ck_assert_ptr_nonnull(model);
    snprintf(path, sizeof(path), "%.*s/spec2017-footprints.csv", (int)(strrchr(model, '/') - model),
             model);
    ck_assert_msg(np_footprints_load(path, &fp, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(fp.count, 16);
    ck_assert_uint_eq(np_footprint_pages(&fp, "619.lbm_s", "0"), 825499);
    ck_assert_uint_eq(np_footprint_pages(&fp, "648.exchange2_s", ""), 731);
    ck_assert_uint_eq(np_footprint_pages(&fp, "502.gcc_r", "0"), 0);
    ck_assert_ptr_null(np_footprint_find(&fp, "502.gcc_r", "0"));
    ck_assert_double_eq_tol(np_footprint_find(&fp, "619.lbm_s", "0")->corun, 2.857, 1e-12);
    ck_assert_double_eq_tol(np_footprint_find(&fp, "600.perlbench_s", "0")->corun, 12.116, 1e-12);
    np_footprints_free(&fp);
    np_footprints_free(NULL);
}
END_TEST

static const struct {
    const char *text;
    int code;
    const char *message;
} bad_footprints[] = {
    {"benchmark,input\n", -EINVAL, "header lacks column 'footprint_pages'"},
    {"benchmark,input,footprint_pages\na,,x\n", -EINVAL, "'footprint_pages' is not a page count"},
    {"benchmark,input,footprint_pages\na,,-5\n", -EINVAL,
     "is not a page count (1 to 1099511627776)"},
    {"benchmark,input,footprint_pages\na,,1099511627777\n", -EINVAL,
     "'footprint_pages' is not a page count (1 to 1099511627776): '1099511627777'"},
    {"benchmark,input,footprint_pages\n0123456789012345678901234567890123,,5\n", -EINVAL,
     ":2: column 'benchmark' is longer than 31 bytes"},
    {"benchmark,input,footprint_pages\na,012345678,5\n", -EINVAL,
     ":2: column 'input' is longer than 7 bytes"},
    {"# a comment longer than the line buffer "
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "benchmark,input,footprint_pages\nbenchmark,input,footprint_pages\na,,5\n",
     -EINVAL, ":1: longer than 1022 bytes"},
    {"benchmark,input,footprint_pages\na,,0\n", -EINVAL, "is not a page count"},
    {"benchmark,input,footprint_pages\n,,5\n", -EINVAL, "column 'benchmark' is empty"},
    {"# only a comment\nbenchmark,input,footprint_pages\n", -EINVAL, "no data rows"},
    {"benchmark,input,footprint_pages,corun_factor\na,,5,0.5\n", -EINVAL,
     "'corun_factor' is not a factor (1 or more): '0.5'"},
    {"benchmark,input,footprint_pages,corun_factor\na,,5,x\n", -EINVAL, "is not a factor"},
    {NULL, -ENOENT, "cannot open footprint table"},
};

START_TEST(test_bad_footprints)
{
    char path[] = "/tmp/np_footprints_XXXXXX";
    struct np_footprints fp;
    struct np_err err = {0};
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    if (bad_footprints[_i].text)
        ck_assert_int_eq(write(fd, bad_footprints[_i].text, strlen(bad_footprints[_i].text)),
                         (int)strlen(bad_footprints[_i].text));
    close(fd);
    if (!bad_footprints[_i].text)
        unlink(path);
    ck_assert_int_eq(np_footprints_load(path, &fp, &err), bad_footprints[_i].code);
    ck_assert_msg(strstr(err.msg, bad_footprints[_i].message), "%s", err.msg);
    ck_assert_ptr_null(fp.rows);
    unlink(path);
}
END_TEST

/* The shipped data directory: beside the model table NUMAPLACE_MODEL_DATA names. */
static const char *data_path(const char *relative)
{
    static char path[4096];
    const char *model = getenv("NUMAPLACE_MODEL_DATA");

    ck_assert_ptr_nonnull(model);
    snprintf(path, sizeof(path), "%.*s/%s", (int)(strrchr(model, '/') - model), model, relative);
    return path;
}

static void load_tables(struct np_model *model, struct np_footprints *fp)
{
    struct np_err err = {0};

    ck_assert_msg(np_model_load(getenv("NUMAPLACE_MODEL_DATA"), model, &err) == 0, "%s", err.msg);
    ck_assert_msg(np_footprints_load(data_path("spec2017-footprints.csv"), fp, &err) == 0, "%s",
                  err.msg);
}

/* A scenario's jobs become replay jobs: copies expanded, rows, work, footprints, factors. */
START_TEST(test_set_from_scenario)
{
    static const char text[] =
        "{\"numaplace_scenario\": 1, \"name\": \"t\", \"nodes\": 4, \"jobs\": ["
        "{\"benchmark\": \"619.lbm_s\", \"node\": 2, \"copies\": 3},"
        "{\"benchmark\": \"600.perlbench_s\", \"input\": 2, \"node\": 1}],"
        "\"requests\": [{\"delay_s\": 30, \"from\": 2, \"to\": 1, \"pages\": 7}]}";
    struct np_model model;
    struct np_footprints fp;
    struct np_scenario sc;
    struct np_replay_owned set;
    struct np_err err = {0};

    load_tables(&model, &fp);
    ck_assert_msg(np_scenario_parse(text, strlen(text), &sc, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(
        np_replay_set_from_scenario(&sc, &model, &fp, 0.5, NP_REPLAY_WITH_CORUN, &set, &err), 0);
    ck_assert_uint_eq(set.set.njobs, 4);
    ck_assert_uint_eq(set.set.nrequests, 1);
    ck_assert_uint_eq(set.set.requests[0].pages, 7);
    ck_assert_uint_eq(set.from_job[2], 0);
    ck_assert_uint_eq(set.from_job[3], 1);
    ck_assert_uint_eq(set.jobs[2].node, 2);
    ck_assert_uint_eq(set.jobs[2].memory_node, 2);
    ck_assert_uint_eq(set.jobs[2].pages, 412750); /* 825,499 / 2, rounded */
    ck_assert_double_eq_tol(set.jobs[2].work_s, 1391.0048, 1e-9);
    ck_assert_double_eq_tol(set.jobs[2].corun, 2.857, 1e-12);
    ck_assert_str_eq(set.jobs[3].row->input, "2"); /* its own input's row */
    ck_assert_double_eq_tol(set.jobs[3].work_s, 155.8813, 1e-9);
    np_replay_owned_fini(&set);
    ck_assert_int_eq(np_replay_set_from_scenario(&sc, &model, &fp, 1, 0, &set, &err), 0);
    ck_assert_double_eq(set.jobs[0].corun, 0); /* without the flag: none */
    np_replay_owned_fini(&set);
    np_replay_owned_fini(NULL);
    np_scenario_fini(&sc);
    np_footprints_free(&fp);
    np_model_free(&model);
}
END_TEST

static const struct {
    const char *benchmark;
    unsigned flags;
    double scale;
    const char *message;
} bad_builds[] = {
    {"999.nope", 0, 1, "jobs[0].benchmark: '999.nope' input 0 is not in the model table"},
    {"502.gcc_r", 0, 1, "jobs[0].benchmark: no footprint for '502.gcc_r'"},
    {"619.lbm_s", 0, 0, "footprint scale 0: must be a number > 0"},
    {"619.lbm_s", 0, 1e30, "jobs[0]: footprint 825499 pages x 1e+30 is more than 1099511627776"},
};

START_TEST(test_set_from_bad_scenario)
{
    char text[512];
    struct np_model model;
    struct np_footprints fp;
    struct np_scenario sc;
    struct np_replay_owned set;
    struct np_err err = {0};

    load_tables(&model, &fp);
    snprintf(text, sizeof(text),
             "{\"numaplace_scenario\": 1, \"name\": \"t\", \"nodes\": 2, \"jobs\": "
             "[{\"benchmark\": \"%s\", \"node\": 0}]}",
             bad_builds[_i].benchmark);
    ck_assert_msg(np_scenario_parse(text, strlen(text), &sc, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(np_replay_set_from_scenario(&sc, &model, &fp, bad_builds[_i].scale,
                                                 bad_builds[_i].flags, &set, &err),
                     -EINVAL);
    ck_assert_msg(strstr(err.msg, bad_builds[_i].message), "%s", err.msg);
    ck_assert_ptr_null(set.jobs);
    np_scenario_fini(&sc);
    np_footprints_free(&fp);
    np_model_free(&model);
}
END_TEST

/* The shipped sets replay in both ways, with and without co-location, and rank as the thesis
 * measured: Best ahead of Random, Random ahead of Worst+. */
START_TEST(test_shipped_sets_rank)
{
    char name[64];
    struct np_model model;
    struct np_footprints fp;
    struct np_scenario sc;
    struct np_err err = {0};

    load_tables(&model, &fp);
    snprintf(name, sizeof(name), "scenarios/thesis-set-%d.json", _i + 1);
    ck_assert_msg(np_scenario_load(data_path(name), &sc, &err) == 0, "%s", err.msg);
    for (int way = 0; way < NP_REPLAY_WAY_COUNT; way++)
        for (unsigned flags = 0; flags <= NP_REPLAY_WITH_CORUN; flags++) {
            const struct np_replay_config c = config((enum np_replay_way)way, 200e6 / 4096);
            struct np_replay_owned set;
            struct np_replay_result best, worst_plus;
            double random = 0;
            ck_assert_msg(np_replay_set_from_scenario(&sc, &model, &fp, 1, flags, &set, &err) == 0,
                          "%s", err.msg);
            ck_assert_int_eq(np_replay_run(&set.set, &c, np_order_lookup("best"), 0, &best, &err),
                             0);
            ck_assert_int_eq(
                np_replay_run(&set.set, &c, np_order_lookup("worst-plus"), 0, &worst_plus, &err),
                0);
            for (uint64_t seed = 1; seed <= 3; seed++) {
                struct np_replay_result r;
                ck_assert_int_eq(
                    np_replay_run(&set.set, &c, np_order_lookup("random"), seed, &r, &err), 0);
                random += np_replay_figure(r.job_time_s, best.job_time_s, r.njobs) / 3;
                np_replay_result_fini(&r);
            }
            ck_assert_msg(random > 1.0, "set %d %s: random %.4f", _i + 1,
                          np_replay_way_name((enum np_replay_way)way), random);
            ck_assert_msg(np_replay_figure(worst_plus.job_time_s, best.job_time_s, best.njobs) >
                              random,
                          "set %d %s: worst-plus not behind random", _i + 1,
                          np_replay_way_name((enum np_replay_way)way));
            np_replay_result_fini(&best);
            np_replay_result_fini(&worst_plus);
            np_replay_owned_fini(&set);
        }
    np_scenario_fini(&sc);
    np_footprints_free(&fp);
    np_model_free(&model);
}
END_TEST

#define N(a) (sizeof(a) / sizeof((a)[0]))

int main(void)
{
    Suite *s = suite_create("replay");
    TCase *tc = tcase_create("replay");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_job_finishes_at_work_over_rate, 0, N(alone_cases));
    tcase_add_test(tc, test_noise_on_contention);
    tcase_add_loop_test(tc, test_hot_share_in_replay, 0, sizeof(hot_cases) / sizeof(hot_cases[0]));
    tcase_add_loop_test(tc, test_growth_curve, 0, sizeof(growth_cases) / sizeof(growth_cases[0]));
    tcase_add_test(tc, test_growth_allocates_on_start_node);
    tcase_add_test(tc, test_bad_growth);
    tcase_add_loop_test(tc, test_request_making_l_local_speeds_it_up, 0, N(gain_cases));
    tcase_add_loop_test(tc, test_cover_whole_shares_or_exact, 0, N(cover_cases));
    tcase_add_test(tc, test_free_floor_and_capacity);
    tcase_add_test(tc, test_delay_from_issue_or_answer);
    tcase_add_loop_test(tc, test_thesis_loop, 0, sizeof(loop_cases) / sizeof(loop_cases[0]));
    tcase_add_test(tc, test_random_reproducible_per_seed);
    tcase_add_test(tc, test_requests_after_the_end);
    tcase_add_loop_test(tc, test_bad_sets, 0, N(bad_cases));
    tcase_add_test(tc, test_start_sum_cannot_wrap);
    tcase_add_test(tc, test_figure_and_names);
    tcase_add_test(tc, test_shipped_footprints);
    tcase_add_loop_test(tc, test_bad_footprints, 0, N(bad_footprints));
    tcase_add_test(tc, test_set_from_scenario);
    tcase_add_loop_test(tc, test_set_from_bad_scenario, 0, N(bad_builds));
    tcase_add_loop_test(tc, test_shipped_sets_rank, 0, 5);
    suite_add_tcase(s, tc);
    tc = tcase_create("no end"); /* 10^7 steps: about a second under ASan on a busy machine */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_no_end_in_sight);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
