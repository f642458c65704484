/*
 * numaplaced reads /proc/interrupts and /proc/softirqs at a step's first sample, at its last
 * (the final sample at step_end) and at every interval only while a trace is recorded (issue
 * 16: the helper's cost); its report's interrupt figures are there either way.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "daemon.h"
#include "np_daemon_test.h"

static const struct {
    const char *name;
    bool trace;
    unsigned readings_after_3_ticks; /* the job's interrupt readings (its step figures) */
    bool vanish; /* then its process exits without a step_end: that sample reads them */
} cases[] = {
    {"no trace: the first interval only", false, 1, false},
    {"a trace recorded: every interval", true, 3, false},
    {"no trace, and its processes gone: that sample too", false, 1, true},
};

START_TEST(test_irq_read_when_kept)
{
    struct np_test_daemon t;
    char path[1200], buf[16384] = "";
    struct np_daemon_job *j;
    FILE *f;

    np_test_daemon_init(&t);
    if (cases[_i].vanish) { /* a root of its own, where the process can exit */
        char cmd[2048];
        snprintf(cmd, sizeof(cmd), "cp -r '%s' '%s/root'", t.d->cfg.proc_root, t.dir);
        ck_assert_int_eq(system(cmd), 0);
        snprintf(t.d->cfg.proc_root, sizeof(t.d->cfg.proc_root), "%s/root", t.dir);
    }
    if (cases[_i].trace) {
        snprintf(path, sizeof(path), "%s/trace.jsonl", t.dir);
        t.d->trace = fopen(path, "w");
        ck_assert_ptr_nonnull(t.d->trace);
    }
    snprintf(path, sizeof(path), "%s/registry.json", t.d->cfg.state_dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "{\"schema\": \"numaplace.state/1\", \"jobs\": [{\"job\": 45, \"step\": 0, \"uid\": 0, "
            "\"cpus\": \"0-1\", \"pids\": [%d], \"starts\": [987654]}]}",
            NP_TEST_LIVE_PID);
    fclose(f);
    registry_restore(t.d);
    j = registry_find(&t.d->registry, 45, 0);
    ck_assert_ptr_nonnull(j);
    for (int tick = 0; tick < 3; tick++)
        sampling_tick(t.d);
    ck_assert_uint_eq(j->stats.samples, 3);
    ck_assert_uint_eq(j->stats.irq_samples, cases[_i].readings_after_3_ticks);
    ck_assert(!t.d->counters.irq_read == !cases[_i].trace);
    if (cases[_i].vanish) {
        char cmd[2048];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s/proc/%d'", t.d->cfg.proc_root, NP_TEST_LIVE_PID);
        ck_assert_int_eq(system(cmd), 0);
        sampling_tick(t.d);
        ck_assert_uint_eq(j->stats.irq_samples, 2);
        ck_assert(j->stats.last.have_irq);
    }

    job_finish(t.d, j, true); /* step_end: the final sample reads them */
    snprintf(path, sizeof(path), "%s/45.0.testhost.json", t.d->cfg.spool_dir);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_gt(fread(buf, 1, sizeof(buf) - 1, f), 0);
    fclose(f);
    {
        json_t *report = json_loads(buf, 0, NULL);
        json_t *irq =
            json_object_get(json_object_get(report, "os_interference"), "interrupts_on_cpus");
        ck_assert_msg(json_is_integer(json_object_get(irq, "count")), "no interrupt count: %.200s",
                      json_dumps(irq, JSON_COMPACT));
        json_decref(report);
    }
    np_test_daemon_fini(&t);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("daemon_irq_reads");
    TCase *tc = tcase_create("irq");

    tcase_add_loop_test(tc, test_irq_read_when_kept, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    suite_add_tcase(suite, tc);
    return np_test_run(suite);
}
