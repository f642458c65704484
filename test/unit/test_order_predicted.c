/* The orders by predicted effect (orders.c candidates) and the effect itself (view.c), on
 * hand-made node views through the planner, with every expected order written out. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/migration.h"

#define MAXJOBS 8

/* One hand-made job: CPUs' nodes, bandwidth, pages on node 0 (the source) and at home, and its
 * predicted remote slowdown (0: none). */
struct job {
    char name;
    uint64_t cpu_nodes;
    double bandwidth;
    uint64_t on_src, at_home;
    double predicted;
};

/* S = 0 -> D = 1. Best-plus: gainers by bandwidth high first (b a), neutral (e), losers low
 * first (d c). The predictions reverse each pair: a gains far more per page than b (3.0x against
 * 1.05x, same pages); c loses next to nothing (1.02x), d much (2.5x). */
static const struct job base[] = {
    {'a', 1u << 1, 100, 100, 0, 3.0},  /* L, sensitive, low bandwidth */
    {'b', 1u << 1, 900, 100, 0, 1.05}, /* L, insensitive, high bandwidth */
    {'c', 1u << 0, 800, 100, 0, 1.02}, /* R, insensitive, high bandwidth */
    {'d', 1u << 0, 50, 100, 0, 2.5},   /* R, sensitive, low bandwidth */
    {'e', 1u << 2, 10, 100, 0, 2.0},   /* O: remote stays remote */
};
/* The same with b unpredicted (a new step without counters yet). */
static const struct job one_unknown[] = {
    {'a', 1u << 1, 100, 100, 0, 3.0},  {'b', 1u << 1, 900, 100, 0, 0},
    {'c', 1u << 0, 800, 100, 0, 1.02}, {'d', 1u << 0, 50, 100, 0, 2.5},
    {'e', 1u << 2, 10, 100, 0, 2.0},
};
/* Per page: f has 10 pages at home and 100 on S, g 1000 at home; equally sensitive, g gains
 * less per page since each page is a smaller share of its memory. */
static const struct job footprint[] = {
    {'f', 1u << 1, 100, 100, 10, 2.0},
    {'g', 1u << 1, 900, 100, 1000, 2.0},
};
/* On the thesis's 4-node machine (21 near, 30 far): a job with CPUs on node 3 sees S = 0 at 30
 * and D = 1 at 21, so moving its pages gains 9/11 of a near node's penalty; ranked by effect it
 * goes before a gainer that barely notices remote memory, and best-plus's group keeps it after. */
static const struct job far[] = {
    {'h', 1u << 1, 900, 100, 0, 1.01}, /* L, hardly sensitive */
    {'i', 1u << 3, 100, 100, 0, 3.0},  /* O, far -> near, sensitive */
    {'j', 1u << 2, 50, 100, 0, 3.0},   /* O, CPUs on node 2: S at 21, D at 30: it loses */
};

static const struct {
    const char *what;
    const char *order;
    const struct job *jobs;
    size_t njobs;
    bool distances;
    const char *expected;
    size_t unpredicted;
} cases[] = {
    {"best-plus by bandwidth", "best-plus", base, 5, false, "baedc", 0},
    {"global: gain per page, then cost", "predicted-global", base, 5, false, "abecd", 0},
    {"predicted: same without distances", "predicted", base, 5, false, "abecd", 0},
    {"global: one unknown, all best-plus", "predicted-global", one_unknown, 5, false, "baedc", 1},
    {"predicted: unknown last in its group", "predicted", one_unknown, 5, false, "abecd", 1},
    {"global: per page, not per job", "predicted-global", footprint, 2, false, "fg", 0},
    {"predicted: per page, not per job", "predicted", footprint, 2, false, "fg", 0},
    {"best-plus: bandwidth only", "best-plus", footprint, 2, false, "gf", 0},
    {"global: far-to-near neutral first", "predicted-global", far, 3, true, "ihj", 0},
    {"predicted: groups first", "predicted", far, 3, true, "hij", 0},
    {"best-plus: far-to-near unseen", "best-plus", far, 3, true, "hji", 0},
};

