/*
 * numaplaced after a restart (issue 12 #4, #7): a saved pid is adopted only while it is still
 * the job's task (its user, its start time), and a step that ended while the helper was down
 * never has its complete report replaced by an empty one.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobs.h"
#include "np_daemon_test.h"
#include "registry.h"
#include "report_out.h"

/* The fixture task (roots/host/proc/300) runs as uid 0 and started at tick 987654. */
static const struct {
    const char *name;
    unsigned job_uid;
    const char *starts; /* the registry's "starts" member, or "" for a registry without it */
    bool adopted;
} cases[] = {
    {"the same task", 0, ", \"starts\": [987654]", true},
    {"a recycled pid: another start time", 0, ", \"starts\": [111]", false},
    {"another user's process (registry without start times)", 4242, "", false},
    {"the job's user, registry without start times", 0, "", true},
};

START_TEST(test_restore_checks_each_pid)
{
    struct np_test_daemon t;
    char path[1200], text[512];
    struct np_daemon_job *j;
    FILE *f;

    np_test_daemon_init(&t);
    snprintf(path, sizeof(path), "%s/registry.json", t.d->cfg.state_dir);
    snprintf(text, sizeof(text),
             "{\"schema\": \"numaplace.state/1\", \"jobs\": [{\"job\": 42, \"step\": 0, \"uid\": "
             "%u, \"cpus\": \"0\", \"pids\": [%d]%s}]}",
             cases[_i].job_uid, NP_TEST_LIVE_PID, cases[_i].starts);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    registry_restore(t.d);
    j = registry_find(&t.d->registry, 42, 0);
    if (cases[_i].adopted) {
        ck_assert_ptr_nonnull(j);
        ck_assert_uint_eq(j->sampler.ntasks, 1);
    } else {
        /* nothing of it left: the step is ended, with an incomplete report */
        ck_assert_ptr_null(j);
        ck_assert_ptr_nonnull(strstr(t.log.text, "is no longer its task"));
    }
    np_test_daemon_fini(&t);
}
END_TEST

START_TEST(test_complete_report_survives_restart)
{
    struct np_test_daemon t;
    struct np_err err = {0};
    struct np_daemon_job *j;
    char path[2048], buf[8192] = "";
    FILE *f;

    np_test_daemon_init(&t);
    j = job_new(t.d, 7, 0, getuid(), "0", "local", "low", &err);
    ck_assert_ptr_nonnull(j);
    report_out_write(t.d, j, true);  /* the step ended and its report was written ... */
    report_out_write(t.d, j, false); /* ... then, after a kill -9, seen as ended while down */
    snprintf(path, sizeof(path), "%s/7.0.testhost.json", t.d->cfg.spool_dir);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_gt(fread(buf, 1, sizeof(buf) - 1, f), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "\"complete\": true"));
    ck_assert_ptr_nonnull(strstr(t.log.text, "already written; kept"));
    np_test_daemon_fini(&t);
}
END_TEST

/* A kill -9 during a step loses its counters up to the restart: its report, written at its real
 * end, says it is incomplete (docs/report-schema.md: "the helper ... restarted before the step
 * ended"). */
START_TEST(test_restored_step_report_incomplete)
{
    struct np_test_daemon t;
    char path[1200], buf[8192] = "";
    struct np_daemon_job *j;
    FILE *f;

    np_test_daemon_init(&t);
    snprintf(path, sizeof(path), "%s/registry.json", t.d->cfg.state_dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "{\"schema\": \"numaplace.state/1\", \"jobs\": [{\"job\": 43, \"step\": 0, \"uid\": 0, "
            "\"cpus\": \"0\", \"pids\": [%d], \"starts\": [987654]}]}",
            NP_TEST_LIVE_PID);
    fclose(f);
    registry_restore(t.d);
    j = registry_find(&t.d->registry, 43, 0);
    ck_assert_ptr_nonnull(j);
    job_finish(t.d, j, true); /* step_end from slurmstepd */
    snprintf(path, sizeof(path), "%s/43.0.testhost.json", t.d->cfg.spool_dir);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_gt(fread(buf, 1, sizeof(buf) - 1, f), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "\"complete\": false"));
    np_test_daemon_fini(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_restart");
    TCase *tc = tcase_create("restart");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_restore_checks_each_pid, 0,
                        (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, test_complete_report_survives_restart);
    tcase_add_test(tc, test_restored_step_report_incomplete);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
