/*
 * numaplaced's descriptors (fd_budget.c): the reserve no step may take, the perf budget above
 * it, the exact count of what is open, and what op_register does at each verdict: refuse
 * naming the budget, run a new step on /proc alone, or take a running step's perf counters away
 * and say so in status.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "ops.h"
#include "np_daemon_test.h"

static struct np_test_daemon t;

static void setup(void)
{
    np_test_daemon_init(&t);
}

static void teardown(void)
{
    np_test_daemon_fini(&t);
}

/* The reserve covers every client and scraper slot and still leaves a margin. */
START_TEST(reserve_covers_the_slots)
{
    ck_assert_int_gt(NPD_FD_RESERVE, NPD_MAX_CLIENTS + NPD_HTTP_MAX_CONNECTIONS + NPD_FD_SAVES);
    ck_assert_int_ge(NPD_FD_RESERVE - NPD_MAX_CLIENTS - NPD_HTTP_MAX_CONNECTIONS, 32);
}
END_TEST

static const struct {
    long open, reserve, limit, kept_left, perf_need;
    enum fd_verdict want;
} verdicts[] = {
    {10, NPD_FD_RESERVE, 1000, 0, 6, FD_OK},
    {10, NPD_FD_RESERVE, 0, 0, 6, FD_OK}, /* limit unknown: nothing checked */
    {1000 - NPD_FD_RESERVE, NPD_FD_RESERVE, 1000, 0, 0, FD_REFUSE},
    {1000 - NPD_FD_RESERVE - 1, NPD_FD_RESERVE, 1000, 0, 0, FD_OK}, /* /proc needs none kept */
    {1000 - NPD_FD_RESERVE - 6, NPD_FD_RESERVE, 1000, 0, 6, FD_OK}, /* exactly fits */
    {1000 - NPD_FD_RESERVE - 5, NPD_FD_RESERVE, 1000, 0, 6, FD_NO_PERF},
    {1000 - NPD_FD_RESERVE - 106, NPD_FD_RESERVE, 1000, 100, 6, FD_OK},
    {1000 - NPD_FD_RESERVE - 105, NPD_FD_RESERVE, 1000, 100, 6, FD_NO_PERF}, /* kept files first */
    {40, NPD_FD_RESERVE, 256, 0, 6, FD_OK},
    {256 - NPD_FD_RESERVE, NPD_FD_RESERVE, 256, 0, 6, FD_REFUSE},
    {300, NPD_FD_RESERVE, 256, 0, 6, FD_REFUSE},
    /* ten clients connected and the node's files open: in the count, no longer in the reserve */
    {256 - NPD_FD_RESERVE + 10, NPD_FD_RESERVE - 10, 256, 0, 0, FD_REFUSE},
    {256 - NPD_FD_RESERVE + 9, NPD_FD_RESERVE - 10, 256, 0, 0, FD_OK},
};

START_TEST(verdict_arithmetic)
{
    const struct fd_use u = {verdicts[_i].open, verdicts[_i].reserve, verdicts[_i].limit,
                             verdicts[_i].kept_left};

    ck_assert_int_eq(fd_verdict(&u, verdicts[_i].perf_need), verdicts[_i].want);
}
END_TEST

/* Every open descriptor counts, holes below them included: the lowest free number (the old
 * probe) would say the hole's number, 19 fewer than are open here. */
START_TEST(count_is_exact)
{
    const long before = fd_count_open("/proc/self/fd");
    int fds[20];

    ck_assert_int_gt(before, 2);
    for (int i = 0; i < 20; i++)
        ck_assert_int_ge(fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC), 0);
    close(fds[0]);
    ck_assert_int_eq(fd_count_open("/proc/self/fd"), before + 19);
    for (int i = 1; i < 20; i++)
        close(fds[i]);
    ck_assert_int_eq(fd_count_open("/proc/self/fd"), before);
    ck_assert_int_eq(fd_count_open("/nonexistent/fd"), -ENOENT);
    ck_assert_int_eq(fd_perf_need(0), 0);
    ck_assert_int_eq(fd_perf_need(NP_PERF_ALL_MASK), NP_PERF_NEVENTS);
}
END_TEST

static json_t *register_pid(uint32_t job_id)
{
    const struct np_peer peer = np_test_peer(1, 0, 0);
    struct np_task_reg r = {.job_id = job_id, .uid = 4242, .pid = NP_TEST_LIVE_PID};

    snprintf(r.cpus, sizeof(r.cpus), "0");
    snprintf(r.policy_requested, sizeof(r.policy_requested), "local");
    snprintf(r.sensitivity, sizeof(r.sensitivity), "low");
    return op_register(t.d, &peer, &r);
}

