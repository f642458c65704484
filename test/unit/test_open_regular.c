/* np_open_regular: a named file is opened only when it is a regular file; anything else (a FIFO,
 * a directory, a device, a refused symlink) is refused before any open, which inotify would see. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "numaplace/output_file.h"

static char dir[] = "/tmp/np-open-regular-XXXXXX";

struct open_case {
    const char *name; /* under dir, or an absolute path */
    int no_follow;
    int expect;        /* 0: opened; else the -errno */
    const char *error; /* in the message, when refused */
};

static const struct open_case cases[] = {
    {"regular", 0, 0, NULL},
    {"regular", 1, 0, NULL},
    {"link-to-regular", 0, 0, NULL},
    {"link-to-regular", 1, -ELOOP, "symlink"},
    {"fifo", 0, -EINVAL, "not a regular file"},
    {"link-to-fifo", 0, -EINVAL, "not a regular file"},
    {"subdir", 0, -EINVAL, "not a regular file"},
    {"/dev/null", 0, -EINVAL, "not a regular file"},
    {"missing", 0, -ENOENT, "missing"},
};

static void make_tree(void)
{
    char p[PATH_MAX], t[PATH_MAX];
    FILE *f;

    if (!mkdtemp(dir)) /* before the runner: no ck_assert here */
        abort();
    snprintf(p, sizeof(p), "%s/regular", dir);
    if (!(f = fopen(p, "w")))
        abort();
    fputs("{}\n", f);
    fclose(f);
    snprintf(t, sizeof(t), "%s/link-to-regular", dir);
    if (symlink(p, t) != 0)
        abort();
    snprintf(p, sizeof(p), "%s/fifo", dir);
    if (mkfifo(p, 0600) != 0)
        abort();
    snprintf(t, sizeof(t), "%s/link-to-fifo", dir);
    if (symlink(p, t) != 0)
        abort();
    snprintf(p, sizeof(p), "%s/subdir", dir);
    if (mkdir(p, 0700) != 0)
        abort();
}

static void remove_tree(void)
{
    static const char *const names[] = {"regular", "link-to-regular", "fifo", "link-to-fifo",
                                        "subdir"};
    char p[PATH_MAX];

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
        (void)(strcmp(names[i], "subdir") == 0 ? rmdir(p) : unlink(p));
    }
    rmdir(dir);
}

/* 1 when inotify saw an open of the watched file. */
static int seen_open(int in)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    const ssize_t n = read(in, buf, sizeof(buf));

    for (ssize_t off = 0; off < n;) {
        const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
        if (ev->mask & IN_OPEN)
            return 1;
        off += (ssize_t)(sizeof(*ev) + ev->len);
    }
    return 0;
}

START_TEST(test_open_case)
{
    const struct open_case *c = &cases[_i];
    struct np_err err = {0};
    char path[PATH_MAX];
    const int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    int fd, watch = -1;

    if (c->name[0] == '/')
        snprintf(path, sizeof(path), "%s", c->name);
    else
        snprintf(path, sizeof(path), "%s/%s", dir, c->name);
    ck_assert_int_ge(in, 0);
    if (c->expect != -ENOENT)
        watch = inotify_add_watch(in, path, IN_OPEN); /* follows a symlink: watches its target */
    fd = np_open_regular(path, c->no_follow, &err);
    if (c->expect == 0) {
        ck_assert_msg(fd >= 0, "%s: %s", c->name, err.msg);
        close(fd);
    } else {
        ck_assert_int_eq(fd, c->expect);
        ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, c->error), "%s: '%s'", c->name,
                      err.msg);
        if (watch >=
            0) /* refused before an open: a FIFO's writer is not woken, a device untouched */
            ck_assert_msg(!seen_open(in), "%s was opened before it was refused", c->name);
    }
    close(in);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("open_regular");
    TCase *tc = tcase_create("open_regular");
    SRunner *sr;
    int failed;

    make_tree();
    tcase_add_loop_test(tc, test_open_case, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    remove_tree();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
