/*
 * np_output_file (a file root's command writes at a name a user may have planted things at):
 * the mode follows the umask, a temporary left by a writer killed before its rename is removed
 * at the next write (one still being written is not), and the temporary is closed even when
 * its flush fails.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "np_test.h"
#include "numaplace/output_file.h"

static char dir[64], target[128];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/np-output-file.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(target, sizeof(target), "%s/plot.svg", dir);
}

static void teardown(void)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void write_it(void)
{
    struct np_output_file o;
    struct np_err err = {0};

    ck_assert_msg(np_output_file_open(&o, target, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(write(o.fd, "x", 1), 1);
    ck_assert_msg(np_output_file_commit(&o, &err) == 0, "%s", err.msg);
}

static const struct {
    mode_t umask, want;
} modes[] = {{022, 0644}, {077, 0600}, {027, 0640}, {0, 0644}};

START_TEST(mode_follows_the_umask)
{
    struct stat st;
    const mode_t old = umask(modes[_i].umask);

    write_it();
    umask(old);
    ck_assert_int_eq(stat(target, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, modes[_i].want);
}
END_TEST

/* A writer killed before its rename left .plot.svg.PID.tmp: the next write removes it. One whose
 * writer still holds it (its lock), another name's or a link are left alone. */
START_TEST(stale_temporary_is_removed)
{
    char stale[160], live[160], other[160], link[160];
    int live_fd, fd;
    struct stat st;

    snprintf(stale, sizeof(stale), "%s/.plot.svg.4000001.tmp", dir);
    snprintf(live, sizeof(live), "%s/.plot.svg.4000002.tmp", dir);
    snprintf(other, sizeof(other), "%s/.plot.png.4000001.tmp", dir);
    snprintf(link, sizeof(link), "%s/.plot.svg.4000003.tmp", dir);
    ck_assert_int_ge(fd = open(stale, O_CREAT | O_WRONLY, 0600), 0);
    close(fd);
    ck_assert_int_ge(fd = open(other, O_CREAT | O_WRONLY, 0600), 0);
    close(fd);
    ck_assert_int_ge(live_fd = open(live, O_CREAT | O_WRONLY, 0600), 0);
    ck_assert_int_eq(flock(live_fd, LOCK_EX), 0);
    ck_assert_int_eq(symlink(other, link), 0);
    write_it();
    ck_assert_int_eq(lstat(stale, &st), -1);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_int_eq(lstat(live, &st), 0);
    ck_assert_int_eq(lstat(other, &st), 0);
    ck_assert_int_eq(lstat(link, &st), 0);
    close(live_fd);
}
END_TEST

/* The one writer's temporary, as numaplaced's: ".plot.svg.PID.tmp" beside the name, locked
 * until the rename, and gone after it. */
START_TEST(temporary_is_the_one_writers)
{
    struct np_output_file o;
    struct np_err err = {0};
    char tmp[160];
    struct stat st;

    ck_assert_msg(np_output_file_open(&o, target, &err) == 0, "%s", err.msg);
    snprintf(tmp, sizeof(tmp), "%s/.plot.svg.%d.tmp", dir, (int)getpid());
    ck_assert_str_eq(o.tmp, strrchr(tmp, '/') + 1);
    ck_assert_int_eq(np_file_temp_pid(o.tmp), getpid());
    ck_assert_int_eq(lstat(tmp, &st), 0);
    ck_assert_msg(np_output_file_commit(&o, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(lstat(tmp, &st), -1);
    ck_assert_int_eq(lstat(target, &st), 0);
}
END_TEST

/* Something the writer cannot remove at its usual temporary name (another user's file in a shared
 * directory; here a directory, which unlink refuses) does not stop the write: a name nobody could
 * guess, still ending in our pid, is used instead. */
START_TEST(planted_temporary_does_not_block)
{
    struct np_output_file o;
    struct np_err err = {0};
    char planted[160];
    struct stat st;

    snprintf(planted, sizeof(planted), "%s/.plot.svg.%d.tmp", dir, (int)getpid());
    ck_assert_int_eq(mkdir(planted, 0700), 0);
    ck_assert_msg(np_output_file_open(&o, target, &err) == 0, "%s", err.msg);
    ck_assert_str_ne(o.tmp, strrchr(planted, '/') + 1);
    ck_assert_int_eq(np_file_temp_pid(o.tmp), getpid());
    ck_assert_msg(np_output_file_commit(&o, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(lstat(target, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_int_eq(rmdir(planted), 0);
}
END_TEST

/* A flush that fails (a pipe cannot be fsynced) still closes the descriptor. */
START_TEST(close_survives_a_failed_flush)
{
    struct np_output_file o;
    struct np_err err = {0};
    int pipe_fd[2], held;

    ck_assert_int_eq(np_output_file_open(&o, target, &err), 0);
    ck_assert_int_eq(pipe(pipe_fd), 0);
    held = o.fd;
    ck_assert_int_eq(dup2(pipe_fd[1], held), held); /* the temporary's number, now a pipe */
    close(pipe_fd[1]);
    ck_assert_int_lt(np_output_file_commit(&o, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot write"));
    errno = 0;
    ck_assert_int_eq(fcntl(held, F_GETFD), -1); /* closed, not leaked */
    ck_assert_int_eq(errno, EBADF);
    close(pipe_fd[0]);
}
END_TEST

static Suite *output_file_suite(void)
{
    Suite *s = suite_create("output_file");
    TCase *tc = tcase_create("output_file");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, mode_follows_the_umask, 0, (int)(sizeof(modes) / sizeof(modes[0])));
    tcase_add_test(tc, stale_temporary_is_removed);
    tcase_add_test(tc, temporary_is_the_one_writers);
    tcase_add_test(tc, planted_temporary_does_not_block);
    tcase_add_test(tc, close_survives_a_failed_flush);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return np_test_run(output_file_suite());
}
