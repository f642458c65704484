/* bench/contention_cases.c's hold-out: a fit with a static mix held out depends on every case
 * but that mix's, and on none of that mix's, on a hand-made set whose exact fit is known (its
 * "measured" times are the model's own under np_contention_params_sandman). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contention_cases.h"
#include "np_test.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static struct np_model_row rows[3];
static struct fit_set cases;

static void add(enum fit_group group, int mix, int njobs, int hogs, double share0)
{
    struct fit_case *c = &cases.cases[cases.ncases++];

    memset(c, 0, sizeof(*c));
    c->group = group;
    c->mix = mix;
    c->conf = mix == FIT_NO_MIX ? 0 : hogs ? 4 : 1;
    c->njobs = njobs;
    c->hogs = hogs;
    c->hog_node = group == FIT_MIXES;
    for (int i = 0; i < njobs; i++)
        c->jobs[i] = (struct fit_job){&rows[(i + mix + 1) % 3], i % 2 ? share0 : 1.0};
}

/* Every case's measured time is the model's under the Sandman parameters, then mix 0's times
 * are multiplied by @p mix0_factor (1: the Sandman parameters fit everything exactly). */
static void build_set(double mix0_factor)
{
    const char *names[] = {"mem", "cpu", "mid"};
    const double bw[] = {20000, 500, 8000}, remote[] = {1.5, 1.05, 1.2};
    struct fit_params fp;
    struct fit_cache cache = {.n = 0};

    memset(rows, 0, sizeof(rows));
    for (size_t r = 0; r < N(rows); r++) {
        snprintf(rows[r].benchmark, sizeof(rows[r].benchmark), "%s", names[r]);
        rows[r].bw_mbps = bw[r];
        rows[r].remote = rows[r].interleave = remote[r];
        rows[r].total_time_s = 100;
    }
    cases.ncases = 0;
    for (int hogs = 0; hogs <= 10; hogs += 5)
        for (double share0 = 0; share0 <= 1; share0 += 0.5)
            add(FIT_CHARACTERIZATION, FIT_NO_MIX, 1, hogs, share0);
    for (int hogs = 1; hogs <= 4; hogs++)
        add(FIT_SWEEP, FIT_NO_MIX, 1, hogs, 1.0);
    for (int mix = 0; mix < FIT_NMIXES; mix++)
        for (int hogs = 0; hogs <= 8; hogs += 8)
            for (int t = 0; t < 4; t++) {
                add(FIT_MIXES, mix, 4, hogs, 0.0);
                cases.cases[cases.ncases - 1].target = t;
            }
    fit_params_sandman(&fp);
    for (int i = 0; i < cases.ncases; i++) {
        struct fit_case *c = &cases.cases[i];
        double s[FIT_MIX_JOBS];
        ck_assert_int_eq(fit_solve(&fp, c, &cache, s), 0);
        c->measured = s[c->target] * (c->mix == 0 ? mix0_factor : 1.0);
    }
}

static bool same_params(const struct fit_params *a, const struct fit_params *b)
{
    return a->hog_mbps == b->hog_mbps && a->model.mc_capacity_mbps == b->model.mc_capacity_mbps &&
           a->model.link_capacity_mbps == b->model.link_capacity_mbps &&
           a->model.remote_latency == b->model.remote_latency &&
           a->model.llc_gain == b->model.llc_gain &&
           a->model.llc_half_mbps == b->model.llc_half_mbps &&
           a->model.omp_exponent == b->model.omp_exponent;
}

/* With mix 0 held out, the set is the model's own: the fit stays at the Sandman parameters
 * (objective 0). Fit on everything, mix 0's distorted times pull it away. */
START_TEST(test_holdout_ignores_the_mix)
{
    struct fit_params sandman, held, full;
    double e[FIT_NGROUPS], b[FIT_NGROUPS];

    build_set(2.0);
    fit_params_sandman(&sandman);
    held = full = sandman;
    ck_assert_double_eq_tol(fit_score(&sandman, &cases, 0, e, b), 0, 1e-9);
    ck_assert_double_gt(fit_score(&sandman, &cases, FIT_NO_MIX, e, b), 0.05);
    fit_search(&held, &cases, 0);
    ck_assert(same_params(&held, &sandman));
    fit_search(&full, &cases, FIT_NO_MIX);
    ck_assert(!same_params(&full, &sandman));
    ck_assert_double_lt(fit_score(&full, &cases, FIT_NO_MIX, e, b),
                        fit_score(&sandman, &cases, FIT_NO_MIX, e, b));
}
END_TEST

/* From a start away from the optimum, the held-out fit is the same whatever mix 0's times,
 * and it recovers the known parameters' fit better than its start. */
static const double mix0_factors[] = {0.5, 1.0, 3.0};

START_TEST(test_holdout_independent_of_the_mix)
{
    struct fit_params start, fit, reference;
    double e[FIT_NGROUPS], b[FIT_NGROUPS];

    fit_params_sandman(&start);
    start.model.mc_capacity_mbps *= 0.6;
    start.hog_mbps *= 1.5;
    build_set(1.0);
    reference = start;
    fit_search(&reference, &cases, 0);
    build_set(mix0_factors[_i]);
    fit = start;
    fit_search(&fit, &cases, 0);
    ck_assert(same_params(&fit, &reference));
    ck_assert_double_lt(fit_score(&fit, &cases, 0, e, b), fit_score(&start, &cases, 0, e, b));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("contention_cases");
    TCase *tc = tcase_create("contention_cases");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_holdout_ignores_the_mix);
    tcase_add_loop_test(tc, test_holdout_independent_of_the_mix, 0, (int)N(mix0_factors));
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