static const uint8_t sandman[4][4] = {
    {10, 21, 21, 30}, {21, 10, 30, 21}, {21, 30, 10, 21}, {30, 21, 21, 10}};

static const struct np_order_ops *find(const char *name)
{
    const struct np_order_ops *ops = np_order_lookup(name);

    for (size_t i = 0; !ops && np_order_candidate_at(i); i++)
        if (strcmp(np_order_candidate_at(i)->name, name) == 0)
            ops = np_order_candidate_at(i);
    return ops;
}

static void make_view(struct np_node_view *view, struct np_job_view *jv, const struct job *jobs,
                      size_t n, bool distances)
{
    memset(view, 0, sizeof(*view));
    memset(jv, 0, n * sizeof(*jv));
    view->nnodes = 4;
    view->jobs = jv;
    view->njobs = n;
    for (unsigned a = 0; distances && a < 4; a++)
        for (unsigned b = 0; b < 4; b++)
            view->distance[a][b] = sandman[a][b];
    for (size_t i = 0; i < n; i++) {
        unsigned home = 0;
        while (!(jobs[i].cpu_nodes >> home & 1u))
            home++;
        jv[i].id = i;
        jv[i].job_class = NP_CLASS_LOW;
        jv[i].cpu_nodes = jobs[i].cpu_nodes;
        jv[i].bandwidth = jobs[i].bandwidth;
        jv[i].pages_on_node[0] = jobs[i].on_src;
        jv[i].pages_on_node[home] += jobs[i].at_home;
        jv[i].has_prediction = jobs[i].predicted > 0;
        jv[i].predicted_remote = jobs[i].predicted;
    }
}

START_TEST(test_predicted_order)
{
    struct np_job_view jv[MAXJOBS];
    struct np_node_view view;
    const struct np_request request = {.src = 0, .dst = 1, .pages = 1, .target_job = -1};
    const struct np_order_ops *ops = find(cases[_i].order);
    struct np_plan plan;
    char got[MAXJOBS + 1] = "";

    ck_assert_msg(ops != NULL, "%s: no order %s", cases[_i].what, cases[_i].order);
    make_view(&view, jv, cases[_i].jobs, cases[_i].njobs, cases[_i].distances);
    ck_assert_int_eq(np_plan_make(&view, &request, ops, 1, 1, NP_PLAN_EXACT, &plan), 0);
    for (size_t i = 0; i < plan.ncands; i++)
        got[i] = cases[_i].jobs[plan.cands[i].job_index].name;
    got[plan.ncands] = '\0';
    ck_assert_msg(strcmp(got, cases[_i].expected) == 0, "%s: %s, expected %s", cases[_i].what, got,
                  cases[_i].expected);
    /* Only an order ranking by prediction counts (and reports) the candidates without one. */
    ck_assert_uint_eq(plan.unpredicted, ops->uses_prediction ? cases[_i].unpredicted : 0);
    np_plan_fini(&plan);
}
END_TEST

/* The effect per page: (s - 1) x (excess at D - excess at S) / pages / current slowdown. */
static const struct {
    const char *what;
    struct job job;
    bool distances;
    double expected; /* NAN: unavailable */
} effect_cases[] = {
    {"gainer, all remote", {'a', 1u << 1, 0, 100, 0, 3.0}, false, -2.0 / 100 / 3.0},
    {"loser, all local", {'d', 1u << 0, 0, 100, 0, 2.5}, false, 1.5 / 100 / 1.0},
    {"neutral, distances unknown", {'e', 1u << 2, 0, 100, 0, 2.0}, false, 0.0},
    {"gainer, half at home", {'f', 1u << 1, 0, 100, 100, 2.0}, false, -1.0 / 200 / 1.5},
    {"no prediction", {'x', 1u << 1, 0, 100, 0, 0}, false, NAN},
    {"below 1 is no effect", {'y', 1u << 0, 0, 100, 0, 0.9}, false, 0.0},
    {"far to near",
     {'i', 1u << 3, 0, 100, 0, 3.0},
     true,
     2.0 * (1.0 - 20.0 / 11) / 100 / (1.0 + 2.0 * 20.0 / 11)},
    {"gainer from a near node", {'a', 1u << 1, 0, 100, 0, 3.0}, true, -2.0 / 100 / 3.0},
};

