/*
 * The sampler on /proc trees the suite writes in a temp root (processes must appear, vanish and
 * be replaced between samples): a job's processes and descendants, their CPU time and pages per
 * node, a process that exits, a pid reused by another process, and perf turned off.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "numaplace/sampler.h"

struct fake_proc {
    pid_t pid;
    unsigned utime, stime;    /* clock ticks */
    unsigned long long start; /* starttime, ticks after boot */
    const char *children;     /* task/<pid>/children */
    const char *numa_maps;
};

static char root[64];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static void write_proc(const struct fake_proc *p)
{
    char path[256], text[512];

    snprintf(path, sizeof(path), "%s/proc/%d/task/%d", root, (int)p->pid, (int)p->pid);
    for (char *s = path + strlen(root) + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(path, 0755);
            *s = '/';
        }
    mkdir(path, 0755);
    snprintf(text, sizeof(text),
             "%d (job) S 1 %d %d 0 -1 4194560 100 0 2 0 %u %u 0 0 20 0 1 0 %llu 10000000 50 "
             "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
             (int)p->pid, (int)p->pid, (int)p->pid, p->utime, p->stime, p->start);
    snprintf(path, sizeof(path), "%s/proc/%d/stat", root, (int)p->pid);
    write_file(path, text);
    snprintf(path, sizeof(path), "%s/proc/%d/status", root, (int)p->pid);
    write_file(path, "Name:\tjob\nThreads:\t1\nvoluntary_ctxt_switches:\t7\n"
                     "nonvoluntary_ctxt_switches:\t3\n");
    snprintf(path, sizeof(path), "%s/proc/%d/task/%d/status", root, (int)p->pid, (int)p->pid);
    write_file(path, "Name:\tjob\nvoluntary_ctxt_switches:\t7\nnonvoluntary_ctxt_switches:\t3\n");
    snprintf(path, sizeof(path), "%s/proc/%d/task/%d/children", root, (int)p->pid, (int)p->pid);
    write_file(path, p->children);
    snprintf(path, sizeof(path), "%s/proc/%d/numa_maps", root, (int)p->pid);
    write_file(path, p->numa_maps);
}

static void remove_proc(pid_t pid)
{
    char cmd[256], path[256];

    /* As in /proc, a file of an exited process kept open reads nothing more. */
    snprintf(path, sizeof(path), "%s/proc/%d/stat", root, (int)pid);
    ck_assert_int_eq(truncate(path, 0), 0);
    snprintf(path, sizeof(path), "%s/proc/%d/task/%d/children", root, (int)pid, (int)pid);
    ck_assert_int_eq(truncate(path, 0), 0);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s/proc/%d'", root, (int)pid);
    ck_assert_int_eq(system(cmd), 0);
}

/* A job: task 400 with a child 401 (pages on nodes 0 and 1). */
static const struct fake_proc parent = {400,
                                        250,
                                        50,
                                        1000,
                                        "401 ",
                                        "7f0000000000 default anon=10 dirty=10 N0=6 N1=4 "
                                        "kernelpagesize_kB=4\n"};
static const struct fake_proc child = {401,
                                       100,
                                       0,
                                       1001,
                                       "",
                                       "7f1000000000 default anon=5 dirty=5 N1=5 "
                                       "kernelpagesize_kB=4\n"};

static void setup(void)
{
    snprintf(root, sizeof(root), "/tmp/np-sampler.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    write_proc(&parent);
    write_proc(&child);
}

static void teardown(void)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}

static struct np_fd_budget budget;

/* @p keep_open: the sampler keeps its /proc files open between samples (the daemon's way). */
static void start_with(struct np_sampler *s, bool keep_open)
{
    struct np_err err = {0};

    ck_assert_int_eq(
        np_sampler_init(s, root, 0, "perf backend turned off (backends=proc)", NULL, 0, "0", &err),
        0);
    budget.left = 100;
    if (keep_open)
        np_sampler_set_fd_budget(s, &budget);
    ck_assert_int_eq(np_sampler_add_task(s, parent.pid, &err), 0);
}

static void start(struct np_sampler *s)
{
    start_with(s, false);
}

