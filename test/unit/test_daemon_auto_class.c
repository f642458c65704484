/*
 * class_default=auto: a step registered without a label is classed by its
 * predicted sensitivity after NPD_AUTO_CLASS_SAMPLES samples with counters, through class_map; a
 * label or an administrator's set-class wins; without counters or a table the class stays the
 * default and class_source says why; the table must be one no other user could write.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon.h"
#include "ops.h"
#include "np_daemon_test.h"

#define NO_PMU "perf::CYCLES: perf_event_open: No such file or directory: no hardware PMU"

static struct np_test_daemon t;

static void setup(void)
{
    np_test_daemon_init(&t);
}

static void teardown(void)
{
    np_test_daemon_fini(&t);
}

enum counters { SENSITIVE, INSENSITIVE, NONE };

static const struct {
    const char *what;
    bool auto_on, labelled, admin;
    const char *class_map; /* NULL: the default high:high,low:low */
    const char *table;     /* NULL: the shipped one */
    enum counters counters;
    unsigned samples;
    const char *want_class, *want_source; /* the source's start */
} cases[] = {
    {"unlabelled, sensitive", true, false, false, NULL, NULL, SENSITIVE, NPD_AUTO_CLASS_SAMPLES,
     "high", "auto: predicted 2.07x with remote memory (LLC MPKI 9.00, CPI 1.50): sensitive"},
    {"unlabelled, one sample short", true, false, false, NULL, NULL, SENSITIVE,
     NPD_AUTO_CLASS_SAMPLES - 1, "low", "default"},
    {"unlabelled, insensitive", true, false, false, NULL, NULL, INSENSITIVE, NPD_AUTO_CLASS_SAMPLES,
     "low", "auto: predicted"},
    {"class_map decides the class", true, false, false, "high:low,low:low", NULL, SENSITIVE,
     NPD_AUTO_CLASS_SAMPLES, "low", "auto: predicted 2.07x"},
    {"a label wins", true, true, false, NULL, NULL, SENSITIVE, NPD_AUTO_CLASS_SAMPLES, "low",
     "label"},
    {"set-class wins", true, false, true, NULL, NULL, SENSITIVE, NPD_AUTO_CLASS_SAMPLES, "low",
     "admin"},
    {"auto off", false, false, false, NULL, NULL, SENSITIVE, NPD_AUTO_CLASS_SAMPLES, "low",
     "default"},
    {"no counters", true, false, false, NULL, NULL, NONE, NPD_AUTO_CLASS_SAMPLES, "low",
     "default (auto unavailable: " NO_PMU ")"},
    {"no table", true, false, false, NULL, "/nonexistent/table.csv", SENSITIVE,
     NPD_AUTO_CLASS_SAMPLES, "low",
     "default (auto unavailable: sensitivity_table /nonexistent/table.csv: No such file"},
    {"a table others may write", true, false, false, NULL, "writable", SENSITIVE,
     NPD_AUTO_CLASS_SAMPLES, "low", "default (auto unavailable: sensitivity_table"},
};

/* The model's table, copied into the test's directory with @p mode, as the sensitivity table:
 * the checkout's own file may be group-writable (an archive extracted under umask 002), which
 * numaplaced rightly refuses to read. */
static void use_table_copy(mode_t mode)
{
    char path[512], buf[8192];
    FILE *in = fopen(getenv("NUMAPLACE_MODEL_DATA"), "r"), *out;
    size_t n;

    snprintf(path, sizeof(path), "%s/table.csv", t.dir);
    out = fopen(path, "w");
    ck_assert(in && out);
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    ck_assert_int_eq(fclose(out), 0);
    ck_assert_int_eq(chmod(path, mode), 0);
    snprintf(t.d->cfg.sensitivity_table, sizeof(t.d->cfg.sensitivity_table), "%s", path);
}

static void sample_of(enum counters c, struct np_sample *s)
{
    np_sample_init(s);
    if (c == NONE) {
        for (int e = 0; e < NP_PERF_NEVENTS; e++)
            snprintf(s->perf_reason[e], sizeof(s->perf_reason[e]), "%s", NO_PMU);
        return;
    }
    for (int e = NP_PERF_CYCLES; e <= NP_PERF_LLC_STORE_MISSES; e++)
        s->have_perf[e] = true;
    s->perf[NP_PERF_INSTRUCTIONS] = 1000000000000ull;
    s->perf[NP_PERF_CYCLES] = c == SENSITIVE ? 1500000000000ull : 500000000000ull;
    s->perf[NP_PERF_LLC_LOAD_MISSES] = c == SENSITIVE ? 8000000000ull : 10000000ull;
    s->perf[NP_PERF_LLC_STORE_MISSES] = c == SENSITIVE ? 1000000000ull : 0;
}

