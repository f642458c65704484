/*
 * Memory-controller (uncore) events encoded by libpfm4 on any CPU, as libpfm4's own tests do:
 * each check runs in its own forked process with LIBPFM_FORCE_PMU naming the PMU, so libpfm4
 * activates it whatever the machine. Debian 12's libpfm4 (4.13) activates a forced
 * snbep_unc_imc0 on any CPU; the later Intel IMC PMUs also need the CPU model, so elsewhere they
 * must fail with a clear error, and encode on their own generation's hardware.
 */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "np_test.h"
#include "numaplace/perf.h"

START_TEST(test_forced_pmu_encodes)
{
    const struct np_uncore_pmu *p = np_uncore_pmu_at((size_t)_i);
    struct np_err err = {0};
    uint64_t rd = 0, wr = 0;
    int rc;

    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(strstr(p->read_event, p->pmu));
    ck_assert_ptr_nonnull(strstr(p->write_event, p->pmu));
    setenv("LIBPFM_FORCE_PMU", p->pmu, 1); /* this forked process only */
    rc = np_uncore_encode(p, &rd, &wr, &err);
#if !defined(__x86_64__) && !defined(__i386__)
    /* libpfm4 has no Intel PMU off x86, forced or not (test_not_x86_says_why) */
    ck_assert_int_eq(rc, -EOPNOTSUPP);
    ck_assert_msg(strstr(err.msg, p->read_event) && strstr(err.msg, "x86 machines alone"), "%s",
                  err.msg);
    return;
#endif
    if (strcmp(p->pmu, "snbep_unc_imc0") == 0) {
        ck_assert_msg(rc == 0, "%s", err.msg);
        /* UNC_M_CAS_COUNT is event 0x04; umask RD 0x03, WR 0x0c (SNB-EP uncore guide) */
        ck_assert_uint_eq(rd, 0x304);
        ck_assert_uint_eq(wr, 0xc04);
    } else if (rc == 0) {
        ck_assert_uint_ne(rd, 0);
        ck_assert_uint_ne(wr, rd);
    } else {
        ck_assert_int_eq(rc, -ENOENT);
        ck_assert_ptr_nonnull(strstr(err.msg, p->read_event));
        ck_assert_ptr_nonnull(strstr(err.msg, "LIBPFM_FORCE_PMU"));
    }
}
END_TEST

#if defined(__x86_64__) || defined(__i386__)
/* Whether /proc/cpuinfo's first vendor_id is @p vendor (x86's vendor names). */
static bool cpu_vendor_is(const char *vendor)
{
    char line[256];
    bool is = false;
    FILE *f = fopen("/proc/cpuinfo", "r");

    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "vendor_id", 9) == 0) {
            is = strstr(line, vendor) != NULL;
            break;
        }
    if (f)
        fclose(f);
    return is;
}
#endif

START_TEST(test_detect_says_why)
{
    char why[256] = "";
    const struct np_uncore_pmu *p = np_uncore_detect(why, sizeof(why));

    if (p) /* a machine with an Intel IMC: its events encode */
    {
        struct np_err err = {0};
        uint64_t rd = 0, wr = 0;
        ck_assert_int_eq(np_uncore_encode(p, &rd, &wr, &err), 0);
        return;
    }
    ck_assert_ptr_nonnull(strstr(why, "unavailable: no uncore memory-controller PMU ("));
#if defined(__x86_64__) || defined(__i386__)
    /* libpfm4 4.13 cannot encode AMD's: said, not guessed. Only an x86 build asks: an arm64 one
     * under qemu-user reads the host's /proc/cpuinfo, which may name AMD. */
    if (cpu_vendor_is("AuthenticAMD"))
        ck_assert_msg(strstr(why, "it has no AMD UMC or DF PMU"), "%s", why);
#endif
}
END_TEST

/*
 * Off x86 (arm64): the memory controllers' counters are Intel's, so detection says so, naming
 * the architecture, and encoding refuses with the same reason and writes no code: never a
 * figure from a PMU that is not there. On x86 the reason, when there is one, is never the
 * architecture's.
 */
