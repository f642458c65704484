/* The parts of job summaries waiting for Slurm accounting (cli/store.h): root's 0700
 * directory, atomic 0600 files, one process per job (flock), removed once stored, the count
 * bounded (oldest job dropped), stray names ignored, a corrupt file refused. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "np_test.h"
#include "store.h"

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

/* A store killed mid-write leaves ".JOB.json.PID.tmp": swept once its writer is
 * gone and it is a minute old; a live writer's, or a fresh one, stays. */
START_TEST(test_sweep_temporaries)
{
    static const struct {
        const char *pid; /* "dead": a process that ran and ended; "live": this test's parent */
        long age_s;
        bool swept;
    } temps[] = {{"dead", 3600, true}, {"dead", 0, false}, {"live", 3600, false}};
    struct np_err err = {0};
    char path[200], live[16], dead[16];
    struct timespec times[2] = {{0}, {0}};
    json_t *part = part_of(3);
    struct stat st;
    pid_t child;
    int dirfd;

    make_spool();
    dirfd = store_pending_open(spool, true, &err);
    ck_assert_int_ge(dirfd, 0);
    ck_assert_int_eq(store_pending_save(dirfd, 3, part, NULL, &err), 0);
    child = fork();
    if (child == 0)
        _exit(0);
    ck_assert_int_eq(waitpid(child, NULL, 0), child);
    snprintf(dead, sizeof(dead), "%d", (int)child);
    snprintf(live, sizeof(live), "%d", (int)getppid());
    for (int i = 0; i < N(temps); i++) {
        FILE *f;
        snprintf(path, sizeof(path), "%s/pending/.%d.json.%s.tmp", spool, 10 + i,
                 strcmp(temps[i].pid, "dead") == 0 ? dead : live);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs("{\"half", f);
        fclose(f);
        times[0].tv_sec = times[1].tv_sec = time(NULL) - temps[i].age_s;
        ck_assert_int_eq(utimensat(AT_FDCWD, path, times, 0), 0);
    }
    ck_assert_int_eq(store_pending_sweep(dirfd, NULL), 1);
    for (int i = 0; i < N(temps); i++) {
        snprintf(path, sizeof(path), "%s/pending/.%d.json.%s.tmp", spool, 10 + i,
                 strcmp(temps[i].pid, "dead") == 0 ? dead : live);
        ck_assert_msg((stat(path, &st) < 0) == temps[i].swept, "%s: swept %d", path,
                      temps[i].swept);
    }
    snprintf(path, sizeof(path), "%s/pending/3.json", spool);
    ck_assert_int_eq(stat(path, &st), 0); /* parts are not temporaries */
    close(dirfd);
    json_decref(part);
    remove_spool();
}
END_TEST

/* A second store of a job while another process holds an older part of it: the
 * newer part is saved and taken, never dropped; the holder's release leaves it. */
START_TEST(test_hold_while_older_held)
{
    struct np_err err = {0};
    struct stat st;
    char path[128];
    json_t *older = part_of(5), *newer = part_of(5), *back = NULL;
    int dirfd, held, mine;

    json_object_set_new(newer, "user", json_string("newer"));
    make_spool();
    dirfd = store_pending_open(spool, true, &err);
    ck_assert_int_eq(store_pending_save(dirfd, 5, older, NULL, &err), 0);
    held = store_pending_take(dirfd, 5, &err); /* `store --pending` is storing the older part */
    ck_assert_int_ge(held, 0);
    mine = store_pending_hold(dirfd, 5, newer, NULL, &err);
    ck_assert_msg(mine >= 0, "the newer part was not held: %d %s", mine, err.msg);
    ck_assert_int_eq(store_pending_load(mine, &back, &err), 0);
    ck_assert(json_equal(back, newer));
    json_decref(back);
    store_pending_release(dirfd, 5, held, true); /* the older part stored: the newer stays */
    snprintf(path, sizeof(path), "%s/pending/5.json", spool);
    ck_assert_int_eq(stat(path, &st), 0);
    store_pending_release(dirfd, 5, mine, true);
    ck_assert_int_eq(stat(path, &st), -1);
    close(dirfd);
    json_decref(older);
    json_decref(newer);
    remove_spool();
}
END_TEST

/* ---- a large job's parts for its one merge (store.h) ---- */

static json_t *node_part(unsigned job, unsigned uid, const char *node)
{
    return json_pack("{s:s, s:i, s:i, s:{s:{s:i, s:f}}}", "schema", "numaplace.summary/1", "job_id",
                     job, "uid", uid, "nodes", node, "step_count", 1, "duration_s", 10.0);
}

