/*
 * numaplaced's step registry: the keyed index over many steps, and registry.json saved and read
 * back (a round trip through a temporary state directory; corrupt files start empty).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "np_daemon_test.h"

static struct np_daemon_job *bare_job(uint32_t job_id, uint32_t step_id)
{
    struct np_daemon_job *j = calloc(1, sizeof(*j));

    ck_assert_ptr_nonnull(j);
    np_step_figures_init(&j->stats);
    j->meta.job_id = job_id;
    j->meta.step_id = step_id;
    return j;
}

/* Steps per case: a power of two, so every odd stride below visits each key once. */
#define MANY 2048

/* Orders of insertion: the index must not depend on it. */
static const struct {
    const char *name;
    unsigned stride; /* i-th insert: key (i * stride) mod N */
} orders[] = {{"ascending", 1}, {"scattered", 7919}, {"descending", MANY - 1}};

START_TEST(insert_find_remove_many)
{
    struct np_registry r;
    unsigned prev_job = 0, prev_step = 0;

    registry_init(&r);
    for (unsigned i = 0; i < MANY; i++) {
        const unsigned k = (unsigned)(((unsigned long)i * orders[_i].stride) % MANY);
        /* two steps per job, the batch step's id is near UINT32_MAX */
        ck_assert_int_eq(registry_insert(&r, bare_job(1000 + k / 2, k % 2 ? NP_STEP_BATCH : k)), 0);
    }
    ck_assert_uint_eq(r.count, MANY);
    for (unsigned k = 0; k < MANY; k++) {
        const struct np_daemon_job *j = registry_find(&r, 1000 + k / 2, k % 2 ? NP_STEP_BATCH : k);
        ck_assert_msg(j != NULL, "%s: key %u lost", orders[_i].name, k);
        ck_assert_uint_eq(j->meta.job_id, 1000 + k / 2);
    }
    ck_assert_ptr_null(registry_find(&r, 999, 0));
    ck_assert_ptr_null(registry_find(&r, 1000, 1));
    /* in key order, for a stable registry.json and status */
    for (unsigned i = 0; i < r.count; i++) {
        const struct np_daemon_job *j = registry_at(&r, i);
        ck_assert(i == 0 || j->meta.job_id > prev_job ||
                  (j->meta.job_id == prev_job && j->meta.step_id > prev_step));
        prev_job = j->meta.job_id;
        prev_step = j->meta.step_id;
    }
    /* a step is there once */
    {
        struct np_daemon_job *dup = bare_job(1000, 0);
        ck_assert_int_eq(registry_insert(&r, dup), -EEXIST);
        ck_assert_int_eq(registry_remove(&r, dup), -ENOENT); /* same key, another job */
        job_free(dup);
    }
    /* remove every other key; the rest stay found */
    for (unsigned k = 0; k < MANY; k += 2) {
        struct np_daemon_job *j = registry_find(&r, 1000 + k / 2, k);
        ck_assert_int_eq(registry_remove(&r, j), 0);
        ck_assert_int_eq(registry_remove(&r, j), -ENOENT);
        job_free(j);
    }
    ck_assert_uint_eq(r.count, MANY / 2);
    for (unsigned k = 0; k < MANY; k++)
        ck_assert((registry_find(&r, 1000 + k / 2, k % 2 ? NP_STEP_BATCH : k) != NULL) ==
                  (k % 2 == 1));
    registry_fini(&r);
    ck_assert_uint_eq(r.count, 0);
}
END_TEST

