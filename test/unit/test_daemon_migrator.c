/*
 * numaplaced's migration worker (daemon/migrator.c): requests on views of this test's own
 * process, as dry runs, submitted, collected and cancelled. Nothing is moved.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "migrator.h"
#include "np_test.h"

#define GiB (1024ull * 1024ull * 1024ull)

/* Two nodes, one low job: this process, with @p pages on node 0 and its CPUs on node 1. */
static struct np_node_view *view_of_self(uint64_t pages)
{
    struct np_node_view *view = migrator_view_new(1);
    pid_t *pid = malloc(sizeof(*pid));

    ck_assert_ptr_nonnull(view);
    ck_assert_ptr_nonnull(pid);
    *pid = getpid();
    view->nnodes = 2;
    for (unsigned n = 0; n < 2; n++) {
        view->total_bytes[n] = 64 * GiB;
        view->free_bytes[n] = 32 * GiB;
        view->distance[n][n] = 10;
        view->distance[n][1 - n] = 21;
    }
    view->jobs[0] = (struct np_job_view){.id = 7ull << 16,
                                         .job_id = 7,
                                         .job_class = NP_CLASS_LOW,
                                         .cpu_nodes = 1u << 1,
                                         .pids = pid,
                                         .npids = 1,
                                         .bandwidth = 1e9};
    view->jobs[0].pages_on_node[0] = pages;
    view->njobs = 1;
    return view;
}

static void wait_done(struct migrator *m)
{
    struct pollfd pfd = {.fd = migrator_fd(m), .events = POLLIN};

    ck_assert_int_eq(poll(&pfd, 1, 20000), 1);
}

static const struct np_engine_config dry = {.dry_run = true};
static const struct np_request zero_to_one = {
    .src = 0, .dst = 1, .pages = 64, .trigger = NP_TRIGGER_ADMIN, .target_job = -1};

START_TEST(dry_run_with_nothing_movable)
{
    struct migrator *m;
    struct migrator_done done;
    struct np_node_view *view = view_of_self(0);

    ck_assert_int_eq(migrator_start(&m, 0, NULL), 0);
    ck_assert(!migrator_busy(m));
    ck_assert_int_eq(migrator_collect(m, &done), 0); /* nothing yet */
    ck_assert_int_eq(migrator_submit(m, view, &dry, &zero_to_one, 11), 0);
    ck_assert(migrator_busy(m));
    wait_done(m);
    ck_assert_int_eq(migrator_collect(m, &done), 1);
    ck_assert(!migrator_busy(m));
    ck_assert_uint_eq(done.tag, 11);
    ck_assert_int_eq(done.rc, 0);
    ck_assert_ptr_eq(done.view, view); /* the view it ran on comes back with the result */
    ck_assert(done.result.dry_run);
    ck_assert_uint_eq(done.result.candidates, 0);
    ck_assert_uint_eq(done.result.planned, 0);
    ck_assert_uint_eq(done.result.moved, 0);
    ck_assert_uint_eq(done.result.noutcomes, 0);
    ck_assert_ptr_nonnull(strstr(done.result.summary, "would move 0"));
    migrator_done_fini(&done);
    migrator_stop(m);
}
END_TEST

START_TEST(dry_run_plans_a_candidate)
{
    struct migrator *m;
    struct migrator_done done;

    ck_assert_int_eq(migrator_start(&m, 0, NULL), 0);
    ck_assert_int_eq(migrator_submit(m, view_of_self(64), &dry, &zero_to_one, 12), 0);
    /* one at a time: a second request waits in the daemon's queue */
    {
        struct np_node_view *second = view_of_self(64);
        ck_assert_int_eq(migrator_submit(m, second, &dry, &zero_to_one, 13), -EBUSY);
        migrator_view_free(second);
    }
    wait_done(m);
    ck_assert_int_eq(migrator_collect(m, &done), 1);
    ck_assert_int_eq(done.rc, 0);
    ck_assert(done.result.dry_run);
    ck_assert_uint_eq(done.result.candidates, 1);
    ck_assert_uint_eq(done.result.planned, 64);
    ck_assert_uint_eq(done.result.noutcomes, 1);
    ck_assert_uint_eq(done.result.outcomes[0].job_index, 0);
    ck_assert_uint_eq(done.result.outcomes[0].planned, 64);
    migrator_done_fini(&done);
    migrator_stop(m);
}
END_TEST

START_TEST(bad_request_comes_back_as_an_error)
{
    const struct np_request same = {.src = 1, .dst = 1, .pages = 1, .target_job = -1};
    struct migrator *m;
    struct migrator_done done;

    ck_assert_int_eq(migrator_start(&m, 0, NULL), 0);
    ck_assert_int_eq(migrator_submit(m, view_of_self(64), &dry, &same, 14), 0);
    wait_done(m);
    ck_assert_int_eq(migrator_collect(m, &done), 1);
    ck_assert_int_eq(done.rc, -EINVAL);
    ck_assert_ptr_nonnull(strstr(done.err.msg, "they must differ"));
    migrator_done_fini(&done);
    migrator_stop(m);
}
END_TEST

START_TEST(cancelled_request_stops_at_once)
{
    struct migrator *m;
    struct migrator_done done;

    ck_assert_int_eq(migrator_start(&m, 0, NULL), 0);
    migrator_cancel(m); /* as a stopping helper does */
    ck_assert_int_eq(migrator_submit(m, view_of_self(64), &dry, &zero_to_one, 15), 0);
    wait_done(m);
    ck_assert_int_eq(migrator_collect(m, &done), 1);
    ck_assert_int_eq(done.rc, 0);
    ck_assert(done.result.stopped);
    ck_assert_uint_eq(done.result.moved, 0);
    ck_assert_ptr_nonnull(strstr(done.result.summary, "stopped before its end"));
    migrator_done_fini(&done);
    migrator_stop(m);
}
END_TEST

START_TEST(stop_drops_an_uncollected_result)
{
    struct migrator *m;

    ck_assert_int_eq(migrator_start(&m, 0, NULL), 0);
    ck_assert_int_eq(migrator_submit(m, view_of_self(64), &dry, &zero_to_one, 16), 0);
    wait_done(m);
    migrator_stop(m); /* frees the result and its view: the sanitizers' leak check says so */
    migrator_stop(NULL);
    migrator_cancel(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_migrator");
    TCase *tc = tcase_create("worker");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, dry_run_with_nothing_movable);
    tcase_add_test(tc, dry_run_plans_a_candidate);
    tcase_add_test(tc, bad_request_comes_back_as_an_error);
    tcase_add_test(tc, cancelled_request_stops_at_once);
    tcase_add_test(tc, stop_drops_an_uncollected_result);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
