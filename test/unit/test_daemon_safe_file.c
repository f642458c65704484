/* numaplaced's writes: a planted symlink is never followed, a directory others
 * can write or a symlinked one is refused, and a report still arrives whole. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mount.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <acl/libacl.h>
#include <sys/acl.h>

#include "np_daemon_test.h"
#include "daemon.h"
#include "safe_file.h"

static char dir[64], victim[128];

static void setup(void)
{
    FILE *f;

    snprintf(dir, sizeof(dir), "/tmp/np-safe.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(mkdir(strcat(strcpy(victim, dir), "/spool"), 0755), 0);
    snprintf(victim, sizeof(victim), "%s/victim", dir);
    f = fopen(victim, "w");
    fputs("root's file\n", f);
    fclose(f);
}

static void teardown(void)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void expect_file(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");

    ck_assert_msg(f != NULL, "%s is missing", path);
    ck_assert_uint_gt(fread(buf, 1, sizeof(buf) - 1, f), 0);
    fclose(f);
    ck_assert_str_eq(buf, text);
}

/* Where a hostile user plants a symlink to root's file before the write. */
static const char *const planted[] = {"r.json.tmp", ".r.json.tmp", "r.json"};

START_TEST(test_planted_symlink_is_not_followed)
{
    char spool[128], link[192], path[192];
    struct np_err err = {0};

    snprintf(spool, sizeof(spool), "%s/spool", dir);
    snprintf(link, sizeof(link), "%s/%s", spool, planted[_i]);
    ck_assert_int_eq(symlink(victim, link), 0);
    ck_assert_int_eq(safe_write(spool, "r.json", "report\n", 7, (uid_t)-1, 0600, &err), 0);
    expect_file(victim, "root's file\n");
    snprintf(path, sizeof(path), "%s/r.json", spool);
    expect_file(path, "report\n");
}
END_TEST

/* A kill -9 mid-write leaves ".NAME.PID.tmp": the next start removes those of other pids only. */
START_TEST(test_sweep_removes_stale_temporaries)
{
    static const char *const stale[] = {".1.0.host.json.99999.tmp", ".registry.json.1.tmp"};
    static const char *const kept[] = {"1.0.host.json", ".hidden", "x.1.tmp", ".a.tmp",
                                       ".b.12x.tmp"};
    char spool[128], path[256], mine[128];
    struct np_err err = {0};
    FILE *f;

    snprintf(spool, sizeof(spool), "%s/spool", dir);
    snprintf(mine, sizeof(mine), ".r.json.%d.tmp", (int)getpid());
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/%s", spool, stale[i]);
        ck_assert_ptr_nonnull(f = fopen(path, "w"));
        fclose(f);
    }
    for (size_t i = 0; i <= 5; i++) {
        snprintf(path, sizeof(path), "%s/%s", spool, i < 5 ? kept[i] : mine);
        ck_assert_ptr_nonnull(f = fopen(path, "w"));
        fclose(f);
    }
    /* a link is removed itself, never followed */
    snprintf(path, sizeof(path), "%s/.victim.77.tmp", spool);
    ck_assert_int_eq(symlink(victim, path), 0);
    ck_assert_int_eq(safe_dir_sweep(spool, &err), 3);
    expect_file(victim, "root's file\n");
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/%s", spool, stale[i]);
        ck_assert_msg(access(path, F_OK) != 0, "%s is still there", path);
    }
    for (size_t i = 0; i <= 5; i++) {
        snprintf(path, sizeof(path), "%s/%s", spool, i < 5 ? kept[i] : mine);
        ck_assert_msg(access(path, F_OK) == 0, "%s was removed", path);
    }
    ck_assert_int_eq(safe_dir_sweep("/nonexistent-np-dir", &err), -ENOENT);
}
END_TEST

