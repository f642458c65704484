/*
 * A finished job's predicted sensitivity: the summary's steps carry CPI and LLC MPKI
 * from the reports' perf_counts, the advice names a step that behaved unlike its label, and every
 * path without counters says "unavailable" and why, never a guess.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/summary.h"
#include "numaplace/tables.h"

/* An advice entry's rule. */
#define RULE(advice, k) json_string_value(json_object_get(json_array_get(advice, k), "rule"))

#define NO_PMU "perf::CYCLES: perf_event_open: No such file or directory: no hardware PMU"

static const struct {
    const char *what;
    const char *label;
    double duration_s;
    int perf; /* 0: no perf_counts member, 1: counts, -1: no PMU */
    double cycles, instr, llc_load, llc_store;
    const char *rule;        /* the sensitivity rule that fires, or NULL */
    const char *text;        /* in its text */
    const char *unavailable; /* np_summary_predict's reason, NULL when predicted */
} cases[] = {
    {"a low-labelled step with 9 MPKI", "low", 600, 1, 1.5e12, 1e12, 8e9, 1e9,
     "predicted-sensitive", "label it --numa-sensitivity=high", NULL},
    {"a high-labelled step that barely misses", "high", 600, 1, 5e11, 1e12, 1e7, 0,
     "predicted-insensitive", "labelled --numa-sensitivity=high but showed no sensitivity", NULL},
    {"a high-labelled sensitive step", "high", 600, 1, 1.5e12, 1e12, 8e9, 1e9, NULL, NULL, NULL},
    {"a low-labelled insensitive step", "low", 600, 1, 5e11, 1e12, 1e7, 0, NULL, NULL, NULL},
    {"no PMU", "low", 600, -1, 0, 0, 0, 0, NULL, NULL, "unavailable: no LLC MPKI (" NO_PMU ")"},
    {"a report before perf_counts", "low", 600, 0, 0, 0, 0, 0, NULL, NULL,
     "unavailable: no LLC MPKI (the report has no perf_counts.cycles)"},
    {"no instructions", "low", 600, 1, 1e9, 0, 0, 0, NULL, NULL,
     "unavailable: no LLC MPKI (no instructions counted)"},
    {"a short step", "low", 10, 1, 1.5e12, 1e12, 8e9, 1e9, NULL, NULL,
     "unavailable: no step ran 30 s or more"},
};

static json_t *count(double v)
{
    return json_pack("{s:f, s:s, s:s}", "value", v, "unit", "events", "source", "perf: test");
}

static json_t *summary_of(size_t i)
{
    json_t *report = json_load_file(np_test_fixture("summary/job100.0.node1.json"), 0, NULL);
    json_t *s = np_summary_new(100);
    struct np_err err = {0};

    ck_assert_ptr_nonnull(report);
    json_object_set_new(report, "sensitivity", json_string(cases[i].label));
    json_object_set_new(report, "class", json_string(cases[i].label));
    json_object_set_new(report, "duration_s", json_real(cases[i].duration_s));
    if (cases[i].perf > 0)
        json_object_set_new(report, "perf_counts",
                            json_pack("{s:o, s:o, s:o, s:o}", "cycles", count(cases[i].cycles),
                                      "instructions", count(cases[i].instr), "llc_load_misses",
                                      count(cases[i].llc_load), "llc_store_misses",
                                      count(cases[i].llc_store)));
    else if (cases[i].perf < 0)
        json_object_set_new(report, "perf_counts",
                            json_pack("{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}", "cycles",
                                      "unavailable", NO_PMU, "instructions", "unavailable", NO_PMU,
                                      "llc_load_misses", "unavailable", NO_PMU, "llc_store_misses",
                                      "unavailable", NO_PMU));
    ck_assert_msg(np_summary_add_report(s, report, &err) == 0, "%s", err.msg);
    json_decref(report);
    return s;
}

static void load_model(struct np_sens_model *m)
{
    struct np_err err = {0};

    ck_assert_msg(np_sensitivity_load(m, getenv("NUMAPLACE_MODEL_DATA"), &err) == 0, "%s", err.msg);
}

