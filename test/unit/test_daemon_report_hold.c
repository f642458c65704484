/*
 * Reports while the spool refuses them (a full or read-only spool): held in
 * memory and written once it takes them again; the refusal logged once; a report that cannot be
 * held, or is still held at stop, logged as lost with its job.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobs.h"
#include "np_daemon_test.h"
#include "report_hold.h"
#include "job_life.h"

static void finish_step(struct np_test_daemon *t, uint32_t job_id)
{
    struct np_err err = {0};
    struct np_daemon_job *j = job_new(t->d, job_id, 0, getuid(), "0", "local", "low", &err);

    ck_assert_msg(j != NULL, "%s", err.msg);
    job_finish(t->d, j, true);
}

static unsigned count_of(const char *text, const char *what)
{
    unsigned n = 0;

    for (const char *p = text; (p = strstr(p, what)); p++)
        n++;
    return n;
}

START_TEST(test_held_then_written)
{
    struct np_test_daemon t;

    np_test_daemon_init(&t);
    ck_assert_int_eq(rmdir(t.d->cfg.spool_dir), 0); /* the spool refuses everything */
    finish_step(&t, 1);
    finish_step(&t, 2);
    report_hold_retry(t.d);
    ck_assert_uint_eq(t.d->report_hold.count, 2);
    ck_assert_uint_eq(t.log.errors, 1); /* the refusal is said once */
    /* counted for the metrics page: two held, three failed writes (two, and one retry) */
    ck_assert_uint_eq(t.d->totals.reports_held, 2);
    ck_assert_uint_eq(t.d->totals.spool_write_failures, 3);
    ck_assert_uint_eq(t.d->totals.reports_lost, 0);
    ck_assert_ptr_nonnull(strstr(t.log.text, "job 1.0: cannot write its report"));
    ck_assert_ptr_nonnull(strstr(t.log.text, "held in memory"));
    ck_assert_int_eq(mkdir(t.d->cfg.spool_dir, 0755), 0);
    report_hold_retry(t.d);
    ck_assert_uint_eq(t.d->report_hold.count, 0);
    ck_assert(np_test_report_exists(&t, "1.0"));
    ck_assert(np_test_report_exists(&t, "2.0"));
    ck_assert_ptr_nonnull(strstr(t.log.text, "takes reports again: 2 held report(s) written"));
    np_test_daemon_fini(&t);
}
END_TEST

START_TEST(test_lost_when_full_or_at_stop)
{
    struct np_test_daemon t;

    np_test_daemon_init(&t);
    ck_assert_int_eq(rmdir(t.d->cfg.spool_dir), 0);
    for (uint32_t job = 1; job <= NPD_HOLD_MAX + 1; job++) {
        char *text = strdup("{}\n");
        char name[64];
        if (job == NPD_HOLD_MAX + 1)
            memset(&t.log, 0, sizeof(t.log)); /* the capture holds only so many lines */
        snprintf(name, sizeof(name), "%u.0.testhost.json", job);
        report_hold_add(t.d, name, text, 3, getuid(), job, 0, "No space left on device");
    }
    ck_assert_uint_eq(t.d->report_hold.count, NPD_HOLD_MAX);
    ck_assert_uint_eq(t.d->totals.reports_held, NPD_HOLD_MAX);
    ck_assert_uint_eq(t.d->totals.reports_lost, 1);
    ck_assert_ptr_nonnull(
        strstr(t.log.text, "job 1025.0: its report 1025.0.testhost.json is lost"));
    report_hold_fini(t.d);
    memset(&t.log, 0, sizeof(t.log));
    /* at stop, with the spool still refusing: each one still held is named */
    report_hold_add(t.d, "7.0.testhost.json", strdup("{}\n"), 3, getuid(), 7, 0, "Read-only");
    report_hold_add(t.d, "8.0.testhost.json", strdup("{}\n"), 3, getuid(), 8, 0, "Read-only");
    report_hold_flush(t.d);
    ck_assert_uint_eq(t.d->report_hold.count, 0);
    ck_assert_uint_eq(count_of(t.log.text, "is lost: the spool"), 2);
    ck_assert_uint_eq(t.d->totals.reports_lost, 3);
    ck_assert_ptr_nonnull(strstr(t.log.text, "job 8.0: its report 8.0.testhost.json is lost"));
    np_test_daemon_fini(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_report_hold");
    TCase *tc = tcase_create("report_hold");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_held_then_written);
    tcase_add_test(tc, test_lost_when_full_or_at_stop);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
