/* Job summaries: per-node reports merged, summaries merged, advice rules, the AdminComment fit,
 * the text form and the plot. Fixtures: test/fixtures/data/summary/ (hand-made reports of job 100).
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "np_test.h"
#include "numaplace/report.h"
#include "numaplace/summary.h"

#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * MiB)

#define NOPMU "perf::CYCLES: perf_event_open: No such file or directory: no hardware PMU"

/* LeakSanitizer's built-in suppressions, so `ctest -R test_summary` passes in a sanitizer build
 * without test/run-all's LSAN_OPTIONS: fontconfig keeps its pattern cache (filled by cairo's text
 * in the plot tests) for the life of the process (see test/lsan.supp). Unused without ASan. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libfontconfig.so\n";
}

static json_t *load(const char *name)
{
    char rel[256];
    json_error_t jerr;
    json_t *j;

    snprintf(rel, sizeof(rel), "summary/%s", name);
    j = json_load_file(np_test_fixture(rel), 0, &jerr);
    ck_assert_msg(j != NULL, "%s: %s", name, jerr.text);
    return j;
}

/* Add one fixture report; assert the return code. */
static void add(json_t *s, const char *name, int rc)
{
    struct np_err err = {0};
    json_t *r = load(name);
    int got = np_summary_add_report(s, r, &err);

    ck_assert_msg(got == rc, "%s: %d (%s), expected %d", name, got, err.msg, rc);
    json_decref(r);
}

static json_t *jpath(const json_t *j, const char *p)
{
    char buf[256], *save = NULL;

    snprintf(buf, sizeof(buf), "%s", p);
    for (char *k = strtok_r(buf, ".", &save); k && j; k = strtok_r(NULL, ".", &save))
        j = json_object_get(j, k);
    return (json_t *)j;
}

static double num(const json_t *j, const char *p)
{
    json_t *v = jpath(j, p);
    ck_assert_msg(json_is_number(v), "%s is not a number", p);
    return json_number_value(v);
}

static const char *str(const json_t *j, const char *p)
{
    json_t *v = jpath(j, p);
    ck_assert_msg(json_is_string(v), "%s is not a string", p);
    return json_string_value(v);
}

/* The job-100 fixtures in one of several orders; expect_nodes before or after. */
static const char *const order_files[3][4] = {
    {"job100.0.node1.json", "job100.batch.node1.json", "job100.0.node2.json",
     "job100.0.node4.json"},
    {"job100.0.node4.json", "job100.0.node2.json", "job100.batch.node1.json",
     "job100.0.node1.json"},
    {"job100.batch.node1.json", "job100.0.node4.json", "job100.0.node1.json",
     "job100.0.node2.json"},
};

static json_t *fixture_summary(int order)
{
    json_t *s = np_summary_new(100);
    struct np_err err = {0};

    ck_assert_ptr_nonnull(s);
    if (order != 2)
        ck_assert_int_eq(np_summary_expect_nodes(s, "node1,node2,node3,node4", &err), 0);
    for (int i = 0; i < 4; i++)
        add(s, order_files[order][i], 0);
    if (order == 2)
        ck_assert_int_eq(np_summary_expect_nodes(s, "node1,node2,node3,node4", &err), 0);
    return s;
}

/* ---- reports into a summary ---- */

static const struct {
    const char *file;   /* a fixture, or NULL: the inline JSON */
    const char *json;   /* used when file is NULL */
    bool twice;         /* add it once first */
    int rc;             /* of the (last) add */
    const char *msg;    /* in err.msg; "" = untouched */
    int skipped, steps; /* the summary after it */
} add_cases[] = {
    {"job100.0.node1.json", NULL, false, 0, "", 0, 1},
    {"job100.batch.node1.json", NULL, false, 0, "", 0, 1},
    {"job100.0.node4.json", NULL, false, 0, "skipped the report of node node4 step 0", 1, 0},
    {"job200.0.node1.json", NULL, false, -EINVAL, "of job 200, not of job 100", 0, 0},
    {"job100.0.node1.json", NULL, true, -EEXIST, "step 0 of node node1 is in the summary already",
     0, 1},
    {NULL, "[1, 2]", false, -EINVAL, "must be a JSON object", 0, 0},
    {NULL, "{\"job_id\": 100, \"node\": \"n\"}", false, -EINVAL, "no \"schema\"", 0, 0},
    {NULL, "{\"schema\": \"numaplace.report/1\", \"job_id\": 100, \"step\": \"0\"}", false, -EINVAL,
     "has no \"node\"", 0, 0},
    {NULL,
     "{\"schema\": \"numaplace.report/1\", \"job_id\": 100, \"node\": \"n1\", \"step\": \"0\", "
     "\"uid\": 7}",
     true, -EEXIST, "already", 0, 1},
};

START_TEST(test_add_report)
{
    json_t *s = np_summary_new(100), *r;
    struct np_err err = {0};
    int rc;

    if (add_cases[_i].file) {
        r = load(add_cases[_i].file);
    } else {
        r = json_loads(add_cases[_i].json, 0, NULL);
        ck_assert_ptr_nonnull(r);
    }
    if (add_cases[_i].twice)
        ck_assert_int_eq(np_summary_add_report(s, r, NULL), 0);
    rc = np_summary_add_report(s, r, &err);
    ck_assert_msg(rc == add_cases[_i].rc, "rc %d (%s), expected %d", rc, err.msg, add_cases[_i].rc);
    if (add_cases[_i].msg[0])
        ck_assert_msg(strstr(err.msg, add_cases[_i].msg), "message '%s' lacks '%s'", err.msg,
                      add_cases[_i].msg);
    else
        ck_assert_str_eq(err.msg, "");
    ck_assert_int_eq(err.code, rc);
    ck_assert_int_eq(json_array_size(json_object_get(s, "skipped")), add_cases[_i].skipped);
    ck_assert_int_eq(num(s, "totals.steps"), add_cases[_i].steps);
    ck_assert_int_eq(num(s, "totals.skipped"), add_cases[_i].skipped);
    json_decref(r);
    json_decref(s);
}
END_TEST

/* A node whose steps np_summary_fit trimmed takes no further step, and says why. */
START_TEST(test_add_report_to_trimmed_node)
{
    json_t *s = np_summary_new(100), *r;
    struct np_err err = {0};

    r = json_loads("{\"schema\": \"numaplace.report/1\", \"job_id\": 100, \"node\": \"n1\", "
                   "\"step\": \"0\", \"uid\": 7}",
                   0, NULL);
    ck_assert_int_eq(np_summary_add_report(s, r, NULL), 0);
    json_object_del(json_object_get(json_object_get(s, "nodes"), "n1"), "steps");
    json_object_set_new(r, "step", json_string("1"));
    ck_assert_int_eq(np_summary_add_report(s, r, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "node n1's steps were trimmed"), "%s", err.msg);
    ck_assert_ptr_null(
        json_object_get(json_object_get(json_object_get(s, "nodes"), "n1"), "steps"));
    json_decref(r);
    json_decref(s);
}
END_TEST

