/* Summaries of thousands of nodes: the fit's last stage folds per-node figures into distributions
 * (docs/summary-schema.md, "Folded nodes") so that a 4,096- or 16,384-node job stores one
 * summary; round trip, text, merges after the fold, corrupt folds refused, hostlists. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/codec.h"
#include "numaplace/summary.h"
#include "numaplace/model_parts.h"

/* A permutation of 0..N-1 for a power-of-two N: node i's rank among the local shares. */
#define STRIDE 7919

static double share_of(size_t i, size_t n)
{
    return 0.05 + 0.9 * (double)((i * STRIDE) % n) / (double)(n - 1);
}

/* The node whose share has rank @p k. */
static size_t node_of_rank(size_t k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((i * STRIDE) % n == k)
            return i;
    ck_abort_msg("no node of rank %zu", k);
    return 0;
}

/* One node's part from the fixture report (a new reference). */
static json_t *template_node(void)
{
    json_error_t jerr;
    json_t *r = json_load_file(np_test_fixture("summary/job100.0.node1.json"), 0, &jerr), *node;
    json_t *one = np_summary_new(100);
    struct np_err err = {0};

    ck_assert_msg(r != NULL, "%s", jerr.text);
    ck_assert_int_eq(np_summary_add_report(one, r, &err), 0);
    node = json_deep_copy(json_object_get(json_object_get(one, "nodes"), "node1"));
    ck_assert_ptr_nonnull(node);
    json_decref(one);
    json_decref(r);
    return node;
}

/* Set the real member @p key of @p o when it has one (the figure's weights as the report gave). */
static void set_real(json_t *o, const char *key, double v)
{
    if (json_object_get(o, key))
        ck_assert_int_eq(json_object_set_new(o, key, json_real(v)), 0);
}

static json_t *nodes_of(json_t *s)
{
    return json_object_get(s, "nodes");
}

/* Node i into @p s: named n%05zu, local share share_of(i), duration 100 + i s. */
static void set_node(json_t *s, const json_t *tmpl, size_t i, size_t count, double share)
{
    json_t *n = json_deep_copy(tmpl), *ls = json_object_get(n, "local_share");
    char name[32];

    snprintf(name, sizeof(name), "n%05zu", i);
    set_real(ls, "value", isnan(share) ? share_of(i, count) : share);
    set_real(n, "duration_s", 100.0 + (double)i);
    /* real nodes' weights differ, and compress as badly as this */
    set_real(ls, "seconds", 600.0 * (1.0 + fmod((double)i * 0.6180339887, 1.0)));
    set_real(ls, "byte_seconds", 1e9 * (1.0 + fmod((double)i * 0.4142135623, 1.0)));
    ck_assert_int_eq(json_object_set_new(nodes_of(s), name, n), 0);
}

/* A summary of @p count synthetic nodes, built as the merger would, without its merges. */
static json_t *build(size_t count)
{
    json_t *tmpl = template_node(), *s = np_summary_new(100);

    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < count; i++)
        set_node(s, tmpl, i, count, NAN);
    json_decref(tmpl);
    ck_assert_int_eq(np_summary_recompute(s), 0);
    return s;
}

/* The same summary as the merger makes it: one part per node, each merged in turn, the totals
 * recomputed once after the last (store_pending.c). */
static json_t *build_by_merging(size_t count)
{
    json_t *tmpl = template_node(), *s = np_summary_new(100);
    struct np_err err = {0};

    for (size_t i = 0; i < count; i++) {
        json_t *part = np_summary_new(100);
        set_node(part, tmpl, i, count, NAN);
        ck_assert_int_eq(np_summary_recompute(part), 0);
        ck_assert_msg(np_summary_merge_deferred(s, part, &err) == 0, "%s", err.msg);
        json_decref(part);
    }
    ck_assert_int_eq(np_summary_recompute(s), 0);
    json_decref(tmpl);
    return s;
}

