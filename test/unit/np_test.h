/* Small helpers shared by the unit tests: fixture paths and hwloc bitmaps from list strings. */
#ifndef NP_TEST_H
#define NP_TEST_H

#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <hwloc.h>

/* $NUMAPLACE_FIXTURES (set by CTest) holds two kinds of fixture: data/ (hwloc XML, model
 * tables, reports and summaries, traces) and roots/ (captured /proc and /sys trees, each a
 * filesystem root the readers take, like hwloc's HWLOC_FSROOT). */
static inline const char *np_test_fixture_path(const char *kind, const char *relative)
{
    static char path[4096];
    const char *root = getenv("NUMAPLACE_FIXTURES");

    ck_assert_msg(root != NULL, "NUMAPLACE_FIXTURES is not set (run the tests through ctest)");
    snprintf(path, sizeof(path), "%s/%s/%s", root, kind, relative);
    return path;
}

/* A data fixture, test/fixtures/data/RELATIVE. Static buffer: use it at once. */
static inline const char *np_test_fixture(const char *relative)
{
    return np_test_fixture_path("data", relative);
}

/* A captured filesystem root, test/fixtures/roots/NAME. Static buffer: use it at once. */
static inline const char *np_test_root(const char *name)
{
    return np_test_fixture_path("roots", name);
}

/* A new bitmap from "0-3,8" ("" = empty, NULL = NULL). Free with hwloc_bitmap_free. */
static inline hwloc_bitmap_t np_test_set(const char *list)
{
    hwloc_bitmap_t set;

    if (!list)
        return NULL;
    set = hwloc_bitmap_alloc();
    if (*list)
        ck_assert_int_eq(hwloc_bitmap_list_sscanf(set, list), 0);
    return set;
}

/* "0-3,8" of a bitmap ("" when empty) into a static buffer. */
static inline const char *np_test_list(hwloc_const_bitmap_t set)
{
    static char text[256];

    text[0] = '\0';
    if (set && !hwloc_bitmap_iszero(set))
        hwloc_bitmap_list_snprintf(text, sizeof(text), set);
    return text;
}

/*
 * Whether this process lacks the NUMA memory-policy system calls (get_mempolicy gives ENOSYS):
 * qemu-user, which runs the arm64 lane's unit suites, emulates none of set_mempolicy,
 * get_mempolicy, mbind or move_pages. A case that needs them then ends at once, saying so on
 * stderr (ctest -V shows it): it checked nothing, and claims nothing.
 */
static inline bool np_test_numa_syscalls_missing(const char *test)
{
    int mode = 0;

    if (syscall(SYS_get_mempolicy, &mode, NULL, 0UL, NULL, 0UL) == 0 || errno != ENOSYS)
        return false;
    fprintf(stderr,
            "SKIPPED %s: get_mempolicy gives ENOSYS here (qemu-user has no NUMA "
            "memory-policy system calls)\n",
            test);
    return true;
}

/* Run one suite and turn its result into an exit status. */
static inline int np_test_run(Suite *suite)
{
    SRunner *runner = srunner_create(suite);
    int failed;

    srunner_run_all(runner, CK_ENV);
    failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* NP_TEST_H */