static void assert_near(double got, double want, const char *what)
{
    ck_assert_msg(fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1),
                  "%s: %.12g, not %.12g", what, got, want);
}

START_TEST(test_merge_fixtures)
{
    json_t *s = fixture_summary(_i), *n1, *n2, *v;
    const char *key;

    /* the job */
    ck_assert_str_eq(str(s, "schema"), NP_SUMMARY_SCHEMA);
    ck_assert_int_eq(num(s, "job_id"), 100);
    ck_assert_int_eq(num(s, "uid"), 1000);
    ck_assert_ptr_null(json_object_get(s, "user"));
    ck_assert_str_eq(str(s, "start"), "2024-05-01T10:00:00Z");
    ck_assert_str_eq(str(s, "end"), "2024-05-01T10:10:30Z");
    ck_assert_str_eq(str(s, "sensitivity"), "high");
    v = json_pack("[s, s]", "local", "none");
    ck_assert(json_equal(json_object_get(s, "policy_requested"), v));
    json_decref(v);
    ck_assert_int_eq(num(s, "policy_applied.local"), 8);
    ck_assert_int_eq(num(s, "policy_applied.none"), 1);
    ck_assert_int_eq(num(s, "totals.nodes"), 2);
    ck_assert_int_eq(num(s, "totals.steps"), 3);
    ck_assert_int_eq(num(s, "totals.missing_nodes"), 1);
    ck_assert_int_eq(num(s, "totals.skipped"), 1);
    ck_assert_int_eq(json_array_size(json_object_get(s, "missing_nodes")), 1);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(s, "missing_nodes"), 0)),
                     "node3");
    ck_assert_str_eq(str(json_array_get(json_object_get(s, "skipped"), 0), "node"), "node4");
    ck_assert_ptr_nonnull(strstr(str(json_array_get(json_object_get(s, "skipped"), 0), "reason"),
                                 "numaplace.report/2"));
    ck_assert_ptr_null(json_object_get(json_object_get(s, "nodes"), "node4"));
    /* node1: two steps, the batch one an old report without local share or timeline */
    n1 = jpath(s, "nodes.node1");
    ck_assert_int_eq(num(n1, "step_count"), 2);
    ck_assert_int_eq(json_array_size(json_object_get(n1, "steps")), 2);
    assert_near(num(n1, "duration_s"), 1230, "node1 duration");
    assert_near(num(n1, "local_share.value"), 0.40, "node1 local share");
    ck_assert_int_eq(num(n1, "local_share.steps"), 1); /* the batch step had none: not a zero */
    assert_near(num(n1, "local_share.byte_seconds"), 2 * GiB * 600, "node1 byte seconds");
    assert_near(num(n1, "pages_peak_bytes.0"), 1200 * MiB, "peak on 0");
    assert_near(num(n1, "pages_peak_bytes.1"), 800 * MiB, "peak on 1");
    assert_near(num(n1, "pages_peak_bytes.2"), 1 * MiB, "peak on 2");
    assert_near(num(n1, "pages_end_bytes.0"), 100 * MiB, "end (the batch step ended last)");
    ck_assert_ptr_null(jpath(n1, "pages_end_bytes.1"));
    assert_near(num(n1, "migrations.in_bytes.1"), 64 * MiB, "in (pages_in_bytes)");
    assert_near(num(n1, "migrations.in_bytes.0"), 1 * MiB, "in (old pages_in)");
    assert_near(num(n1, "migrations.out_bytes.0"), 64 * MiB, "out");
    assert_near(num(n1, "migrations.out_bytes.1"), 1 * MiB, "out (old pages_out)");
    assert_near(num(n1, "pages_moved_bytes"), 65 * MiB, "moved");
    ck_assert_int_eq(num(n1, "migrations.requests"), 2);
    ck_assert_int_eq(num(n1, "migrations.dry_run_requests"), 1);
    ck_assert_int_eq(num(n1, "migrations.triggers.memory-pressure.moved_pages"), 16384);
    ck_assert_int_eq(num(n1, "migrations.triggers.admin.moved_pages"), 0); /* a dry run */
    ck_assert_int_eq(num(n1, "migrations.triggers.admin.dry_run"), 1);
    ck_assert_int_eq(num(n1, "migrations.failed_pages.busy"), 3);
    assert_near(num(n1, "migrations.moving_s"), 0.25, "moving");
    assert_near(num(n1, "cpi.mean"), (1.5 * 600 + 1.0 * 30) / 630, "cpi mean");
    assert_near(num(n1, "cpi.p95"), 2.5, "cpi p95");
    ck_assert_int_eq(num(n1, "cpi.intervals"), 630);
    assert_near(num(n1, "bandwidth.peak_bytes_per_s"), 6e9, "bandwidth peak");
    assert_near(num(n1, "os_interference.kernel_time_share.value"),
                (0.12 * 600 + 0.02 * 630) / 1230, "kernel share");
    assert_near(num(n1, "os_interference.involuntary_cs_per_s.value"), 150, "involuntary");
    assert_near(num(n1, "os_interference.interrupts_per_s.value"),
                (300.0 * 600 + 100.0 * 630) / 1230, "interrupts");
    assert_near(num(n1, "os_interference.other_cpu_time_s.value"), 5.0, "other CPU time");
    ck_assert_str_eq(str(n1, "timeline.step"), "0");
    ck_assert_int_eq(json_array_size(jpath(n1, "timeline.t")), 12);
    ck_assert_str_eq(str(n1, "sensitivity"), "high");
    {
        json_t *steps = json_object_get(n1, "steps"), *e;
        size_t i;
        int with_nodes = 0;
        json_array_foreach(steps, i, e)
        {
            if (strcmp(str(e, "step"), "0") == 0) {
                ck_assert_int_eq(json_array_size(json_object_get(e, "local_nodes")), 1);
                ck_assert_int_eq(num(e, "applied.local"), 4);
                ck_assert(json_is_true(json_object_get(e, "complete")));
                with_nodes++;
            } else {
                ck_assert_str_eq(str(e, "step"), "batch");
                ck_assert_ptr_null(json_object_get(e, "local_nodes"));
                ck_assert(json_is_false(json_object_get(e, "complete")));
                ck_assert_str_eq(str(e, "policy"), "none");
            }
        }
        ck_assert_int_eq(with_nodes, 1);
    }
    /* node2: every figure unavailable, each with its reason, none a number */
    n2 = jpath(s, "nodes.node2");
    ck_assert_ptr_nonnull(strstr(str(n2, "cpi.unavailable"), NOPMU));
    ck_assert_ptr_nonnull(strstr(str(n2, "bandwidth.unavailable"), "no hardware PMU"));
    ck_assert_str_eq(str(n2, "local_share.unavailable"),
                     "cannot read /proc/4242/numa_maps: Permission denied");
    ck_assert_str_eq(str(n2, "pages_peak_bytes.unavailable"),
                     "cannot read /proc/4242/numa_maps: Permission denied");
    json_object_foreach(jpath(n2, "os_interference"), key, v)
    {
        ck_assert_msg(json_is_string(json_object_get(v, "unavailable")), "%s has no reason", key);
        ck_assert_msg(!json_object_get(v, "value"), "%s has a value", key);
    }
    ck_assert_ptr_null(jpath(n2, "local_share.value"));
    ck_assert_ptr_null(jpath(n2, "cpi.mean"));
    ck_assert_int_eq(num(n2, "pages_moved_bytes"), 0);
    /* totals */
    assert_near(num(s, "totals.local_share.value"), 0.40, "job local share");
    ck_assert_str_eq(str(s, "totals.local_share.weighting"), "bytes x time");
    ck_assert_int_eq(num(s, "totals.local_share.nodes"), 1);
    assert_near(num(s, "totals.kernel_time_share.value"), (0.12 * 600 + 0.02 * 630) / 1230,
                "job kernel share");
    assert_near(num(s, "totals.pages_moved_bytes"), 65 * MiB, "job moved");
    ck_assert_int_eq(num(s, "totals.migration_requests"), 2);
    json_decref(s);
}
END_TEST