static void plant(const char *dir, const char *name, json_t *part, uid_t owner)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/7/%s", dir, name);
    ck_assert_int_eq(json_dump_file(part, path, 0), 0);
    chmod(path, 0640);
    if (owner != geteuid())
        ck_assert_int_eq(chown(path, owner, (gid_t)-1), 0);
    json_decref(part);
}

START_TEST(test_parts_merge_once)
{
    const unsigned uid = 1000;
    struct np_err err = {0};
    struct store_parts_job job, other;
    struct store_parts_found found;
    json_t *part, *merged = NULL, *again = NULL;
    char dir[128], path[256];
    uint32_t jobs[4];
    struct stat st;

    make_spool();
    snprintf(dir, sizeof(dir), "%s/parts", spool);
    ck_assert_int_eq(mkdir(dir, 0750), 0);
    for (int i = 1; i <= 2; i++) {
        char node[8];
        snprintf(node, sizeof(node), "n%d", i);
        part = node_part(7, uid, node);
        ck_assert_int_eq(store_parts_deposit(dir, 7, part, &err), 0);
        json_decref(part);
    }
    /* a part of two nodes, a name that is not a node's */
    part = node_part(7, uid, "n1");
    json_object_set(json_object_get(part, "nodes"), "n9",
                    json_object_get(json_object_get(part, "nodes"), "n1"));
    ck_assert_int_eq(store_parts_deposit(dir, 7, part, &err), -EINVAL);
    json_decref(part);
    part = node_part(7, uid, "../x");
    ck_assert_int_eq(store_parts_deposit(dir, 7, part, &err), -EINVAL);
    json_decref(part);
    snprintf(path, sizeof(path), "%s/7/n1.json", dir);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0640);
    /* left out: a part under another node's name, another user's, one root did not write */
    plant(dir, "n3.json", node_part(7, uid, "n4"), geteuid());
    plant(dir, "n5.json", node_part(7, 0, "n5"), geteuid());
    if (geteuid() == 0)
        plant(dir, "n6.json", node_part(7, uid, "n6"), 65534);
    ck_assert_int_eq(store_parts_count(dir, 7), geteuid() == 0 ? 5 : 4);
    ck_assert_int_eq(store_parts_list(dir, jobs, 4, &err), 1);
    ck_assert_uint_eq(jobs[0], 7);

    ck_assert_int_eq(store_parts_merge(dir, 7, uid, &job, &merged, &found, NULL, &err), 0);
    ck_assert_int_eq(found.parts, 2);
    ck_assert_int_eq(found.rejected, geteuid() == 0 ? 3 : 2);
    ck_assert_int_eq(json_object_size(json_object_get(merged, "nodes")), 2);
    ck_assert_ptr_nonnull(json_object_get(json_object_get(merged, "nodes"), "n2"));
    /* one merge at a time */
    ck_assert_int_eq(store_parts_merge(dir, 7, uid, &other, &again, &found, NULL, &err), -EBUSY);
    ck_assert_ptr_null(again);
    /* n1 stores again meanwhile: its newer part stays for the next pass */
    part = node_part(7, uid, "n1");
    ck_assert_int_eq(store_parts_deposit(dir, 7, part, &err), 0);
    json_decref(part);
    store_parts_release(dir, 7, &job, true);
    ck_assert_int_eq(stat(path, &st), 0);
    snprintf(path, sizeof(path), "%s/7/n2.json", dir);
    ck_assert_int_eq(stat(path, &st), -1);
    json_decref(merged);
    /* a pass that merged everything removes the job's directory */
    for (size_t k = 0; k < 3; k++) {
        static const char *const left_out[] = {"n3.json", "n5.json", "n6.json"};
        snprintf(path, sizeof(path), "%s/7/%s", dir, left_out[k]);
        unlink(path);
    }
    ck_assert_int_eq(store_parts_merge(dir, 7, uid, &job, &merged, &found, NULL, &err), 0);
    ck_assert_int_eq(found.parts, 1);
    store_parts_release(dir, 7, &job, true);
    snprintf(path, sizeof(path), "%s/7", dir);
    ck_assert_int_eq(stat(path, &st), -1);
    ck_assert_int_eq(store_parts_merge(dir, 7, uid, &job, &again, &found, NULL, &err), -ENOENT);
    json_decref(merged);
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
    tcase_add_test(tc, test_sweep_temporaries);
    tcase_add_test(tc, test_hold_while_older_held);
    tcase_add_test(tc, test_parts_merge_once);
    suite_add_tcase(suite, tc);
    return np_test_run(suite);
}
