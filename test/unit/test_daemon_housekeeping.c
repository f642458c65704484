/*
 * Where the helper runs: the housekeeping CPUs asked for, never the kernel's quiet CPUs
 * (nohz_full, isolcpus), read from captured /sys trees (test/fixtures/roots/quiet*); with
 * housekeeping_cpus=auto, where Slurm confines slurmd, read from a /proc tree made here.
 */
#include <check.h>
#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon.h"
#include "np_daemon_test.h"
#include "np_test.h"
#include "numaplace/summary.h"

static const struct {
    const char *root; /* fixture root, NULL: none (no such files) */
    const char *nohz, *isolated;
} quiet_cases[] = {
    {"quiet", "2-3", "3,5"},
    {"quiet-none", "", ""}, /* "(null)" and an empty file: none */
    {"host", "", ""},       /* no such files (an older kernel) */
};

START_TEST(quiet_cpus_are_read)
{
    hwloc_bitmap_t nohz = hwloc_bitmap_alloc(), isolated = hwloc_bitmap_alloc();
    char a[64], b[64];

    ck_assert_int_eq(housekeeping_quiet_cpus(np_test_root(quiet_cases[_i].root), nohz, isolated),
                     0);
    hwloc_bitmap_list_snprintf(a, sizeof(a), nohz);
    hwloc_bitmap_list_snprintf(b, sizeof(b), isolated);
    ck_assert_str_eq(a, quiet_cases[_i].nohz);
    ck_assert_str_eq(b, quiet_cases[_i].isolated);
    hwloc_bitmap_free(nohz);
    hwloc_bitmap_free(isolated);
}
END_TEST

static const struct {
    const char *name;
    const char *wanted, *started, *quiet;
    const char *chosen;
    int rc;
} choose_cases[] = {
    {"housekeeping CPUs, none quiet", "0-1", "0-7", "", "0-1", 0},
    {"a quiet housekeeping CPU is left out", "0-3", "0-7", "2-3,5", "0-1", 0},
    {"no housekeeping CPUs: all but the quiet ones", "", "0-7", "2-3,5", "0-1,4,6-7", 0},
    {"housekeeping CPUs all quiet: the others", "2-3", "0-7", "2-3,5", "0-1,4,6-7", 1},
    {"every CPU quiet: where it was started", "", "2-3", "2-3,5", "2-3", 2},
    {"nothing quiet, nothing asked: unchanged", "", "0-7", "", "0-7", 0},
};

START_TEST(helper_cpus_are_chosen)
{
    hwloc_bitmap_t wanted = hwloc_bitmap_alloc(), started = hwloc_bitmap_alloc(),
                   quiet = hwloc_bitmap_alloc(), chosen = hwloc_bitmap_alloc();
    char got[64];

    hwloc_bitmap_list_sscanf(wanted, choose_cases[_i].wanted);
    hwloc_bitmap_list_sscanf(started, choose_cases[_i].started);
    hwloc_bitmap_list_sscanf(quiet, choose_cases[_i].quiet);
    ck_assert_int_eq(housekeeping_choose(wanted, started, quiet, chosen), choose_cases[_i].rc);
    hwloc_bitmap_list_snprintf(got, sizeof(got), chosen);
    ck_assert_msg(strcmp(got, choose_cases[_i].chosen) == 0, "%s: %s", choose_cases[_i].name, got);
    hwloc_bitmap_free(wanted);
    hwloc_bitmap_free(started);
    hwloc_bitmap_free(quiet);
    hwloc_bitmap_free(chosen);
}
END_TEST

/* A step's report says when its CPUs were the helper's too, and `numaplace report` shows it. */
static const struct {
    const char *helper, *job, *reload; /* reload: the helper's CPUs after a reload, or NULL */
    const char *shared, *text;
} shared_cases[] = {
    {"0-1", "1-3", NULL, "1", "shared with this step: CPUs 1 (the helper runs on 0-1)"},
    {"0-1", "2-3", NULL, "", "0-1, none of this step's"},
    {"0-1", "2-3", "2", "2", "shared with this step: CPUs 2 (the helper runs on 2)"},
    {"2", "2-3", "0", "2", "shared with this step: CPUs 2 (the helper runs on 0)"}, /* stays */
};