/* Only unavailable figures: the totals say so with the reason, never 0. */
START_TEST(test_all_unavailable_totals)
{
    json_t *s = np_summary_new(100);

    add(s, "job100.0.node2.json", 0);
    ck_assert_ptr_null(jpath(s, "totals.local_share.value"));
    ck_assert_ptr_nonnull(strstr(str(s, "totals.local_share.unavailable"), "Permission denied"));
    ck_assert_ptr_nonnull(strstr(str(s, "totals.kernel_time_share.unavailable"), "exited"));
    json_decref(s);
}
END_TEST

static const struct {
    const char *list;
    int rc;
    const char *msg;
    int missing; /* after it, with node1 and node2 reported */
} expect_cases[] = {
    {"node1,node2,node3", 0, "", 1},
    {"node3 node5\nnode6,,node3", 0, "", 3},
    {"node1,node2", 0, "", 0},
    {"node[1-3]", -EINVAL, "scontrol show hostnames", 0},
    {"node1;node2", -EINVAL, "has ';'", 0},
    {"", -EINVAL, "empty node list", 0},
    {" , ,", -EINVAL, "empty node list", 0},
    {NULL, -EINVAL, "empty node list", 0},
};

START_TEST(test_expect_nodes)
{
    json_t *s = np_summary_new(100);
    struct np_err err = {0};

    add(s, "job100.0.node1.json", 0);
    add(s, "job100.0.node2.json", 0);
    ck_assert_int_eq(np_summary_expect_nodes(s, expect_cases[_i].list, &err), expect_cases[_i].rc);
    if (expect_cases[_i].msg[0])
        ck_assert_msg(strstr(err.msg, expect_cases[_i].msg), "'%s' lacks '%s'", err.msg,
                      expect_cases[_i].msg);
    ck_assert_int_eq(json_array_size(json_object_get(s, "missing_nodes")),
                     expect_cases[_i].missing);
    ck_assert_int_eq(num(s, "totals.missing_nodes"), expect_cases[_i].missing);
    json_decref(s);
}
END_TEST

/* Names new to the set, each once, in their first order; what the set holds stays first. */
START_TEST(test_strs_append_new)
{
    struct np_strs set = {0};
    const char *more[] = {"c", "a", "c", "d", "b", "d"};
    const char *want[] = {"b", "a", "c", "d"};

    ck_assert_int_eq(np_strs_append(&set, "b"), 0);
    ck_assert_int_eq(np_strs_append(&set, "a"), 0);
    ck_assert_int_eq(np_strs_append_new(&set, more, 6), 0);
    ck_assert_uint_eq(set.n, 4);
    for (size_t i = 0; i < 4; i++)
        ck_assert_str_eq(set.v[i], want[i]);
    ck_assert_int_eq(np_strs_append_new(&set, more, 0), 0);
    ck_assert_uint_eq(set.n, 4);
    np_strs_free(&set);
}
END_TEST

/* A node list of 131,072 names, each given twice (as a planted job name once made root's store
 * expand): each is missing once, in the list's order, and the reported nodes are not. */
START_TEST(test_expect_many_nodes)
{
    enum { NAMES = 131072 };
    json_t *s = np_summary_new(100), *missing;
    struct np_err err = {0};
    char *list = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&list, &len);

    ck_assert_ptr_nonnull(f);
    for (int pass = 0; pass < 2; pass++)
        for (int i = NAMES; i >= 1; i--)
            fprintf(f, "%sa%d", pass || i != NAMES ? "," : "", i);
    fputs(",node1,node2", f);
    ck_assert_int_eq(fclose(f), 0);
    add(s, "job100.0.node1.json", 0);
    add(s, "job100.0.node2.json", 0);
    ck_assert_msg(np_summary_expect_nodes(s, list, &err) == 0, "%s", err.msg);
    missing = json_object_get(s, "missing_nodes");
    ck_assert_int_eq(json_array_size(missing), NAMES);
    ck_assert_int_eq(num(s, "totals.missing_nodes"), NAMES);
    ck_assert_str_eq(json_string_value(json_array_get(missing, 0)), "a131072");
    ck_assert_str_eq(json_string_value(json_array_get(missing, NAMES - 1)), "a1");
    free(list);
    json_decref(s);
}
END_TEST

/* ---- summaries merged ---- */

/* A one-node summary as one node's epilog makes it. */
static json_t *epilog_summary(const char *const *files, size_t n)
{
    json_t *s = np_summary_new(100);

    ck_assert_int_eq(np_summary_expect_nodes(s, "node1,node2,node3", NULL), 0);
    for (size_t i = 0; i < n; i++)
        add(s, files[i], 0);
    return s;
}

START_TEST(test_merge_summaries)
{
    static const char *const f1[] = {"job100.0.node1.json", "job100.batch.node1.json"};
    static const char *const f2[] = {"job100.0.node2.json", "job100.0.node4.json"};
    json_t *a = epilog_summary(f1, 2), *b = epilog_summary(f2, 2), *direct, *decoded = NULL;
    struct np_err err = {0};
    char *stored = NULL;

    ck_assert_int_eq(json_array_size(json_object_get(a, "missing_nodes")), 2); /* node2, node3 */
    ck_assert_int_eq(np_summary_set_user(b, "alice", &err), 0);
    direct = json_deep_copy(a);
    ck_assert_int_eq(np_summary_merge(direct, b, &err), 0);
    ck_assert_int_eq(num(direct, "totals.nodes"), 2);
    ck_assert_int_eq(num(direct, "totals.steps"), 3);
    ck_assert_int_eq(json_array_size(json_object_get(direct, "missing_nodes")), 1);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(direct, "missing_nodes"), 0)),
                     "node3");
    ck_assert_int_eq(json_array_size(json_object_get(direct, "skipped")), 1);
    ck_assert_str_eq(str(direct, "user"), "alice");
    ck_assert_ptr_nonnull(jpath(direct, "nodes.node2.cpi.unavailable"));
    assert_near(num(direct, "totals.local_share.value"), 0.40, "merged local share");
    /* b is borrowed: unchanged */
    ck_assert_int_eq(num(b, "totals.nodes"), 1);

    /* the second epilog merges into what the first stored in AdminComment */
    ck_assert_int_gt(np_summary_fit(a, NP_SUMMARY_STORED_MAX, &stored, &err), 0);
    ck_assert_int_eq(np_stored_decode(stored, &decoded, &err), 0);
    ck_assert_int_eq(np_summary_merge(decoded, b, &err), 0);
    ck_assert(json_equal(decoded, direct));
    free(stored);
    json_decref(decoded);
    json_decref(direct);
    json_decref(a);
    json_decref(b);
}
END_TEST