START_TEST(test_not_x86_says_why)
{
    char why[256] = "";
    const struct np_uncore_pmu *p = np_uncore_detect(why, sizeof(why));
#if defined(__x86_64__) || defined(__i386__)
    ck_assert_msg(p || !strstr(why, "x86 machines alone"), "%s", why);
#else
    struct np_err err = {0};
    uint64_t rd = 7, wr = 7;

    ck_assert_ptr_null(p);
    ck_assert_msg(strncmp(why, "unavailable: no uncore memory-controller PMU (", 46) == 0 &&
                      strstr(why, "Intel's IMC PMUs, which x86 machines alone have"),
                  "%s", why);
#if defined(__aarch64__)
    ck_assert_msg(strstr(why, "this build is for arm64)"), "%s", why);
#endif
    ck_assert_int_eq(np_uncore_encode(np_uncore_pmu_at(0), &rd, &wr, &err), -EOPNOTSUPP);
    ck_assert_msg(strstr(err.msg, "x86 machines alone"), "%s", err.msg);
    ck_assert_uint_eq(rd, 7);
    ck_assert_uint_eq(wr, 7);
#endif
}
END_TEST

/* ---- the reader: sysfs roots in test/fixtures/roots/uncore-* ---- */

static const char *devices_of(const char *root)
{
    static char path[4200];
    ck_assert_int_lt(snprintf(path, sizeof(path), "%s/sys", np_test_root(root)), (int)sizeof(path));
    return path;
}

/* Every way the reader refuses a node's sysfs, each naming what it read. */
static const struct {
    const char *root;
    int rc;
    const char *says;
} refusals[] = {
    {"uncore-none", -ENOENT, "no uncore_imc_<N> PMU in "},
    {"uncore-badtype", -EINVAL, "uncore_imc_0/type: \"imc\" is not a PMU type number"},
    {"uncore-octal", -EINVAL, "uncore_imc_0/cpumask: missing or not a CPU list"},
    {"uncore-unknown-pmu", -ENOENT, "uncore_imc_0 on CPU 0: perf_event_open: "},
    {"no-such-root", -ENOENT, "bus/event_source/devices: No such file"},
};

START_TEST(test_reader_refuses)
{
    struct np_uncore_reader r;
    struct np_err err = {0};
    const int rc = np_uncore_open(&r, devices_of(refusals[_i].root), 0, 0, &err);

    /* qemu-user (the arm64 lane) has no perf_event_open: the same refusal, with its errno */
    if (rc == -ENOSYS && strstr(refusals[_i].says, "perf_event_open"))
        fprintf(stderr, "%s: perf_event_open gives ENOSYS here, not ENOENT\n", refusals[_i].root);
    else
        ck_assert_int_eq(rc, refusals[_i].rc);
    ck_assert_msg(strstr(err.msg, refusals[_i].says), "%s: %s", refusals[_i].root, err.msg);
    ck_assert_msg(strncmp(r.why, "unavailable: ", 13) == 0 && strstr(r.why, refusals[_i].says),
                  "%s", r.why);
    ck_assert_uint_eq(r.nboxes, 0);
    ck_assert_ptr_null(r.boxes);
    np_uncore_close(&r); /* twice is harmless */
}
END_TEST

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* The whole path with real perf_event_open and read: the fixture's PMUs are the kernel's
 * software PMU (type 1), counting CPU time in ns as if it were CAS lines. */
