/* The job summary's schema (np_summary_validate): every summary the scenarios produce is valid
 * and written back to the same bytes; the scenarios' output (JSON, text, advice, stored form,
 * report text) is byte for byte what the code before wrote (test/fixtures/data/summary/golden/,
 * see summary_scenarios.h); malformed summaries are refused naming the member. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/summary.h"
#include "summary_scenarios.h"
#include "numaplace/json_reals.h"

/* fontconfig's pattern cache lives as long as the process (see test/lsan.supp). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libfontconfig.so\n";
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t len = 0;
    FILE *m;
    int c;

    ck_assert_msg(f != NULL, "cannot open %s", path);
    m = open_memstream(&buf, &len);
    while ((c = fgetc(f)) != EOF)
        fputc(c, m);
    fclose(m);
    fclose(f);
    return buf;
}

static const char *fixtures(void)
{
    static char dir[4096];

    snprintf(dir, sizeof(dir), "%s", np_test_fixture(""));
    dir[strlen(dir) - 1] = '\0'; /* no trailing '/' */
    return dir;
}

static char *golden(size_t i)
{
    char rel[256];

    snprintf(rel, sizeof(rel), "summary/golden/%s.txt", scenarios[i].name);
    return slurp(np_test_fixture(rel));
}

/* The scenario writes what the code before the model wrote. */
START_TEST(test_golden)
{
    char *want = golden((size_t)_i), *got = scen_run((size_t)_i, fixtures());
    const char *w = want, *g = got;
    int line = 1;

    ck_assert_ptr_nonnull(got);
    if (getenv("NP_GOLDEN_WRITE")) { /* a deliberate change: the goldens written again */
        char path[4096];
        FILE *f;
        snprintf(path, sizeof(path), "%s/%s.txt", getenv("NP_GOLDEN_WRITE"), scenarios[_i].name);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(got, f);
        fclose(f);
    }
    while (*w && *w == *g) {
        line += *w == '\n';
        w++;
        g++;
    }
    ck_assert_msg(*w == '\0' && *g == '\0', "%s differs at line %d:\nwant: %.120s\ngot:  %.120s",
                  scenarios[_i].name, line, w, g);
    free(want);
    free(got);
}
END_TEST

/* Every summary in the golden file is valid and is written back to its text. */
START_TEST(test_round_trip)
{
    char *text = golden((size_t)_i), *p = text;
    int summaries = 0;

    while ((p = strstr(p, "\n{\n")) != NULL) {
        char *end = strstr(p, "\n}\n"), *block;
        json_t *j;
        struct np_err err = {0};

        ck_assert_ptr_nonnull(end);
        block = strndup(p + 1, (size_t)(end - p) + 1);
        p = end;
        j = json_loads(block, 0, NULL);
        ck_assert_ptr_nonnull(j);
        if (json_object_get(j, "schema")) {
            char *again;
            ck_assert_msg(np_summary_validate(j, &err) == 0, "%s: %s", scenarios[_i].name, err.msg);
            again = json_dumps(j, JSON_INDENT(2) | NP_JSON_REALS);
            ck_assert_ptr_nonnull(again);
            ck_assert_str_eq(again, block);
            free(again);
            summaries++;
        }
        json_decref(j);
        free(block);
    }
    free(text);
    if (strncmp(scenarios[_i].name, "report", 6) != 0)
        ck_assert_int_gt(summaries, 0);
}
END_TEST

static const struct {
    const char *json;
    int rc;
    const char *msg;
} bad_cases[] = {
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": 1, \"nodes\": {}, \"extra\": 1}", -EINVAL,
     "unknown member \"extra\""},
    {"{\"schema\": \"numaplace.summary/2\", \"job_id\": 1, \"nodes\": {}}", -EPROTO,
     "numaplace.summary/2"},
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": 1, \"nodes\": {}, \"uid\": \"x\"}", -EINVAL,
     "summary of job 1: uid: expected an integer"},
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": 1, \"nodes\": {\"n1\": {\"steps\": 3}}}",
     -EINVAL, "nodes.n1.steps: expected an array"},
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": 1, \"nodes\": {\"n1\": {\"local_share\": "
     "{\"value\": \"x\"}}}}",
     -EINVAL, "nodes.n1.local_share.value: expected a number"},
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": 1, \"nodes\": {\"n1\": {\"cpi\": "
     "{\"value\": 1}}}}",
     -EINVAL, "nodes.n1.cpi: unknown member \"value\""},
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": 1, \"nodes\": {\"n1\": "
     "{\"pages_peak_bytes\": {\"0\": \"many\"}}}}",
     -EINVAL, "nodes.n1.pages_peak_bytes.0: expected a number"},
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": 1, \"nodes\": {\"n1\": {\"timeline\": "
     "{\"cpi\": [1, \"x\"]}}}}",
     -EINVAL, "nodes.n1.timeline.cpi[1]: expected a number or null"},
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": 1, \"nodes\": {\"n1\": {\"migrations\": "
     "{\"triggers\": {\"admin\": {\"requests\": 1, \"why\": 2}}}}}}",
     -EINVAL, "nodes.n1.migrations.triggers.admin: unknown member \"why\""},
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": 1, \"nodes\": {}, \"trimmed\": "
     "[{\"what\": 5}]}",
     -EINVAL, "trimmed[0]"},
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": 1, \"nodes\": {}, \"missing_nodes\": [1]}",
     -EINVAL, "missing_nodes[0]: expected a string"},
    {"{\"schema\": \"numaplace.summary/1\", \"job_id\": 1, \"nodes\": {\"n1\": "
     "{\"os_interference\": "
     "{\"kernel_time_share\": {\"unavailable\": 3}}}}}",
     -EINVAL, "nodes.n1.os_interference.kernel_time_share"},
};

START_TEST(test_strict)
{
    json_t *j = json_loads(bad_cases[_i].json, 0, NULL);
    struct np_err err = {0};
    int rc;

    ck_assert_ptr_nonnull(j);
    rc = np_summary_validate(j, &err);
    ck_assert_msg(rc == bad_cases[_i].rc, "rc %d (%s)", rc, err.msg);
    ck_assert_msg(strstr(err.msg, bad_cases[_i].msg), "'%s' lacks '%s'", err.msg,
                  bad_cases[_i].msg);
    json_decref(j);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("summary_model");
    TCase *tc = tcase_create("model");

    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_golden, 0, (int)N_SCENARIOS);
    tcase_add_loop_test(tc, test_round_trip, 0, (int)N_SCENARIOS);
    tcase_add_loop_test(tc, test_strict, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
    suite_add_tcase(suite, tc);
    return np_test_run(suite);
}
