/*
 * Memory-controller (uncore) events encoded by libpfm4 on any CPU, as libpfm4's own tests do:
 * each check runs in its own forked process with LIBPFM_FORCE_PMU naming the PMU, so libpfm4
 * activates it whatever the machine. Debian 12's libpfm4 (4.13) activates a forced
 * snbep_unc_imc0 on any CPU; the later Intel IMC PMUs also need the CPU model, so elsewhere they
 * must fail with a clear error, and encode on their own generation's hardware.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/uncore.h"

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
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
