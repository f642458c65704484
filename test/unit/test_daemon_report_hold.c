/*
 * Reports while the spool refuses them (a full or read-only spool): held in memory,
 * their steps still listed (ending) until the spool takes them, written once it does; the refusal
 * logged once; a report that cannot be held logged as lost with its job; one still held at stop
 * kept in registry.json and written by the next start.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "np_daemon_test.h"

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

/* Is the step of @p job_id still tracked, its report held? */
static bool still_held(struct np_test_daemon *t, uint32_t job_id)
{
    const struct np_daemon_job *j = registry_find(&t->d->registry, job_id, 0);

    return j && j->finishing && j->report_held;
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
    /* still tracked, ending: `numaplace store` waits for them */
    ck_assert(still_held(&t, 1) && still_held(&t, 2));
    ck_assert_int_eq(mkdir(t.d->cfg.spool_dir, 0755), 0);
    report_hold_retry(t.d);
    ck_assert_uint_eq(t.d->report_hold.count, 0);
    ck_assert(np_test_report_exists(&t, "1.0"));
    ck_assert(np_test_report_exists(&t, "2.0"));
    ck_assert_ptr_null(registry_find(&t.d->registry, 1, 0));
    ck_assert_ptr_null(registry_find(&t.d->registry, 2, 0));
    ck_assert_ptr_nonnull(strstr(t.log.text, "takes reports again: 2 held report(s) written"));
    np_test_daemon_fini(&t);
}
END_TEST

/* Held steps have ended: they do not count against max_jobs (a full spool refuses no step). */
START_TEST(test_held_steps_refuse_no_new_step)
{
    struct np_test_daemon t;
    struct np_err err = {0};

    np_test_daemon_init(&t);
    t.d->cfg.max_jobs = 2;
    ck_assert_int_eq(rmdir(t.d->cfg.spool_dir), 0);
    finish_step(&t, 1);
    finish_step(&t, 2);
    ck_assert_ptr_nonnull(job_new(t.d, 3, 0, getuid(), "0", "local", "low", &err));
    ck_assert_ptr_nonnull(job_new(t.d, 4, 0, getuid(), "0", "local", "low", &err));
    ck_assert_ptr_null(job_new(t.d, 5, 0, getuid(), "0", "local", "low", &err));
    ck_assert_int_eq(err.code, -ENOSPC);
    np_test_daemon_fini(&t);
}
END_TEST

START_TEST(test_lost_when_the_hold_is_full)
{
    struct np_test_daemon t;
    struct np_err err = {0};

    np_test_daemon_init(&t);
    t.d->cfg.max_jobs = NPD_HOLD_MAX + 2;
    ck_assert_int_eq(rmdir(t.d->cfg.spool_dir), 0);
    for (uint32_t job = 1; job <= NPD_HOLD_MAX + 1; job++) {
        struct np_daemon_job *j = job_new(t.d, job, 0, getuid(), "0", "local", "low", &err);
        char name[64];
        ck_assert_msg(j != NULL, "%s", err.msg);
        if (job == NPD_HOLD_MAX + 1)
            memset(&t.log, 0, sizeof(t.log)); /* the capture holds only so many lines */
        snprintf(name, sizeof(name), "%u.0.testhost.json", job);
        ck_assert(report_hold_add(t.d, j, name, strdup("{}\n"), 3, "No space left on device") ==
                  (job <= NPD_HOLD_MAX));
    }
    ck_assert_uint_eq(t.d->report_hold.count, NPD_HOLD_MAX);
    ck_assert_uint_eq(t.d->totals.reports_held, NPD_HOLD_MAX);
    ck_assert_uint_eq(t.d->totals.reports_lost, 1);
    ck_assert_ptr_nonnull(
        strstr(t.log.text, "job 1025.0: its report 1025.0.testhost.json is lost"));
    np_test_daemon_fini(&t);
}
END_TEST

/* At stop, with the spool still refusing: each one still held is named, kept in registry.json
 * (the next start writes it), or lost when that save failed. */
START_TEST(test_held_at_stop)
{
    struct np_test_daemon t, next;

    np_test_daemon_init(&t);
    ck_assert_int_eq(rmdir(t.d->cfg.spool_dir), 0);
    finish_step(&t, 7);
    finish_step(&t, 8);
    registry_save(t.d);
    report_hold_flush(t.d);
    ck_assert_uint_eq(count_of(t.log.text, "is still held (the spool"), 2);
    ck_assert_ptr_nonnull(
        strstr(t.log.text, "job 8.0: its report 8.0.testhost.json is still held"));
    ck_assert_uint_eq(t.d->totals.reports_lost, 0);
    /* the next start, the spool back: both written, complete, from registry.json */
    np_test_daemon_init(&next);
    memcpy(next.d->cfg.state_dir, t.d->cfg.state_dir, sizeof(next.d->cfg.state_dir));
    memcpy(next.d->cfg.spool_dir, t.d->cfg.spool_dir, sizeof(next.d->cfg.spool_dir));
    ck_assert_int_eq(mkdir(next.d->cfg.spool_dir, 0755), 0);
    registry_restore(next.d);
    ck_assert(np_test_report_exists(&next, "7.0") && np_test_report_exists(&next, "8.0"));
    ck_assert_ptr_nonnull(strstr(next.log.text, "2 ended before it stopped"));
    ck_assert_uint_eq(next.d->registry.count, 0);
    np_test_daemon_fini(&next);
    /* registry.json could not be saved: lost, and said so */
    memset(&t.log, 0, sizeof(t.log));
    strcat(t.d->cfg.spool_dir, "-gone");
    finish_step(&t, 9);
    t.d->registry.save_failing = true;
    report_hold_flush(t.d);
    ck_assert_ptr_nonnull(strstr(t.log.text, "job 9.0: its report 9.0.testhost.json is lost"));
    ck_assert_uint_eq(t.d->totals.reports_lost, 1);
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
    tcase_add_test(tc, test_held_steps_refuse_no_new_step);
    tcase_add_test(tc, test_lost_when_the_hold_is_full);
    tcase_add_test(tc, test_held_at_stop);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
