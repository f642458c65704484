/*
 * The contention model (numaplace/contention.h): each part on a case computed by hand, with the
 * other parts switched off (huge capacities, no LLC gain) so a single law decides the figure.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/contention.h"

/* Parameters with every effect off: unloaded remote access 2x, near distances unknown. */
static struct np_contention_params quiet(void)
{
    struct np_contention_params p = {.mc_capacity_mbps = 1e12,
                                     .link_capacity_mbps = 1e12,
                                     .remote_latency = 2.0,
                                     .max_utilisation = 0.95,
                                     .llc_gain = 0,
                                     .llc_half_mbps = 500,
                                     .omp_exponent = 0.5,
                                     .hot_fraction = 1.0,
                                     .hot_share = 1.0,
                                     .cpus_per_node = 2};
    return p;
}

/* TIER_*: node 1 a tier's node of its own latency (no link between), TIER_CAP of its own capacity
 */
enum knob { NONE, MC_1000, LINK_1000, LLC_1, FAR, TIER_3X, TIER_LINK, TIER_CAP };

static const struct {
    const char *what;
    enum knob knob;
    unsigned threads, corunner_threads;
    bool multi;
    double bw, m, local, corunner_mbps; /* the job's share local (rest on node 1) */
    double expected;
} cases[] = {
    {"alone, local: no slowdown", NONE, 1, 0, false, 100, 0.7, 1.0, 0, 1.0},
    {"all remote, half memory-bound: 0.5 + 0.5 x 2", NONE, 1, 0, false, 0, 0.5, 0.0, 0, 1.5},
    {"interleaved: 0.5 + 0.5 x (0.5 x 1 + 0.5 x 2)", NONE, 1, 0, false, 0, 0.5, 0.5, 0, 1.25},
    {"far node (30/21 of the near cost): 2 x 30/21", FAR, 1, 0, false, 0, 1.0, 0.0, 0, 60.0 / 21},
    {"4 threads on 2 CPUs, single-threaded: 4/2", NONE, 1, 3, false, 0, 0, 1.0, 0, 2.0},
    {"4 threads on 2 CPUs, OpenMP: (4/2)^0.5", NONE, 2, 2, true, 0, 0, 1.0, 0, M_SQRT2},
    {"hog at half the controller: 1 / (1 - 0.5)", MC_1000, 1, 0, false, 0, 1.0, 1.0, 500, 2.0},
    /* closed loop: S = 1 / (1 - 500 / (1000 S)) gives S = 1.5 */
    {"own demand 500 of 1000: S = 1.5", MC_1000, 1, 0, false, 500, 1.0, 1.0, 0, 1.5},
    /* remote over the link alone: S = 2 / (1 - 500 / (1000 S)) gives S = 2.5 */
    {"own demand over a 1000 link: S = 2.5", LINK_1000, 1, 0, false, 500, 1.0, 0.0, 0, 2.5},
    {"co-runner at the LLC's half point: 1 + 1 x 1/2", LLC_1, 1, 0, false, 0, 1.0, 1.0, 500, 1.5},
    {"hog saturating: capped at 1 / (1 - 0.95)", MC_1000, 1, 0, false, 0, 1.0, 1.0, 5000, 20.0},
    {"a tier's node at 3x, not 2x by SLIT: 0.5 + 0.5 x 3", TIER_3X, 1, 0, false, 0, 0.5, 0.0, 0,
     2.0},
    /* the 1000 link would give 2.5 (case above); a tier's node on the socket is not behind it */
    {"own demand to a tier's node: no link", TIER_LINK, 1, 0, false, 500, 1.0, 0.0, 0, 2.0},
    /* node 0's controller is unbounded; node 1's own 1000 queues as MC_1000 does */
    {"a tier's own capacity: S = 1.5", TIER_CAP, 1, 0, false, 500, 1.0, 0.0, 0, 1.5},
};

