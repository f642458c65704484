/* numa_maps: captured (this machine) and hand-made (4 nodes, hugetlbfs, odd lines) trees. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "np_test.h"
#include "numaplace/procfs.h"

static const struct {
    const char *line;
    int rc;
    uintptr_t start;
    const char *policy, *path;
    unsigned node;
    uint64_t pages;
    unsigned long page_kb;
    bool anon, hugetlb;
} line_cases[] = {
    {"7f15bf483000 default file=/tmp/my\\040data\\040(copy).bin dirty=256 active=0 N0=256 "
     "kernelpagesize_kB=4\n",
     0, 0x7f15bf483000, "default", "/tmp/my data (copy).bin", 0, 256, 4, false, false},
    {"7f0000000000 interleave:0-3 anon=262144 dirty=262144 N0=65536 N3=65536 kernelpagesize_kB=4",
     0, 0x7f0000000000, "interleave:0-3", NULL, 3, 65536, 4, true, false},
    {"7f4000000000 bind:2 file=/dev/hugepages/buf huge dirty=8 N2=8 kernelpagesize_kB=2048", 0,
     0x7f4000000000, "bind:2", "/dev/hugepages/buf", 2, 8, 2048, false, true},
    {"55d0c2000000 default heap anon=5 dirty=5 N1=5 kernelpagesize_kB=4", 0, 0x55d0c2000000,
     "default", NULL, 1, 5, 4, true, false},
    {"7f8000000000 preferred:1 anon=10 N1=10 futuretoken=7 N9x=3 N99=4", 0, 0x7f8000000000,
     "preferred:1", NULL, 1, 10, 4, true, false}, /* unknown tokens, a node past the table */
    {"7ffd00000000 default", 0, 0x7ffd00000000, "default", NULL, 0, 0, 4, false, false},
    {"not-an-address default N0=5", -EINVAL, 0, "", NULL, 0, 0, 0, false, false},
    {"7ffe000", -EINVAL, 0, "", NULL, 0, 0, 0, false, false}, /* truncated */
    {"", -EINVAL, 0, "", NULL, 0, 0, 0, false, false},
};

START_TEST(test_parse_line)
{
    char line[512];
    struct np_numa_mapping m;

    snprintf(line, sizeof(line), "%s", line_cases[_i].line);
    ck_assert_int_eq(np_numa_maps_parse_line(line, &m), line_cases[_i].rc);
    if (line_cases[_i].rc)
        return;
    ck_assert_uint_eq(m.start, line_cases[_i].start);
    ck_assert_str_eq(m.policy, line_cases[_i].policy);
    if (line_cases[_i].path)
        ck_assert_str_eq(m.path, line_cases[_i].path);
    else
        ck_assert_ptr_null(m.path);
    ck_assert_uint_eq(m.pages[line_cases[_i].node], line_cases[_i].pages);
    ck_assert_uint_eq(m.page_kb, line_cases[_i].page_kb);
    ck_assert_int_eq(m.anon, line_cases[_i].anon);
    ck_assert_int_eq(m.hugetlb, line_cases[_i].hugetlb);
}
END_TEST

START_TEST(test_usage_hand_made)
{
    struct np_numa_usage u;
    struct np_err err = {0};
    char root[4096];

    /* The tree's root is test/fixtures: /proc/200/numa_maps lives under it. */
    snprintf(root, sizeof(root), "%s", np_test_root("host"));
    ck_assert_msg(np_numa_maps_usage(root, 200, &u, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(u.mappings, 7);
    ck_assert_uint_eq(u.skipped_lines, 2);
    ck_assert_int_eq(u.max_node, 3);
    /* file: the solver's text, 100 + 200 pages of 4 KiB; hugetlbfs: 8 x 2 MiB on node 2 */
    ck_assert_uint_eq(u.file_bytes[0], 100 * 4096ull);
    ck_assert_uint_eq(u.file_bytes[1], 200 * 4096ull);
    ck_assert_uint_eq(u.file_bytes[2], 8 * 2048 * 1024ull);
    /* anon: heap 1000/1000/1000/2000, interleaved 65536 each, 10 on node 1, stack 33 on 3 */
    ck_assert_uint_eq(u.anon_bytes[0], (1000 + 65536) * 4096ull);
    ck_assert_uint_eq(u.anon_bytes[1], (1000 + 65536 + 10) * 4096ull);
    ck_assert_uint_eq(u.anon_bytes[2], (1000 + 65536) * 4096ull);
    ck_assert_uint_eq(u.anon_bytes[3], (2000 + 65536 + 33) * 4096ull);
    ck_assert_uint_eq(u.total_bytes, (300 + 5000 + 262144 + 10 + 33) * 4096ull + 8 * 2097152ull);
}
END_TEST

START_TEST(test_usage_captured)
{
    struct np_numa_usage u;
    struct np_err err = {0};

    /* A real capture from a one-node machine: a 256-page file mapping and a 1024-page buffer. */
    ck_assert_msg(np_numa_maps_usage(np_test_root("host"), 100, &u, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(u.skipped_lines, 0);
    ck_assert_uint_eq(u.mappings, 111);
    ck_assert_int_eq(u.max_node, 0);
    ck_assert_uint_ge(u.total_bytes, (256 + 1024) * 4096ull);
    ck_assert_uint_eq(u.total_bytes, u.anon_bytes[0] + u.file_bytes[0]);
}
END_TEST

static int stop_at_second(const struct np_numa_mapping *m, void *arg)
{
    int *seen = arg;
    (void)m;
    return ++*seen == 2 ? 42 : 0;
}

START_TEST(test_walk_stops_and_errors)
{
    struct np_err err = {0};
    int seen = 0;

    ck_assert_int_eq(
        np_numa_maps_each(np_test_root("host"), 200, stop_at_second, &seen, NULL, &err), 42);
    ck_assert_int_eq(seen, 2);
    ck_assert_int_eq(
        np_numa_maps_each(np_test_root("host"), 99999, stop_at_second, &seen, NULL, &err), -ESRCH);
    ck_assert_ptr_nonnull(strstr(err.msg, "no process 99999"));
}
END_TEST

START_TEST(test_live_process)
{
    struct np_numa_usage u;
    struct np_err err = {0};

    ck_assert_msg(np_numa_maps_usage(NULL, getpid(), &u, &err) == 0, "%s", err.msg);
    ck_assert_uint_gt(u.total_bytes, 0);
    ck_assert_uint_gt(u.mappings, 5);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("numa_maps");
    TCase *tc = tcase_create("numa_maps");

    tcase_add_loop_test(tc, test_parse_line, 0, sizeof(line_cases) / sizeof(line_cases[0]));
    tcase_add_test(tc, test_usage_hand_made);
    tcase_add_test(tc, test_usage_captured);
    tcase_add_test(tc, test_walk_stops_and_errors);
    tcase_add_test(tc, test_live_process);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
