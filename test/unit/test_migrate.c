/*
 * The mover on this machine's real kernel. With one NUMA node nothing can actually move here
 * (the guest suites move pages between emulated nodes); these cases pin down what does not need
 * a second node: finding a process's pages on a node, argument checks, a process that is gone,
 * the rate limiter's arithmetic, result accounting.
 */
#include <check.h>
#include <errno.h>
#include <numaif.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "np_test.h"
#include "numaplace/engine.h"
#include "numaplace/procfs.h"

START_TEST(test_dry_run_finds_touched_pages)
{
    const size_t pages = 256, page = (size_t)sysconf(_SC_PAGESIZE);
    char *buf =
        mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct np_move_options opt = {.dry_run = true};
    struct np_move_result res;
    struct np_err err = {0};

    if (np_test_numa_syscalls_missing("test_dry_run_finds_touched_pages"))
        return;

    ck_assert_ptr_ne(buf, MAP_FAILED);
    memset(buf, 1, pages * page);
    /* Partial budget: exactly that many pages "would move", found on node 0. */
    ck_assert_int_eq(np_move_process_pages(getpid(), 0, 1, 100, &opt, NULL, &res, &err), 0);
    ck_assert_uint_eq(res.pages_moved, 100);
    ck_assert(!res.whole);
    /* All of it, with migrate_pages whether shared pages may move or not: at least our buffer,
     * and more (the test binary, its stack, libc). */
    for (int shared = 0; shared < 2; shared++) {
        opt.move_shared = shared;
        ck_assert_int_eq(np_move_process_pages(getpid(), 0, 1, UINT64_MAX, &opt, NULL, &res, &err),
                         0);
        ck_assert(res.whole);
        ck_assert_uint_ge(res.pages_moved, pages);
        ck_assert_uint_eq(res.bytes_moved, res.pages_moved * page);
    }
    munmap(buf, pages * page);
}
END_TEST

static const struct {
    pid_t pid;
    unsigned src, dst;
} bad_moves[] = {
    {0, 0, 1},
    {-5, 0, 1},
    {1, 2, 2},
    {1, 0, 5000},
};

START_TEST(test_bad_arguments)
{
    struct np_move_result res;
    struct np_err err = {0};

    ck_assert_int_eq(np_move_process_pages(bad_moves[_i].pid, bad_moves[_i].src, bad_moves[_i].dst,
                                           10, NULL, NULL, &res, &err),
                     -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "invalid move"));
    ck_assert_int_eq(np_move_process_pages(1, 0, 1, 1, NULL, NULL, NULL, NULL), -EINVAL);
}
END_TEST

START_TEST(test_gone_process_ends_cleanly)
{
    struct np_move_options opt = {.dry_run = (_i == 0)};
    struct np_move_result res;
    struct np_err err = {0};
    pid_t child = fork();

    ck_assert_int_ge(child, 0);
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0);
    ck_assert_int_eq(np_move_process_pages(child, 0, 1, 10, &opt, NULL, &res, &err), 0);
    ck_assert(res.process_gone);
    ck_assert_uint_eq(res.pages_moved, 0);
}
END_TEST