START_TEST(test_unsafe_directories_are_refused)
{
    char spool[128], link[128], path[192];
    struct np_err err = {0};

    snprintf(spool, sizeof(spool), "%s/spool", dir);
    ck_assert_int_eq(chmod(spool, 0777), 0); /* world-writable */
    ck_assert_int_eq(safe_write(spool, "r.json", "x", 1, (uid_t)-1, 0600, &err), -EPERM);
    ck_assert_ptr_nonnull(strstr(err.msg, "0777"));
    snprintf(path, sizeof(path), "%s/r.json", spool);
    ck_assert_int_eq(access(path, F_OK), -1);
    ck_assert_int_eq(chmod(spool, 0775), 0); /* group-writable */
    ck_assert_int_eq(safe_write(spool, "r.json", "x", 1, (uid_t)-1, 0600, &err), -EPERM);
    ck_assert_int_eq(chmod(spool, 0755), 0);
    snprintf(link, sizeof(link), "%s/link", dir); /* a symlink to a good directory */
    ck_assert_int_eq(symlink(spool, link), 0);
    ck_assert_int_lt(safe_write(link, "r.json", "x", 1, (uid_t)-1, 0600, &err), 0);
    ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

/* Through the daemon: a world-writable spool gets no report, and says so. */
START_TEST(test_report_refused_in_open_spool)
{
    struct np_test_daemon t;
    struct np_daemon_job *j;
    struct np_err err = {0};

    np_test_daemon_init(&t);
    ck_assert_int_eq(chmod(t.d->cfg.spool_dir, 0777), 0);
    j = job_new(t.d, 7, 0, getuid(), "0", "local", "low", &err);
    ck_assert_ptr_nonnull(j);
    report_out_write(t.d, j, true);
    ck_assert_ptr_nonnull(strstr(t.log.text, "cannot write its report"));
    ck_assert_ptr_nonnull(strstr(t.log.text, "others cannot write"));
    np_test_daemon_fini(&t);
}
END_TEST

/* The filesystems a spool lives on: Debian's ext4 (/tmp here) and tmpfs. */
static const char *const acl_filesystems[] = {"/tmp", "/dev/shm"};

/* The report's user is in its ACL, read only; the file is the helper's, nobody else writes it. */
static void expect_reader_only(const char *path, uid_t reader)
{
    struct stat st;
    acl_t acl;
    acl_entry_t e;
    bool named = false;

    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_uid, geteuid());            /* not handed to the user */
    ck_assert_uint_eq(st.st_mode & 0077 & ~S_IRGRP, 0); /* group bits = the ACL mask: r at most */
    acl = acl_get_file(path, ACL_TYPE_ACCESS);
    ck_assert_ptr_nonnull(acl);
    for (int w = ACL_FIRST_ENTRY; acl_get_entry(acl, w, &e) == 1; w = ACL_NEXT_ENTRY) {
        acl_tag_t tag;
        acl_permset_t perms;
        ck_assert_int_eq(acl_get_tag_type(e, &tag), 0);
        ck_assert_int_eq(acl_get_permset(e, &perms), 0);
        if (tag != ACL_USER_OBJ)
            ck_assert_int_eq(acl_get_perm(perms, ACL_WRITE), 0);
        if (tag == ACL_USER) {
            uid_t *q = acl_get_qualifier(e);
            ck_assert_uint_eq(*q, reader);
            ck_assert_int_eq(acl_get_perm(perms, ACL_READ), 1);
            acl_free(q);
            named = true;
        }
    }
    acl_free(acl);
    ck_assert_msg(named, "%s: no ACL entry for uid %u", path, (unsigned)reader);
}