START_TEST(test_advice_and_prediction)
{
    struct np_sens_model model;
    json_t *j = summary_of((size_t)_i);
    json_t *advice;
    struct np_summary_prediction p;
    const char *fired = NULL, *text = NULL;
    size_t n;

    load_model(&model);
    ck_assert_int_eq(np_summary_validate(j, NULL), 0);
    advice = np_summary_advice_with(j, &model);
    n = json_array_size(advice);
    ck_assert_int_gt(n, 0);
    for (size_t k = 0; k < n; k++)
        if (strncmp(RULE(advice, k), "predicted-", 10) == 0) {
            ck_assert_msg(!fired, "%s: two sensitivity rules", cases[_i].what);
            fired = RULE(advice, k);
            text = json_string_value(json_object_get(json_array_get(advice, k), "text"));
        }
    if (cases[_i].rule) {
        ck_assert_msg(fired && strcmp(fired, cases[_i].rule) == 0, "%s: rule %s, want %s",
                      cases[_i].what, fired ? fired : "none", cases[_i].rule);
        ck_assert_msg(strstr(text, cases[_i].text), "%s: '%s' lacks '%s'", cases[_i].what, text,
                      cases[_i].text);
    } else {
        ck_assert_msg(!fired, "%s: %s fired: %s", cases[_i].what, fired, text);
    }
    np_summary_predict(j, &model, &p);
    if (cases[_i].unavailable) {
        ck_assert(!p.available);
        ck_assert_str_eq(p.why, cases[_i].unavailable);
    } else {
        const struct np_sens_inputs in = {
            cases[_i].cycles / cases[_i].instr,
            (cases[_i].llc_load + cases[_i].llc_store) / cases[_i].instr * 1000, NAN, NAN, NULL};
        double want;
        ck_assert_msg(p.available, "%s: %s", cases[_i].what, p.why);
        ck_assert_int_eq(np_sensitivity_predict(&model, &in, &want, NULL), 0);
        ck_assert_double_eq_tol(p.slowdown, want, 1e-9);
        ck_assert_str_eq(p.node, "node1");
        ck_assert_str_eq(p.step, "0");
    }
    /* The same summary without the model: the sensitivity rules stay silent. */
    json_decref(advice);
    advice = np_summary_advice(j);
    n = json_array_size(advice);
    for (size_t k = 0; k < n; k++)
        ck_assert(strncmp(RULE(advice, k), "predicted-", 10) != 0);
    json_decref(advice);
    json_decref(j);
}
END_TEST

/* Counts from an emulated CPU (the report's sampling.emulated_cpu) describe the emulator: no
 * prediction from them, whether they are all there or some are missing, and the reason says so. */