START_TEST(test_job_slowdown)
{
    struct np_contention_params p = quiet();
    struct np_model_row row = {.bw_mbps = cases[_i].bw};
    double share[2] = {cases[_i].local, 1 - cases[_i].local};
    struct np_contention_job j = {.cpu_node = 0,
                                  .bw_mbps = cases[_i].bw,
                                  .memory_share = cases[_i].m,
                                  .threads = cases[_i].threads,
                                  .multi_threaded = cases[_i].multi};
    struct np_contention_job hog = {.cpu_node = 0,
                                    .bw_mbps = cases[_i].corunner_mbps,
                                    .threads = cases[_i].corunner_threads,
                                    .fixed_demand = true};
    struct np_contention_job both[2];
    double s[2];
    struct np_err err = {0};

    if (cases[_i].knob == MC_1000)
        p.mc_capacity_mbps = 1000;
    if (cases[_i].knob == LINK_1000)
        p.link_capacity_mbps = 1000;
    if (cases[_i].knob == LLC_1)
        p.llc_gain = 1.0;
    if (cases[_i].knob == FAR)
        p.distance[0][1] = p.distance[1][0] = 30;
    if (cases[_i].knob == TIER_3X)
        p.latency[0][1] = 3.0f;
    if (cases[_i].knob == TIER_LINK) {
        p.link_capacity_mbps = 1000;
        p.latency[0][1] = 2.0f;
    }
    if (cases[_i].knob == TIER_CAP) {
        p.latency[0][1] = 1.0f;
        p.node_capacity_mbps[1] = 1000;
    }
    j.share[0] = share[0];
    j.share[1] = share[1];
    hog.share[0] = 1.0;
    both[0] = j;
    both[1] = hog;
    ck_assert_int_eq(np_contention_solve(&p, 2, both, 2, NULL, s, &err), 0);
    ck_assert_msg(fabs(s[0] - cases[_i].expected) < 1e-6, "%s: %g", cases[_i].what, s[0]);
    ck_assert_double_eq(s[1], 1.0); /* the hog is not slowed */
    /* the one-job form gives the same figure when m comes out of the table's remote factor */
    if (cases[_i].knob == NONE && cases[_i].bw == 0 && cases[_i].m > 0) {
        const double demand[2] = {cases[_i].corunner_mbps, 0};
        const unsigned threads[2] = {cases[_i].corunner_threads, 0};
        row.remote = 1 + cases[_i].m * (p.remote_latency - 1);
        ck_assert_double_eq_tol(np_contention_memory_share(&p, &row), cases[_i].m, 1e-9);
        ck_assert_double_eq_tol(np_contention_job_slowdown(&p, &row, cases[_i].threads,
                                                           cases[_i].multi, 0, share, 2, demand,
                                                           threads, &err),
                                cases[_i].expected, 1e-6);
    }
}
END_TEST

START_TEST(test_memory_share_bounds)
{
    struct np_contention_params p = quiet();
    struct np_model_row flat = {.bw_mbps = 10, .remote = 0.98};
    struct np_model_row beyond = {.bw_mbps = 0, .remote = 5.0}; /* 2x latency cannot give 5x */

    ck_assert_double_eq(np_contention_memory_share(&p, &flat), 0);
    ck_assert_double_eq(np_contention_memory_share(&p, &beyond), 1.0);
    /* with a link of 1000 MB/s a job drawing 500 reaches 2.5 at m = 1 (case above): 2.0 needs
     * less than the unloaded m = 1 */
    p.link_capacity_mbps = 1000;
    beyond = (struct np_model_row){.bw_mbps = 500, .remote = 2.0};
    ck_assert(np_contention_memory_share(&p, &beyond) < 0.99);
}
END_TEST

/* The hot-share law, by hand: share[n] = h x hot[n] / sum(hot) + (1 - h) x cold[n] / sum(cold). */
static const struct {
    const char *what;
    double fraction, share_hot;
    uint64_t hot[3], cold[3];
    double expected[3];
} share_cases[] = {
    {"all hot (the uniform default): share of pages",
     1.0,
     1.0,
     {300, 100, 0},
     {0},
     {0.75, 0.25, 0}},
    /* f = h: every page weighs 1/400 whatever its kind */
    {"hot fraction = hot share: uniform", 0.25, 0.25, {100, 0, 0}, {100, 200, 0}, {0.5, 0.5, 0}},
    /* 0.8 x 100/100 + 0.2 x 100/300 = 0.8667; 0.2 x 200/300 = 0.1333 */
    {"a quarter hot with 80% of the traffic, cold pages moved",
     0.25,
     0.8,
     {100, 0, 0},
     {100, 200, 0},
     {0.8 + 0.2 / 3, 0.4 / 3, 0}},
    /* hot split 50/50, cold all on node 2: 0.9 x 1/2, 0.9 x 1/2, 0.1 */
    {"hot pages split, cold elsewhere", 0.5, 0.9, {50, 50, 0}, {0, 0, 100}, {0.45, 0.45, 0.1}},
    {"no cold pages: the hot ones carry all", 0.5, 0.9, {10, 30, 0}, {0}, {0.25, 0.75, 0}},
    {"no hot pages: the cold ones carry all", 0.5, 0.9, {0}, {0, 0, 8}, {0, 0, 1}},
    {"no pages", 0.5, 0.9, {0}, {0}, {0, 0, 0}},
};

START_TEST(test_hot_shares)
{
    struct np_contention_params p = quiet();
    double share[3];

    p.hot_fraction = share_cases[_i].fraction;
    p.hot_share = share_cases[_i].share_hot;
    np_contention_hot_shares(&p, share_cases[_i].hot, share_cases[_i].cold, 3, share);
    for (int n = 0; n < 3; n++)
        ck_assert_msg(fabs(share[n] - share_cases[_i].expected[n]) < 1e-12, "%s: node %d: %g",
                      share_cases[_i].what, n, share[n]);
}
END_TEST

