/* The parts of job summaries waiting for Slurm accounting (cli/store_pending.h): root's 0700
 * directory, atomic 0600 files, one process per job (flock), removed once stored, the count
 * bounded (oldest job dropped), stray names ignored, a corrupt file refused. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "np_test.h"
#include "store_pending.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static char spool[64];

static void make_spool(void)
{
    snprintf(spool, sizeof(spool), "/tmp/np-pending-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(spool));
    chmod(spool, 0755);
}

static void remove_spool(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", spool);
    ck_assert_int_eq(system(cmd), 0);
}

static json_t *part_of(unsigned job)
{
    return json_pack("{s:s, s:i, s:{}}", "schema", "numaplace.summary/1", "job_id", job, "nodes");
}

START_TEST(test_save_take_release)
{
    struct np_err err = {0};
    struct stat st;
    char path[128];
    json_t *part = part_of(42), *back = NULL;
    int dirfd, fd, other;

    make_spool();
    ck_assert_int_eq(store_pending_open(spool, false, &err), -ENOENT); /* not made unasked */
    dirfd = store_pending_open(spool, true, &err);
    ck_assert_int_ge(dirfd, 0);
    snprintf(path, sizeof(path), "%s/pending", spool);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0700);
    ck_assert_int_eq(store_pending_save(dirfd, 42, part, NULL, &err), 0);
    snprintf(path, sizeof(path), "%s/pending/42.json", spool);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0600);
    ck_assert_uint_eq(st.st_uid, geteuid());

    fd = store_pending_take(dirfd, 42, &err);
    ck_assert_int_ge(fd, 0);
    other = store_pending_take(dirfd, 42, &err); /* a second store of the same job */
    ck_assert_int_eq(other, -EBUSY);
    ck_assert_int_eq(store_pending_load(fd, &back, &err), 0);
    ck_assert(json_equal(back, part));
    json_decref(back);
    store_pending_release(dirfd, 42, fd, false); /* not stored: stays */
    ck_assert_int_eq(stat(path, &st), 0);
    fd = store_pending_take(dirfd, 42, &err);
    ck_assert_int_ge(fd, 0);
    /* Another store of the job saved a newer part meanwhile: that one stays. */
    ck_assert_int_eq(store_pending_save(dirfd, 42, part, NULL, &err), 0);
    store_pending_release(dirfd, 42, fd, true);
    ck_assert_int_eq(stat(path, &st), 0);
    fd = store_pending_take(dirfd, 42, &err);
    ck_assert_int_ge(fd, 0);
    store_pending_release(dirfd, 42, fd, true); /* stored: gone */
    ck_assert_int_eq(stat(path, &st), -1);
    ck_assert_int_eq(store_pending_take(dirfd, 42, &err), -ENOENT);
    close(dirfd);
    json_decref(part);
    remove_spool();
}
END_TEST

START_TEST(test_bounded_count)
{
    enum { EXTRA = 3 };
    struct np_err err = {0};
    uint32_t jobs[STORE_PENDING_MAX_FILES + 8];
    json_t *part = part_of(1);
    int dirfd, n;

    make_spool();
    dirfd = store_pending_open(spool, true, &err);
    ck_assert_int_ge(dirfd, 0);
    /* The first ones planted plainly (a save flushes to disk: 512 of them take seconds). */
    for (uint32_t job = 1; job <= STORE_PENDING_MAX_FILES; job++) {
        char path[160];
        FILE *f;
        snprintf(path, sizeof(path), "%s/pending/%u.json", spool, job);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs("{}", f);
        fclose(f);
    }
    for (uint32_t job = STORE_PENDING_MAX_FILES + 1; job <= STORE_PENDING_MAX_FILES + EXTRA; job++)
        ck_assert_int_eq(store_pending_save(dirfd, job, part, NULL, &err), 0);
    n = store_pending_list(dirfd, jobs, N(jobs), &err);
    ck_assert_int_eq(n, STORE_PENDING_MAX_FILES);
    ck_assert_uint_eq(jobs[0], EXTRA + 1); /* the oldest went */
    ck_assert_uint_eq(jobs[n - 1], STORE_PENDING_MAX_FILES + EXTRA);
    close(dirfd);
    json_decref(part);
    remove_spool();
}
END_TEST

/* Names the list must skip: temporary files of the writer, strays, job 0. */
static const char *const stray_names[] = {".7.json.123.tmp", "abc", "0.json", "7.json.bak",
                                          "07.json"};

START_TEST(test_list_skips_strays)
{
    struct np_err err = {0};
    uint32_t jobs[4];
    char path[160];
    json_t *part = part_of(7);
    FILE *f;
    int dirfd;

    make_spool();
    dirfd = store_pending_open(spool, true, &err);
    ck_assert_int_eq(store_pending_save(dirfd, 7, part, NULL, &err), 0);
    snprintf(path, sizeof(path), "%s/pending/%s", spool, stray_names[_i]);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(store_pending_list(dirfd, jobs, N(jobs), &err), 1);
    ck_assert_uint_eq(jobs[0], 7);
    close(dirfd);
    json_decref(part);
    remove_spool();
}
END_TEST

START_TEST(test_refusals)
{
    struct np_err err = {0};
    char path[128];
    json_t *part = NULL;
    FILE *f;
    int dirfd, fd;

    make_spool();
    dirfd = store_pending_open(spool, true, &err);
    snprintf(path, sizeof(path), "%s/pending/9.json", spool);
    f = fopen(path, "w");
    fputs("not json", f);
    fclose(f);
    fd = store_pending_take(dirfd, 9, &err);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(store_pending_load(fd, &part, &err), -EBADMSG);
    ck_assert_ptr_null(part);
    store_pending_release(dirfd, 9, fd, false);
    close(dirfd);
    /* A directory others may write is never used: a planted file could be swapped. */
    snprintf(path, sizeof(path), "%s/pending", spool);
    chmod(path, 0777);
    ck_assert_int_eq(store_pending_open(spool, true, &err), -EPERM);
    ck_assert_ptr_nonnull(strstr(err.msg, "0777"));
    remove_spool();
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("cli_store_pending");
    TCase *tc = tcase_create("pending");

    tcase_add_test(tc, test_save_take_release);
    tcase_add_test(tc, test_bounded_count);
    tcase_add_loop_test(tc, test_list_skips_strays, 0, N(stray_names));
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(suite, tc);
    return np_test_run(suite);
}