START_TEST(test_effect_per_page)
{
    struct np_job_view jv;
    struct np_node_view view;
    double got;

    make_view(&view, &jv, &effect_cases[_i].job, 1, effect_cases[_i].distances);
    got = np_predicted_effect_per_page(&view, &jv, 0, 1);
    if (isnan(effect_cases[_i].expected))
        ck_assert_msg(isnan(got), "%s: %g, expected unavailable", effect_cases[_i].what, got);
    else
        ck_assert_msg(fabs(got - effect_cases[_i].expected) < 1e-12, "%s: %.9g, expected %.9g",
                      effect_cases[_i].what, got, effect_cases[_i].expected);
}
END_TEST

/* A tiered node: DDR node 0 with the CPUs, HBM node 1 and a CXL-like node 2 without, each pair's
 * latency ratio and each node's capacity known (a machine profile's, HMAT's). A job on node 0's
 * CPUs, predicted 2.0x on a near socket, its 100 pages on @c src; the effect of one page to
 * @c dst, written out from the contention model's law with NP_NEAR_LATENCY = 1.374. */
#define UNIT (NP_NEAR_LATENCY - 1.0)
static const struct {
    const char *what;
    unsigned src, dst;
    double ddr_busy; /* node 0's measured traffic over its capacity; -1: not measured */
    double expected;
} tier_cases[] = {
    /* HBM 1.15x: its latency alone; DDR unloaded gains (0.15 / UNIT of excess back) */
    {"HBM to idle DDR gains", 1, 0, -1, -(0.15 / UNIT) / 100 / (1.0 + 0.15 / UNIT)},
    {"HBM to DDR, traffic 0", 1, 0, 0, -(0.15 / UNIT) / 100 / (1.0 + 0.15 / UNIT)},
    /* DDR at 90% of its capacity: queueing 10x makes its pages cost 9 / UNIT; SLIT would call
     * the move home a gain */
    {"HBM to busy DDR loses", 1, 0, 0.9, (9.0 / UNIT - 0.15 / UNIT) / 100 / (1.0 + 0.15 / UNIT)},
    /* CXL 2.1x: 1.1 / UNIT = 2.94 near sockets' worth, where SLIT 17 would say 7/11 */
    {"DDR to CXL", 0, 2, -1, (1.1 / UNIT) / 100},
    {"CXL to HBM", 2, 1, -1, (0.15 / UNIT - 1.1 / UNIT) / 100 / (1.0 + 1.1 / UNIT)},
};

/* A view of @p nnodes nodes at SLIT @p apart from each other, one job on node 0's CPUs predicted
 * 2.0x on a near socket, its 100 pages on @p src. */
static void one_job_view(struct np_node_view *view, struct np_job_view *jv, unsigned nnodes,
                         uint8_t apart, unsigned src)
{
    memset(view, 0, sizeof(*view));
    memset(jv, 0, sizeof(*jv));
    view->nnodes = nnodes;
    view->jobs = jv;
    view->njobs = 1;
    for (unsigned a = 0; a < nnodes; a++)
        for (unsigned b = 0; b < nnodes; b++)
            view->distance[a][b] = a == b ? 10 : apart;
    jv->cpu_nodes = 1u << 0;
    jv->pages_on_node[src] = 100;
    jv->has_prediction = true;
    jv->predicted_remote = 2.0;
}

START_TEST(test_tier_effect)
{
    struct np_node_view view;
    struct np_job_view jv;
    double got;

    one_job_view(&view, &jv, 3, 17, tier_cases[_i].src); /* SLIT: both far nodes alike */
    view.latency_ratio[0][1] = 1.15f;
    view.latency_ratio[0][2] = 2.1f;
    view.capacity[0] = 100e9;
    view.capacity[1] = 400e9;
    view.capacity[2] = 30e9;
    if (tier_cases[_i].ddr_busy >= 0) {
        view.node_bandwidth[0] = tier_cases[_i].ddr_busy * view.capacity[0];
        view.node_bandwidth_source[0] = NP_BW_SOURCE_UNCORE;
    }
    got = np_predicted_effect_per_page(&view, &jv, tier_cases[_i].src, tier_cases[_i].dst);
    /* the ratios are floats: 1e-6 relative */
    ck_assert_msg(fabs(got - tier_cases[_i].expected) < 1e-6 * fabs(tier_cases[_i].expected),
                  "%s: %.9g, expected %.9g", tier_cases[_i].what, got, tier_cases[_i].expected);
}
END_TEST