/* What changes between the first sample and the second, and what the second must show. */
static const struct {
    const char *name;
    pid_t remove;          /* this process exits in between (0: none) */
    bool reuse_parent_pid; /* the parent's pid now belongs to a process started later */
    int processes;         /* live processes the second sample finds */
    uint64_t node0_pages, node1_pages;
} cases[] = {
    {"nothing changes", 0, false, 2, 6, 9},
    {"the child exits", 401, false, 1, 6, 4},
    {"the whole job exits", 400, false, 0, 0, 0},
    {"the parent's pid is reused", 0, true, 0, 0, 0},
};

/* Each case twice: files read afresh each time (_i even) and kept open (_i odd). */
START_TEST(test_job_over_time)
{
    const uint64_t page = 4096;
    const bool keep_open = _i % 2 == 1;
    struct np_sampler s;
    struct np_sample first, second;
    const double tick = (double)sysconf(_SC_CLK_TCK);

    _i /= 2;
    start_with(&s, keep_open);
    ck_assert_int_eq(np_sampler_sample(&s, np_monotonic_s(), NULL, true, true, &first), 2);
    ck_assert(first.have_proc && first.have_pages);
    ck_assert_double_eq_tol(first.utime_s, (250.0 + 100.0) / tick, 1e-9);
    ck_assert_double_eq_tol(first.stime_s, 50.0 / tick, 1e-9);
    ck_assert_uint_eq(first.node_bytes[0], 6 * page);
    ck_assert_uint_eq(first.node_bytes[1], 9 * page);

    if (cases[_i].remove)
        remove_proc(cases[_i].remove);
    if (cases[_i].remove == parent.pid)
        remove_proc(child.pid); /* its child goes with it */
    if (cases[_i].reuse_parent_pid) {
        struct fake_proc other = parent;
        other.start = 99999; /* another process, started later, got pid 400 */
        other.children = "";
        write_proc(&other);
    }
    ck_assert_int_eq(np_sampler_sample(&s, np_monotonic_s() + 1, NULL, true, true, &second),
                     cases[_i].processes);
    ck_assert_uint_eq(second.processes, (unsigned)cases[_i].processes);
    if (cases[_i].processes > 0) {
        ck_assert_uint_eq(second.node_bytes[0], cases[_i].node0_pages * page);
        ck_assert_uint_eq(second.node_bytes[1], cases[_i].node1_pages * page);
    }
    if (keep_open) /* the live processes' stat, children and (read at detail) status files */
        ck_assert_int_eq(budget.left, 100 - 3 * cases[_i].processes);
    if (cases[_i].processes > 0 && !cases[_i].reuse_parent_pid) {
        /* Context switches through a kept status file are those of now, as read afresh. */
        struct np_sample third;
        char path[256];
        ck_assert(second.have_cs);
        ck_assert_uint_eq(second.voluntary_cs, 7u * (unsigned)cases[_i].processes);
        snprintf(path, sizeof(path), "%s/proc/%d/status", root, (int)parent.pid);
        write_file(path, "Name:\tjob\nvoluntary_ctxt_switches:\t70\n"
                         "nonvoluntary_ctxt_switches:\t30\n");
        np_sampler_sample(&s, np_monotonic_s() + 2, NULL, false, true, &third);
        ck_assert_uint_eq(third.voluntary_cs, 70u + 7u * (unsigned)(cases[_i].processes - 1));
        ck_assert_uint_eq(third.involuntary_cs, 30u + 3u * (unsigned)(cases[_i].processes - 1));
        /* A status file longer than the kept read's buffer (a node of thousands of CPUs): its
         * last lines, the context switches, come from the line reader, not as zero. */
        {
            static char big[12000];
            size_t len = (size_t)snprintf(big, sizeof(big), "Name:\tjob\n");
            while (len < 9000)
                len += (size_t)snprintf(big + len, sizeof(big) - len, "Padding:\t%0100d\n", 0);
            snprintf(big + len, sizeof(big) - len,
                     "voluntary_ctxt_switches:\t700\nnonvoluntary_ctxt_switches:\t300\n");
            write_file(path, big);
            np_sampler_sample(&s, np_monotonic_s() + 3, NULL, false, true, &third);
            ck_assert_uint_eq(third.voluntary_cs, 700u + 7u * (unsigned)(cases[_i].processes - 1));
        }
    }
    np_sampler_fini(&s);
    ck_assert_int_eq(budget.left, 100); /* every kept descriptor given back */
}
END_TEST

