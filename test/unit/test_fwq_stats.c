/* bench/fwq's arithmetic (bench/fwq_stats.c): the rotation, detour statistics, sched_switch
 * decoding from the kernel's format file, attribution of a detour to what ran in its place, and
 * the CPU lists its options take. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwq_stats.h"
#include "np_test.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const size_t rotation_sizes[] = {1, 2, 6, 7};

/* Each configuration once per round; over n rounds each takes every position once. */
START_TEST(test_rotation)
{
    size_t n = rotation_sizes[_i];
    unsigned seen_in_round[8], seen_at[8][8];

    memset(seen_at, 0, sizeof(seen_at));
    for (unsigned round = 0; round < n; round++) {
        memset(seen_in_round, 0, sizeof(seen_in_round));
        for (unsigned pos = 0; pos < n; pos++) {
            size_t c = fwq_rotation_config(round, pos, n);
            ck_assert_uint_lt(c, n);
            seen_in_round[c]++;
            seen_at[c][pos]++;
        }
        for (size_t c = 0; c < n; c++)
            ck_assert_uint_eq(seen_in_round[c], 1);
    }
    for (size_t c = 0; c < n; c++)
        for (size_t pos = 0; pos < n; pos++)
            ck_assert_uint_eq(seen_at[c][pos], 1);
    /* the next block of rounds repeats the first */
    ck_assert_uint_eq(fwq_rotation_config((unsigned)n, 1, n), fwq_rotation_config(0, 1, n));
}
END_TEST

struct detour_case {
    const char *name;
    size_t n;
    uint32_t base, fastest;
    /* exceptions to base: count quanta of each duration */
    struct {
        size_t count;
        uint32_t ns;
    } extra[3];
    int rc;
    uint32_t p50, p99, p999, max;
    size_t over[FWQ_THRESHOLDS];
};

static const struct detour_case detour_cases[] = {
    /* 989 at the fastest, 10 exactly 10 us over (not counted above 10 us), one 2 ms over */
    {"mostly quiet",
     1000,
     50000,
     50000,
     {{10, 60000}, {1, 2050000}},
     0,
     0,
     10000,
     10000,
     2000000,
     {1, 1, 1}},
    /* a half detoured by 20 us: p50 is the last undisturbed quantum */
    {"half", 10, 1000, 1000, {{5, 21000}}, 0, 0, 20000, 20000, 20000, {5, 0, 0}},
    {"one quantum", 1, 700, 500, {{0, 0}}, 0, 200, 200, 200, 200, {0, 0, 0}},
    {"none", 0, 0, 0, {{0, 0}}, 0, 0, 0, 0, 0, {0, 0, 0}},
    /* a quantum faster than "the fastest": the caller's minimum is wrong */
    {"below fastest", 4, 500, 600, {{0, 0}}, -EINVAL, 0, 0, 0, 0, {0, 0, 0}},
};

/* Quanta against another CPU's minimum: the detour kept, a capped quantum kept at the cap (seen
 * wrapping under a starved guest: a 4.29 s quantum became a short one, below the minimum). */
START_TEST(test_rebase)
{
    ck_assert_uint_eq(fwq_rebase(60000, 49410, 49450), 60040);
    ck_assert_uint_eq(fwq_rebase(60000, 49450, 49410), 59960);
    ck_assert_uint_eq(fwq_rebase(UINT32_MAX, 49410, 49450), UINT32_MAX);
    ck_assert_uint_eq(fwq_rebase(UINT32_MAX - 10, 49410, 49450), UINT32_MAX);
    ck_assert_uint_eq(fwq_rebase(UINT32_MAX, 49450, 49410), UINT32_MAX - 40);
}
END_TEST

START_TEST(test_detour_stats)
{
    const struct detour_case *tc = &detour_cases[_i];
    uint32_t *dur = calloc(tc->n + 1, sizeof(uint32_t)), *scratch = calloc(tc->n + 1, 4);
    struct fwq_detour_stats st;
    size_t at = 0;
    uint64_t total = 0;

    for (size_t e = 0; e < N(tc->extra); e++)
        for (size_t k = 0; k < tc->extra[e].count; k++)
            dur[at++] = tc->extra[e].ns;
    while (at < tc->n)
        dur[at++] = tc->base;
    for (size_t i = 0; i < tc->n; i++)
        total += dur[i];
    ck_assert_msg(fwq_detour_stats(dur, tc->n, tc->fastest, scratch, &st) == tc->rc, "%s",
                  tc->name);
    if (tc->rc == 0) {
        ck_assert_uint_eq(st.quanta, tc->n);
        ck_assert_uint_eq(st.quantum_total_ns, total);
        ck_assert_uint_eq(st.detour_total_ns, total - (uint64_t)tc->n * tc->fastest);
        ck_assert_msg(st.p50_ns == tc->p50 && st.p99_ns == tc->p99 && st.p999_ns == tc->p999 &&
                          st.max_ns == tc->max,
                      "%s: p50 %u p99 %u p99.9 %u max %u", tc->name, st.p50_ns, st.p99_ns,
                      st.p999_ns, st.max_ns);
        for (int t = 0; t < FWQ_THRESHOLDS; t++)
            ck_assert_uint_eq(st.over[t], tc->over[t]);
    }
    free(dur);
    free(scratch);
}
END_TEST