/* Two sockets (SLIT 21), HMAT's capacities but no pair's latency (HMAT lists a node's nearest
 * initiators only): the queueing applies to the remote node read through SLIT as to the local
 * one, so bringing pages home to a node as busy as theirs is still a gain; a traffic figure that
 * is not a number queues nothing. A job on node 0's CPUs, predicted 2.0x, 100 pages on node 1. */
static const struct {
    const char *what;
    double busy0, busy1; /* each node's traffic over its capacity */
    double expected;
} queue_cases[] = {
    {"both half busy: home still gains", 0.5, 0.5, -2.0 / 100 / (1.0 + (1.0 + 2 * UNIT) / UNIT)},
    {"traffic not a number: unloaded", NAN, 0, -1.0 / 100 / 2.0},
};

START_TEST(test_queueing_rules)
{
    struct np_node_view view;
    struct np_job_view jv;
    double got;

    one_job_view(&view, &jv, 2, 21, 1);
    for (unsigned a = 0; a < 2; a++) {
        view.capacity[a] = 100e9;
        view.node_bandwidth_source[a] = NP_BW_SOURCE_MISSES;
    }
    view.node_bandwidth[0] = queue_cases[_i].busy0 * 100e9;
    view.node_bandwidth[1] = queue_cases[_i].busy1 * 100e9;
    got = np_predicted_effect_per_page(&view, &jv, 1, 0);
    ck_assert_msg(fabs(got - queue_cases[_i].expected) < 1e-9 * fabs(queue_cases[_i].expected),
                  "%s: %.9g, expected %.9g", queue_cases[_i].what, got, queue_cases[_i].expected);
}
END_TEST

START_TEST(test_shipped_and_candidates)
{
    const struct np_order_ops *ops = NULL;
    struct np_err err = {0};

    /* predicted is an order a configuration or request can name (it beat best-plus on the
     * replayed sets under cross-validation); a candidate never is. */
    ck_assert_int_eq(np_order_find("predicted", &ops, &err), 0);
    ck_assert(ops->uses_prediction);
    ck_assert_ptr_nonnull(strstr(np_order_names(), "predicted"));
    for (size_t i = 0; np_order_candidate_at(i); i++) {
        ck_assert_ptr_null(np_order_lookup(np_order_candidate_at(i)->name));
        ck_assert(np_order_candidate_at(i)->uses_prediction);
    }
    ck_assert_ptr_null(strstr(np_order_names(), "predicted-global"));
    for (size_t i = 0; np_order_at(i); i++) {
        ck_assert(np_order_at(i)->uses_prediction == !strcmp(np_order_at(i)->name, "predicted"));
        /* those ranking by prediction come last (bench/replay scores the others) */
        ck_assert(!np_order_at(i)->uses_prediction || !np_order_at(i + 1) ||
                  np_order_at(i + 1)->uses_prediction);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("order_predicted");
    TCase *tc = tcase_create("order_predicted");
    tcase_add_loop_test(tc, test_predicted_order, 0, sizeof(cases) / sizeof(cases[0]));
    tcase_add_loop_test(tc, test_effect_per_page, 0,
                        sizeof(effect_cases) / sizeof(effect_cases[0]));
    tcase_add_loop_test(tc, test_tier_effect, 0, sizeof(tier_cases) / sizeof(tier_cases[0]));
    tcase_add_loop_test(tc, test_queueing_rules, 0, sizeof(queue_cases) / sizeof(queue_cases[0]));
    tcase_add_test(tc, test_shipped_and_candidates);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