START_TEST(test_merge_other_wins)
{
    static const char *const f1[] = {"job100.0.node1.json", "job100.0.node2.json"};
    json_t *a = epilog_summary(f1, 2), *b = np_summary_new(100), *r = load("job100.0.node1.json");
    struct np_err err = {0};

    /* a newer node2 report: node1's figures with a local share of 95% */
    json_object_set_new(r, "node", json_string("node2"));
    json_object_set_new(jpath(r, "pages.local_share"), "value", json_real(0.95));
    ck_assert_int_eq(np_summary_add_report(b, r, &err), 0);
    ck_assert_int_eq(np_summary_merge(a, b, &err), 0);
    assert_near(num(a, "nodes.node2.local_share.value"), 0.95, "node2 replaced");
    ck_assert_ptr_null(jpath(a, "nodes.node2.cpi.unavailable"));
    assert_near(num(a, "nodes.node1.local_share.value"), 0.40, "node1 kept");
    /* equal bytes x time on both nodes: the plain mean */
    assert_near(num(a, "totals.local_share.value"), (0.40 + 0.95) / 2, "recomputed total");
    ck_assert_int_eq(num(a, "totals.steps"), 2);
    ck_assert_int_eq(json_array_size(json_object_get(a, "missing_nodes")), 1); /* node3 */
    json_decref(r);
    json_decref(a);
    json_decref(b);
}
END_TEST

/* A part retried from pending/ may be older than the node's part stored since:
 * the merge keeps the newer one whichever way round it goes. */
START_TEST(test_merge_keeps_newer_part)
{
    static const char *const both[] = {"job100.0.node1.json", "job100.batch.node1.json"};
    static const char *const first[] = {"job100.0.node1.json"};
    json_t *newer = epilog_summary(both, 2), *older = epilog_summary(first, 1), *into;
    struct np_err err = {0};

    into = json_deep_copy(newer);
    ck_assert_int_eq(np_summary_merge(into, older, &err), 0); /* the older one lands later */
    ck_assert_int_eq(num(into, "nodes.node1.step_count"), 2);
    ck_assert_int_eq(num(into, "totals.steps"), 2);
    ck_assert(json_equal(into, newer));
    json_decref(into);
    into = json_deep_copy(older);
    ck_assert_int_eq(np_summary_merge(into, newer, &err), 0); /* the newer one lands later */
    ck_assert_int_eq(num(into, "nodes.node1.step_count"), 2);
    json_decref(into);
    /* the same steps, one of them longer in the newer part (a report completed since) */
    into = json_deep_copy(newer);
    json_object_set_new(jpath(into, "nodes.node1"), "duration_s",
                        json_real(num(newer, "nodes.node1.duration_s") + 5));
    ck_assert_int_eq(np_summary_merge(into, newer, &err), 0);
    assert_near(num(into, "nodes.node1.duration_s"), num(newer, "nodes.node1.duration_s") + 5,
                "the longer part kept");
    json_decref(into);
    json_decref(older);
    json_decref(newer);
}
END_TEST

static const struct {
    const char *other; /* JSON of the other summary */
    int rc;
    const char *msg;
} merge_bad_cases[] = {
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": 101, \"nodes\": {}}", -EINVAL,
     "job 101 into that of job 100"},
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": 100, \"uid\": 0, \"nodes\": {}}", -EINVAL,
     "uids 1000 and 0"},
    {"{\"schema\": \"numaplace.summary/2\", \"job_id\": 100, \"nodes\": {}}", -EPROTO,
     "summary schema numaplace.summary/2"},
    {"{\"job_id\": 100, \"nodes\": {}}", -EINVAL, "no \"schema\""},
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": \"100\", \"nodes\": {}}", -EINVAL,
     "integer \"job_id\""},
};