static double nearest_rank(size_t n, double p)
{
    size_t r = (size_t)ceil(p * (double)n);
    return share_of(node_of_rank(r - 1, n), n);
}

/* 16,384 nodes fitted take seconds optimised and minutes under the sanitizers, which check the
 * same code at 4,096. */
#if defined(__SANITIZE_ADDRESS__)
#define NP_FOLD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NP_FOLD_SANITIZED 1
#endif
#endif
#ifdef NP_FOLD_SANITIZED
static const size_t sizes[] = {4096};
#else
static const size_t sizes[] = {4096, 16384};
#endif

/* @p stored decoded and checked (asserting): a new reference */
static json_t *decode_stored(const char *stored)
{
    json_t *j = NULL;
    struct np_err err = {0};

    ck_assert_int_eq(np_stored_decode(stored, &j, &err), 0);
    ck_assert_msg(np_summary_validate(j, &err) == 0, "%s", err.msg);
    return j;
}

/* A figure's number (0 when it has none), a member's integer, a fold's member. */
static double fig_value(const json_t *f)
{
    const json_t *v = json_object_get(f, "value");
    return json_object_get(f, "unavailable") ? 0 : json_number_value(v);
}

static const json_t *at(const json_t *o, const char *a, const char *b)
{
    return json_object_get(json_object_get(o, a), b);
}

#define TOTAL(s, k)        at(s, "totals", k)
#define INT(o, k)          json_integer_value(json_object_get(o, k))
#define REAL(o, k)         json_number_value(json_object_get(o, k))
#define STR(o, k)          json_string_value(json_object_get(o, k))
#define FOLD(s)            json_object_get(s, "nodes_folded")
#define DIST_OF(s, figure) at(FOLD(s), "figures", figure)
#define TASKS(s)           json_object_iter_value(json_object_iter(json_object_get(s, "policy_applied")))