static const struct {
    bool hot_first;
    uint64_t hot, cold, want, hot_out, cold_out;
} split_cases[] = {
    {false, 100, 300, 200, 0, 200},  /* cold first: cold covers it */
    {false, 100, 300, 350, 50, 300}, /* cold all, then 50 hot */
    {true, 100, 300, 200, 100, 100}, /* hot first: all 100, then 100 cold */
    {true, 100, 300, 50, 50, 0},
    {false, 100, 300, 1000, 100, 300}, /* more than held: everything */
    {true, 0, 0, 10, 0, 0},
};

START_TEST(test_hot_split)
{
    struct np_contention_params p = quiet();
    uint64_t hot, cold;

    p.hot_moves_first = split_cases[_i].hot_first;
    np_contention_hot_split(&p, split_cases[_i].hot, split_cases[_i].cold, split_cases[_i].want,
                            &hot, &cold);
    ck_assert_uint_eq(hot, split_cases[_i].hot_out);
    ck_assert_uint_eq(cold, split_cases[_i].cold_out);
}
END_TEST

static const struct {
    double fraction, share_hot;
    uint64_t pages, hot;
    bool uniform;
} hot_pages_cases[] = {
    {1.0, 1.0, 731, 731, true}, {0.25, 0.8, 1000, 250, false}, {0.1, 0.1, 15, 2, true},
    {0.1, 0.5, 4, 0, false}, /* 0.4 rounds to none: the cold pages carry it all */
    {0.999, 1.0, 1, 1, false},
};

START_TEST(test_hot_pages)
{
    struct np_contention_params p = quiet();

    p.hot_fraction = hot_pages_cases[_i].fraction;
    p.hot_share = hot_pages_cases[_i].share_hot;
    ck_assert_uint_eq(np_contention_hot_pages(&p, hot_pages_cases[_i].pages),
                      hot_pages_cases[_i].hot);
    ck_assert(np_contention_uniform(&p) == hot_pages_cases[_i].uniform);
}
END_TEST

START_TEST(test_refuses_bad_input)
{
    struct np_contention_params p = quiet();
    struct np_contention_job j = {.cpu_node = 0, .memory_share = 0.5};
    struct np_err err = {0};
    double s;

    j.share[0] = 0.5; /* shares must sum to 1 */
    ck_assert_int_eq(np_contention_solve(&p, 2, &j, 1, NULL, &s, &err), -EINVAL);
    j.share[0] = 1.0;
    j.cpu_node = 2;
    ck_assert_int_eq(np_contention_solve(&p, 2, &j, 1, NULL, &s, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "cpu_node"));
    j.cpu_node = 0;
    p.max_utilisation = 1.0; /* 1 / (1 - 1) */
    ck_assert_int_eq(np_contention_solve(&p, 2, &j, 1, NULL, &s, &err), -EINVAL);
    p = quiet();
    p.hot_fraction = 0; /* no hot pages at all is hot_share 0, not fraction 0 */
    ck_assert_int_eq(np_contention_solve(&p, 2, &j, 1, NULL, &s, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "hot_fraction"));
    p = quiet();
    p.hot_share = 1.5;
    ck_assert_int_eq(np_contention_solve(&p, 2, &j, 1, NULL, &s, &err), -EINVAL);
}
END_TEST

START_TEST(test_openmp_names)
{
    ck_assert(np_contention_is_openmp("619.lbm_s"));
    ck_assert(!np_contention_is_openmp("619.lbm_r"));
    ck_assert(!np_contention_is_openmp("600.perlbench_s"));
    ck_assert(!np_contention_is_openmp(NULL));
}
END_TEST

START_TEST(test_sandman_defaults_valid)
{
    struct np_contention_params p;
    struct np_contention_job j = {.cpu_node = 0, .bw_mbps = 1000, .memory_share = 0.5};
    double s;

    np_contention_params_sandman(&p);
    j.share[3] = 1.0;
    ck_assert_int_eq(np_contention_solve(&p, 4, &j, 1, NULL, &s, NULL), 0);
    ck_assert(s > 1.0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("contention");
    TCase *tc = tcase_create("contention");
    tcase_add_loop_test(tc, test_job_slowdown, 0, sizeof(cases) / sizeof(cases[0]));
    tcase_add_test(tc, test_memory_share_bounds);
    tcase_add_loop_test(tc, test_hot_shares, 0, sizeof(share_cases) / sizeof(share_cases[0]));
    tcase_add_loop_test(tc, test_hot_split, 0, sizeof(split_cases) / sizeof(split_cases[0]));
    tcase_add_loop_test(tc, test_hot_pages, 0,
                        sizeof(hot_pages_cases) / sizeof(hot_pages_cases[0]));
    tcase_add_test(tc, test_refuses_bad_input);
    tcase_add_test(tc, test_openmp_names);
    tcase_add_test(tc, test_sandman_defaults_valid);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