START_TEST(test_merge_refused)
{
    json_t *a = np_summary_new(100), *b = json_loads(merge_bad_cases[_i].other, 0, NULL), *before;
    struct np_err err = {0};

    add(a, "job100.0.node1.json", 0);
    before = json_deep_copy(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(np_summary_merge(a, b, &err), merge_bad_cases[_i].rc);
    ck_assert_msg(strstr(err.msg, merge_bad_cases[_i].msg), "'%s' lacks '%s'", err.msg,
                  merge_bad_cases[_i].msg);
    ck_assert(json_equal(a, before)); /* untouched */
    json_decref(before);
    json_decref(a);
    json_decref(b);
}
END_TEST

/* ---- advice ---- */

static const struct {
    const char *node; /* one node's JSON, named n1 */
    const char *rule; /* the rule under test */
    bool fires;
    const char *text; /* in its text when it fires */
} advice_cases[] = {
    /* remote-memory: local share below 50% */
    {"{\"local_share\": {\"value\": 0.32}, \"policy_requested\": [\"none\"]}", "remote-memory",
     true, "n1 (32% local, policy none)"},
    {"{\"local_share\": {\"value\": 0.50}, \"policy_requested\": [\"none\"]}", "remote-memory",
     false, NULL},
    {"{\"local_share\": {\"unavailable\": \"no numa_maps\"}}", "remote-memory", false, NULL},
    /* high-but-remote: class high, local share below 90% */
    {"{\"sensitivity\": \"high\", \"local_share\": {\"value\": 0.85}}", "high-but-remote", true,
     "n1 (85% local)"},
    {"{\"sensitivity\": \"high\", \"local_share\": {\"value\": 0.90}}", "high-but-remote", false,
     NULL},
    {"{\"sensitivity\": \"low\", \"local_share\": {\"value\": 0.60}}", "high-but-remote", false,
     NULL},
    /* interleave-may-help: >= 2 GB/s, memory on >= 2 NUMA nodes, local policy */
    {"{\"policy_requested\": [\"local\"], \"bandwidth\": {\"mean_bytes_per_s\": 3e9}, "
     "\"pages_peak_bytes\": {\"0\": 600, \"1\": 400}}",
     "interleave-may-help", true, "n1 (3.0 GB/s mean, memory on 2 NUMA nodes)"},
    {"{\"policy_requested\": [\"local\"], \"bandwidth\": {\"mean_bytes_per_s\": 3e9}, "
     "\"pages_peak_bytes\": {\"0\": 950, \"1\": 50}}",
     "interleave-may-help", false, NULL},
    {"{\"policy_requested\": [\"local\"], \"bandwidth\": {\"mean_bytes_per_s\": 1.9e9}, "
     "\"pages_peak_bytes\": {\"0\": 600, \"1\": 400}}",
     "interleave-may-help", false, NULL},
    {"{\"policy_requested\": [\"interleave\"], \"bandwidth\": {\"mean_bytes_per_s\": 3e9}, "
     "\"pages_peak_bytes\": {\"0\": 600, \"1\": 400}}",
     "interleave-may-help", false, NULL},
    {"{\"policy_requested\": [\"local\"], \"bandwidth\": {\"unavailable\": \"no PMU\"}, "
     "\"pages_peak_bytes\": {\"0\": 600, \"1\": 400}}",
     "interleave-may-help", false, NULL},
    /* local-is-good: local policy and >= 90% local */
    {"{\"policy_requested\": [\"local\"], \"local_share\": {\"value\": 0.95}}", "local-is-good",
     true, "n1 (95% local)"},
    {"{\"policy_requested\": [\"local-strict\"], \"local_share\": {\"value\": 0.90}}",
     "local-is-good", true, "n1 (90% local)"},
    {"{\"policy_requested\": [\"local\"], \"local_share\": {\"value\": 0.89}}", "local-is-good",
     false, NULL},
    {"{\"policy_requested\": [\"none\"], \"local_share\": {\"value\": 0.95}}", "local-is-good",
     false, NULL},
    {"{\"policy_requested\": [\"local\", \"none\"], \"local_share\": {\"value\": 0.95}}",
     "local-is-good", false, NULL},
    /* os-noise */
    {"{\"os_interference\": {\"kernel_time_share\": {\"value\": 0.12}}}", "os-noise", true,
     "n1: kernel 12% of CPU time"},
    {"{\"os_interference\": {\"involuntary_cs_per_s\": {\"value\": 150}}}", "os-noise", true,
     "150 involuntary context switches/s"},
    {"{\"os_interference\": {\"interrupts_per_s\": {\"value\": 1500}}}", "os-noise", true,
     "1500 interrupts/s on its CPUs); core specialization (CpuSpecList) may help"},
    {"{\"os_interference\": {\"kernel_time_share\": {\"value\": 0.09}, \"involuntary_cs_per_s\": "
     "{\"value\": 99}, \"interrupts_per_s\": {\"value\": 999}}}",
     "os-noise", false, NULL},
    {"{\"os_interference\": {\"kernel_time_share\": {\"unavailable\": \"exited\"}}}", "os-noise",
     false, NULL},
    /* no-counters */
    {"{\"cpi\": {\"unavailable\": \"no hardware PMU\"}, \"bandwidth\": {\"unavailable\": \"no "
     "hardware PMU\"}}",
     "no-counters", true, "n1 (CPI and bandwidth: no hardware PMU), so the job's sensitivity"},
    {"{\"cpi\": {\"mean\": 1.2}, \"bandwidth\": {\"unavailable\": \"LLC misses not counted\"}}",
     "no-counters", true, "n1 (bandwidth: LLC misses not counted)"},
    {"{\"cpi\": {\"mean\": 1.2}, \"bandwidth\": {\"mean_bytes_per_s\": 1e9}}", "no-counters", false,
     NULL},
    /* migrated */
    {"{\"pages_moved_bytes\": 67108864, \"migrations\": {\"triggers\": {\"memory-pressure\": "
     "{\"requests\": 2}}}}",
     "migrated", true, "moved 64.0 MiB of the job's pages"},
    {"{\"pages_moved_bytes\": 67108864, \"migrations\": {\"triggers\": {\"memory-pressure\": "
     "{\"requests\": 2}}}}",
     "migrated", true, "triggered by memory-pressure (2 requests)"},
    {"{\"pages_moved_bytes\": 0, \"migrations\": {\"triggers\": {\"admin\": {\"requests\": 1}}}}",
     "migrated", false, NULL},
    /* none */
    {"{\"policy_requested\": [\"none\"], \"local_share\": {\"value\": 0.70}}", "none", true,
     "nothing stood out"},
    {"{\"policy_requested\": [\"none\"], \"local_share\": {\"value\": 0.30}}", "none", false, NULL},
};

START_TEST(test_advice)
{
    json_t *s = np_summary_new(7), *node = json_loads(advice_cases[_i].node, 0, NULL), *advice, *e;
    const char *text = NULL;
    size_t i;

    ck_assert_ptr_nonnull(node);
    json_object_set_new(json_object_get(s, "nodes"), "n1", node);
    advice = np_summary_advice(s);
    ck_assert_ptr_nonnull(advice);
    ck_assert_int_gt(json_array_size(advice), 0);
    json_array_foreach(advice, i, e)
    {
        ck_assert(json_is_string(json_object_get(e, "rule")));
        ck_assert(json_is_string(json_object_get(e, "text")));
        if (strcmp(str(e, "rule"), advice_cases[_i].rule) == 0)
            text = str(e, "text");
        if (strcmp(str(e, "rule"), "none") == 0)
            ck_assert_int_eq(json_array_size(advice), 1);
    }
    if (advice_cases[_i].fires) {
        ck_assert_msg(text != NULL, "rule %s did not fire", advice_cases[_i].rule);
        ck_assert_msg(strstr(text, advice_cases[_i].text), "'%s' lacks '%s'", text,
                      advice_cases[_i].text);
    } else {
        ck_assert_msg(text == NULL, "rule %s fired: %s", advice_cases[_i].rule, text);
    }
    json_decref(advice);
    json_decref(s);
}
END_TEST

START_TEST(test_advice_many_nodes)
{
    json_t *s = np_summary_new(7), *advice;
    char name[16];

    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        json_object_set_new(json_object_get(s, "nodes"), name,
                            json_pack("{s:{s:f}}", "local_share", "value", 0.1 + i * 0.01));
    }
    advice = np_summary_advice(s);
    ck_assert_int_eq(json_array_size(advice), 1);
    ck_assert_str_eq(str(json_array_get(advice, 0), "rule"), "remote-memory");
    ck_assert_ptr_nonnull(strstr(str(json_array_get(advice, 0), "text"), "n0 (10% local"));
    ck_assert_ptr_nonnull(strstr(str(json_array_get(advice, 0), "text"), "and 2 more nodes."));
    ck_assert_ptr_null(strstr(str(json_array_get(advice, 0), "text"), "n5"));
    json_decref(advice);
    ck_assert_ptr_null(np_summary_advice(NULL));
    json_decref(s);
}
END_TEST