START_TEST(save_then_restore)
{
    struct np_test_daemon a, b;
    struct np_err err = {0};
    struct np_daemon_job *j, *gone;
    const uid_t uid = getuid();

    np_test_daemon_init(&a);
    j = job_new(a.d, 42, 0, uid, "0-1", "local", "low", &err);
    ck_assert_msg(j != NULL, "%s", err.msg);
    ck_assert_int_eq(np_sampler_add_task(&j->sampler, NP_TEST_LIVE_PID, &err), 0);
    json_array_append_new(j->tasks, json_pack("{s:i, s:i, s:s}", "task", 0, "pid", NP_TEST_LIVE_PID,
                                              "policy", "local"));
    job_set_class(j, NP_CLASS_HIGH); /* as an administrator would */
    gone = job_new(a.d, 43, NP_STEP_BATCH, uid, "", "", "high", &err);
    ck_assert_ptr_nonnull(gone); /* no task: it ended while the helper was down */
    registry_save(a.d);
    ck_assert_uint_eq(a.log.errors, 0);

    np_test_daemon_init(&b);
    snprintf(b.d->cfg.state_dir, sizeof(b.d->cfg.state_dir), "%s", a.d->cfg.state_dir);
    registry_restore(b.d);
    ck_assert_msg(b.log.errors == 0, "%s", b.log.text);
    ck_assert_uint_eq(b.d->registry.count, 1);
    j = registry_find(&b.d->registry, 42, 0);
    ck_assert_ptr_nonnull(j);
    ck_assert_uint_eq(j->meta.uid, uid);
    ck_assert_str_eq(j->meta.cpus, "0-1");
    ck_assert_str_eq(j->meta.policy_requested, "local");
    ck_assert_str_eq(j->meta.sensitivity, "low");
    ck_assert_int_eq(j->job_class, NP_CLASS_HIGH); /* the administrator's class survives */
    ck_assert_str_eq(j->meta.job_class, "high");
    ck_assert_uint_eq(j->sampler.ntasks, 1);
    ck_assert_int_eq(j->sampler.tasks[0].pid, NP_TEST_LIVE_PID);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(j->tasks, 0), "policy")),
                     "local");
    /* the step that ended meanwhile got its (incomplete) report and is not tracked */
    ck_assert_ptr_null(registry_find(&b.d->registry, 43, NP_STEP_BATCH));
    ck_assert(np_test_report_exists(&b, "43.batch"));
    ck_assert_ptr_nonnull(strstr(b.log.text, "1 step(s) still running restored"));
    /* the restore saved the registry again, without the ended step */
    {
        char path[2048];
        json_t *saved;
        snprintf(path, sizeof(path), "%s/registry.json", a.d->cfg.state_dir);
        saved = json_load_file(path, 0, NULL);
        ck_assert_ptr_nonnull(saved);
        ck_assert_uint_eq(json_array_size(json_object_get(saved, "jobs")), 1);
        json_decref(saved);
    }
    np_test_daemon_fini(&b);
    np_test_daemon_fini(&a);
}
END_TEST

/* A full or read-only state directory fails every save (each registration, each step's end): the
 * failure is said once, and its end too. */
START_TEST(failed_saves_logged_once)
{
    struct np_test_daemon t;
    char path[1200];

    np_test_daemon_init(&t);
    ck_assert_int_eq(rmdir(t.d->cfg.state_dir), 0);
    for (int i = 0; i < 5; i++)
        registry_save(t.d);
    ck_assert_uint_eq(t.log.errors, 1);
    ck_assert_ptr_nonnull(strstr(t.log.text, "cannot save the registry to"));
    ck_assert_int_eq(mkdir(t.d->cfg.state_dir, 0700), 0);
    registry_save(t.d);
    registry_save(t.d);
    snprintf(path, sizeof(path), "%s/registry.json", t.d->cfg.state_dir);
    ck_assert_int_eq(access(path, F_OK), 0);
    ck_assert_ptr_nonnull(strstr(t.log.text, "registry saved to"));
    ck_assert_ptr_null(strstr(strstr(t.log.text, "registry saved to") + 1, "registry saved to"));
    np_test_daemon_fini(&t);
}
END_TEST

/* A task sending `applied` with alternating policies in a loop, all within one interval (no
 * tick): the journal stays within its bound, registry.json is written far less than once per
 * request, and a restart still gets the last policy. */
START_TEST(journal_bounded_within_an_interval)
{
    enum { REQUESTS = 4000 };
    static const char *const policies[] = {"local", "interleave"};
    struct np_test_daemon a, b;
    struct np_err err = {0};
    struct np_daemon_job *j;
    char path[2048];
    struct stat st;
    off_t largest = 0;
    size_t bound;

    np_test_daemon_init(&a);
    /* a few other steps, so registry.json is not trivially small */
    for (uint32_t job = 1; job <= 20; job++)
        ck_assert_ptr_nonnull(job_new(a.d, job, 0, getuid(), "0", "local", "low", &err));
    j = job_new(a.d, 42, 0, getuid(), "0-1", "local", "low", &err);
    ck_assert_msg(j != NULL, "%s", err.msg);
    ck_assert_int_eq(np_sampler_add_task(&j->sampler, NP_TEST_LIVE_PID, &err), 0);
    json_array_append_new(j->tasks, json_pack("{s:i, s:i, s:s}", "task", 0, "pid", NP_TEST_LIVE_PID,
                                              "policy", "local"));
    registry_save(a.d);
    snprintf(path, sizeof(path), "%s/registry.journal", a.d->cfg.state_dir);
    for (int i = 0; i < REQUESTS; i++) {
        json_object_set_new(json_array_get(j->tasks, 0), "policy", json_string(policies[i % 2]));
        registry_note(a.d, j);
        if (stat(path, &st) == 0 && st.st_size > largest)
            largest = st.st_size;
    }
    bound = a.d->registry.snapshot_bytes * 2 > REGISTRY_JOURNAL_MIN_BYTES
                ? a.d->registry.snapshot_bytes * 2
                : REGISTRY_JOURNAL_MIN_BYTES;
    ck_assert_msg((size_t)largest <= bound, "the journal grew to %lld bytes, over %zu",
                  (long long)largest, bound);
    ck_assert_msg(a.d->registry.saves * 50 < REQUESTS, "%lu saves for %d requests",
                  a.d->registry.saves, REQUESTS);
    ck_assert_uint_eq(a.log.errors, 0);

    np_test_daemon_init(&b);
    snprintf(b.d->cfg.state_dir, sizeof(b.d->cfg.state_dir), "%s", a.d->cfg.state_dir);
    registry_restore(b.d);
    ck_assert_msg(b.log.errors == 0, "%s", b.log.text);
    j = registry_find(&b.d->registry, 42, 0);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(j->tasks, 0), "policy")),
                     policies[(REQUESTS - 1) % 2]);
    np_test_daemon_fini(&b);
    np_test_daemon_fini(&a);
}
END_TEST