START_TEST(test_fold_fits)
{
    const size_t n = sizes[_i];
    json_t *s, *back, *trimmed;
    const json_t *d;
    struct np_err err = {0};
    char *stored = NULL, expect[64], name[32];
    double total_ls, total_k;
    json_int_t total_steps, tasks;
    long len;

    if (n <= 4096) /* as the merger builds it; 16,384 directly (the merges take their time) */
        s = build_by_merging(n);
    else
        s = build(n);
    total_ls = fig_value(TOTAL(s, "local_share"));
    total_k = fig_value(TOTAL(s, "kernel_time_share"));
    total_steps = INT(json_object_get(s, "totals"), "steps");
    ck_assert_int_eq(json_object_size(json_object_get(s, "policy_applied")), 1);
    tasks = json_integer_value(TASKS(s));
    len = np_summary_fit(s, NP_SUMMARY_STORED_MAX, &stored, &err);
    ck_assert_msg(len > 0 && len <= NP_SUMMARY_STORED_MAX, "%zu nodes: %ld (%s)", n, len, err.msg);
    ck_assert_ptr_nonnull(FOLD(s));
    trimmed = json_object_get(s, "trimmed");
    ck_assert_str_eq(STR(json_array_get(trimmed, json_array_size(trimmed) - 1), "what"),
                     "nodes-folded");
    back = decode_stored(stored);

    /* what was stored: every node named, the distributions right, the worst kept whole */
    ck_assert_int_eq(INT(FOLD(back), "nodes"), (json_int_t)n);
    snprintf(expect, sizeof(expect), "n[00000-%05zu]", n - 1);
    ck_assert_str_eq(STR(FOLD(back), "names"), expect);
    ck_assert_int_eq(np_summary_node_count(back), n);
    ck_assert_int_eq(INT(json_object_get(back, "totals"), "nodes"), (json_int_t)n);
    d = DIST_OF(back, "local_share");
    ck_assert_int_eq(INT(d, "count"), (json_int_t)n);
    ck_assert_int_eq(INT(d, "percentiles_of"), (json_int_t)n);
    ck_assert_double_eq_tol(REAL(d, "min"), 0.05, 1e-12);
    ck_assert_double_eq_tol(REAL(d, "max"), 0.95, 1e-12);
    ck_assert_double_eq_tol(REAL(d, "p50"), nearest_rank(n, 0.5), 1e-12);
    ck_assert_double_eq_tol(REAL(d, "p90"), nearest_rank(n, 0.9), 1e-12);
    snprintf(name, sizeof(name), "n%05zu", node_of_rank(0, n));
    ck_assert_str_eq(STR(d, "min_node"), name);
    snprintf(name, sizeof(name), "n%05zu", node_of_rank(n - 1, n));
    ck_assert_str_eq(STR(d, "max_node"), name);
    d = DIST_OF(back, "duration_s");
    ck_assert_double_eq_tol(REAL(d, "min"), 100, 1e-9);
    ck_assert_double_eq_tol(REAL(d, "max"), 100.0 + (double)(n - 1), 1e-9);
    snprintf(name, sizeof(name), "n%05zu", n - 1);
    ck_assert_str_eq(STR(d, "max_node"), name);
    ck_assert_int_eq(json_object_size(nodes_of(back)), NP_FOLD_KEEP_WORST);
    for (size_t k = 0; k < NP_FOLD_KEEP_WORST; k++) {
        snprintf(name, sizeof(name), "n%05zu", node_of_rank(k, n));
        ck_assert_msg(json_object_get(nodes_of(back), name) != NULL, "worst node %s not kept",
                      name);
    }
    /* the job-wide figures as they were before the fold */
    ck_assert_double_eq_tol(fig_value(TOTAL(back, "local_share")), total_ls, 1e-9);
    ck_assert_double_eq_tol(fig_value(TOTAL(back, "kernel_time_share")), total_k, 1e-9);
    ck_assert_int_eq(INT(json_object_get(back, "totals"), "steps"), total_steps);
    ck_assert_int_eq(json_object_size(json_object_get(back, "policy_applied")), 1);
    ck_assert_int_eq(json_integer_value(TASKS(back)), tasks);
    ck_assert(np_summary_node_reported(back, "n00042"));
    ck_assert(!np_summary_node_reported(back, "n99999"));

    /* round trip: stored and decoded again, the same JSON */
    ck_assert(json_equal(s, back));
    json_decref(back);
    json_decref(s);
    free(stored);
}
END_TEST

/* Nodes with the same figures compress so well that the trimmed per-node form fits the column
 * yet decodes past the decoder's limits: the fit goes on to the fold, and what it stores decodes.
 */
START_TEST(test_alike_nodes_decode)
{
    json_t *s = build(4096), *j = NULL, *n;
    struct np_err err = {0};
    const char *name;
    char *stored = NULL;

    json_object_foreach(nodes_of(s), name, n)
    {
        set_real(json_object_get(n, "local_share"), "value", 0.5);
        set_real(json_object_get(n, "local_share"), "seconds", 600);
        set_real(json_object_get(n, "local_share"), "byte_seconds", 1e9);
        set_real(n, "duration_s", 600);
    }
    ck_assert_int_gt(np_summary_fit(s, NP_SUMMARY_STORED_MAX, &stored, &err), 0);
    ck_assert_msg(np_stored_decode(stored, &j, &err) == 0, "%s", err.msg);
    json_decref(j);
    free(stored);
    json_decref(s);
}
END_TEST

/* A node name no hostlist holds: the fold says so, not "out of memory". */
START_TEST(test_fold_bad_name)
{
    json_t *s = build(16);
    struct np_err err = {0};
    char *stored = NULL;

    ck_assert_int_eq(json_object_set(nodes_of(s), "rack/3", json_object_get(nodes_of(s), "n00003")),
                     0);
    ck_assert_int_eq(json_object_del(nodes_of(s), "n00003"), 0);
    ck_assert_int_eq(np_summary_fit(s, 1, &stored, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "a node name has characters a hostlist cannot hold"));
    json_decref(s);
}
END_TEST