/* The fixtures: which rules fire over the merged job. */
START_TEST(test_advice_fixtures)
{
    static const char *const want[] = {"remote-memory", "high-but-remote", "os-noise",
                                       "no-counters", "migrated"};
    json_t *s = fixture_summary(0), *advice = np_summary_advice(s);

    ck_assert_int_eq(json_array_size(advice), sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        ck_assert_str_eq(str(json_array_get(advice, i), "rule"), want[i]);
    ck_assert_ptr_nonnull(strstr(str(json_array_get(advice, 0), "text"), "node1 (40% local"));
    ck_assert_ptr_nonnull(
        strstr(str(json_array_get(advice, 3), "text"), "node2 (CPI and bandwidth"));
    ck_assert_ptr_nonnull(strstr(str(json_array_get(advice, 4), "text"), "65.0 MiB"));
    /* the admin request was a dry run: it moved nothing and is not a trigger of the move */
    ck_assert_ptr_nonnull(strstr(str(json_array_get(advice, 4), "text"),
                                 "triggered by memory-pressure (1 request)."));
    ck_assert_ptr_null(strstr(str(json_array_get(advice, 4), "text"), "admin"));
    json_decref(advice);
    json_decref(s);
}
END_TEST

/* ---- stored form ---- */

static uint64_t lcg_state;
static double lcg(void)
{
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(lcg_state >> 11) / 9007199254740992.0;
}

/* 200 steps over 20 nodes, each with a 256-point timeline of noisy figures. */
static json_t *big_summary(void)
{
    json_t *s = np_summary_new(100), *base = load("job100.0.node1.json");
    char name[16], step[16];

    lcg_state = 42;
    for (int i = 0; i < 200; i++) {
        json_t *r = json_deep_copy(base), *tl = json_object(), *t = json_array();
        json_t *n0 = json_array(), *n1 = json_array(), *bw = json_array(), *cpi = json_array();

        snprintf(name, sizeof(name), "node%02d", i % 20);
        snprintf(step, sizeof(step), "%d", i / 20);
        json_object_set_new(r, "node", json_string(name));
        json_object_set_new(r, "step", json_string(step));
        json_object_set_new(r, "duration_s", json_real(100 + lcg() * 1000));
        json_object_set_new(jpath(r, "pages.local_share"), "value", json_real(lcg()));
        for (int p = 0; p < 256; p++) {
            json_array_append_new(t, json_real(p * 4 + lcg()));
            json_array_append_new(n0, json_integer((json_int_t)(lcg() * 4e9)));
            json_array_append_new(n1, json_integer((json_int_t)(lcg() * 4e9)));
            json_array_append_new(bw, p % 17 ? json_real(lcg() * 1e10) : json_null());
            json_array_append_new(cpi, json_real(0.5 + lcg()));
        }
        json_object_set_new(tl, "t", t);
        json_object_set_new(tl, "node_bytes", json_pack("{s:o, s:o}", "0", n0, "1", n1));
        json_object_set_new(tl, "bandwidth_bytes_per_s", bw);
        json_object_set_new(tl, "cpi", cpi);
        json_object_set_new(tl, "events", json_pack("[{s:f, s:s}]", "t", 200.0, "label", "0->1"));
        json_object_set_new(r, "timeline", tl);
        ck_assert_int_eq(np_summary_add_report(s, r, NULL), 0);
        json_decref(r);
    }
    json_decref(base);
    return s;
}

static const char *const trim_order[] = {
    "timeline", "steps", "numa-node-pages", "os-interference-details", "sources", "node-details"};

static const struct {
    size_t limit;
    const char *must_trim; /* the last step it takes */
    const char *kept;      /* a member of node00 that must survive, or NULL */
} fit_cases[] = {
    {NP_SUMMARY_STORED_MAX, "timeline", "steps"},
    {7000, "steps", "pages_peak_bytes"},
    {3000, "os-interference-details", "cpi"},
    {2200, "node-details", "local_share"},
};

START_TEST(test_fit_trims)
{
    json_t *s = big_summary(), *decoded = NULL, *totals, *trimmed, *e, *node;
    char *stored = NULL, *plain = NULL;
    struct np_err err = {0};
    const char *key;
    long len = np_stored_encode(s, &plain, NULL);
    size_t i, must = 0;

    ck_assert_int_gt(len, NP_SUMMARY_STORED_MAX); /* the test needs trimming */
    free(plain);
    totals = json_deep_copy(json_object_get(s, "totals"));
    len = np_summary_fit(s, fit_cases[_i].limit, &stored, &err);
    ck_assert_msg(len > 0, "%ld: %s", len, err.msg);
    ck_assert_uint_le((size_t)len, fit_cases[_i].limit);
    ck_assert_uint_eq(strlen(stored), (size_t)len);
    ck_assert_int_eq(np_stored_decode(stored, &decoded, &err), 0);
    ck_assert(json_equal(decoded, s)); /* what was stored is the trimmed summary */
    ck_assert(json_equal(json_object_get(decoded, "totals"), totals));
    /* trimmed: a prefix of the documented order, each step needed when it was taken */
    trimmed = json_object_get(decoded, "trimmed");
    ck_assert_int_gt(json_array_size(trimmed), 0);
    json_array_foreach(trimmed, i, e)
    {
        ck_assert_str_eq(str(e, "what"), trim_order[i]);
        ck_assert_int_gt(num(e, "stored_bytes_before"), fit_cases[_i].limit);
        if (strcmp(trim_order[i], fit_cases[_i].must_trim) == 0)
            must = i + 1;
    }
    ck_assert_msg(must > 0, "%s was not trimmed", fit_cases[_i].must_trim);
    ck_assert_int_eq(json_array_size(trimmed), must); /* and nothing after it */
    ck_assert_int_eq(json_object_size(json_object_get(decoded, "nodes")), 20);
    json_object_foreach(json_object_get(decoded, "nodes"), key, node)
    {
        ck_assert_ptr_null(json_object_get(node, "timeline"));
        ck_assert(json_is_number(jpath(node, "local_share.value")));
        ck_assert_ptr_nonnull(json_object_get(node, fit_cases[_i].kept));
    }
    /* a second fit to the same limit drops nothing more */
    free(stored);
    ck_assert_int_eq(np_summary_fit(s, fit_cases[_i].limit, &stored, &err), len);
    ck_assert(json_equal(json_object_get(s, "trimmed"), trimmed));
    free(stored);
    json_decref(decoded);
    json_decref(totals);
    json_decref(s);
}
END_TEST

START_TEST(test_fit_small_keeps_everything)
{
    json_t *s = fixture_summary(0), *copy = json_deep_copy(s), *decoded = NULL;
    char *stored = NULL;
    long len = np_summary_fit(s, NP_SUMMARY_STORED_MAX, &stored, NULL);

    ck_assert_int_gt(len, 0);
    ck_assert_int_eq(json_array_size(json_object_get(s, "trimmed")), 0);
    ck_assert(json_equal(s, copy));
    ck_assert_int_eq(np_stored_decode(stored, &decoded, NULL), 0);
    ck_assert(json_equal(decoded, copy));
    ck_assert_ptr_nonnull(jpath(decoded, "nodes.node1.timeline"));
    free(stored);
    json_decref(decoded);
    json_decref(copy);
    json_decref(s);
}
END_TEST

START_TEST(test_fit_too_small)
{
    json_t *s = fixture_summary(0);
    char *stored = (char *)1;
    struct np_err err = {0};

    ck_assert_int_eq(np_summary_fit(s, 100, &stored, &err), -E2BIG);
    ck_assert_ptr_null(stored);
    ck_assert_ptr_nonnull(strstr(err.msg, "minimal summary of job 100"));
    ck_assert_ptr_nonnull(strstr(err.msg, "the limit given is 100"));
    /* everything that could go went, and says so */
    ck_assert_ptr_null(jpath(s, "nodes.node1.steps"));
    ck_assert_ptr_nonnull(jpath(s, "nodes.node1.local_share"));
    ck_assert_int_eq(json_array_size(json_object_get(s, "trimmed")), 6);
    ck_assert_int_eq(np_summary_fit(s, 100, NULL, &err), -EINVAL);
    json_decref(s);
}
END_TEST

/* ---- text ---- */

static char *print_to_string(const json_t *s)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(np_summary_print(f, s), 0);
    fclose(f);
    return buf;
}