static long open_now(void)
{
    const long n = fd_count_open("/proc/self/fd");

    ck_assert_int_gt(n, 0);
    return n;
}

/* What is open of the reserve already is not counted twice. */
START_TEST(reserve_left_counts_what_is_open)
{
    ck_assert_int_eq(fd_reserve_left(t.d), NPD_FD_RESERVE);
    t.d->clients[3].fd = 0;
    t.d->clients[7].fd = 0;
    ck_assert_int_eq(fd_reserve_left(t.d), NPD_FD_RESERVE - 2);
    t.d->counters.stat_file.open = true;
    ck_assert_int_eq(fd_reserve_left(t.d), NPD_FD_RESERVE - 3);
    t.d->clients[3].fd = t.d->clients[7].fd = -1;
    t.d->counters.stat_file.open = false;
}
END_TEST

/* At the reserve, a registration is refused at once, naming the budget. */
START_TEST(register_refused_naming_the_budget)
{
    json_t *reply;

    t.d->fd_limit = open_now() + NPD_FD_RESERVE / 2;
    reply = register_pid(10);
    ck_assert(!np_test_reply_ok(reply));
    ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), "descriptor budget"));
    ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), "kept for reports"));
    ck_assert_uint_eq(t.d->registry.count, 0);
    json_decref(reply);
}
END_TEST

/* Room for the step but not for its perf counters: /proc alone, said in status. */
START_TEST(new_step_without_room_for_perf_runs_on_proc)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    json_t *reply, *status, *job;

    t.d->perf_mask = NP_PERF_ALL_MASK;
    t.d->fd_budget.left = 10;
    t.d->fd_limit = open_now() + NPD_FD_RESERVE + 10 + NP_PERF_NEVENTS - 1;
    reply = register_pid(10);
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
    ck_assert_str_eq(registry_at(&t.d->registry, 0)->meta.backends, "proc");
    ck_assert_uint_eq(registry_at(&t.d->registry, 0)->sampler.perf_mask, 0);
    status = op_status(t.d, &root, 10);
    job = json_array_get(json_object_get(status, "jobs"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(job, "backends")), "proc");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(job, "backends_reason")), "descriptor budget"));
    json_decref(status);
}
END_TEST

/* A running step whose next task's counters do not fit loses them all, and says so. */
START_TEST(running_step_degrades_to_proc)
{
    json_t *reply;
    struct np_daemon_job *j;

    t.d->perf_mask = NP_PERF_SOFTWARE_MASK;
    t.d->fd_limit = open_now() + 10000;
    reply = register_pid(10);
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
    j = registry_at(&t.d->registry, 0);
    ck_assert_str_eq(j->meta.backends, "perf,proc");
    ck_assert_str_eq(j->meta.backends_reason, "");
    t.d->fd_limit = open_now() + NPD_FD_RESERVE + 1;
    reply = register_pid(10); /* its next task (the same pid again: a retry) */
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
    ck_assert_str_eq(j->meta.backends, "proc");
    ck_assert_uint_eq(j->sampler.perf_mask, 0);
    ck_assert_ptr_nonnull(strstr(j->meta.backends_reason, "descriptor budget"));
    ck_assert_ptr_nonnull(strstr(t.log.text, "runs on /proc alone from now on"));
    for (unsigned i = 0; i < j->sampler.ntasks; i++)
        for (int e = 0; e < NP_PERF_NEVENTS; e++)
            ck_assert_int_lt(j->sampler.tasks[i].perf.fd[e], 0);
}
END_TEST

static Suite *fd_budget_suite(void)
{
    Suite *s = suite_create("daemon_fd_budget");
    TCase *tc = tcase_create("budget");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, reserve_covers_the_slots);
    tcase_add_loop_test(tc, verdict_arithmetic, 0, (int)(sizeof(verdicts) / sizeof(verdicts[0])));
    tcase_add_test(tc, count_is_exact);
    tcase_add_test(tc, reserve_left_counts_what_is_open);
    tcase_add_test(tc, register_refused_naming_the_budget);
    tcase_add_test(tc, new_step_without_room_for_perf_runs_on_proc);
    tcase_add_test(tc, running_step_degrades_to_proc);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return np_test_run(fd_budget_suite());
}