START_TEST(test_missing_node_is_counted_not_fatal)
{
    /* Node 63 does not exist here: the kernel refuses the pages, the move reports why. */
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *buf = mmap(NULL, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct np_move_result res;
    struct np_err err = {0};
    int rc;

    ck_assert_ptr_ne(buf, MAP_FAILED);
    memset(buf, 1, 8 * page);
    rc = np_move_process_pages(getpid(), 0, 63, 8, NULL, NULL, &res, &err);
    /* Either the call is refused as a whole (ENODEV/EINVAL, with a message) or per page. */
    if (rc < 0) {
        ck_assert_ptr_nonnull(strstr(err.msg, "move_pages"));
    } else {
        uint64_t failed = 0;
        for (int i = 0; i < NP_MOVE_FAIL_COUNT; i++)
            failed += res.pages_failed[i];
        ck_assert_uint_eq(res.pages_moved, 0);
        ck_assert_uint_gt(failed, 0);
    }
    munmap(buf, 8 * page);
}
END_TEST

/* should_stop: after how many "go on" answers it says stop, and what the move then did. */
static const struct {
    int answers_before_stop; /* -1: never stops */
    uint64_t max_pages;
    bool whole;
    uint64_t at_most_moved; /* dry run: pages that would have moved */
    bool stopped;
} stops[] = {
    {0, 100, false, 0, true},       /* asked before the first batch */
    {2, 100, false, 2 * 16, true},  /* two batches of 16 addresses, then stop */
    {0, UINT64_MAX, true, 0, true}, /* a whole move is asked once, before it starts */
    {-1, 100, false, 100, false},   /* never: the budget is met */
};

static bool stop_after(void *arg)
{
    int *left = arg;

    if (*left < 0)
        return false;
    return (*left)-- == 0;
}

START_TEST(test_should_stop_ends_the_move)
{
    const size_t pages = 256, page = (size_t)sysconf(_SC_PAGESIZE);
    char *buf =
        mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int answers = stops[_i].answers_before_stop;
    struct np_move_options opt = {
        .dry_run = true, .batch_pages = 16, .should_stop = stop_after, .stop_arg = &answers};
    struct np_move_result res;
    struct np_err err = {0};

    if (np_test_numa_syscalls_missing("test_should_stop_ends_the_move"))
        return;

    ck_assert_ptr_ne(buf, MAP_FAILED);
    memset(buf, 1, pages * page);
    ck_assert_int_eq(
        np_move_process_pages(getpid(), 0, 1, stops[_i].max_pages, &opt, NULL, &res, &err), 0);
    ck_assert(res.stopped == stops[_i].stopped);
    ck_assert(res.whole == stops[_i].whole);
    if (stops[_i].stopped)
        ck_assert_uint_le(res.pages_moved, stops[_i].at_most_moved);
    else
        ck_assert_uint_eq(res.pages_moved, stops[_i].at_most_moved);
    munmap(buf, pages * page);
}
END_TEST

/* Per-page statuses of move_pages(2) and the cause each counts under. */
static const struct {
    int status;
    enum np_move_failure cause;
    const char *name;
} statuses[] = {
    {-EACCES, NP_MOVE_FAIL_ACCESS, "shared"}, /* another process maps it (MPOL_MF_MOVE) */
    {-EBUSY, NP_MOVE_FAIL_BUSY, "busy"},
    {-ENOMEM, NP_MOVE_FAIL_NOMEM, "no-memory-on-destination"},
    {-EFAULT, NP_MOVE_FAIL_OTHER, "other"},
    {-ENOENT, NP_MOVE_FAIL_OTHER, "other"},
    {-EIO, NP_MOVE_FAIL_OTHER, "other"},
};

START_TEST(test_status_causes)
{
    ck_assert_int_eq(np_move_failure_of_status(statuses[_i].status), statuses[_i].cause);
    ck_assert_str_eq(np_move_failure_name(np_move_failure_of_status(statuses[_i].status)),
                     statuses[_i].name);
}
END_TEST

/* The path of a move and the flag move_pages gets. */
static const struct {
    uint64_t max_pages;
    double rate;
    bool move_shared;
    enum np_move_path path;
    int flag;
} paths[] = {
    {UINT64_MAX, 0, false, NP_MOVE_PATH_WHOLE, MPOL_MF_MOVE}, /* the default */
    {UINT64_MAX, 0, true, NP_MOVE_PATH_WHOLE, MPOL_MF_MOVE_ALL},
    {UINT64_MAX, 25e6, true, NP_MOVE_PATH_PAGES, MPOL_MF_MOVE_ALL}, /* a limit: batches */
    {UINT64_MAX, 25e6, false, NP_MOVE_PATH_PAGES, MPOL_MF_MOVE},
    {1000, 0, true, NP_MOVE_PATH_PAGES, MPOL_MF_MOVE_ALL}, /* a budget: exactly those pages */
    {1000, 0, false, NP_MOVE_PATH_PAGES, MPOL_MF_MOVE},
};

START_TEST(test_path_choice)
{
    ck_assert_int_eq(np_move_path_choose(paths[_i].max_pages, paths[_i].rate), paths[_i].path);
    ck_assert_int_eq(np_move_pages_flag(paths[_i].move_shared), paths[_i].flag);
}
END_TEST

/*
 * The process is re-checked before each batch: its start time and uid, as the
 * daemon sampled them. The check's expected start time is changed by should_stop (asked just
 * before it) after some batches, as if the pid now were another process.
 */
struct identity_change {
    struct np_move_options *opt;
    int batches_before_change; /* -1: never */
};

static bool change_identity(void *arg)
{
    struct identity_change *c = arg;

    if (c->batches_before_change-- == 0)
        c->opt->starttime_ticks++;
    return false;
}

static const struct {
    bool right_start, right_uid;
    int batches_before_change;
    uint64_t max_pages;
    uint64_t moved; /* dry run: would move (at most, when it changes mid-move) */
    bool replaced;
} identities[] = {
    {true, true, -1, 100, 100, false},
    {false, true, -1, 100, 0, true},        /* another start time from the start */
    {true, false, -1, 100, 0, true},        /* another user */
    {true, true, 3, 100, 3 * 16, true},     /* the pid changed hands after 3 batches */
    {false, true, -1, UINT64_MAX, 0, true}, /* a whole move (migrate_pages) too */
    {true, true, -1, UINT64_MAX, 256, false},
};

START_TEST(test_identity_checked_before_each_batch)
{
    const size_t pages = 256, page = (size_t)sysconf(_SC_PAGESIZE);
    char *buf =
        mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct np_move_options opt = {.dry_run = true, .batch_pages = 16, .move_shared = true};
    struct identity_change change = {&opt, identities[_i].batches_before_change};
    struct np_proc_stat st;
    struct np_move_result res;
    struct np_err err = {0};

    if (np_test_numa_syscalls_missing("test_identity_checked_before_each_batch"))
        return;

    ck_assert_ptr_ne(buf, MAP_FAILED);
    memset(buf, 1, pages * page);
    ck_assert_int_eq(np_proc_stat_read(NULL, getpid(), &st, NULL), 0);
    opt.starttime_ticks = st.starttime_ticks + (identities[_i].right_start ? 0 : 1);
    opt.uid = getuid() + (identities[_i].right_uid ? 0 : 1);
    opt.should_stop = change_identity;
    opt.stop_arg = &change;
    ck_assert_int_eq(
        np_move_process_pages(getpid(), 0, 1, identities[_i].max_pages, &opt, NULL, &res, &err), 0);
    ck_assert(res.replaced == identities[_i].replaced);
    ck_assert(res.process_gone == identities[_i].replaced);
    if (identities[_i].max_pages == UINT64_MAX && !identities[_i].replaced) {
        ck_assert_uint_ge(res.pages_moved, identities[_i].moved);
    } else if (identities[_i].batches_before_change > 0) {
        /* some batches (short ones end on huge-page boundaries), never more */
        ck_assert_uint_gt(res.pages_moved, 0);
        ck_assert_uint_le(res.pages_moved, identities[_i].moved);
    } else {
        ck_assert_uint_eq(res.pages_moved, identities[_i].moved);
    }
    munmap(buf, pages * page);
}
END_TEST

/* This thread's effective capabilities, low word (CAP_SYS_NICE is bit 23). */
static uint32_t effective_caps(void)
{
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];

    ck_assert_int_eq(syscall(SYS_capget, &header, caps), 0);
    return caps[0].effective;
}

