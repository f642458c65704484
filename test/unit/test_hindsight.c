/* `numaplace report`'s hindsight on --numa-policy=auto (numaplace/summary.h): from a report's
 * task "auto" facts and the sensitivity the model measured, the choice a later run should get;
 * the reason line is never read back. */
#include <check.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/summary.h"

/* The model's prediction as the report's class_prediction records it (numaplace.report/1.1),
 * and the words class_source says it in (for people: never read back). */
#define PRED_HIGH  "{\"slowdown\": 2.07, \"llc_mpki\": 9.0, \"cpi\": 1.5, \"sensitive\": true}"
#define PRED_LOW   "{\"slowdown\": 1.02, \"llc_mpki\": 0.1, \"cpi\": 0.8, \"sensitive\": false}"
#define WORDS_HIGH "auto: predicted 2.07x with remote memory (LLC MPKI 9.00, CPI 1.50): sensitive"

/* The facts a task's "auto" member records: the sensitivity auto used, the task's nodes, the
 * allowed ones and the loaded ones. */
#define FACTS(sens, task, allowed, loaded)                                                         \
    "{\"sensitivity\": \"" sens "\", \"task_nodes\": " task ", \"allowed_nodes\": " allowed        \
    ", \"loaded_nodes\": " loaded "}"

static const struct {
    const char *policy, *reason, *facts, *prediction;
    int rc;
    const char *would;
    bool differs;
    const char *why;
} cases[] = {
    /* 0: launched with auto (policy.requested), the task neither reasons nor records facts */
    {"local", NULL, NULL, PRED_HIGH, 1, "", false, "unavailable: the report has no auto facts"},
    /* 1: unknown, kept local on a loaded node; measured high: interleave-all next time */
    {"local", "auto: local: sensitivity unknown, node 0 loaded (63% of its bandwidth)",
     FACTS("unknown", "[0]", "[0, 1]", "[0]"), PRED_HIGH, 1, "interleave-all", true,
     "a later run should get interleave-all: measured high (predicted 2.07x"},
    /* 2: the same, on an unloaded node: local stands */
    {"local", "auto: local: sensitivity unknown, node 1 not loaded (10% of its bandwidth)",
     FACTS("unknown", "[1]", "[0, 1]", "[]"), PRED_HIGH, 1, "local", false,
     "local stands: measured high"},
    /* 3: labelled high and interleaved away, measured not sensitive: local next time */
    {"interleave-all",
     "auto: interleave-all: sensitivity high (user), node 0 loaded by proxy (its CPUs 98% busy; "
     "no memory counter)",
     FACTS("high", "[0]", "[0, 1]", "[0]"), PRED_LOW, 1, "local", true, "--numa-sensitivity=low"},
    /* 4: every node loaded: local stands even for a sensitive code */
    {"local",
     "auto: local: sensitivity high (history), node 0 loaded (70% of its bandwidth) but no other "
     "allowed node is less loaded",
     FACTS("high", "[0]", "[0, 1]", "[0, 1]"), PRED_HIGH, 1, "local", false, "local stands"},
    /* 5: spanning nodes, unknown, measured low: local over interleave */
    {"interleave", "auto: interleave: sensitivity unknown, CPUs span nodes 0,1",
     FACTS("unknown", "[0, 1]", "[0, 1]", "[]"), PRED_LOW, 1, "local", true,
     "a later run should get local"},
    /* 6: no measurement: says so */
    {"local", "auto: local: sensitivity unknown, node 0 loaded (63% of its bandwidth)",
     FACTS("unknown", "[0]", "[0, 1]", "[0]"), NULL, 1, "", false,
     "unavailable: no sensitivity measured"},
    /* 7: labelled low (auto did not need the load), measured high on a loaded node: label it */
    {"local", "auto: local: sensitivity low (user)", FACTS("low", "[0]", "[0, 1]", "[0]"),
     PRED_HIGH, 1, "interleave-all", true, "where auto used low; label it --numa-sensitivity=high"},
    /* 8: no advice at launch: no load known, so local stands for one node */
    {"local",
     "auto: local: sensitivity unknown, node 0's load unknown (numaplaced did not answer: "
     "timeout)",
     FACTS("unknown", "[0]", "[0, 1]", "[]"), PRED_HIGH, 1, "local", false, "local stands"},
    /* 9: a report from before the facts: its reason line is not read back */
    {"local", "auto: local: sensitivity unknown, node 0 loaded (63% of its bandwidth)", NULL,
     PRED_HIGH, 1, "", false, "unavailable: the report has no auto facts"},
    /* 10: the reason is the task's to say: words hindsight once looked for change nothing (the
     * facts are case 1's) */
    {"local",
     "auto: local: sensitivity low (user), CPUs span nodes 0,1, node 1 not measured but no "
     "other allowed node is less loaded",
     FACTS("unknown", "[0]", "[0, 1]", "[0]"), PRED_HIGH, 1, "interleave-all", true,
     "where auto used unknown"},
    /* 11: ... nor the other way (case 2's facts, a reason claiming a loaded node) */
    {"local", "auto: local: sensitivity high (user), node 1 loaded (99% of its bandwidth)",
     FACTS("unknown", "[1]", "[0, 1]", "[]"), PRED_HIGH, 1, "local", false,
     "local stands: measured high"},
    /* 12: facts that are not facts (a node out of range) count as none */
    {"local", "auto: local: sensitivity unknown, node 0 loaded (63% of its bandwidth)",
     FACTS("unknown", "[0]", "[0, 99]", "[0]"), PRED_HIGH, 1, "", false,
     "unavailable: the report has no auto facts"},
    /* 13: the derived text is case 1's: measured from the fields */
    {"local", NULL, FACTS("unknown", "[0]", "[0, 1]", "[0]"), PRED_HIGH, 1, "interleave-all", true,
     "measured high (predicted 2.07x with remote memory (LLC MPKI 9.00, CPI 1.50): sensitive)"},
    /* 14: class_source's words are not read: the fields say not sensitive (case 1's facts) */
    {"local", NULL, FACTS("unknown", "[0]", "[0, 1]", "[0]"), PRED_LOW, 1, "local", false,
     "local stands: measured low"},
    /* 15: a prediction that is not one (a member missing) counts as none */
    {"local", NULL, FACTS("unknown", "[0]", "[0, 1]", "[0]"),
     "{\"slowdown\": 2.07, \"sensitive\": true}", 1, "", false,
     "unavailable: no sensitivity measured"},
};