/* What `numaplace report` prints of a folded summary (the worst node first). */
static const char *const text_expected[] = {
    ("Nodes: 4,096 reported (n[00000-04095]); per-node figures as distributions; worst nodes: "
     "n00000 "),
    "Per-node figures over the 4096 nodes folded",
    "  local memory       4096: 5% (n00000), ",
    "  duration           4096: 100 s (n00000), ",
    "Local memory (job): ",
};

START_TEST(test_fold_text)
{
    json_t *s = build(4096);
    struct np_err err = {0};
    char *stored = NULL, *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);

    ck_assert_int_gt(np_summary_fit(s, NP_SUMMARY_STORED_MAX, &stored, &err), 0);
    ck_assert_int_eq(np_summary_print(f, s), 0);
    fclose(f);
    for (size_t k = 0; k < sizeof(text_expected) / sizeof(text_expected[0]); k++)
        ck_assert_msg(strstr(buf, text_expected[k]), "no \"%s\" in:\n%s", text_expected[k], buf);
    free(buf);
    free(stored);
    json_decref(s);
}
END_TEST

/* A part merged into a folded summary: a new node joins whole and counts in the totals; a later
 * fold takes it into the distributions exactly where it can; a newer part of a folded node is
 * named, never invented. */
START_TEST(test_merge_after_fold)
{
    const size_t n = 4096;
    json_t *s = build(n), *folded, *part, *all, *tmpl = template_node(), *late;
    const json_t *d;
    struct np_err err = {0};
    char *stored = NULL, *again = NULL;
    double p50;

    ck_assert_int_gt(np_summary_fit(s, NP_SUMMARY_STORED_MAX, &stored, &err), 0);
    folded = decode_stored(stored);
    p50 = REAL(DIST_OF(folded, "local_share"), "p50");

    /* a late node, worse than all: joins whole, totals as if never folded */
    part = np_summary_new(100);
    set_node(part, tmpl, 99999, n, 0.01);
    ck_assert_int_eq(np_summary_recompute(part), 0);
    all = build(n);
    set_node(all, tmpl, 99999, n, 0.01);
    ck_assert_int_eq(np_summary_recompute(all), 0);
    ck_assert_msg(np_summary_merge(folded, part, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(INT(json_object_get(folded, "totals"), "nodes"), (json_int_t)n + 1);
    ck_assert_double_eq_tol(fig_value(TOTAL(folded, "local_share")),
                            fig_value(TOTAL(all, "local_share")), 1e-9);
    ck_assert_ptr_nonnull(json_object_get(nodes_of(folded), "n99999"));
    ck_assert_int_gt(np_summary_fit(folded, NP_SUMMARY_STORED_MAX, &again, &err), 0);
    free(again);

    /* forced to fold again: count, min and max exact, percentiles of the first n said so */
    ck_assert_int_eq(np_summary_fit(folded, 1, &again, &err), -E2BIG);
    d = DIST_OF(folded, "local_share");
    ck_assert_int_eq(INT(d, "count"), (json_int_t)n + 1);
    ck_assert_int_eq(INT(d, "percentiles_of"), (json_int_t)n);
    ck_assert_double_eq_tol(REAL(d, "min"), 0.01, 1e-12);
    ck_assert_str_eq(STR(d, "min_node"), "n99999");
    ck_assert_double_eq_tol(REAL(d, "p50"), p50, 1e-12);
    ck_assert_int_eq(INT(FOLD(folded), "nodes"), (json_int_t)n + 1);
    ck_assert_str_eq(STR(FOLD(folded), "names"), "n[00000-04095,99999]");
    ck_assert_double_eq_tol(fig_value(TOTAL(folded, "local_share")),
                            fig_value(TOTAL(all, "local_share")), 1e-9);
    ck_assert_ptr_nonnull(json_object_get(nodes_of(folded), "n99999")); /* the worst now */

    /* a newer part of a node folded away: named, its figures not taken in */
    late = json_deep_copy(json_object_get(nodes_of(part), "n99999"));
    ck_assert_int_eq(json_object_set_new(late, "step_count", json_integer(9)), 0);
    ck_assert_int_eq(json_object_clear(nodes_of(part)), 0);
    ck_assert_int_eq(json_object_set_new(nodes_of(part), "n00100", late), 0);
    ck_assert_int_eq(np_summary_merge(folded, part, &err), 0);
    ck_assert_str_eq(STR(FOLD(folded), "not_updated"), "n00100");
    ck_assert_int_eq(INT(json_object_get(folded, "totals"), "nodes"), (json_int_t)n + 1);
    ck_assert_double_eq_tol(fig_value(TOTAL(folded, "local_share")),
                            fig_value(TOTAL(all, "local_share")), 1e-9);
    /* the same part of a node kept whole again (a retried write): nothing to note */
    ck_assert_int_eq(json_object_clear(nodes_of(part)), 0);
    ck_assert_int_eq(
        json_object_set_new(nodes_of(part), "n99999",
                            json_deep_copy(json_object_get(nodes_of(folded), "n99999"))),
        0);
    ck_assert_int_eq(np_summary_merge(folded, part, &err), 0);
    ck_assert_str_eq(STR(FOLD(folded), "not_updated"), "n00100");

    /* two folded summaries do not merge; an unfolded one merges into a folded one */
    ck_assert_int_eq(np_summary_merge(folded, folded, &err), 0);
    ck_assert_int_eq(np_summary_merge(s, folded, &err), -EINVAL);
    ck_assert_int_eq(np_summary_merge(part, folded, &err), 0);
    ck_assert_ptr_nonnull(FOLD(part));
    ck_assert_int_eq(INT(json_object_get(part, "totals"), "nodes"), (json_int_t)n + 1);

    json_decref(tmpl);
    json_decref(all);
    json_decref(part);
    json_decref(folded);
    json_decref(s);
    free(stored);
}
END_TEST

/* Corrupt folds are refused by the decoder, naming the member. */
#define FOLD_HEAD                                                                                  \
    "{\"schema\": \"numaplace.summary/1\", \"job_id\": 1, \"nodes\": {}, \"nodes_folded\": "
#define SUMS                                                                                       \
    "\"sums\": {\"steps\": 1, \"pages_moved_bytes\": 0, \"migration_requests\": 0, "               \
    "\"local_share_nodes\": 1, \"local_share_seconds\": 1.0, \"local_share_x_seconds\": 0.5, "     \
    "\"local_share_byte_seconds\": 0.0, \"local_share_x_byte_seconds\": 0.0, "                     \
    "\"local_share_all_bytes\": false, \"kernel_time_share_nodes\": 0, "                           \
    "\"kernel_time_share_seconds\": 0.0, \"kernel_time_share_x_seconds\": 0.0, "                   \
    "\"policy_requested\": [], \"policy_applied\": {}}"
/* all_bytes with no byte seconds: the job's local share would be 0/0 */
#define SUMS_NO_BYTES                                                                              \
    "\"sums\": {\"steps\": 1, \"pages_moved_bytes\": 0, \"migration_requests\": 0, "               \
    "\"local_share_nodes\": 1, \"local_share_seconds\": 1.0, \"local_share_x_seconds\": 0.5, "     \
    "\"local_share_byte_seconds\": 0.0, \"local_share_x_byte_seconds\": 0.0, "                     \
    "\"local_share_all_bytes\": true, \"kernel_time_share_nodes\": 0, "                            \
    "\"kernel_time_share_seconds\": 0.0, \"kernel_time_share_x_seconds\": 0.0, "                   \
    "\"policy_requested\": [], \"policy_applied\": {}}"
/* a local share of 300%: the x-weighted sum over its weight */
#define SUMS_OVER_ONE                                                                              \
    "\"sums\": {\"steps\": 1, \"pages_moved_bytes\": 0, \"migration_requests\": 0, "               \
    "\"local_share_nodes\": 1, \"local_share_seconds\": 1.0, \"local_share_x_seconds\": 3.0, "     \
    "\"local_share_byte_seconds\": 0.0, \"local_share_x_byte_seconds\": 0.0, "                     \
    "\"local_share_all_bytes\": false, \"kernel_time_share_nodes\": 0, "                           \
    "\"kernel_time_share_seconds\": 0.0, \"kernel_time_share_x_seconds\": 0.0, "                   \
    "\"policy_requested\": [], \"policy_applied\": {}}"
#define DIST(c, p50, p90)                                                                          \
    "{\"count\": " #c ", \"min\": 0.1, \"min_node\": \"n1\", \"p50\": " #p50 ", \"p90\": " #p90    \
    ", \"max\": 0.9, \"max_node\": \"n2\", \"percentiles_of\": " #c "}"

static const struct {
    const char *fold; /* nodes_folded's JSON */
    int rc;
    const char *msg;
} fold_cases[] = {
    {"{\"nodes\": 2, \"names\": \"n[1-2]\", \"figures\": {\"local_share\": " DIST(
         2, 0.5, 0.8) "}, " SUMS "}",
     0, ""},
    {"{\"nodes\": 3, \"names\": \"n[1-2]\", \"figures\": {}, " SUMS "}", -EINVAL,
     "2 names for 3 nodes"},
    {"{\"nodes\": 2, \"names\": \"n[2-1]\", \"figures\": {}, " SUMS "}", -EINVAL,
     "N or N-M with N <= M"},
    {"{\"nodes\": 2, \"names\": \"n[0-99999999999]\", \"figures\": {}, " SUMS "}", -EINVAL,
     "more than 2 nodes"},
    {"{\"nodes\": 2, \"names\": \"n[1-2\", \"figures\": {}, " SUMS "}", -EINVAL, "closing"},
    {"{\"nodes\": 2, \"names\": \"n/1,n2\", \"figures\": {}, " SUMS "}", -EINVAL, "'/'"},
    {"{\"nodes\": 0, \"names\": \"\", \"figures\": {}, " SUMS "}", -EINVAL, "expected 1 to"},
    {"{\"nodes\": 2, \"names\": \"n[1-2]\", \"figures\": {\"rss\": " DIST(2, 0.5, 0.8) "}, " SUMS
                                                                                       "}",
     -EINVAL, "unknown member \"rss\""},
    {"{\"nodes\": 2, \"names\": \"n[1-2]\", \"figures\": {\"cpi\": " DIST(2, 0.95, 0.8) "}, " SUMS
                                                                                        "}",
     -EINVAL, "min <= p50 <= p90 <= max"},
    {"{\"nodes\": 2, \"names\": \"n[1-2]\", \"figures\": {\"cpi\": " DIST(3, 0.5, 0.8) "}, " SUMS
                                                                                       "}",
     -EINVAL, "count over nodes"},
    {"{\"nodes\": 2, \"names\": \"n[1-2]\", \"figures\": {}, " SUMS_NO_BYTES "}", -EINVAL,
     "byte seconds too"},
    {"{\"nodes\": 2, \"names\": \"n[1-2]\", \"figures\": {}, " SUMS_OVER_ONE "}", -EINVAL,
     "each x_ sum between 0 and its weight"},
    {"{\"nodes\": 2, \"names\": \"n[2-3]\", \"figures\": {\"cpi\": " DIST(2, 0.5, 0.8) "}, " SUMS
                                                                                       "}",
     -EINVAL, "min_node and max_node must be in names"},
    {"{\"nodes\": 2, \"names\": \"n[1-2]\", \"figures\": {}, \"not_updated\": \"n[1-\", " SUMS "}",
     -EINVAL, "closing"},
    {"{\"nodes\": 2, \"names\": \"n[1-2]\", \"figures\": {}}", -EINVAL, "nodes_folded"},
    {"{\"nodes\": 2, \"names\": \"n[1-2]\", \"figures\": {}, \"extra\": 1, " SUMS "}", -EINVAL,
     "nodes_folded"},
};

START_TEST(test_fold_decode)
{
    char text[4096];
    json_error_t jerr;
    json_t *j;
    struct np_err err = {0};
    int rc;

    snprintf(text, sizeof(text), FOLD_HEAD "%s}", fold_cases[_i].fold);
    j = json_loads(text, 0, &jerr);
    ck_assert_msg(j != NULL, "case %d: %s", _i, jerr.text);
    rc = np_summary_validate(j, &err);
    ck_assert_msg(rc == fold_cases[_i].rc, "case %d: %d (%s)", _i, rc, err.msg);
    ck_assert_msg(strstr(err.msg, fold_cases[_i].msg), "case %d: %s", _i, err.msg);
    if (rc == 0) {
        ck_assert_int_eq(np_summary_node_count(j), 2);
        ck_assert(np_summary_node_reported(j, "n2"));
    }
    json_decref(j);
}
END_TEST

static const struct {
    const char *names; /* comma-separated, any order */
    const char *list;  /* np_hostlist_compress's */
} hostlist_cases[] = {
    {"n3,n1,n2,n5", "n[1-3,5]"},
    {"node0009,node0010,node0011", "node[0009-0011]"},
    {"n9,n10", "n9,n10"},
    {"login,c1,c2,gpu-07,gpu-08", "c[1-2],gpu-[07-08],login"},
    {"a.b1", "a.b1"},
};

START_TEST(test_hostlist)
{
    struct np_strs names = {0}, back = {0}, sorted = {0};
    char buf[256], *save = NULL, *list = NULL;
    struct np_err err = {0};

    snprintf(buf, sizeof(buf), "%s", hostlist_cases[_i].names);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        ck_assert_int_eq(np_strs_append(&names, t), 0);
        ck_assert_int_eq(np_strs_add_sorted(&sorted, t), 0);
    }
    ck_assert_int_eq(np_hostlist_compress(&names, &list), 0);
    ck_assert_str_eq(list, hostlist_cases[_i].list);
    ck_assert_int_eq(np_hostlist_expand(list, 100, &back, &err), 0);
    ck_assert_int_eq(back.n, sorted.n);
    for (size_t k = 0; k < back.n; k++)
        ck_assert_str_eq(back.v[k], sorted.v[k]);
    free(list);
    np_strs_free(&names);
    np_strs_free(&back);
    np_strs_free(&sorted);
}
END_TEST

static const struct {
    const char *list, *msg;
} bad_hostlists[] = {
    {"c-1[]", "no range between the brackets"}, /* was an empty list, then qsort(NULL, 0) */
    {"c[1-2],d[]", "'d[]': no range"},
    {"c[1-", "no closing ']'"},
    {"c[[1]]", "unbalanced"},
    {"c[2-1]", "N <= M"},
};

START_TEST(test_bad_hostlist)
{
    struct np_strs names = {0};
    struct np_err err = {0};

    ck_assert_int_eq(np_hostlist_expand(bad_hostlists[_i].list, 100, &names, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, bad_hostlists[_i].msg), "%s: %s", bad_hostlists[_i].list,
                  err.msg);
    ck_assert_uint_eq(names.n, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("summary_fold");
    TCase *tc = tcase_create("summary_fold");

    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_fold_fits, 0, sizeof(sizes) / sizeof(sizes[0]));
    tcase_add_test(tc, test_fold_text);
    tcase_add_test(tc, test_alike_nodes_decode);
    tcase_add_test(tc, test_fold_bad_name);
    tcase_add_test(tc, test_merge_after_fold);
    tcase_add_loop_test(tc, test_fold_decode, 0, sizeof(fold_cases) / sizeof(fold_cases[0]));
    tcase_add_loop_test(tc, test_hostlist, 0, sizeof(hostlist_cases) / sizeof(hostlist_cases[0]));
    tcase_add_loop_test(tc, test_bad_hostlist, 0, sizeof(bad_hostlists) / sizeof(bad_hostlists[0]));
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