/* What the pages of the second sample are after one change (the first read 6 and 9 pages). */
static const struct {
    const char *name;
    bool vmstat;      /* /proc/vmstat exists (else no reading is ever reused) */
    const char *bump; /* "" none, "minflt" the parent faulted, "migrated" pages moved */
    uint64_t node0_pages;
} reuse_cases[] = {
    {"nothing moved: the reading holds", true, "", 6},
    {"the parent faulted", true, "minflt", 8},
    {"pages migrated on the node", true, "migrated", 8},
    {"no /proc/vmstat: read again", false, "", 8},
};

static void write_vmstat(unsigned migrated)
{
    char path[128], text[256];

    snprintf(path, sizeof(path), "%s/proc/vmstat", root);
    snprintf(text, sizeof(text),
             "nr_free_pages 1000\npgmigrate_success %u\npgmigrate_fail 3\n"
             "thp_collapse_alloc 2\n",
             migrated);
    write_file(path, text);
}

START_TEST(test_pages_reused_while_nothing_moved)
{
    const uint64_t page = 4096;
    struct np_sampler s;
    struct np_sample first, second;
    struct fake_proc changed = parent;
    char path[128];

    if (reuse_cases[_i].vmstat)
        write_vmstat(5);
    start_with(&s, true);
    ck_assert_int_eq(np_sampler_sample(&s, np_monotonic_s(), NULL, true, false, &first), 2);
    ck_assert_uint_eq(first.node_bytes[0], 6 * page);
    /* The parent's pages now say 8 on node 0; what else changed decides whether it is read. */
    changed.numa_maps = "7f0000000000 default anon=12 dirty=12 N0=8 N1=4 kernelpagesize_kB=4\n";
    snprintf(path, sizeof(path), "%s/proc/%d/numa_maps", root, (int)parent.pid);
    write_file(path, changed.numa_maps);
    if (strcmp(reuse_cases[_i].bump, "minflt") == 0) {
        /* minflt 100 -> 101, all else the same */
        snprintf(path, sizeof(path), "%s/proc/%d/stat", root, (int)parent.pid);
        {
            FILE *f = fopen(path, "w");
            ck_assert_ptr_nonnull(f);
            fprintf(f,
                    "%d (job) S 1 %d %d 0 -1 4194560 101 0 2 0 250 50 0 0 20 0 1 0 %llu "
                    "10000000 50 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 "
                    "0\n",
                    (int)parent.pid, (int)parent.pid, (int)parent.pid, parent.start);
            fclose(f);
        }
    } else if (strcmp(reuse_cases[_i].bump, "migrated") == 0) {
        write_vmstat(6);
    }
    ck_assert_int_eq(np_sampler_sample(&s, np_monotonic_s() + 1, NULL, true, false, &second), 2);
    ck_assert_msg(second.have_pages, "%s", reuse_cases[_i].name);
    ck_assert_uint_eq(second.node_bytes[0], reuse_cases[_i].node0_pages * page);
    ck_assert_uint_eq(second.node_bytes[1], 9 * page);
    /* However still, a reading is walked again after NP_PROC_CACHE_MAX_REUSE uses. */
    for (int k = 1; k <= NP_PROC_CACHE_MAX_REUSE; k++)
        ck_assert_int_eq(
            np_sampler_sample(&s, np_monotonic_s() + 1 + k, NULL, true, false, &second), 2);
    ck_assert_uint_eq(second.node_bytes[0], 8 * page);
    np_sampler_fini(&s);
}
END_TEST

START_TEST(test_perf_off_says_why)
{
    struct np_sampler s;
    struct np_sample out;

    start(&s);
    np_sampler_sample(&s, np_monotonic_s(), NULL, true, false, &out);
    for (int e = 0; e < NP_PERF_NEVENTS; e++) {
        ck_assert(!out.have_perf[e]);
        ck_assert_msg(strstr(out.perf_reason[e], "backends=proc") != NULL, "event %d: '%s'", e,
                      out.perf_reason[e]);
    }
    np_sampler_fini(&s);
}
END_TEST

/* Interrupts skipped at an interval and read after the sample (the daemon's way when a job's
 * processes are gone) give the figures of a full read; skipped, the sample says so. */