START_TEST(test_hindsight)
{
    /* every case's class_source says sensitive in words: only class_prediction counts */
    json_t *r = json_pack("{s:s, s:{s:s, s:[{s:i, s:s}]}}", "class_source", WORDS_HIGH, "policy",
                          "requested", "auto", "tasks", "task", 0, "policy", cases[_i].policy);
    json_t *task = json_array_get(json_object_get(json_object_get(r, "policy"), "tasks"), 0);
    struct np_auto_hindsight h;

    ck_assert_ptr_nonnull(r);
    if (cases[_i].reason)
        json_object_set_new(task, "reason", json_string(cases[_i].reason));
    if (cases[_i].facts)
        json_object_set_new(task, "auto", json_loads(cases[_i].facts, 0, NULL));
    if (cases[_i].prediction)
        json_object_set_new(r, "class_prediction", json_loads(cases[_i].prediction, 0, NULL));
    ck_assert_int_eq(np_auto_hindsight(r, &h), cases[_i].rc);
    if (cases[_i].rc == 1) {
        ck_assert_str_eq(h.made, cases[_i].policy);
        ck_assert_str_eq(h.would, cases[_i].would);
        ck_assert_int_eq(h.differs, cases[_i].differs);
        ck_assert_msg(strstr(h.why, cases[_i].why), "'%s' lacks '%s'", h.why, cases[_i].why);
    }
    json_decref(r);
}
END_TEST

/* A step launched with another policy has none, whatever its task's words or facts say. */
START_TEST(test_not_auto)
{
    json_t *r = json_pack("{s:{s:s, s:[{s:s, s:s, s:o}]}, s:o}", "policy", "requested", "local",
                          "tasks", "policy", "local", "reason", "auto: local: sensitivity unknown",
                          "auto", json_loads(FACTS("unknown", "[0]", "[0, 1]", "[0]"), 0, NULL),
                          "class_prediction", json_loads(PRED_HIGH, 0, NULL));
    struct np_auto_hindsight h;

    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(np_auto_hindsight(r, &h), 0);
    json_decref(r);
}
END_TEST

/* `numaplace report` prints it, from report fixtures written by numaplaced: one with the facts
 * and the prediction (numaplace.report/1.1), one with the facts from before class_prediction
 * (numaplace.report/1: its class_source says "auto: predicted ... sensitive" in words only), and
 * one from before the facts (read as before, with the hindsight unavailable). */
static const struct {
    const char *fixture, *line;
} printed[] = {
    {"report-auto-facts.json",
     "auto hindsight         a later run should get interleave-all: measured high"},
    {"report-auto-facts-1.0.json",
     "auto hindsight         unavailable: no sensitivity measured on this run (the report has no "
     "class_prediction"},
    {"report-auto.json", "auto hindsight         unavailable: the report has no auto facts"},
};

START_TEST(test_report_prints_hindsight)
{
    json_t *r = json_load_file(np_test_fixture(printed[_i].fixture), 0, NULL);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(np_report_print(out, r), 0);
    fclose(out);
    ck_assert_msg(strstr(text, printed[_i].line), "%s", text);
    free(text);
    json_decref(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hindsight");
    TCase *tc = tcase_create("hindsight");

    tcase_add_loop_test(tc, test_hindsight, 0, sizeof(cases) / sizeof(cases[0]));
    tcase_add_test(tc, test_not_auto);
    tcase_add_loop_test(tc, test_report_prints_hindsight, 0, sizeof(printed) / sizeof(printed[0]));
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