START_TEST(test_auto_class)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    struct np_task_reg r = {.job_id = 7, .uid = 4242, .pid = NP_TEST_LIVE_PID};
    struct np_err err = {0};
    struct np_daemon_job *j;
    struct np_sample s;
    json_t *reply;

    t.d->cfg.class_default_auto = cases[_i].auto_on;
    if (cases[_i].class_map)
        ck_assert_int_eq(np_helper_config_set(&t.d->cfg, "class_map", cases[_i].class_map, &err),
                         0);
    if (!cases[_i].table) {
        use_table_copy(0644);
    } else if (strcmp(cases[_i].table, "writable") == 0) {
        use_table_copy(0666);
    } else {
        snprintf(t.d->cfg.sensitivity_table, sizeof(t.d->cfg.sensitivity_table), "%s",
                 cases[_i].table);
    }
    auto_class_load(t.d);
    snprintf(r.cpus, sizeof(r.cpus), "0");
    snprintf(r.policy_requested, sizeof(r.policy_requested), "local");
    snprintf(r.sensitivity, sizeof(r.sensitivity), "low");
    r.unlabelled = !cases[_i].labelled;
    reply = op_register(t.d, &root, &r);
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
    j = registry_find(&t.d->registry, 7, 0);
    ck_assert_ptr_nonnull(j);
    if (cases[_i].admin) {
        reply = op_set_class(t.d, &root, 7, "low");
        ck_assert(np_test_reply_ok(reply));
        json_decref(reply);
    }
    sample_of(cases[_i].counters, &s);
    for (unsigned k = 0; k < cases[_i].samples; k++)
        auto_class_consider(t.d, j, &s);
    ck_assert_msg(strcmp(j->meta.job_class, cases[_i].want_class) == 0, "%s: class %s, want %s",
                  cases[_i].what, j->meta.job_class, cases[_i].want_class);
    ck_assert_msg(
        strncmp(j->meta.class_source, cases[_i].want_source, strlen(cases[_i].want_source)) == 0,
        "%s: class_source '%s', want '%s...'", cases[_i].what, j->meta.class_source,
        cases[_i].want_source);
    /* the prediction is kept as fields (the report's class_prediction), the words derived */
    ck_assert_int_eq(j->meta.prediction.known, strncmp(cases[_i].want_source, "auto:", 5) == 0);
    if (j->meta.prediction.known) {
        char words[192];
        np_class_prediction_text(&j->meta.prediction, words, sizeof(words));
        ck_assert_str_eq(words, j->meta.class_source);
        ck_assert_int_eq(j->meta.prediction.sensitive, cases[_i].counters == SENSITIVE);
    }
}
END_TEST

/* What decided the class survives a restart of the helper, and is not decided again. */
START_TEST(test_source_survives_restart)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    /* uid 0: the fixture process's owner, so the restart adopts it */
    struct np_task_reg r = {.job_id = 8, .uid = 0, .pid = NP_TEST_LIVE_PID, .unlabelled = true};
    struct np_test_daemon after;
    struct np_daemon_job *j;
    struct np_sample s;
    json_t *reply;

    t.d->cfg.class_default_auto = true;
    use_table_copy(0644);
    auto_class_load(t.d);
    snprintf(r.sensitivity, sizeof(r.sensitivity), "low");
    reply = op_register(t.d, &root, &r);
    json_decref(reply);
    j = registry_find(&t.d->registry, 8, 0);
    sample_of(SENSITIVE, &s);
    for (unsigned k = 0; k < NPD_AUTO_CLASS_SAMPLES; k++)
        auto_class_consider(t.d, j, &s);
    ck_assert_str_eq(j->meta.job_class, "high");
    registry_save(t.d);
    np_test_daemon_init(&after);
    memcpy(after.d->cfg.state_dir, t.d->cfg.state_dir, sizeof(after.d->cfg.state_dir));
    registry_restore(after.d);
    j = registry_find(&after.d->registry, 8, 0);
    ck_assert_msg(j != NULL, "%s", after.log.text);
    ck_assert_str_eq(j->meta.job_class, "high");
    ck_assert_msg(strncmp(j->meta.class_source, "auto: predicted", 15) == 0, "%s",
                  j->meta.class_source);
    ck_assert(j->unlabelled);
    ck_assert(j->meta.prediction.known && j->meta.prediction.sensitive); /* the fields too */
    np_test_daemon_fini(&after);
}
END_TEST

/* The model is loaded for class_default=auto, and for an order that ranks by prediction when
 * migration is on (its jobs' views carry the prediction); not otherwise. */
static const struct {
    bool auto_on, migration;
    const char *order;
    bool loaded;
} load_cases[] = {
    {false, true, "best-plus", false},  {false, true, "predicted", true},
    {false, false, "predicted", false}, {true, true, "best-plus", true},
    {true, false, "best-plus", true},
};

START_TEST(test_model_loaded_for)
{
    t.d->cfg.class_default_auto = load_cases[_i].auto_on;
    t.d->cfg.migration = load_cases[_i].migration;
    snprintf(t.d->cfg.migration_order, sizeof(t.d->cfg.migration_order), "%s",
             load_cases[_i].order);
    use_table_copy(0644);
    auto_class_load(t.d);
    ck_assert_msg(t.d->sens_loaded == load_cases[_i].loaded, "auto %d migration %d order %s",
                  load_cases[_i].auto_on, load_cases[_i].migration, load_cases[_i].order);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_auto_class");
    TCase *tc = tcase_create("auto_class");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_auto_class, 0, sizeof(cases) / sizeof(cases[0]));
    tcase_add_test(tc, test_source_survives_restart);
    tcase_add_loop_test(tc, test_model_loaded_for, 0, sizeof(load_cases) / sizeof(load_cases[0]));
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