static const char *const print_expected[] = {
    "Job ID: 100\n",
    "User: alice (uid 1000)\n",
    "Nodes: 2 reported (node1, node2), 1 missing; 3 steps\n",
    "Policy requested: local, none\n",
    "Policy applied per task: local x8, none x1\n",
    "Sensitivity class: high\n",
    "Local memory (job): 40% (weighted by bytes x time over 1 node)\n",
    "node1  local memory [########------------]  40% (1 of 2 steps)\n",
    "node2  local memory unavailable (cannot read /proc/4242/numa_maps: Permission denied)\n",
    "    CPI: mean 1.48, p95 2.50 (630 intervals)\n",
    ("    CPI: unavailable (" NOPMU),
    "kernel time share unavailable (process 4242 exited before it was read)",
    "65.0 MiB moved in 2 requests (1 dry run)",
    "  [remote-memory] Most memory was remote for most of the run on node1 (40% local",
    "  [os-noise] The job lost a measurable share",
    "Missing (no report from these nodes): node3\n",
    "Skipped: node node4 step 0: report schema numaplace.report/2",
};

/* A step whose CPUs were the helper's too says so in the summary and its text. */
static const struct {
    const char *shared; /* the report's helper.shared_cpus, NULL: none written (older helper) */
    const char *text;   /* in the summary's text, or NULL: no such note */
} shared_cases[] = {
    {"1", "shared CPUs with the helper: 1)"},
    {"", NULL},
    {NULL, NULL},
};

START_TEST(test_helper_shared_cpus)
{
    json_t *s = np_summary_new(100), *r = load("job100.0.node1.json"), *again, *step;
    char *first, *second, *text;

    if (shared_cases[_i].shared)
        json_object_set_new(json_object_get(r, "helper"), "shared_cpus",
                            json_string(shared_cases[_i].shared));
    ck_assert_int_eq(np_summary_add_report(s, r, NULL), 0);
    step = json_array_get(
        json_object_get(json_object_get(json_object_get(s, "nodes"), "node1"), "steps"), 0);
    if (shared_cases[_i].shared)
        ck_assert_str_eq(json_string_value(json_object_get(step, "helper_shared_cpus")),
                         shared_cases[_i].shared);
    else
        ck_assert_ptr_null(json_object_get(step, "helper_shared_cpus"));
    /* stored and read back byte for byte */
    first = json_dumps(s, JSON_COMPACT);
    again = json_loads(first, 0, NULL);
    ck_assert_int_eq(np_summary_check(again, NULL), 0);
    second = json_dumps(again, JSON_COMPACT);
    ck_assert_str_eq(first, second);
    text = print_to_string(again);
    if (shared_cases[_i].text)
        ck_assert_msg(strstr(text, shared_cases[_i].text) != NULL, "%s", text);
    else
        ck_assert_ptr_null(strstr(text, "with the helper"));
    free(text);
    free(first);
    free(second);
    json_decref(again);
    json_decref(r);
    json_decref(s);
}
END_TEST

START_TEST(test_print)
{
    json_t *s = fixture_summary(1);
    char *text;

    ck_assert_int_eq(np_summary_set_user(s, "alice", NULL), 0);
    text = print_to_string(s);
    for (size_t i = 0; i < sizeof(print_expected) / sizeof(print_expected[0]); i++)
        ck_assert_msg(strstr(text, print_expected[i]), "output lacks '%s':\n%s", print_expected[i],
                      text);
    ck_assert_ptr_null(strstr(text, "Trimmed"));
    free(text);

    /* trimmed: said so, and the bar stays */
    {
        char *stored = NULL;
        ck_assert_int_gt(np_summary_fit(s, 1500, &stored, NULL), 0);
        free(stored);
    }
    text = print_to_string(s);
    ck_assert_msg(strstr(text, "Trimmed to fit AdminComment: timeline"), "%s", text);
    ck_assert_ptr_nonnull(strstr(text, "node1  local memory [########------------]  40%"));
    free(text);
    ck_assert_int_eq(np_summary_print(NULL, s), -EINVAL);
    ck_assert_int_eq(np_summary_set_user(s, "", NULL), -EINVAL);
    json_decref(s);
}
END_TEST

/* ---- plot ---- */

static const struct {
    const char *node;
    const char *ext;
    int rc;
    const char *msg;
} plot_cases[] = {
    {"node1", "png", 0, NULL},
    {NULL, "png", 0, NULL}, /* the first node: node1 */
    {"node1", "svg", 0, NULL},
    {"node2", "png", -ENODATA, "the report has no timeline: node2's timeline has no points"},
    {"node9", "png", -ENOENT, "no node 'node9' in the summary of job 100: it has node1, node2"},
    {"node1", "jpg", -EINVAL, "accepted extensions are .png and .svg"},
};

START_TEST(test_plot)
{
    json_t *s = fixture_summary(0);
    struct np_err err = {0};
    char file[128];
    int rc;

    snprintf(file, sizeof(file), "/tmp/np_summary_test.%d.%s", (int)getpid(), plot_cases[_i].ext);
    unlink(file);
    rc = np_summary_plot(s, plot_cases[_i].node, file, &err);
    ck_assert_msg(rc == plot_cases[_i].rc, "rc %d (%s)", rc, err.msg);
    if (rc == 0) {
        unsigned char head[8] = {0};
        FILE *f = fopen(file, "rb");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fread(head, 1, sizeof(head), f), sizeof(head));
        fclose(f);
        if (strcmp(plot_cases[_i].ext, "png") == 0)
            ck_assert_int_eq(memcmp(head, "\x89PNG\r\n\x1a\n", 8), 0);
        else
            ck_assert_msg(memcmp(head, "<?xml", 5) == 0 || memcmp(head, "<svg", 4) == 0, "not SVG");
    } else {
        ck_assert_msg(strstr(err.msg, plot_cases[_i].msg), "'%s' lacks '%s'", err.msg,
                      plot_cases[_i].msg);
        ck_assert_int_ne(access(file, F_OK), 0);
    }
    unlink(file);
    json_decref(s);
}
END_TEST