START_TEST(test_reader_gets_an_acl_entry_not_the_file)
{
    char base[96], spool[128], cmd[160];
    struct np_err err = {0};
    int rc;

    snprintf(base, sizeof(base), "%s/np-acl.XXXXXX", acl_filesystems[_i]);
    ck_assert_ptr_nonnull(mkdtemp(base));
    snprintf(spool, sizeof(spool), "%s", base);
    rc = safe_write(spool, "r.json", "report\n", 7, 54321, 0600, &err);
    if (rc == SAFE_WRITE_NO_ACL) {
        fprintf(stderr, "SKIPPED: %s refuses POSIX ACLs: the reader case is not tested there\n",
                acl_filesystems[_i]);
    } else {
        char path[192];
        ck_assert_msg(rc == 0, "%s", err.msg);
        snprintf(path, sizeof(path), "%s/r.json", spool);
        expect_reader_only(path, 54321);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Through the daemon: a step's report is the helper's, its user reads it through the ACL. */
START_TEST(test_report_is_the_helpers)
{
    struct np_test_daemon t;
    struct np_daemon_job *j;
    struct np_err err = {0};
    char path[1200];

    np_test_daemon_init(&t);
    j = job_new(t.d, 8, 0, 54321, "0", "local", "low", &err);
    ck_assert_ptr_nonnull(j);
    report_out_write(t.d, j, true);
    snprintf(path, sizeof(path), "%s/8.0.testhost.json", t.d->cfg.spool_dir);
    if (strstr(t.log.text, "refuses POSIX ACLs"))
        fprintf(stderr, "SKIPPED: %s refuses POSIX ACLs\n", t.d->cfg.spool_dir);
    else
        expect_reader_only(path, 54321);
    np_test_daemon_fini(&t);
}
END_TEST

/* A spool whose filesystem refuses ACLs (ramfs has no xattrs): reports stay root-only, and one
 * log line per spool says so. Needs to mount: skipped loudly where the test may not. */
START_TEST(test_spool_without_acls)
{
    struct np_test_daemon t;
    struct np_err err = {0};
    char path[1200];
    struct stat st;
    const char *said;

    np_test_daemon_init(&t);
    /* in a mount namespace of this test's own (check forks each test): nothing to clean up */
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("np-test", t.d->cfg.spool_dir, "ramfs", 0, "mode=0755") < 0) {
        fprintf(stderr, "SKIPPED: cannot mount a ramfs spool (%s): the no-ACL case is not tested\n",
                strerror(errno));
        np_test_daemon_fini(&t);
        return;
    }
    for (uint32_t job = 1; job <= 2; job++) {
        struct np_daemon_job *j = job_new(t.d, job, 0, 54321, "0", "local", "low", &err);
        ck_assert_ptr_nonnull(j);
        report_out_write(t.d, j, true);
        snprintf(path, sizeof(path), "%s/%u.0.testhost.json", t.d->cfg.spool_dir, job);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_uid, geteuid());
        ck_assert_uint_eq(st.st_mode & 07777, 0600); /* root-only: never handed to the user */
    }
    said = strstr(t.log.text, "refuses POSIX ACLs");
    ck_assert_msg(said != NULL, "%s", t.log.text);
    ck_assert_ptr_null(strstr(said + 1, "refuses POSIX ACLs")); /* once per spool */
    ck_assert_ptr_nonnull(strstr(said, "readable by root only"));
    umount2(t.d->cfg.spool_dir, MNT_DETACH);
    np_test_daemon_fini(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_safe_file");
    TCase *tc = tcase_create("safe_file");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_planted_symlink_is_not_followed, 0,
                        (int)(sizeof(planted) / sizeof(planted[0])));
    tcase_add_test(tc, test_sweep_removes_stale_temporaries);
    tcase_add_test(tc, test_unsafe_directories_are_refused);
    tcase_add_test(tc, test_report_refused_in_open_spool);
    tcase_add_loop_test(tc, test_reader_gets_an_acl_entry_not_the_file, 0,
                        (int)(sizeof(acl_filesystems) / sizeof(acl_filesystems[0])));
    tcase_add_test(tc, test_report_is_the_helpers);
    tcase_add_test(tc, test_spool_without_acls);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