START_TEST(test_emulated_cpu_not_predicted)
{
    struct np_sens_model model;
    struct np_err err = {0};
    struct np_summary_prediction p;

    load_model(&model);
    for (int missing = 0; missing <= 1; missing++) {
        json_t *report = json_load_file(np_test_fixture("summary/job100.0.node1.json"), 0, NULL);
        json_t *sum = np_summary_new(100);
        ck_assert_ptr_nonnull(report);
        json_object_set_new(report, "duration_s", json_real(600));
        json_object_set_new(
            report, "perf_counts",
            json_pack("{s:o, s:o, s:o, s:o}", "cycles", count(2e12), "instructions", count(1e12),
                      "llc_load_misses",
                      missing ? json_pack("{s:s}", "unavailable", "no cache events") : count(8e9),
                      "llc_store_misses", count(1e9)));
        json_object_set_new(json_object_get(report, "sampling"), "emulated_cpu",
                            json_string("CPU implementer 0x00"));
        ck_assert_msg(np_summary_add_report(sum, report, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(np_summary_validate(sum, NULL), 0);
        np_summary_predict(sum, &model, &p);
        ck_assert(!p.available);
        ck_assert_msg(strstr(p.why, "counted on an emulated CPU (CPU implementer 0x00), where a "
                                    "prediction is not meaningful"),
                      "%s", p.why);
        ck_assert(!missing || strstr(p.why, "no cache events; and counted"));
        json_decref(sum);
        json_decref(report);
    }
}
END_TEST

/* No table, a summary written before steps carried counters, steps trimmed: each says why. */
START_TEST(test_unavailable_without_inputs)
{
    struct np_sens_model model;
    json_t *j = summary_of(0), *steps;
    struct np_summary_prediction p;
    json_t *step;
    size_t i;

    load_model(&model);
    ck_assert_int_eq(np_summary_validate(j, NULL), 0);
    np_summary_predict(j, NULL, &p);
    ck_assert(!p.available);
    ck_assert_str_eq(p.why, "unavailable: no sensitivity table loaded");

    steps = json_object_get(json_object_get(json_object_get(j, "nodes"), "node1"), "steps");
    json_array_foreach(steps, i, step)
    {
        json_object_del(step, "cpi");
        json_object_del(step, "llc_mpki");
        json_object_del(step, "bandwidth_bytes_per_s");
        json_object_del(step, "class");
    }
    ck_assert_int_eq(np_summary_validate(j, NULL), 0);
    np_summary_predict(j, &model, &p);
    ck_assert(!p.available);
    ck_assert_str_eq(p.why, "unavailable: no LLC MPKI (the summary predates per-step counters)");

    json_array_clear(steps);
    json_object_del(json_object_get(json_object_get(j, "nodes"), "node1"), "steps");
    ck_assert_int_eq(np_summary_validate(j, NULL), 0);
    np_summary_predict(j, &model, &p);
    ck_assert(!p.available);
    ck_assert_str_eq(p.why, "unavailable: the summary's steps were trimmed to fit AdminComment");
    json_decref(j);
}
END_TEST

/* The step keeps the figures the prediction needs, and they survive the stored form. */
START_TEST(test_step_members)
{
    json_t *j = summary_of(0);
    json_t *step = json_array_get(
        json_object_get(json_object_get(json_object_get(j, "nodes"), "node1"), "steps"), 0);

    ck_assert_double_eq_tol(json_real_value(json_object_get(step, "cpi")), 1.5, 1e-12);
    ck_assert_double_eq_tol(json_real_value(json_object_get(step, "llc_mpki")), 9.0, 1e-12);
    ck_assert_str_eq(json_string_value(json_object_get(step, "class")), "low");
    ck_assert_ptr_null(json_object_get(step, "counters_unavailable"));
    json_decref(j);
    j = summary_of(4);
    step = json_array_get(
        json_object_get(json_object_get(json_object_get(j, "nodes"), "node1"), "steps"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(step, "counters_unavailable")), NO_PMU);
    ck_assert_ptr_null(json_object_get(step, "cpi"));
    json_decref(j);
}
END_TEST

/* The text names the prediction beside the label and class, or why there is none. */
START_TEST(test_text)
{
    struct np_sens_model model;
    json_t *j = summary_of(0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    load_model(&model);
    ck_assert_int_eq(np_summary_print_hostlist(f, j, &model, NULL), 0);
    ck_assert_int_eq(np_summary_print_hostlist(f, j, NULL, NULL), 0);
    fclose(f);
    ck_assert_msg(strstr(buf, "Predicted sensitivity: 2.07x with remote memory (node1 step 0): "
                              "placement-sensitive (threshold 1.60x)"),
                  "%s", buf);
    ck_assert_msg(strstr(buf, "Predicted sensitivity: unavailable: no sensitivity table loaded"),
                  "%s", buf);
    ck_assert_msg(strstr(buf, "[predicted-sensitive] This job behaved like a placement-sensitive "
                              "code (predicted slowdown with remote memory: node1 step 0: 2.1x"),
                  "%s", buf);
    free(buf);
    json_decref(j);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("summary_sensitivity");
    TCase *tc = tcase_create("summary_sensitivity");
    tcase_add_loop_test(tc, test_advice_and_prediction, 0, sizeof(cases) / sizeof(cases[0]));
    tcase_add_test(tc, test_unavailable_without_inputs);
    tcase_add_test(tc, test_emulated_cpu_not_predicted);
    tcase_add_test(tc, test_step_members);
    tcase_add_test(tc, test_text);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
