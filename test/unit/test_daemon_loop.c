/*
 * The sampling timer's deadlines: whole multiples of the interval since the epoch on the wall
 * clock, so every node of a job samples at the same moments whenever each helper started. The
 * order a round's requests are read in: oldest connection first, whatever the slots.
 */
#include <check.h>
#include <time.h>

#include "daemon.h"
#include "np_test.h"

static const struct {
    const char *name;
    struct timespec now;
    unsigned interval_ms;
    struct timespec deadline;
} deadline_cases[] = {
    {"1 s, mid-second", {1700000000, 400000000}, 1000, {1700000001, 0}},
    {"1 s, on the second: the next one", {1700000000, 0}, 1000, {1700000001, 0}},
    {"1 s, a nanosecond before", {1700000000, 999999999}, 1000, {1700000001, 0}},
    {"250 ms", {1700000000, 260000000}, 250, {1700000000, 500000000}},
    {"1.5 s: multiples since the epoch", {1, 600000000}, 1500, {3, 0}},
    {"1.5 s, later", {1700000001, 1}, 1500, {1700000002, 500000000}},
    {"10 s", {1700000003, 1}, 10000, {1700000010, 0}},
    {"0 ms is taken as 1 ms", {5, 1}, 0, {5, 1000000}},
};

START_TEST(deadline_is_the_next_multiple)
{
    const struct timespec got =
        loop_next_deadline(deadline_cases[_i].now, deadline_cases[_i].interval_ms);

    ck_assert_msg(got.tv_sec == deadline_cases[_i].deadline.tv_sec &&
                      got.tv_nsec == deadline_cases[_i].deadline.tv_nsec,
                  "%s: %lld.%09ld", deadline_cases[_i].name, (long long)got.tv_sec, got.tv_nsec);
}
END_TEST

/* Two helpers started at different moments share every deadline after both started. */
START_TEST(nodes_started_apart_agree)
{
    const struct timespec a = loop_next_deadline((struct timespec){1700000000, 123456789}, 1000);
    const struct timespec b = loop_next_deadline((struct timespec){1700000000, 987654321}, 1000);

    ck_assert(a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec);
}
END_TEST

/* A task's applied, on a connection accepted into a lower slot (freed meanwhile) than the one
 * slurmstepd registered the task on, is read after the registration: by age, not by slot. The
 * slot being written to, and the slots with nothing to read, are left out. */
START_TEST(requests_read_oldest_connection_first)
{
    struct np_daemon_client applied = {.since = 30.0}, registration = {.since = 10.0},
                            writing = {.since = 5.0, .out = (char *)"x"}, idle = {.since = 1.0},
                            status = {.since = 20.0};
    struct np_daemon_client *owner[] = {NULL, &applied, &writing, &idle, &status, &registration};
    const struct pollfd pfd[] = {
        {.revents = POLLIN}, {.revents = POLLIN}, {.revents = POLLOUT},
        {.revents = 0},      {.revents = POLLIN}, {.revents = POLLIN},
    };
    int order[6] = {-1, -1, -1, -1, -1, -1};

    ck_assert_int_eq(loop_read_order(owner, pfd, 1, 6, order), 3);
    ck_assert_int_eq(order[0], 5); /* the registration */
    ck_assert_int_eq(order[1], 4);
    ck_assert_int_eq(order[2], 1); /* the applied */
    ck_assert_int_eq(order[3], -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_loop");
    TCase *tc = tcase_create("deadline");

    tcase_add_loop_test(tc, deadline_is_the_next_multiple, 0,
                        (int)(sizeof(deadline_cases) / sizeof(deadline_cases[0])));
    tcase_add_test(tc, nodes_started_apart_agree);
    tcase_add_test(tc, requests_read_oldest_connection_first);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
