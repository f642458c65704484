/* The model's migration orders and the request planner, with every expected order written out. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/migration.h"

/* Six low-priority jobs, request S = node 0 -> D = node 1 on a 4-node machine. */
static const struct {
    const char *name;
    uint64_t cpu_nodes; /* bit mask */
    double bandwidth;
    uint64_t pages;
} jobs[] = {
    {"A", 1u << 1, 500, 50},   /* L: CPUs on D */
    {"B", 1u << 1, 2000, 100}, /* L */
    {"C", 1u << 2, 300, 1000}, /* O: CPUs elsewhere */
    {"D", 1u << 3, 100, 10},   /* O */
    {"E", 1u << 0, 50, 70},    /* R: CPUs on S */
    {"F", 1u << 0, 800, 0},    /* R, nothing on S */
};
#define NJOBS (sizeof(jobs) / sizeof(jobs[0]))

static void load(struct np_candidate *c)
{
    for (size_t i = 0; i < NJOBS; i++) {
        c[i].id = i;
        c[i].group = np_move_group_of(jobs[i].cpu_nodes, 0, 1);
        c[i].bandwidth = jobs[i].bandwidth;
        c[i].bandwidth_is_proxy = false;
        c[i].pages_on_src = jobs[i].pages;
    }
}

static void names_of(const struct np_candidate *c, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = jobs[c[i].id].name[0];
    out[n] = '\0';
}

static const struct {
    const char *order;
    const char *expected;
} order_cases[] = {
    {"best-plus", "BADCEF"},  /* L desc (B A), O asc (D C), R asc (E F) */
    {"best", "BAEDCF"},       /* L desc, then O and R together asc: E 50, D 100, C 300, F 800 */
    {"worst", "FCDEAB"},      /* best reversed */
    {"worst-plus", "FECDAB"}, /* best-plus reversed */
};

START_TEST(test_order_sequence)
{
    struct np_candidate c[NJOBS];
    char got[NJOBS + 1];
    const struct np_order_ops *ops = np_order_lookup(order_cases[_i].order);

    ck_assert_ptr_nonnull(ops);
    load(c);
    ops->sort(c, NJOBS, 42);
    names_of(c, NJOBS, got);
    ck_assert_str_eq(got, order_cases[_i].expected);

    /* The input order must not matter. */
    for (size_t i = 0; i < NJOBS / 2; i++) {
        struct np_candidate t = c[i];
        c[i] = c[NJOBS - 1 - i];
        c[NJOBS - 1 - i] = t;
    }
    ops->sort(c, NJOBS, 42);
    names_of(c, NJOBS, got);
    ck_assert_str_eq(got, order_cases[_i].expected);
}
END_TEST

START_TEST(test_random_is_seeded_permutation)
{
    struct np_candidate c[NJOBS];
    char first[NJOBS + 1], again[NJOBS + 1], other[NJOBS + 1];
    const struct np_order_ops *ops = np_order_lookup("random");
    int differs = 0;

    ck_assert_ptr_nonnull(ops);
    load(c);
    ops->sort(c, NJOBS, 7);
    names_of(c, NJOBS, first);
    load(c);
    ops->sort(c, NJOBS, 7);
    names_of(c, NJOBS, again);
    ck_assert_str_eq(first, again);
    for (size_t k = 0; k < NJOBS; k++)
        ck_assert_ptr_nonnull(strchr(first, jobs[k].name[0]));
    for (uint64_t seed = 1; seed < 20; seed++) {
        load(c);
        ops->sort(c, NJOBS, seed);
        names_of(c, NJOBS, other);
        differs += strcmp(other, first) != 0;
    }
    ck_assert_int_gt(differs, 0);
}
END_TEST

static const struct {
    uint64_t mask;
    unsigned src, dst;
    enum np_move_group group;
} group_cases[] = {
    {1u << 1, 0, 1, NP_GROUP_GAIN},
    {1u << 0, 0, 1, NP_GROUP_LOSE},
    {1u << 2, 0, 1, NP_GROUP_NEUTRAL},
    {(1u << 0) | (1u << 1), 0, 1, NP_GROUP_NEUTRAL}, /* on both: a wash */
    {0, 0, 1, NP_GROUP_NEUTRAL},                     /* CPUs unknown */
    {1u << 3, 3, 2, NP_GROUP_LOSE},
    {1ull << 63, 0, 63, NP_GROUP_GAIN},
    {1u << 1, 0, 99, NP_GROUP_NEUTRAL}, /* out-of-range node never matches */
};

START_TEST(test_move_group)
{
    ck_assert_int_eq(
        np_move_group_of(group_cases[_i].mask, group_cases[_i].src, group_cases[_i].dst),
        group_cases[_i].group);
}
END_TEST

