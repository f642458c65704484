/*
 * The sampler narrows a step's registered CPUs to where its processes may run (their
 * Cpus_allowed_list, read at detail intervals only), on the fixture tree roots/affinity: CPUs 0-3
 * are node 0's and 4-7 node 1's in these cases. Unknown or disjoint affinity keeps the registered
 * CPUs.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/procfs.h"
#include "numaplace/sampler.h"

static const struct {
    const char *name;
    pid_t task;             /* the step's task in roots/affinity/proc */
    const char *registered; /* the step's CPUs as the plugin registered them */
    const char *effective;  /* after one detail interval */
} cases[] = {
    {"task 0-1 and child 2-3: node 0 only", 510, "0-7", "0-3"},
    {"two threads on CPUs 4 and 5", 550, "0-7", "4-5"},
    {"affinity wider than registered", 510, "1-2", "1-2"},
    {"empty Cpus_allowed_list: registered kept", 520, "0-7", "0-7"},
    {"no status file: registered kept", 530, "0-7", "0-7"},
    {"affinity outside the registered CPUs: registered kept", 540, "0-7", "0-7"},
    {"one process's list is not a list: registered kept", 560, "0-7", "0-7"},
    {"no Cpus_allowed_list line: registered kept", 570, "0-7", "0-7"},
};

/* Each case twice: files opened afresh, and kept open between readings (numaplaced's way when
 * it has descriptors to spare: the status file then comes from the process cache). */
START_TEST(test_effective_cpus)
{
    struct np_fd_budget budget = {.left = 64};
    const bool kept = _i % 2;
    struct np_sampler s;
    struct np_sample out;
    struct np_err err = {0};

    _i /= 2;
    ck_assert_int_eq(
        np_sampler_init(&s, np_test_root("affinity"), 0, NULL, NULL, 0, cases[_i].registered, &err),
        0);
    if (kept)
        np_sampler_set_fd_budget(&s, &budget);
    ck_assert_int_eq(np_sampler_add_task(&s, cases[_i].task, &err), 0);
    /* before any detail interval, and at intervals without one: what was registered */
    np_sampler_sample(&s, np_monotonic_s(), NULL, false, false, &out);
    ck_assert_str_eq(np_test_list(np_sampler_effective_cpus(&s)), cases[_i].registered);
    np_sampler_sample(&s, np_monotonic_s(), NULL, false, true, &out);
    ck_assert_msg(strcmp(np_test_list(np_sampler_effective_cpus(&s)), cases[_i].effective) == 0,
                  "%s%s: effective %s, expected %s", cases[_i].name, kept ? " (kept files)" : "",
                  np_test_list(np_sampler_effective_cpus(&s)), cases[_i].effective);
    ck_assert_str_eq(np_test_list(s.cpus), cases[_i].registered); /* kept beside it */
    np_sampler_fini(&s);
}
END_TEST

/* A step registered without CPUs takes its tasks' affinity at add time (unchanged). */
START_TEST(test_no_registered_cpus)
{
    struct np_sampler s;
    struct np_sample out;
    struct np_err err = {0};

    ck_assert_int_eq(np_sampler_init(&s, np_test_root("affinity"), 0, NULL, NULL, 0, "", &err), 0);
    ck_assert_int_eq(np_sampler_add_task(&s, 510, &err), 0);
    np_sampler_sample(&s, np_monotonic_s(), NULL, false, true, &out);
    ck_assert_str_eq(np_test_list(np_sampler_effective_cpus(&s)), "0-1");
    np_sampler_fini(&s);
}
END_TEST

/* The affinity comes from the files the context switches are read from, thread by thread. */
static void collect(const char *list, void *arg)
{
    char *lists = arg;
    const size_t len = strlen(lists);

    snprintf(lists + len, 128 - len, "%s;", list ? list : "(cut)");
}

START_TEST(test_ctxt_switches_give_the_lists)
{
    char lists[128] = "";
    uint64_t vol, invol;
    struct np_err err = {0};

    ck_assert_int_eq(
        np_proc_ctxt_switches(np_test_root("affinity"), 550, 2, &vol, &invol, collect, lists, &err),
        0);
    ck_assert_uint_eq(vol, 14);
    ck_assert(strcmp(lists, "4;5;") == 0 || strcmp(lists, "5;4;") == 0);
    lists[0] = '\0';
    ck_assert_int_eq(
        np_proc_ctxt_switches(np_test_root("affinity"), 511, 1, &vol, &invol, collect, lists, &err),
        0);
    ck_assert_str_eq(lists, "2-3;");
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("sampler_affinity");
    TCase *tc = tcase_create("sampler_affinity");

    tcase_add_loop_test(tc, test_effective_cpus, 0, 2 * (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, test_no_registered_cpus);
    tcase_add_test(tc, test_ctxt_switches_give_the_lists);
    suite_add_tcase(suite, tc);
    return np_test_run(suite);
}