static const struct {
    const char *comm;
    enum fwq_source src;
} source_cases[] = {
    {"numaplaced", FWQ_SRC_NUMAPLACED},
    {"numad", FWQ_SRC_NUMAD},
    {"numadx", FWQ_SRC_OTHER},
    {"kworker/0:1H", FWQ_SRC_KWORKER},
    {"ksoftirqd/1", FWQ_SRC_KSOFTIRQD},
    {"rcu_preempt", FWQ_SRC_KTHREAD},
    {"migration/0", FWQ_SRC_KTHREAD},
    {"khugepaged", FWQ_SRC_KTHREAD},
    {"swapper/1", FWQ_SRC_KTHREAD},
    {"fwq", FWQ_SRC_BENCH},
    {"fwqx", FWQ_SRC_OTHER},
    {"cc1", FWQ_SRC_OTHER},
    {"", FWQ_SRC_OTHER},
};

START_TEST(test_source_of)
{
    ck_assert_int_eq(fwq_source_of(source_cases[_i].comm), source_cases[_i].src);
}
END_TEST

/* Every source has a name of its own (the report's columns) and fits a quantum's mask byte. */
START_TEST(test_source_names)
{
    ck_assert_int_le(FWQ_SRC_COUNT, 8);
    for (int a = 0; a < FWQ_SRC_COUNT; a++) {
        ck_assert_str_ne(fwq_source_name((enum fwq_source)a), "?");
        for (int b = 0; b < a; b++)
            ck_assert_str_ne(fwq_source_name((enum fwq_source)a),
                             fwq_source_name((enum fwq_source)b));
    }
    ck_assert_str_eq(fwq_source_name(FWQ_SRC_COUNT), "?");
}
END_TEST

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = calloc(1, 65536);

    ck_assert_ptr_nonnull(f);
    ck_assert_uint_gt(fread(buf, 1, 65535, f), 0);
    fclose(f);
    return buf;
}

/* The offsets come from the kernel's own format file (captured from 6.18), and a record built
 * at those offsets decodes back. */
START_TEST(test_switch_layout)
{
    char *text = slurp(np_test_fixture("tracefs/sched_switch.format"));
    struct fwq_switch_layout l;
    struct fwq_switch sw;
    unsigned char raw[64] = {0};
    int32_t prev = 1234, next = 77;

    ck_assert_int_eq(fwq_switch_layout_parse(text, &l), 0);
    ck_assert_uint_eq(l.prev_pid, 24);
    ck_assert_uint_eq(l.next_pid, 56);
    ck_assert_uint_eq(l.next_comm, 40);
    ck_assert_uint_eq(l.comm_size, 16);
    ck_assert_uint_eq(l.min_size, 60);
    memcpy(raw + 24, &prev, 4);
    memcpy(raw + 56, &next, 4);
    memcpy(raw + 40, "numaplaced", 10);
    ck_assert_int_eq(fwq_switch_decode(raw, sizeof(raw), &l, 99, &sw), 0);
    ck_assert_int_eq(sw.prev_pid, 1234);
    ck_assert_int_eq(sw.next_pid, 77);
    ck_assert_str_eq(sw.next_comm, "numaplaced");
    ck_assert_uint_eq(sw.t_ns, 99);
    ck_assert_int_eq(fwq_switch_decode(raw, 59, &l, 99, &sw), -EINVAL);
    free(text);
}
END_TEST

static const char *const bad_formats[] = {
    "", /* nothing */
    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n", /* no next_pid */
    "\tfield:long prev_pid;\toffset:24;\tsize:8;\tsigned:1;\n"
    "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
    "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n", /* an 8-byte pid */
    "\tfield:pid_t prev_pid;\toffset:x;\tsize:4;\tsigned:1;\n"
    "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
    "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n", /* no offset number */
};

START_TEST(test_switch_layout_refuses)
{
    struct fwq_switch_layout l;

    ck_assert_int_eq(fwq_switch_layout_parse(bad_formats[_i], &l), -EINVAL);
}
END_TEST

#define TID 7
#define EV(t, prev, next, comm)                                                                    \
    {                                                                                              \
        (t), (prev), (next), comm                                                                  \
    }

struct attribute_case {
    const char *name;
    struct fwq_switch ev[4];
    size_t nev;
    uint64_t ns[FWQ_SRC_COUNT];
    uint8_t mask[4];
};

