/* The daemon's program runner: no shell, bounded time. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "command.h"
#include "np_test.h"
#include "numaplace/sampler.h"

START_TEST(output_is_kept_without_a_shell)
{
    char *argv[] = {"printf", "%s|%s", "a b", "$HOME;", NULL};
    char out[64];

    ck_assert_int_eq(command_run(argv, 5000, out, sizeof(out), NULL), 0);
    ck_assert_str_eq(out, "a b|$HOME;"); /* no word splitting, no expansion */
}
END_TEST

START_TEST(long_output_is_cut)
{
    char *argv[] = {"seq", "1", "100000", NULL};
    char out[8];

    ck_assert_int_eq(command_run(argv, 5000, out, sizeof(out), NULL), 0);
    ck_assert_str_eq(out, "1\n2\n3\n4");
}
END_TEST

START_TEST(exit_status_is_returned)
{
    char *argv[] = {"false", NULL};
    char out[8];

    ck_assert_int_eq(command_run(argv, 5000, out, sizeof(out), NULL), 1);
}
END_TEST

START_TEST(missing_program_is_an_error)
{
    char *argv[] = {"numaplace-no-such-program", NULL};
    struct np_err err = {0};
    char out[8];

    ck_assert_int_lt(command_run(argv, 5000, out, sizeof(out), &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "numaplace-no-such-program"));
}
END_TEST

START_TEST(overrun_is_killed)
{
    char *argv[] = {"sleep", "30", NULL};
    struct np_err err = {0};
    const double t0 = np_monotonic_s();
    char out[8];

    ck_assert_int_eq(command_run(argv, 200, out, sizeof(out), &err), -ETIMEDOUT);
    ck_assert_double_lt(np_monotonic_s() - t0, 5.0);
    ck_assert_ptr_nonnull(strstr(err.msg, "ran over 200 ms"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_command");
    TCase *tc = tcase_create("run");

    tcase_add_test(tc, output_is_kept_without_a_shell);
    tcase_add_test(tc, long_output_is_cut);
    tcase_add_test(tc, exit_status_is_returned);
    tcase_add_test(tc, missing_program_is_an_error);
    tcase_add_test(tc, overrun_is_killed);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
