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
                                     .hot_weight = 1.0,
                                     .cpus_per_node = 2};
    return p;
}

enum knob { NONE, MC_1000, LINK_1000, LLC_1, FAR };

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

static const struct {
    uint64_t pages[3];
    unsigned start;
    double weight, expected[3];
} share_cases[] = {
    {{300, 100, 0}, 0, 1.0, {0.75, 0.25, 0}},
    {{300, 100, 0}, 0, 3.0, {0.9, 0.1, 0}},
    {{100, 100, 200}, 2, 0.5, {1.0 / 3, 1.0 / 3, 1.0 / 3}},
    {{0, 0, 0}, 0, 2.0, {0, 0, 0}},
};

START_TEST(test_access_shares)
{
    struct np_contention_params p = quiet();
    double share[3];

    p.hot_weight = share_cases[_i].weight;
    np_contention_access_shares(&p, share_cases[_i].pages, 3, share_cases[_i].start, share);
    for (int n = 0; n < 3; n++)
        ck_assert_double_eq_tol(share[n], share_cases[_i].expected[n], 1e-12);
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
    tcase_add_loop_test(tc, test_access_shares, 0, sizeof(share_cases) / sizeof(share_cases[0]));
    tcase_add_test(tc, test_refuses_bad_input);
    tcase_add_test(tc, test_openmp_names);
    tcase_add_test(tc, test_sandman_defaults_valid);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
