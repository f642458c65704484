/* numaplaced's configuration: a reload with any bad value keeps the whole running configuration
 * and says so (a bad key must not quietly fall back to its default). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "np_daemon_test.h"

static void write_config(struct np_test_daemon *t, const char *text)
{
    FILE *f;

    snprintf(t->d->config_path, sizeof(t->d->config_path), "%s/numaplaced.conf", t->dir);
    f = fopen(t->d->config_path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static const struct {
    const char *name;
    const char *reload; /* the file at SIGHUP */
    bool accepted;
    bool migration;             /* migration= afterwards */
    unsigned interval_ms;       /* interval_ms= afterwards */
    const char *metrics_listen; /* metrics_listen= afterwards */
} cases[] = {
    {"a good reload applies", "migration = on\ninterval_ms = 2000\n", true, true, 2000, ""},
    {"a bad value keeps everything", "migration = of\ninterval_ms = 2000\n", false, false, 500, ""},
    {"an unknown key keeps everything", "migratoin = on\ninterval_ms = 2000\n", false, false, 500,
     ""},
    {"a line without '=' keeps everything", "migration on\n", false, false, 500, ""},
    {"a bad metrics_listen keeps everything", "metrics_listen = 127.0.0.1\ninterval_ms = 2000\n",
     false, false, 500, ""},
    {"a bad metrics_users keeps everything",
     "metrics_listen = 127.0.0.1:9477\nmetrics_users = no-such-user-here\n", false, false, 500, ""},
    {"a good metrics_listen applies", "metrics_listen = 127.0.0.1:9477\nmigration = on\n", true,
     true, 1000, "127.0.0.1:9477"},
};

START_TEST(test_reload)
{
    struct np_test_daemon t;
    char spool[sizeof(t.d->cfg.spool_dir)], state[sizeof(t.d->cfg.state_dir)];
    char contents[4096];
    int rc;

    np_test_daemon_init(&t);
    memcpy(spool, t.d->cfg.spool_dir, sizeof(spool));
    memcpy(state, t.d->cfg.state_dir, sizeof(state));
    snprintf(contents, sizeof(contents),
             "migration = off\ninterval_ms = 500\nspool_dir = %s\nstate_dir = %s\n", spool, state);
    write_config(&t, contents);
    ck_assert_int_eq(config_load(t.d, true), 0);
    ck_assert(!t.d->cfg.migration);
    ck_assert_uint_eq(t.d->cfg.interval_ms, 500);

    snprintf(contents, sizeof(contents), "%sspool_dir = %s\nstate_dir = %s\n", cases[_i].reload,
             spool, state);
    write_config(&t, contents);
    rc = config_load(t.d, false);
    ck_assert_int_eq(rc == 0, cases[_i].accepted);
    ck_assert_int_eq(t.d->cfg.migration, cases[_i].migration);
    ck_assert_uint_eq(t.d->cfg.interval_ms, cases[_i].interval_ms);
    ck_assert_str_eq(t.d->cfg.metrics.listen, cases[_i].metrics_listen);
    if (!cases[_i].accepted)
        ck_assert_uint_gt(t.log.errors, 0);
    np_test_daemon_fini(&t);
}
END_TEST

/* A reload keeps the memory controllers' counters counting (reopening them would leave an
 * interval on the estimate); turning perf off closes them. A pipe stands in for each counter. */
START_TEST(test_reload_keeps_counters)
{
    static const struct {
        const char *backends;
        bool kept;
    } reloads[] = {{"perf,proc", true}, {"proc", false}};
    struct np_test_daemon t;
    char contents[4096];
    int fds[2][2];

    np_test_daemon_init(&t);
    snprintf(contents, sizeof(contents), "backends = perf,proc\nspool_dir = %s\nstate_dir = %s\n",
             t.d->cfg.spool_dir, t.d->cfg.state_dir);
    write_config(&t, contents);
    ck_assert_int_eq(config_load(t.d, true), 0);
    ck_assert(t.d->cfg.perf);
    t.d->uncore.boxes = calloc(1, sizeof(*t.d->uncore.boxes));
    ck_assert_ptr_nonnull(t.d->uncore.boxes);
    t.d->uncore.nboxes = 1;
    t.d->uncore.boxes[0] = (struct np_uncore_box){.last_t = 1.0, .bytes_per_s = 5e9};
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(pipe(fds[k]), 0);
        t.d->uncore.boxes[0].fd[k] = fds[k][0];
        close(fds[k][1]);
    }
    for (size_t i = 0; i < sizeof(reloads) / sizeof(reloads[0]); i++) {
        snprintf(contents, sizeof(contents), "backends = %s\nspool_dir = %s\nstate_dir = %s\n",
                 reloads[i].backends, t.d->cfg.spool_dir, t.d->cfg.state_dir);
        write_config(&t, contents);
        config_reload(t.d);
        if (reloads[i].kept) {
            ck_assert_uint_eq(t.d->uncore.nboxes, 1);
            ck_assert_int_eq(t.d->uncore.boxes[0].fd[0], fds[0][0]);
            ck_assert_double_eq(t.d->uncore.boxes[0].bytes_per_s, 5e9); /* the rate goes on */
        } else {
            ck_assert_uint_eq(t.d->uncore.nboxes, 0);
        }
    }
    np_test_daemon_fini(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_config");
    TCase *tc = tcase_create("reload");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_reload, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, test_reload_keeps_counters);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
