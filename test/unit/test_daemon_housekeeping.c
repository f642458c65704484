/*
 * Where the helper runs: the housekeeping CPUs asked for, never the kernel's quiet CPUs
 * (nohz_full, isolcpus), read from captured /sys trees (test/fixtures/roots/quiet*).
 */
#include <check.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "housekeeping.h"
#include "jobs.h"
#include "np_daemon_test.h"
#include "np_test.h"
#include "numaplace/report_model.h"
#include "job_life.h"

static const struct {
    const char *root; /* fixture root, NULL: none (no such files) */
    const char *nohz, *isolated;
} quiet_cases[] = {
    {"quiet", "2-3", "3,5"},
    {"quiet-none", "", ""}, /* "(null)" and an empty file: none */
    {"host", "", ""},       /* no such files (an older kernel) */
};

START_TEST(quiet_cpus_are_read)
{
    hwloc_bitmap_t nohz = hwloc_bitmap_alloc(), isolated = hwloc_bitmap_alloc();
    char a[64], b[64];

    ck_assert_int_eq(housekeeping_quiet_cpus(np_test_root(quiet_cases[_i].root), nohz, isolated),
                     0);
    hwloc_bitmap_list_snprintf(a, sizeof(a), nohz);
    hwloc_bitmap_list_snprintf(b, sizeof(b), isolated);
    ck_assert_str_eq(a, quiet_cases[_i].nohz);
    ck_assert_str_eq(b, quiet_cases[_i].isolated);
    hwloc_bitmap_free(nohz);
    hwloc_bitmap_free(isolated);
}
END_TEST

static const struct {
    const char *name;
    const char *wanted, *started, *quiet;
    const char *chosen;
    int rc;
} choose_cases[] = {
    {"housekeeping CPUs, none quiet", "0-1", "0-7", "", "0-1", 0},
    {"a quiet housekeeping CPU is left out", "0-3", "0-7", "2-3,5", "0-1", 0},
    {"no housekeeping CPUs: all but the quiet ones", "", "0-7", "2-3,5", "0-1,4,6-7", 0},
    {"housekeeping CPUs all quiet: the others", "2-3", "0-7", "2-3,5", "0-1,4,6-7", 1},
    {"every CPU quiet: where it was started", "", "2-3", "2-3,5", "2-3", 2},
    {"nothing quiet, nothing asked: unchanged", "", "0-7", "", "0-7", 0},
};

START_TEST(helper_cpus_are_chosen)
{
    hwloc_bitmap_t wanted = hwloc_bitmap_alloc(), started = hwloc_bitmap_alloc(),
                   quiet = hwloc_bitmap_alloc(), chosen = hwloc_bitmap_alloc();
    char got[64];

    hwloc_bitmap_list_sscanf(wanted, choose_cases[_i].wanted);
    hwloc_bitmap_list_sscanf(started, choose_cases[_i].started);
    hwloc_bitmap_list_sscanf(quiet, choose_cases[_i].quiet);
    ck_assert_int_eq(housekeeping_choose(wanted, started, quiet, chosen), choose_cases[_i].rc);
    hwloc_bitmap_list_snprintf(got, sizeof(got), chosen);
    ck_assert_msg(strcmp(got, choose_cases[_i].chosen) == 0, "%s: %s", choose_cases[_i].name, got);
    hwloc_bitmap_free(wanted);
    hwloc_bitmap_free(started);
    hwloc_bitmap_free(quiet);
    hwloc_bitmap_free(chosen);
}
END_TEST

/* A step's report says when its CPUs were the helper's too, and `numaplace report` shows it. */
static const struct {
    const char *helper, *job, *reload; /* reload: the helper's CPUs after a reload, or NULL */
    const char *shared, *text;
} shared_cases[] = {
    {"0-1", "1-3", NULL, "1", "shared with this step: CPUs 1 (the helper runs on 0-1)"},
    {"0-1", "2-3", NULL, "", "0-1, none of this step's"},
    {"0-1", "2-3", "2", "2", "shared with this step: CPUs 2 (the helper runs on 2)"},
    {"2", "2-3", "0", "2", "shared with this step: CPUs 2 (the helper runs on 0)"}, /* stays */
};

START_TEST(shared_cpus_are_reported)
{
    struct np_test_daemon t;
    struct np_err err = {0};
    struct np_daemon_job *j;
    char *text = NULL;
    size_t len = 0;
    FILE *out;
    json_t *report;

    np_test_daemon_init(&t);
    hwloc_bitmap_list_sscanf(t.d->helper_cpus, shared_cases[_i].helper);
    j = job_new(t.d, 42, 0, 0, shared_cases[_i].job, "", "low", &err);
    ck_assert_ptr_nonnull(j);
    job_note_helper_cpus(t.d, j);
    if (shared_cases[_i].reload) {
        hwloc_bitmap_list_sscanf(t.d->helper_cpus, shared_cases[_i].reload);
        job_note_helper_cpus(t.d, j);
    }
    report = np_report_new(&j->meta, &j->stats, true);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(report, "helper"), "shared_cpus")),
        shared_cases[_i].shared);
    out = open_memstream(&text, &len);
    ck_assert_int_eq(np_report_print(out, report), 0);
    fclose(out);
    ck_assert_msg(strstr(text, shared_cases[_i].text) != NULL, "%s", text);
    free(text);
    json_decref(report);
    np_test_daemon_fini(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_housekeeping");
    TCase *tc = tcase_create("cpus");

    tcase_add_loop_test(tc, quiet_cpus_are_read, 0,
                        (int)(sizeof(quiet_cases) / sizeof(quiet_cases[0])));
    tcase_add_loop_test(tc, helper_cpus_are_chosen, 0,
                        (int)(sizeof(choose_cases) / sizeof(choose_cases[0])));
    tcase_add_loop_test(tc, shared_cpus_are_reported, 0,
                        (int)(sizeof(shared_cases) / sizeof(shared_cases[0])));
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