/* Requests against best-plus order B(100) A(50) D(10) C(1000) E(70) F(0), covered exactly
 * (numaplace) or by whole shares (the thesis: N is a lower bound). */
static const struct {
    enum np_plan_cover cover;
    uint64_t wanted, planned;
    const char *steps; /* job:pages, ... */
} plan_cases[] = {
    {NP_PLAN_EXACT, 30, 30, "B:30"},                            /* N below one job: partial */
    {NP_PLAN_EXACT, 100, 100, "B:100"},                         /* exactly one job */
    {NP_PLAN_EXACT, 120, 120, "B:100,A:20"},                    /* the last job partially */
    {NP_PLAN_EXACT, 200, 200, "B:100,A:50,D:10,C:40"},          /* spans the groups */
    {NP_PLAN_EXACT, 5000, 1230, "B:100,A:50,D:10,C:1000,E:70"}, /* exhausted: ends short */
    {NP_PLAN_EXACT, 0, 0, ""},                                  /* nothing asked */
    {NP_PLAN_WHOLE_SHARES, 30, 100, "B:100"},                   /* overshoot to B's share */
    {NP_PLAN_WHOLE_SHARES, 100, 100, "B:100"},                  /* reached: stops */
    {NP_PLAN_WHOLE_SHARES, 120, 150, "B:100,A:50"},             /* the last one whole */
    {NP_PLAN_WHOLE_SHARES, 200, 1160, "B:100,A:50,D:10,C:1000"},
    {NP_PLAN_WHOLE_SHARES, 5000, 1230, "B:100,A:50,D:10,C:1000,E:70"},
    {NP_PLAN_WHOLE_SHARES, 0, 0, ""},
};

START_TEST(test_plan_request)
{
    struct np_candidate c[NJOBS];
    struct np_plan_step steps[NJOBS];
    size_t nsteps = 99;
    char got[128] = "";

    load(c);
    np_order_default()->sort(c, NJOBS, 0);
    ck_assert_uint_eq(
        np_plan_request(c, NJOBS, plan_cases[_i].wanted, plan_cases[_i].cover, steps, &nsteps),
        plan_cases[_i].planned);
    if (plan_cases[_i].cover == NP_PLAN_EXACT) {
        size_t again = 0;
        ck_assert_uint_eq(
            np_plan_request(c, NJOBS, plan_cases[_i].wanted, NP_PLAN_EXACT, steps, &again),
            plan_cases[_i].planned);
        ck_assert_uint_eq(again, nsteps);
    }
    for (size_t i = 0; i < nsteps; i++) {
        char one[32];
        snprintf(one, sizeof(one), "%s%s:%llu", i ? "," : "", jobs[c[steps[i].index].id].name,
                 (unsigned long long)steps[i].pages);
        strcat(got, one);
    }
    ck_assert_str_eq(got, plan_cases[_i].steps);
}
END_TEST

START_TEST(test_order_lookup)
{
    const struct np_order_ops *ops = NULL;
    struct np_err err = {0};
    size_t n = 0;

    ck_assert_str_eq(np_order_default()->name, "best-plus");
    while (np_order_at(n))
        n++;
    ck_assert_uint_eq(n, 6);
    ck_assert_int_eq(np_order_find("best", &ops, &err), 0);
    ck_assert_str_eq(ops->name, "best");
    ck_assert_int_eq(np_order_find("bestplus", &ops, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "'bestplus'"));
    ck_assert_ptr_nonnull(strstr(err.msg, "best-plus, best, random, worst, worst-plus, predicted"));
    ck_assert_ptr_null(np_order_lookup(NULL));
}
END_TEST

START_TEST(test_missing_bandwidth_sorts_as_zero)
{
    struct np_candidate c[2] = {
        {.id = 1, .group = NP_GROUP_NEUTRAL, .bandwidth = NAN, .pages_on_src = 1},
        {.id = 2, .group = NP_GROUP_NEUTRAL, .bandwidth = 5, .pages_on_src = 1},
    };
    np_order_lookup("best-plus")->sort(c, 2, 0);
    ck_assert_uint_eq(c[0].id, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("orders");
    TCase *tc = tcase_create("orders");
    tcase_add_loop_test(tc, test_order_sequence, 0, sizeof(order_cases) / sizeof(order_cases[0]));
    tcase_add_loop_test(tc, test_move_group, 0, sizeof(group_cases) / sizeof(group_cases[0]));
    tcase_add_loop_test(tc, test_plan_request, 0, sizeof(plan_cases) / sizeof(plan_cases[0]));
    tcase_add_test(tc, test_random_is_seeded_permutation);
    tcase_add_test(tc, test_order_lookup);
    tcase_add_test(tc, test_missing_bandwidth_sorts_as_zero);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