START_TEST(test_plot_without_timeline)
{
    json_t *s = np_summary_new(100);
    struct np_err err = {0};
    char *stored = NULL;
    char file[128];

    snprintf(file, sizeof(file), "/tmp/np_summary_test.%d.png", (int)getpid());
    add(s, "job100.batch.node1.json", 0); /* an old report: no timeline */
    ck_assert_int_eq(np_summary_plot(s, "node1", file, &err), -ENODATA);
    ck_assert_ptr_nonnull(strstr(err.msg, "the report has no timeline: "));
    ck_assert_ptr_nonnull(strstr(err.msg, "without one"));
    json_decref(s);

    /* one trimmed to fit AdminComment says so */
    s = fixture_summary(0);
    ck_assert_int_gt(np_summary_fit(s, 1500, &stored, NULL), 0);
    free(stored);
    ck_assert_int_eq(np_summary_plot(s, NULL, file, &err), -ENODATA);
    ck_assert_ptr_nonnull(strstr(err.msg, "the report has no timeline: timelines were trimmed"));
    json_decref(s);

    s = np_summary_new(100);
    ck_assert_int_eq(np_summary_plot(s, NULL, file, &err), -ENODATA);
    ck_assert_ptr_nonnull(strstr(err.msg, "has no node reports"));
    ck_assert_int_ne(access(file, F_OK), 0);
    json_decref(s);
}
END_TEST

/* A report as numaplaced writes it (np_report_new), not a hand-made fixture: its local share and
 * timeline reach the summary, and the summary's plot draws from it. */
START_TEST(test_from_real_report)
{
    struct np_step_figures js;
    struct np_job_meta meta = {.job_id = 300, .step_id = 0, .uid = 1000, .interval_s = 1};
    struct np_err err = {0};
    json_t *report, *summary, *node;
    char png_path[] = "/tmp/np-summary-real-XXXXXX.png";
    int fd;

    snprintf(meta.node, sizeof(meta.node), "nodeA");
    snprintf(meta.policy_requested, sizeof(meta.policy_requested), "local");
    snprintf(meta.sensitivity, sizeof(meta.sensitivity), "high");
    meta.start_epoch = 1.7e9;
    meta.end_epoch = 1.7e9 + 10;
    np_step_figures_init(&js);
    js.local_nodes = 0x1;
    for (int k = 0; k <= 10; k++) {
        struct np_sample smp;
        np_sample_init(&smp);
        smp.t = k;
        smp.have_pages = true;
        /* local for the first half, then a quarter local */
        smp.node_bytes[0] = k < 5 ? 100u << 20 : 25u << 20;
        smp.node_bytes[1] = k < 5 ? 0 : 75u << 20;
        ck_assert_int_eq(np_step_figures_add(&js, &smp), 0);
    }
    np_step_figures_event(&js, 5, "0->1 75 MiB");
    report = np_report_new(&meta, &js, true);
    summary = np_summary_new(300);
    ck_assert_msg(np_summary_add_report(summary, report, &err) == 0, "%s", err.msg);
    node = json_object_get(json_object_get(summary, "nodes"), "nodeA");
    ck_assert_ptr_nonnull(node);
    /* 5 s at 100% and 5 s at 25% */
    ck_assert_double_eq_tol(
        json_number_value(json_object_get(json_object_get(node, "local_share"), "value")), 0.625,
        1e-9);
    fd = mkstemps(png_path, 4);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_msg(np_summary_plot(summary, NULL, png_path, &err) == 0, "%s", err.msg);
    {
        unsigned char sig[8] = {0};
        FILE *f = fopen(png_path, "rb");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fread(sig, 1, 8, f), 8);
        fclose(f);
        ck_assert_int_eq(memcmp(sig, "\x89PNG\r\n\x1a\n", 8), 0);
    }
    unlink(png_path);
    json_decref(summary);
    json_decref(report);
    np_step_figures_fini(&js);
}
END_TEST

START_TEST(test_not_a_summary)
{
    json_t *r = load("job100.0.node1.json");
    struct np_err err = {0};
    char *stored = NULL;

    ck_assert_int_eq(np_summary_add_report(r, r, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a numaplace summary"));
    ck_assert_int_eq(np_summary_add_report(NULL, r, &err), -EINVAL);
    ck_assert_int_eq(np_summary_expect_nodes(NULL, "a", &err), -EINVAL);
    ck_assert_int_eq(np_summary_fit(r, 1000, &stored, &err), -EINVAL);
    ck_assert_ptr_null(stored);
    ck_assert_int_eq(np_summary_plot(NULL, NULL, "/tmp/x.png", &err), -EINVAL);
    ck_assert_int_eq(np_summary_print(stdout, r), -EINVAL);
    ck_assert_ptr_null(np_summary_advice(r));
    json_decref(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("summary");
    TCase *tc = tcase_create("summary");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_add_report_to_trimmed_node);
    tcase_add_loop_test(tc, test_add_report, 0, sizeof(add_cases) / sizeof(add_cases[0]));
    tcase_add_loop_test(tc, test_merge_fixtures, 0, 3);
    tcase_add_test(tc, test_all_unavailable_totals);
    tcase_add_loop_test(tc, test_expect_nodes, 0, sizeof(expect_cases) / sizeof(expect_cases[0]));
    tcase_add_test(tc, test_strs_append_new);
    tcase_add_test(tc, test_expect_many_nodes);
    tcase_add_test(tc, test_merge_summaries);
    tcase_add_test(tc, test_merge_other_wins);
    tcase_add_test(tc, test_merge_keeps_newer_part);
    tcase_add_loop_test(tc, test_merge_refused, 0,
                        sizeof(merge_bad_cases) / sizeof(merge_bad_cases[0]));
    tcase_add_loop_test(tc, test_advice, 0, sizeof(advice_cases) / sizeof(advice_cases[0]));
    tcase_add_test(tc, test_advice_many_nodes);
    tcase_add_test(tc, test_advice_fixtures);
    tcase_add_loop_test(tc, test_fit_trims, 0, sizeof(fit_cases) / sizeof(fit_cases[0]));
    tcase_add_test(tc, test_fit_small_keeps_everything);
    tcase_add_test(tc, test_fit_too_small);
    tcase_add_test(tc, test_print);
    tcase_add_loop_test(tc, test_helper_shared_cpus, 0,
                        sizeof(shared_cases) / sizeof(shared_cases[0]));
    tcase_add_loop_test(tc, test_plot, 0, sizeof(plot_cases) / sizeof(plot_cases[0]));
    tcase_add_test(tc, test_plot_without_timeline);
    tcase_add_test(tc, test_not_a_summary);
    tcase_add_test(tc, test_from_real_report);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