START_TEST(shared_cpus_are_reported)
{
    struct np_test_daemon t;
    struct np_err err = {0};
    struct np_daemon_job *j;
    char *text = NULL;
    size_t len = 0;
    FILE *out;
    json_t *report;

    np_test_daemon_init(&t);
    hwloc_bitmap_list_sscanf(t.d->helper_cpus, shared_cases[_i].helper);
    j = job_new(t.d, 42, 0, 0, shared_cases[_i].job, "", "low", &err);
    ck_assert_ptr_nonnull(j);
    job_note_helper_cpus(t.d, j);
    if (shared_cases[_i].reload) {
        hwloc_bitmap_list_sscanf(t.d->helper_cpus, shared_cases[_i].reload);
        job_note_helper_cpus(t.d, j);
    }
    report = np_report_new(&j->meta, &j->stats, true);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(report, "helper"), "shared_cpus")),
        shared_cases[_i].shared);
    out = open_memstream(&text, &len);
    ck_assert_int_eq(np_report_print(out, report), 0);
    fclose(out);
    ck_assert_msg(strstr(text, shared_cases[_i].text) != NULL, "%s", text);
    free(text);
    json_decref(report);
    np_test_daemon_fini(&t);
}
END_TEST

/* <root>/proc/<pid>/comm and status, as a process named @p comm with that parent and CPUs. */
static void put_process(const char *root, int pid, const char *comm, int ppid, const char *cpus)
{
    char path[1200];
    FILE *f;

    snprintf(path, sizeof(path), "%s/proc", root);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/proc/%d", root, pid);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/proc/%d/comm", root, pid);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fprintf(f, "%s\n", comm);
    fclose(f);
    snprintf(path, sizeof(path), "%s/proc/%d/status", root, pid);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fprintf(f, "Name:\t%s\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\nUid:\t0\t0\t0\t0\n", comm, pid, pid,
            ppid);
    fprintf(f, "Cpus_allowed:\tff\nCpus_allowed_list:\t%s\nMems_allowed_list:\t0\n", cpus);
    fclose(f);
}

static const struct {
    const char *name;
    const char *processes; /* "pid comm ppid cpus;..." */
    int rc;
    const char *cpus;
} slurmd_cases[] = {
    {"a confined slurmd", "1 systemd 0 0-7;40 slurmd 1 0,4;41 slurmstepd 1 0,4", 1, "0,4"},
    {"slurmd's own fork is not another slurmd", "40 slurmd 1 0,4;77 slurmd 40 0-7", 1, "0,4"},
    {"an unconfined slurmd", "40 slurmd 1 0-7", 1, "0-7"},
    {"no slurmd", "1 systemd 0 0-7;41 slurmstepd 1 2-3", 0, ""},
    {"two slurmds that disagree", "40 slurmd 1 0,4;50 slurmd 1 1,5", -EINVAL, ""},
    {"two that agree (several slurmd on one host)", "40 slurmd 1 0,4;50 slurmd 1 0,4", 1, "0,4"},
};