/* A restart that finds steps ended while it was down writes their end lines while the old
 * journal still holds steps not restored yet: no fold into registry.json before the restore is
 * done (a crash then would lose those steps), one save at its end. */
START_TEST(no_fold_mid_restore)
{
    enum { STEPS = 3 };
    struct np_test_daemon a, b;
    struct np_err err = {0};

    np_test_daemon_init(&a);
    for (uint32_t job = 1; job <= STEPS; job++) {
        struct np_daemon_job *j = job_new(a.d, job, 0, getuid(), "0", "local", "low", &err);
        ck_assert_msg(j != NULL, "%s", err.msg);
        registry_note(a.d, j); /* registered; no task alive: they end at the restore */
    }
    np_test_daemon_init(&b);
    snprintf(b.d->cfg.state_dir, sizeof(b.d->cfg.state_dir), "%s", a.d->cfg.state_dir);
    b.d->registry.journal_bytes = REGISTRY_JOURNAL_MIN_BYTES; /* the next line passes the bound */
    registry_restore(b.d);
    ck_assert_msg(b.log.errors == 0, "%s", b.log.text);
    ck_assert_ptr_nonnull(strstr(b.log.text, "3 ended while the helper was down"));
    ck_assert_msg(b.d->registry.saves == 1, "%lu saves during the restore", b.d->registry.saves);
    np_test_daemon_fini(&b);
    np_test_daemon_fini(&a);
}
END_TEST

START_TEST(no_file_starts_empty_quietly)
{
    struct np_test_daemon t;

    np_test_daemon_init(&t);
    registry_restore(t.d);
    ck_assert_uint_eq(t.d->registry.count, 0);
    ck_assert_uint_eq(t.log.errors, 0);
    np_test_daemon_fini(&t);
}
END_TEST

/* Each a registry.json that must start the helper empty, saying why. */
static const struct {
    const char *text, *said;
} corrupt[] = {
    {"{\"schema\": \"numaplace.state/1\", \"jobs\": [", "is unreadable"},
    {"", "is unreadable"},
    {"[1, 2, 3]", "is unreadable"},
    {"{\"schema\": \"numaplace.state/2\", \"jobs\": []}", "schema is not numaplace.state/1"},
    {"{\"schema\": \"numaplace.state/1\", \"jobs\": {\"job\": 1}}", "is not an array"},
    {"{\"schema\": \"numaplace.state/1\", \"jobs\": [{\"job\": \"42\", \"step\": 0, \"uid\": 0}]}",
     "step 0 skipped"},
    {"{\"schema\": \"numaplace.state/1\", \"jobs\": [{\"step\": 0, \"uid\": 0, \"pids\": [300]}]}",
     "step 0 skipped"},
};

START_TEST(corrupt_file_starts_empty)
{
    struct np_test_daemon t;
    char path[2048];
    FILE *f;

    np_test_daemon_init(&t);
    snprintf(path, sizeof(path), "%s/registry.json", t.d->cfg.state_dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(corrupt[_i].text, f);
    fclose(f);
    registry_restore(t.d);
    ck_assert_uint_eq(t.d->registry.count, 0);
    ck_assert_uint_ge(t.log.errors, 1);
    ck_assert_msg(strstr(t.log.text, corrupt[_i].said) != NULL, "case %d said: %s", _i, t.log.text);
    np_test_daemon_fini(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_registry");
    TCase *tc = tcase_create("index");

    tcase_set_timeout(tc, 60); /* thousands of jobs: slow under the sanitizers */
    tcase_add_loop_test(tc, insert_find_remove_many, 0, (int)(sizeof(orders) / sizeof(orders[0])));
    suite_add_tcase(s, tc);
    tc = tcase_create("state");
    tcase_add_test(tc, save_then_restore);
    tcase_add_test(tc, failed_saves_logged_once);
    tcase_add_test(tc, journal_bounded_within_an_interval);
    tcase_add_test(tc, no_fold_mid_restore);
    tcase_add_test(tc, no_file_starts_empty_quietly);
    tcase_add_loop_test(tc, corrupt_file_starts_empty, 0,
                        (int)(sizeof(corrupt) / sizeof(corrupt[0])));
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