START_TEST(test_reader_counts)
{
    struct np_uncore_reader r;
    struct np_err err = {0};
    const int rc = np_uncore_open(&r, devices_of("uncore-2socket"), PERF_COUNT_SW_CPU_CLOCK,
                                  PERF_COUNT_SW_CPU_CLOCK, &err);
    volatile double spin = 0;
    double t0;

    if (rc == -EACCES || rc == -EPERM) { /* not root, paranoid: the message says what to do */
        ck_assert_ptr_nonnull(strstr(err.msg, "perf_event_paranoid"));
        return;
    }
    if (rc == -ENOSYS) { /* qemu-user (the arm64 lane) has no perf_event_open: said, not counted */
        ck_assert_ptr_nonnull(strstr(err.msg, "perf_event_open: "));
        ck_assert_uint_eq(r.nboxes, 0);
        fprintf(stderr, "SKIPPED test_reader_counts: perf_event_open gives ENOSYS here\n");
        return;
    }
    ck_assert_msg(rc == 4, "rc %d: %s", rc, err.msg); /* two IMCs x CPUs 0-1; no free-running */
    for (size_t i = 0; i < r.nboxes; i++) {
        ck_assert_int_eq(strncmp(r.boxes[i].pmu, "uncore_imc_", 11), 0);
        ck_assert_uint_eq(r.boxes[i].cpu, i % 2);
        ck_assert(r.boxes[i].bytes_per_s < 0);
    }
    /* The counters are read inside [before, after]; the rate is over the times given (t1, t2). A
     * bound on the rate from the 50 ms spin would race the load (a read preempted after its
     * timestamp counts more than its interval), so the bytes are bounded by [before, after]. */
    const double before = now_s(), t1 = now_s();
    ck_assert_int_eq(np_uncore_sample(&r, t1), 0); /* one reading gives no rate yet */
    for (size_t i = 0; i < r.nboxes; i++)
        ck_assert_uint_eq(r.boxes[i].interval_bytes, 0);
    t0 = now_s();
    while (now_s() - t0 < 0.05)
        spin += 1;
    ck_assert(spin > 0); /* read, so clang does not call it set but unused */
    const double t2 = now_s();
    ck_assert_int_eq(np_uncore_sample(&r, t2), 4);
    const double after = now_s();
    /* each CPU ran for up to the time between the reads, counted twice (both "CAS" events are its
     * clock), 64 B/ns; the rate is the interval's bytes over t2 - t1 */
    for (size_t i = 0; i < r.nboxes; i++) {
        const double bytes = (double)r.boxes[i].interval_bytes;
        ck_assert_msg(r.boxes[i].interval_bytes > 0 && r.boxes[i].interval_bytes % 64 == 0 &&
                          bytes <= 2 * 64 * (after - before) * 1e9,
                      "%s cpu %u: %llu bytes in %.3f s", r.boxes[i].pmu, r.boxes[i].cpu,
                      (unsigned long long)r.boxes[i].interval_bytes, after - before);
        ck_assert_msg(fabs(r.boxes[i].bytes_per_s - bytes / (t2 - t1)) <= 1e-9 * bytes / (t2 - t1),
                      "%s cpu %u: %g B/s for %g bytes in %g s", r.boxes[i].pmu, r.boxes[i].cpu,
                      r.boxes[i].bytes_per_s, bytes, t2 - t1);
    }
    np_uncore_close(&r);
    ck_assert_uint_eq(r.nboxes, 0);
}
END_TEST

/* A counter that gives less than its 8 bytes is -EIO, not whatever errno held before. */
START_TEST(test_short_read)
{
    struct np_uncore_box box = {.bytes_per_s = -1};
    struct np_uncore_reader r = {.boxes = &box, .nboxes = 1};
    int fds[2][2];

    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(pipe(fds[k]), 0);
        ck_assert_int_eq(write(fds[k][1], "half", 4), 4);
        box.fd[k] = fds[k][0];
    }
    errno = EPERM;
    ck_assert_int_eq(np_uncore_sample(&r, 1.0), -EIO);
    for (int k = 0; k < 2; k++) {
        close(fds[k][0]);
        close(fds[k][1]);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("uncore");
    TCase *tc = tcase_create("uncore");
    size_t n = 0;

    while (np_uncore_pmu_at(n))
        n++;
    tcase_add_loop_test(tc, test_forced_pmu_encodes, 0, (int)n);
    tcase_add_test(tc, test_detect_says_why);
    tcase_add_test(tc, test_not_x86_says_why);
    tcase_add_loop_test(tc, test_reader_refuses, 0, (int)(sizeof(refusals) / sizeof(refusals[0])));
    tcase_add_test(tc, test_reader_counts);
    tcase_add_test(tc, test_short_read);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