static void put_processes(const char *root, const char *spec)
{
    char copy[256], *save = NULL;

    snprintf(copy, sizeof(copy), "%s", spec);
    for (char *p = strtok_r(copy, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
        int pid, ppid;
        char comm[32], cpus[64];
        ck_assert_int_eq(sscanf(p, "%d %31s %d %63s", &pid, comm, &ppid, cpus), 4);
        put_process(root, pid, comm, ppid, cpus);
    }
}

START_TEST(slurmd_cpus_are_read)
{
    char root[] = "/tmp/np-slurmd-XXXXXX";
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();

    ck_assert_ptr_nonnull(mkdtemp(root));
    put_processes(root, slurmd_cases[_i].processes);
    ck_assert_int_eq(housekeeping_slurmd_cpus(root, cpus), slurmd_cases[_i].rc);
    ck_assert_str_eq(np_test_list(cpus), slurmd_cases[_i].cpus);
    hwloc_bitmap_free(cpus);
    nftw(root, np_test_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
END_TEST

/*
 * housekeeping_cpus=auto pins numaplaced where slurmd is confined, from the node's own /proc,
 * and asks slurmctld nothing: an scontrol first on PATH would leave a mark.
 */
START_TEST(auto_pins_where_slurmd_runs)
{
    struct np_test_daemon t;
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    char root[300], bin[300], mark[300], script[700], processes[128], first[16];
    const char *const old_path = getenv("PATH");
    char path[4096];
    FILE *f;
    int cpu;

    /* This process's first CPU stands for the node's specialized CPUs. */
    ck_assert_int_eq(np_affinity_get(0, mine), 0);
    cpu = hwloc_bitmap_first(mine);
    snprintf(first, sizeof(first), "%d", cpu);
    np_test_daemon_init(&t);
    snprintf(root, sizeof(root), "%s/root", t.dir);
    snprintf(bin, sizeof(bin), "%s/bin", t.dir);
    snprintf(mark, sizeof(mark), "%s/scontrol-ran", t.dir);
    ck_assert_int_eq(mkdir(root, 0755), 0);
    ck_assert_int_eq(mkdir(bin, 0755), 0);
    snprintf(script, sizeof(script), "%s/scontrol", bin);
    ck_assert_ptr_nonnull(f = fopen(script, "w"));
    fprintf(f, "#!/bin/sh\ntouch '%s'\necho 'NodeName=testhost CPUSpecList=%s'\n", mark, first);
    fclose(f);
    ck_assert_int_eq(chmod(script, 0755), 0);
    snprintf(path, sizeof(path), "%s:%s", bin, old_path ? old_path : "/usr/bin:/bin");
    setenv("PATH", path, 1); /* this test is single-threaded */
    snprintf(processes, sizeof(processes), "1 systemd 0 0-4095;40 slurmd 1 %s", first);
    put_processes(root, processes);
    snprintf(t.d->cfg.proc_root, sizeof(t.d->cfg.proc_root), "%s", root);
    snprintf(t.d->cfg.housekeeping_cpus, sizeof(t.d->cfg.housekeeping_cpus), "auto");

    sampling_pin_housekeeping(t.d);
    ck_assert_str_eq(np_test_list(t.d->helper_cpus), first);
    ck_assert_msg(strstr(t.log.text, "the CPUs Slurm confines slurmd to"), "%s", t.log.text);
    ck_assert_msg(access(mark, F_OK) != 0, "numaplaced ran scontrol");

    /* slurmd unconfined (it may run on every CPU numaplaced may): not pinned. */
    ck_assert_int_eq(np_affinity_set(0, mine), 0);
    hwloc_bitmap_zero(t.d->started_cpus);
    nftw(root, np_test_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    ck_assert_int_eq(mkdir(root, 0755), 0);
    put_processes(root, "40 slurmd 1 0-4095");
    t.log.text[0] = '\0';
    sampling_pin_housekeeping(t.d);
    ck_assert(hwloc_bitmap_isequal(t.d->helper_cpus, mine));
    ck_assert_msg(strstr(t.log.text, "slurmd is not confined to specialized CPUs"), "%s",
                  t.log.text);
    ck_assert_msg(access(mark, F_OK) != 0, "numaplaced ran scontrol");
    hwloc_bitmap_free(mine);
    np_test_daemon_fini(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_housekeeping");
    TCase *tc = tcase_create("cpus");

    tcase_add_loop_test(tc, quiet_cpus_are_read, 0,
                        (int)(sizeof(quiet_cases) / sizeof(quiet_cases[0])));
    tcase_add_loop_test(tc, helper_cpus_are_chosen, 0,
                        (int)(sizeof(choose_cases) / sizeof(choose_cases[0])));
    tcase_add_loop_test(tc, shared_cpus_are_reported, 0,
                        (int)(sizeof(shared_cases) / sizeof(shared_cases[0])));
    tcase_add_loop_test(tc, slurmd_cpus_are_read, 0,
                        (int)(sizeof(slurmd_cases) / sizeof(slurmd_cases[0])));
    tcase_add_test(tc, auto_pins_where_slurmd_runs);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