START_TEST(test_node_counters_irq_skipped_then_read)
{
    char cmd[512];
    struct np_node_counters full, lazy;
    struct np_sampler s;
    struct np_sample a, b;

    snprintf(cmd, sizeof(cmd), "cp -r '%s/roots/host/proc/.' '%s/proc/'",
             getenv("NUMAPLACE_FIXTURES"), root);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(np_node_counters_init(&full, 8), 0);
    ck_assert_int_eq(np_node_counters_init(&lazy, 8), 0);
    start(&s);
    np_node_counters_read(&full, root);
    ck_assert(full.have_irq && full.have_busy);
    np_sampler_sample(&s, np_monotonic_s(), &full, false, false, &a);
    ck_assert(a.have_irq && a.interrupts > 0 && a.softirqs > 0);

    np_node_counters_read(&lazy, root); /* an earlier interval read them */
    np_node_counters_skip_irq(&lazy);
    np_node_counters_read_cpu(&lazy, root);
    np_sampler_sample(&s, np_monotonic_s(), &lazy, false, false, &b);
    ck_assert(!b.have_irq);
    ck_assert_uint_eq(b.interrupts, 0);
    ck_assert_ptr_nonnull(strstr(b.irq_reason, "not read at this interval"));
    ck_assert(b.have_cpu_busy);
    ck_assert_double_eq(b.cpus_busy_s, a.cpus_busy_s);

    np_node_counters_read_irq(&lazy, root);
    np_sampler_node_figures(&s, &lazy, &b);
    ck_assert(b.have_irq && b.have_cpu_busy);
    ck_assert_uint_eq(b.interrupts, a.interrupts);
    ck_assert_uint_eq(b.softirqs, a.softirqs);
    ck_assert_double_eq(b.cpus_busy_s, a.cpus_busy_s);
    ck_assert_str_eq(b.irq_reason, a.irq_reason);
    np_sampler_fini(&s);
    np_node_counters_fini(&full);
    np_node_counters_fini(&lazy);
}
END_TEST

/* A parent forking wide: every child is seen (a bound of 256 children a parent once hid the
 * rest, silently); past the step's bound, the sample says it was cut. */
START_TEST(test_wide_step)
{
    const int nchildren = _i == 0 ? 1000 : NP_SAMPLER_MAX_PROCESSES + 100;
    const size_t cap = (size_t)nchildren * 8 + 1;
    char *list = malloc(cap);
    struct fake_proc p = parent, c = child;
    struct np_sampler s;
    struct np_sample out;
    size_t len = 0;

    ck_assert_ptr_nonnull(list);
    c.numa_maps = "";
    for (int k = 0; k < nchildren; k++) {
        c.pid = 10000 + k;
        write_proc(&c);
        len += (size_t)snprintf(list + len, cap - len, "%d ", 10000 + k);
    }
    p.children = list;
    write_proc(&p);
    start_with(&s, _i == 0);
    np_sampler_sample(&s, np_monotonic_s(), NULL, false, false, &out);
    if (_i == 0) {
        ck_assert_uint_eq(out.processes, (unsigned)nchildren + 1);
        ck_assert(!out.processes_cut);
    } else {
        ck_assert_uint_eq(out.processes, NP_SAMPLER_MAX_PROCESSES);
        ck_assert(out.processes_cut);
        ck_assert_ptr_nonnull(strstr(out.proc_reason, "the rest are left out"));
    }
    np_sampler_fini(&s);
    free(list);
}
END_TEST

START_TEST(test_add_task_refusals)
{
    struct np_sampler s;
    struct np_err err = {0};

    start(&s);
    ck_assert_int_eq(np_sampler_add_task(&s, 4242, &err), -ESRCH);
    ck_assert_int_eq(np_sampler_add_task(&s, parent.pid, &err), 0); /* twice: a no-op */
    ck_assert_uint_eq(s.ntasks, 1);
    np_sampler_fini(&s);
    ck_assert_int_eq(np_sampler_init(&s, root, 0, NULL, NULL, 0, "0-x", &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "0-x"));
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("sampler");
    TCase *tc = tcase_create("sampler");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120); /* test_wide_step writes 4,196 processes' files */
    tcase_add_loop_test(tc, test_job_over_time, 0, 2 * (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_loop_test(tc, test_pages_reused_while_nothing_moved, 0,
                        (int)(sizeof(reuse_cases) / sizeof(reuse_cases[0])));
    tcase_add_test(tc, test_perf_off_says_why);
    tcase_add_test(tc, test_add_task_refusals);
    tcase_add_loop_test(tc, test_wide_step, 0, 2);
    tcase_add_test(tc, test_node_counters_irq_skipped_then_read);
    suite_add_tcase(suite, tc);
    sr = srunner_create(suite);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