/* A whole move takes CAP_SYS_NICE out of the mover thread's effective set for its
 * migrate_pages call (so shared pages stay) and always puts it back: the daemon's next move,
 * and anything else the thread does, keep their rights. (Node 1 does not exist here: the call
 * itself fails; the guest suite checks what moves.) */
START_TEST(test_whole_move_gives_back_sys_nice)
{
    struct np_move_options opt = {.move_shared = _i == 1};
    struct np_move_result res;
    struct np_err err = {0};
    const uint32_t before = effective_caps();

    np_move_process_pages(getpid(), 0, 1, UINT64_MAX, &opt, NULL, &res, &err);
    ck_assert(res.whole);
    ck_assert_uint_eq(effective_caps(), before);
}
END_TEST

START_TEST(test_rate_limiter_unlimited_and_accounting)
{
    struct np_rate_limiter rl;
    struct np_move_result total = {0}, add = {.pages_moved = 3, .bytes_moved = 3 * 4096};

    np_rate_limiter_init(&rl, 0);
    ck_assert_uint_eq(np_rate_limiter_take(&rl, 1u << 30), 0);
    ck_assert_uint_eq(np_rate_limiter_take(NULL, 1u << 30), 0);
    add.pages_failed[NP_MOVE_FAIL_BUSY] = 2;
    add.process_gone = true;
    np_move_result_add(&total, &add);
    np_move_result_add(&total, &add);
    ck_assert_uint_eq(total.pages_moved, 6);
    ck_assert_uint_eq(total.bytes_moved, 6 * 4096);
    ck_assert_uint_eq(total.pages_failed[NP_MOVE_FAIL_BUSY], 4);
    ck_assert(total.process_gone);
    ck_assert_str_eq(np_move_failure_name(NP_MOVE_FAIL_NOMEM), "no-memory-on-destination");
}
END_TEST

START_TEST(test_rate_limiter_holds_back)
{
    /* 1 MB/s, the bucket starts empty: taking 100 kB must wait about 0.1 s. This asserts only a
     * lower bound (a wait happened and was long enough), never an upper one: no timed test. */
    struct np_rate_limiter rl;
    uint64_t t0, slept;

    np_rate_limiter_init(&rl, 1e6);
    t0 = np_now_ns();
    slept = np_rate_limiter_take(&rl, 100000);
    ck_assert_uint_ge(np_now_ns() - t0, 90000000ull);
    ck_assert_uint_ge(slept, 80000000ull);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("migrate");
    TCase *tc = tcase_create("migrate");
    tcase_add_test(tc, test_dry_run_finds_touched_pages);
    tcase_add_loop_test(tc, test_bad_arguments, 0, sizeof(bad_moves) / sizeof(bad_moves[0]));
    tcase_add_loop_test(tc, test_gone_process_ends_cleanly, 0, 2);
    tcase_add_test(tc, test_missing_node_is_counted_not_fatal);
    tcase_add_loop_test(tc, test_should_stop_ends_the_move, 0, sizeof(stops) / sizeof(stops[0]));
    tcase_add_loop_test(tc, test_status_causes, 0, sizeof(statuses) / sizeof(statuses[0]));
    tcase_add_loop_test(tc, test_path_choice, 0, sizeof(paths) / sizeof(paths[0]));
    tcase_add_loop_test(tc, test_identity_checked_before_each_batch, 0,
                        sizeof(identities) / sizeof(identities[0]));
    tcase_add_loop_test(tc, test_whole_move_gives_back_sys_nice, 0, 2);
    tcase_add_test(tc, test_rate_limiter_unlimited_and_accounting);
    tcase_add_test(tc, test_rate_limiter_holds_back);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