/* Four quanta: 1000-1100-1200-1300-1400. */
static const struct attribute_case attribute_cases[] = {
    {"numaplaced inside quantum 1",
     {EV(1150, TID, 42, "numaplaced"), EV(1180, 42, TID, "fwq")},
     2,
     {[FWQ_SRC_NUMAPLACED] = 30},
     {0, 1 << FWQ_SRC_NUMAPLACED, 0, 0}},
    {"a chain of tasks",
     {EV(1110, TID, 9, "kworker/0:1"), EV(1120, 9, 10, "cc1"), EV(1170, 10, TID, "fwq")},
     3,
     {[FWQ_SRC_KWORKER] = 10, [FWQ_SRC_OTHER] = 50},
     {0, (1 << FWQ_SRC_KWORKER) | (1 << FWQ_SRC_OTHER), 0, 0}},
    {"away before the first stamp: clipped",
     {EV(900, TID, 5, "cc1"), EV(1020, 5, TID, "fwq")},
     2,
     {[FWQ_SRC_OTHER] = 20},
     {1 << FWQ_SRC_OTHER, 0, 0, 0}},
    {"still away at the end",
     {EV(1390, TID, 3, "numad")},
     1,
     {[FWQ_SRC_NUMAD] = 10},
     {0, 0, 0, 1 << FWQ_SRC_NUMAD}},
    {"across a quantum's end",
     {EV(1190, TID, 3, "ksoftirqd/0"), EV(1210, 3, TID, "fwq")},
     2,
     {[FWQ_SRC_KSOFTIRQD] = 20},
     {0, 1 << FWQ_SRC_KSOFTIRQD, 1 << FWQ_SRC_KSOFTIRQD, 0}},
    {"away past the last stamp: clipped",
     {EV(1390, TID, 3, "cc1"), EV(1450, 3, TID, "fwq")},
     2,
     {[FWQ_SRC_OTHER] = 10},
     {0, 0, 0, 1 << FWQ_SRC_OTHER}},
    /* another user's numaplaced (TID 43, not ours) */
    {"a daemon that is not the one measured",
     {EV(1150, TID, 43, "numaplaced"), EV(1180, 43, TID, "fwq")},
     2,
     {[FWQ_SRC_OTHER] = 30},
     {0, 1 << FWQ_SRC_OTHER, 0, 0}},
    {"switches between other tasks while fwq runs elsewhere",
     {EV(1050, 11, 12, "numaplaced")},
     1,
     {0},
     {0, 0, 0, 0}},
};

START_TEST(test_attribute)
{
    const struct attribute_case *tc = &attribute_cases[_i];
    const uint64_t stamps[5] = {1000, 1100, 1200, 1300, 1400};
    uint64_t ns[FWQ_SRC_COUNT] = {0};
    uint8_t mask[4] = {0};

    const int32_t daemon_tids[] = {42, 3};

    fwq_attribute(stamps, 4, tc->ev, tc->nev, TID, daemon_tids, 2, ns, mask);
    for (int s = 0; s < FWQ_SRC_COUNT; s++)
        ck_assert_msg(ns[s] == tc->ns[s], "%s: %s got %llu, expected %llu", tc->name,
                      fwq_source_name((enum fwq_source)s), (unsigned long long)ns[s],
                      (unsigned long long)tc->ns[s]);
    for (int q = 0; q < 4; q++)
        ck_assert_msg(mask[q] == tc->mask[q], "%s: quantum %d mask %#x, expected %#x", tc->name, q,
                      mask[q], tc->mask[q]);
}
END_TEST

static const struct {
    const char *text;
    int max, rc;
    int cpus[6];
} list_cases[] = {
    {"0", 8, 1, {0}},           {"0-3,8", 8, 5, {0, 1, 2, 3, 8}}, {"12", 8, 1, {12}},
    {"0-9", 4, -E2BIG, {0}},    {"3-1", 8, -EINVAL, {0}},         {"", 8, -EINVAL, {0}},
    {"1,,2", 8, -EINVAL, {0}},  {"1-", 8, -EINVAL, {0}},          {"a", 8, -EINVAL, {0}},
    {"70000", 8, -EINVAL, {0}}, {"08", 8, -EINVAL, {0}},          {"1-08", 8, -EINVAL, {0}},
    {"1 ", 8, -EINVAL, {0}},
};

START_TEST(test_cpu_list)
{
    int cpus[16];
    int rc = fwq_cpu_list_parse(list_cases[_i].text, cpus, list_cases[_i].max);

    ck_assert_msg(rc == list_cases[_i].rc, "'%s': %d", list_cases[_i].text, rc);
    for (int i = 0; i < rc; i++)
        ck_assert_int_eq(cpus[i], list_cases[_i].cpus[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fwq_stats");
    TCase *tc = tcase_create("fwq_stats");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_rotation, 0, (int)N(rotation_sizes));
    tcase_add_loop_test(tc, test_detour_stats, 0, (int)N(detour_cases));
    tcase_add_test(tc, test_rebase);
    tcase_add_loop_test(tc, test_source_of, 0, (int)N(source_cases));
    tcase_add_test(tc, test_source_names);
    tcase_add_test(tc, test_switch_layout);
    tcase_add_loop_test(tc, test_switch_layout_refuses, 0, (int)N(bad_formats));
    tcase_add_loop_test(tc, test_attribute, 0, (int)N(attribute_cases));
    tcase_add_loop_test(tc, test_cpu_list, 0, (int)N(list_cases));
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
