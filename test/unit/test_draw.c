/*
 * Seeded draws and the percentile interval (policies/sim/draw.c), which bench/order_cv judges
 * orders with: the same seed gives the same draws, a permutation is one, intervals by hand.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/draw.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* splitmix64's published first outputs from state 0 (Vigna's reference implementation). */
START_TEST(test_splitmix_reference)
{
    uint64_t state = 0;

    ck_assert_uint_eq(np_draw_next(&state), 0xe220a8397b1dcdafULL);
    ck_assert_uint_eq(np_draw_next(&state), 0x6e789e6aa1b965f4ULL);
    ck_assert_uint_eq(np_draw_next(&state), 0x06c45d188009454fULL);
}
END_TEST

/* A seed gives the same lognormal draws every time; another seed other draws; sigma 0 gives 1. */
static const uint64_t seeds[] = {0, 1, 2, 20, 0xdeadbeefULL};

START_TEST(test_lognormal_deterministic)
{
    uint64_t a = seeds[_i], b = seeds[_i], other = seeds[_i] + 1000, flat = seeds[_i];
    bool differs = false;

    for (int k = 0; k < 100; k++) {
        const double x = np_draw_lognormal(&a, 0.1), y = np_draw_lognormal(&b, 0.1);
        ck_assert_msg(x == y, "seed %llu draw %d: %.17g then %.17g", (unsigned long long)seeds[_i],
                      k, x, y);
        ck_assert(x > 0 && isfinite(x));
        differs |= x != np_draw_lognormal(&other, 0.1);
        ck_assert_double_eq(np_draw_lognormal(&flat, 0), 1.0);
    }
    ck_assert(differs);
}
END_TEST

/* Over many draws ln(factor) has mean 0 and standard deviation sigma; uniforms stay in (0, 1). */
static const double sigmas[] = {0.07, 0.105, 0.5};

START_TEST(test_lognormal_moments)
{
    const int n = 5000;
    uint64_t state = 42, ustate = 7;
    double sum = 0, sq = 0;

    for (int k = 0; k < n; k++) {
        const double l = log(np_draw_lognormal(&state, sigmas[_i]));
        const double u = np_draw_uniform(&ustate);
        sum += l;
        sq += l * l;
        ck_assert(u > 0 && u < 1);
    }
    /* 4 standard errors: sigma / sqrt(n) for the mean, sigma / sqrt(2n) for the sd */
    ck_assert_double_eq_tol(sum / n, 0, 4 * sigmas[_i] / sqrt(n));
    ck_assert_double_eq_tol(sqrt(sq / n - (sum / n) * (sum / n)), sigmas[_i],
                            4 * sigmas[_i] / sqrt(2.0 * n));
}
END_TEST

/* Every index once, the same permutation for the same seed, and not one fixed permutation. */
static const size_t sizes[] = {0, 1, 2, 5, 32, 100};

START_TEST(test_permutation)
{
    const size_t n = sizes[_i];
    size_t a[100], b[100], c[100];
    bool seen[100] = {false}, moved = false;

    np_draw_permutation(a, n, 1);
    np_draw_permutation(b, n, 1);
    np_draw_permutation(c, n, 2);
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_lt(a[i], n);
        ck_assert_msg(!seen[a[i]], "n %zu: %zu twice", n, a[i]);
        seen[a[i]] = true;
        ck_assert_uint_eq(a[i], b[i]);
        moved |= a[i] != c[i];
    }
    ck_assert(n < 5 || moved);
}
END_TEST

/* The permutation of 5 by seed 1, written out (the shuffle bench/order_cv's figures rest on:
 * a change to the draw changes them). */
START_TEST(test_permutation_known)
{
    static const size_t expect[5] = {2, 1, 4, 3, 0};
    size_t perm[5];

    np_draw_permutation(perm, 5, 1);
    for (size_t i = 0; i < 5; i++)
        ck_assert_uint_eq(perm[i], expect[i]);
}
END_TEST

/* Percentiles at (n - 1) p, interpolated (R's and numpy's default), worked out by hand. */
static const struct {
    double x[20];
    size_t n;
    double level, lo, hi;
} intervals[] = {
    {{7}, 1, 0.95, 7, 7},
    {{1, 2, 3, 4, 5}, 5, 0.5, 2, 4},  /* h = 1 and 3: sample points */
    {{3, 1, 2}, 3, 0.95, 1.05, 2.95}, /* h = 0.05 and 1.95, unsorted input */
    {{2, 2, 2, 2}, 4, 0.95, 2, 2},
    {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
     20,
     0.95,
     1.475,
     19.525},                         /* h = 0.475 and 18.525 */
    {{0.9, 1.1}, 2, 0.9, 0.91, 1.09}, /* h = 0.05 and 0.95 */
};

START_TEST(test_interval)
{
    double copy[20], lo = NAN, hi = NAN;

    memcpy(copy, intervals[_i].x, sizeof(copy));
    ck_assert_int_eq(np_interval_percentile(copy, intervals[_i].n, intervals[_i].level, &lo, &hi),
                     0);
    ck_assert_double_eq_tol(lo, intervals[_i].lo, 1e-12);
    ck_assert_double_eq_tol(hi, intervals[_i].hi, 1e-12);
    ck_assert_mem_eq(copy, intervals[_i].x, sizeof(copy)); /* the input is not sorted in place */
}
END_TEST

static const struct {
    double x[2];
    size_t n;
    double level;
} bad_intervals[] = {
    {{1, 2}, 0, 0.95}, {{1, 2}, 2, 0},      {{1, 2}, 2, 1},
    {{1, 2}, 2, NAN},  {{1, NAN}, 2, 0.95}, {{INFINITY, 1}, 2, 0.95},
};

START_TEST(test_bad_interval)
{
    double lo = -7, hi = -7;

    ck_assert_int_eq(np_interval_percentile(bad_intervals[_i].x, bad_intervals[_i].n,
                                            bad_intervals[_i].level, &lo, &hi),
                     -EINVAL);
    ck_assert_double_eq(lo, -7);
    ck_assert_double_eq(hi, -7);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("draw");
    TCase *tc = tcase_create("draw");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 30); /* thousands of draws under ASan on a busy machine */

    tcase_add_test(tc, test_splitmix_reference);
    tcase_add_loop_test(tc, test_lognormal_deterministic, 0, N(seeds));
    tcase_add_loop_test(tc, test_lognormal_moments, 0, N(sigmas));
    tcase_add_loop_test(tc, test_permutation, 0, N(sizes));
    tcase_add_test(tc, test_permutation_known);
    tcase_add_loop_test(tc, test_interval, 0, N(intervals));
    tcase_add_loop_test(tc, test_bad_interval, 0, N(bad_intervals));
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
