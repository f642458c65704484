/* /proc/<pid>/stat and status over fixtures and this process. */
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "np_test.h"
#include "numaplace/procfs.h"

static const struct {
    const char *line;
    int rc;
    const char *comm;
    char state;
    uint64_t utime, stime;
    long threads;
    int processor;
    unsigned long flags;
} stat_cases[] = {
    {"300 (my (odd) name) R 1 300 300 0 -1 4194560 1234 0 5 0 250 75 0 0 20 0 3 0 987654 "
     "10000000 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0",
     0, "my (odd) name", 'R', 250, 75, 3, 1, 4194560},
    {"42 (a b) S 1 42 42 0 -1 0 1 0 0 0 7 3 0 0 20 0 1 0 5 100 9 18446744073709551615 1 1 0 0 "
     "0 0 0 0 0 0 0 0 17 0",
     0, "a b", 'S', 7, 3, 1, 0, 0},
    /* killed, memory being torn down: PF_EXITING (0x4) set, not yet a zombie */
    {"51 (np_workload) D 1 51 51 0 -1 4194628 0 0 0 0 9 1 0 0 20 0 1 0 5 0 0", 0, "np_workload",
     'D', 9, 1, 1, -1, 4194628},
    {"7 ()) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0", 0, ")", 'Z', 0, 0, 1, -1, 0},
    /* a real-time task: negative priority; the largest counts a 64-bit field holds */
    {"77 (rt) S 1 77 77 0 -1 64 18446744073709551615 0 3 0 12 4 -5 -6 -21 0 2 0 99 1 2 "
     "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 99 1 0 0 0",
     0, "rt", 'S', 12, 4, 2, 1, 64},
    {"9 (x) R 1 9", -EINVAL, "", 0, 0, 0, 0, 0, 0},   /* truncated */
    {"9 x R 1 9 9 0", -EINVAL, "", 0, 0, 0, 0, 0, 0}, /* no comm */
    {"", -EINVAL, "", 0, 0, 0, 0, 0, 0},
};

START_TEST(test_stat_parse)
{
    struct np_proc_stat st;
    struct np_err err = {0};

    ck_assert_int_eq(np_proc_stat_parse(stat_cases[_i].line, &st, &err), stat_cases[_i].rc);
    if (stat_cases[_i].rc) {
        ck_assert_ptr_nonnull(strstr(err.msg, "malformed /proc stat line"));
        return;
    }
    ck_assert_str_eq(st.comm, stat_cases[_i].comm);
    ck_assert_int_eq(st.state, stat_cases[_i].state);
    ck_assert_uint_eq(st.utime_ticks, stat_cases[_i].utime);
    ck_assert_uint_eq(st.stime_ticks, stat_cases[_i].stime);
    ck_assert_int_eq(st.num_threads, stat_cases[_i].threads);
    ck_assert_int_eq(st.processor, stat_cases[_i].processor);
    ck_assert_uint_eq(st.flags, stat_cases[_i].flags);
}
END_TEST

/* The fields after the comm as strtoull reads them: the hand-written parser must agree. */
static void check_like_strtoull(const char *line)
{
    enum { MINFLT = 10, MAJFLT = 12, UTIME = 14, STIME, THREADS = 20, START = 22, RSS = 24 };
    uint64_t v[40] = {0};
    const char *p = strrchr(line, ')') + 3; /* past ") S " */
    struct np_proc_stat st;
    int field = 4;

    for (char *end; field < 40; field++, p = end) {
        v[field] = strtoull(p, &end, 10);
        if (end == p)
            break;
    }
    ck_assert_int_eq(np_proc_stat_parse(line, &st, NULL), 0);
    ck_assert_uint_eq(st.minflt, v[MINFLT]);
    ck_assert_uint_eq(st.majflt, v[MAJFLT]);
    ck_assert_uint_eq(st.utime_ticks, v[UTIME]);
    ck_assert_uint_eq(st.stime_ticks, v[STIME]);
    ck_assert_int_eq(st.num_threads, (long)v[THREADS]);
    ck_assert_uint_eq(st.starttime_ticks, v[START]);
    ck_assert_uint_eq(st.rss_pages, v[RSS]);
    ck_assert_int_eq(st.ppid, (pid_t)v[4]);
}

START_TEST(test_stat_parse_like_strtoull)
{
    char line[2048];
    FILE *f;

    for (size_t i = 0; i < sizeof(stat_cases) / sizeof(stat_cases[0]); i++)
        if (stat_cases[i].rc == 0)
            check_like_strtoull(stat_cases[i].line);
    f = fopen("/proc/self/stat", "re");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    check_like_strtoull(line);
}
END_TEST

START_TEST(test_read_fixture_and_self)
{
    struct np_proc_stat st;
    struct np_proc_status ps;
    struct np_err err = {0};
    char root[4096];

    snprintf(root, sizeof(root), "%s", np_test_root("host"));
    ck_assert_msg(np_proc_stat_read(root, 300, &st, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(st.minflt, 1234);
    ck_assert_uint_eq(st.majflt, 5);
    ck_assert_uint_eq(st.rss_pages, 2048);
    ck_assert_uint_eq(st.starttime_ticks, 987654);
    ck_assert_msg(np_proc_status_read(root, 300, &ps, &err) == 0, "%s", err.msg);
    ck_assert_str_ne(ps.cpus_allowed_list, "");
    ck_assert_str_ne(ps.mems_allowed_list, "");
    ck_assert_uint_gt(ps.vm_rss_kb, 0);

    ck_assert_int_eq(np_proc_stat_read(root, 99999, &st, &err), -ESRCH);
    ck_assert_ptr_nonnull(strstr(err.msg, "no process 99999"));
    ck_assert_int_eq(np_proc_status_read(root, 99999, &ps, &err), -ESRCH);

    ck_assert_int_eq(np_proc_stat_read(NULL, getpid(), &st, &err), 0);
    ck_assert_int_eq(st.pid, getpid());
    ck_assert_int_eq(st.ppid, getppid());
    ck_assert_int_eq(np_proc_status_read(NULL, getpid(), &ps, &err), 0);
    ck_assert_int_eq(ps.tgid, getpid());
    ck_assert_uint_eq(ps.uid, getuid());
}
END_TEST

START_TEST(test_cpu_counters)
{
    uint64_t per_cpu[8];
    struct np_err err = {0};
    char root[4096];

    /* Four online CPUs, 2 offline: columns map by the header, ERR/MIS are not per-CPU. */
    snprintf(root, sizeof(root), "%s", np_test_root("irq4"));
    ck_assert_int_eq(np_proc_cpu_counters(root, "interrupts", NULL, per_cpu, 8, &err), 5);
    ck_assert_uint_eq(per_cpu[0], 36 + 1 + 100 + 0 + 1000);
    ck_assert_uint_eq(per_cpu[1], 0 + 2 + 200 + 0 + 2000);
    ck_assert_uint_eq(per_cpu[2], 0);
    ck_assert_uint_eq(per_cpu[3], 3 + 300 + 3000);
    ck_assert_uint_eq(per_cpu[4], 4 + 400 + 4000);
    ck_assert_int_eq(np_proc_cpu_counters(root, "softirqs", NULL, per_cpu, 8, &err), 5);
    ck_assert_uint_eq(per_cpu[0], 16);
    ck_assert_uint_eq(per_cpu[4], 45);
    /* A table smaller than the machine: CPUs past it are not written. */
    ck_assert_int_eq(np_proc_cpu_counters(root, "softirqs", NULL, per_cpu, 2, &err), 5);
    ck_assert_uint_eq(per_cpu[1], 25);

    /* Captured from a two-CPU machine, and the live files. */
    snprintf(root, sizeof(root), "%s", np_test_root("host"));
    ck_assert_int_eq(np_proc_cpu_counters(root, "interrupts", NULL, per_cpu, 8, &err), 2);
    ck_assert_uint_gt(per_cpu[0] + per_cpu[1], 0);
    ck_assert_int_ge(np_proc_cpu_counters(NULL, "softirqs", NULL, per_cpu, 8, &err), 1);
    ck_assert_int_lt(np_proc_cpu_counters(root, "nonexistent", NULL, per_cpu, 8, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot read"));
}
END_TEST

/* Node files read through a kept descriptor: the figures of a fresh read, each time as the file
 * is now (rewritten in place between reads), an empty file refused alike, another root followed.
 * Each fixture file is copied to a temp root first, where it can change. */
static const struct {
    const char *fixture, *file;
} kept_cases[] = {
    {"host", "interrupts"},
    {"host", "softirqs"},
    {"irq4", "interrupts"},
    {"host", "stat"},
    {"host", "sys/kernel/numa_balancing"},
    {"host", "../sys/devices/system/node/node1/meminfo"},
};

/* The file's figures, through @p kept or afresh; the first figure bytes-compared. */
static int read_node_file(const char *root, const char *file, struct np_kept_file *kept,
                          uint64_t *values, struct np_err *err)
{
    memset(values, 0, 8 * sizeof(*values));
    if (strcmp(file, "stat") == 0)
        return np_proc_cpu_ticks(root, kept, values, NULL, 8, err);
    if (strstr(file, "meminfo"))
        return np_node_meminfo(root, 1, kept, &values[0], &values[1], err);
    if (strcmp(file, "sys/kernel/numa_balancing") == 0)
        return values[0] = (uint64_t)np_numa_balancing_enabled(root, kept, err), 0;
    return np_proc_cpu_counters(root, file, kept, values, 8, err);
}

static void expect_same(const char *root, const char *file, struct np_kept_file *kept)
{
    uint64_t fresh[8], through[8];
    struct np_err e1 = {0}, e2 = {0};

    ck_assert_int_eq(read_node_file(root, file, kept, through, &e2),
                     read_node_file(root, file, NULL, fresh, &e1));
    ck_assert_mem_eq(through, fresh, sizeof(fresh));
    ck_assert_str_eq(e2.msg, e1.msg);
}

START_TEST(test_kept_node_files)
{
    char tmp[64] = "/tmp/np-kept.XXXXXX", other[64] = "/tmp/np-kept2.XXXXXX", cmd[8192], path[256];
    const char *file = kept_cases[_i].file;
    struct np_kept_file kept;
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(tmp));
    ck_assert_ptr_nonnull(mkdtemp(other));
    snprintf(cmd, sizeof(cmd),
             "mkdir -p %s/proc/sys/kernel %s/sys/devices/system/node/node1 %s/proc && "
             "cp %s/proc/%s %s/proc/%s",
             tmp, tmp, other, np_test_root(kept_cases[_i].fixture), file, tmp, file);
    ck_assert_int_eq(system(cmd), 0);
    np_kept_file_init(&kept);
    expect_same(tmp, file, &kept);
    expect_same(tmp, file, &kept); /* read again through the same descriptor */
    ck_assert(kept.open);

    /* Rewritten in place (same inode, as /proc regenerates it): a 9 prepended to every number. */
    snprintf(cmd, sizeof(cmd),
             "f=%s/proc/%s; sed -E 's/(^|[ :])([0-9])/\\19\\2/g' $f >$f.new; cat $f.new >$f", tmp,
             file);
    ck_assert_int_eq(system(cmd), 0);
    expect_same(tmp, file, &kept);

    snprintf(path, sizeof(path), "%s/proc/%s", tmp, file);
    f = fopen(path, "w"); /* emptied: the same refusal as afresh */
    ck_assert_ptr_nonnull(f);
    fclose(f);
    expect_same(tmp, file, &kept);

    expect_same(other, file, &kept); /* another root: its (missing) file, not the kept one */
    np_kept_file_close(&kept);
    ck_assert(!kept.open);
    snprintf(cmd, sizeof(cmd), "rm -rf %s %s", tmp, other);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_cpu_busy_children_switches)
{
    uint64_t busy[8];
    struct np_err err = {0};
    char root[4096];
    pid_t kids[4], found[8];
    uint64_t vol = 0, invol = 0;
    int n;

    /* user + nice + system + irq + softirq; offline cpu2 stays 0; global line skipped */
    snprintf(root, sizeof(root), "%s", np_test_root("host"));
    ck_assert_int_eq(np_proc_cpu_ticks(root, NULL, busy, NULL, 8, &err), 4);
    ck_assert_uint_eq(busy[0], 10651 + 5 + 2546 + 7 + 16);
    ck_assert_uint_eq(busy[1], 12931 + 3565 + 48);
    ck_assert_uint_eq(busy[2], 0);
    ck_assert_uint_eq(busy[3], 100 + 50 + 1 + 2);
    ck_assert_int_eq(np_proc_cpu_ticks("/nonexistent", NULL, busy, NULL, 8, &err), -ENOENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/proc/stat"));

    /* Live: our children are found through /proc/<pid>/task/<tid>/children. */
    for (int i = 0; i < 3; i++) {
        kids[i] = fork();
        ck_assert_int_ge(kids[i], 0);
        if (kids[i] == 0) {
            pause();
            _exit(0);
        }
    }
    n = np_proc_children(NULL, getpid(), 0, found, 8, NULL, &err);
    ck_assert_int_eq(np_proc_children(NULL, getpid(), 1, found + 4, 4, NULL, &err),
                     3); /* main thread only */
    ck_assert_int_eq(n, 3);
    for (int i = 0; i < 3; i++) {
        bool seen = false;
        for (int k = 0; k < n; k++)
            seen = seen || found[k] == kids[i];
        ck_assert_msg(seen, "child %d not listed", (int)kids[i]);
    }
    ck_assert_int_eq(np_proc_children(NULL, getpid(), 0, found, 1, NULL, &err),
                     3); /* cut, but counted */
    for (int i = 0; i < 3; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    ck_assert_int_eq(np_proc_children(NULL, kids[0], 0, found, 8, NULL, &err), -ESRCH);

    /* Context switches summed over threads: sleeping voluntarily adds at least one. */
    ck_assert_int_eq(np_proc_ctxt_switches(NULL, getpid(), 0, &vol, &invol, NULL, NULL, &err), 0);
    usleep(1000);
    {
        uint64_t vol2 = 0, invol2 = 0;
        ck_assert_int_eq(np_proc_ctxt_switches(NULL, getpid(), 1, &vol2, &invol2, NULL, NULL, &err),
                         0);
        ck_assert_uint_gt(vol2, vol);
    }
    ck_assert_int_eq(np_proc_ctxt_switches(NULL, kids[0], 0, &vol, &invol, NULL, NULL, &err),
                     -ESRCH);
}
END_TEST

/* task/<tid>/children files (head, then body repeated): what is found with one thread. */
static const struct {
    const char *name, *head, *body;
    unsigned repeat;
    int found;
    pid_t first;
} children_cases[] = {
    {"three", "12 13 14 ", "", 0, 3, 12},
    {"empty", "", "", 0, 0, 0},
    /* longer than one read (4095 bytes): a number cut at the end is read again whole */
    {"cut across reads", "", "100000 ", 700, 700, 100000},
    /* fuzz_procfs: a number filling a whole read was re-read forever */
    {"one endless number", "", "1", 5000, 0, 0},
    {"a pid, then an endless number", "5 ", "9", 5000, 1, 5},
};

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

START_TEST(test_children_file)
{
    char root[] = "/tmp/np-children-XXXXXX", path[256];
    struct np_err err = {0};
    pid_t found[1024];
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(path, sizeof(path), "%s/proc/1/task/1", root);
    for (char *slash = strchr(path + strlen(root) + 1, '/'); slash;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        ck_assert_int_eq(mkdir(path, 0700), 0);
        *slash = '/';
    }
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/proc/1/task/1/children", root);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(children_cases[_i].head, f);
    for (unsigned i = 0; i < children_cases[_i].repeat; i++)
        fputs(children_cases[_i].body, f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_msg(np_proc_children(root, 1, 1, found, 1024, NULL, &err) == children_cases[_i].found,
                  "%s", children_cases[_i].name);
    if (children_cases[_i].found)
        ck_assert_int_eq(found[0], children_cases[_i].first);
    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
END_TEST

/* A process of more threads than are walked: the walk stops at the cap and says so; one of
 * exactly as many is walked whole. Each thread forked one child (pid 1000 + its tid). */
static const unsigned thread_counts[] = {NP_PROC_MAX_THREADS_WALKED,
                                         NP_PROC_MAX_THREADS_WALKED + 4};

START_TEST(test_thread_walk_is_capped)
{
    char root[] = "/dev/shm/np-threads-XXXXXX", path[256]; /* tmpfs: 4,100 directories */
    const unsigned threads = thread_counts[_i];
    static pid_t found[NP_PROC_MAX_THREADS_WALKED + 8];
    struct np_err err = {0};
    bool cut = true;
    int n;

    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(path, sizeof(path), "%s/proc", root);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/proc/1", root);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/proc/1/task", root);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    for (unsigned t = 1; t <= threads; t++) {
        FILE *f;
        snprintf(path, sizeof(path), "%s/proc/1/task/%u", root, t);
        ck_assert_int_eq(mkdir(path, 0700), 0);
        snprintf(path, sizeof(path), "%s/proc/1/task/%u/children", root, t);
        ck_assert_ptr_nonnull(f = fopen(path, "w"));
        fprintf(f, "%u ", 1000 + t);
        ck_assert_int_eq(fclose(f), 0);
    }
    n = np_proc_children(root, 1, (long)threads, found, NP_PROC_MAX_THREADS_WALKED + 8, &cut, &err);
    ck_assert_int_eq(n, NP_PROC_MAX_THREADS_WALKED);
    ck_assert(cut == (threads > NP_PROC_MAX_THREADS_WALKED));
    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
END_TEST

/* The kernel's own tiering, from a root of our own: demotion_enabled, then NUMA balancing's
 * mode bit 2; missing files are off. */
static const struct {
    const char *demotion, *balancing; /* NULL: no such file */
    const char *why;                  /* "" when off */
} tiering_cases[] = {
    {NULL, NULL, ""},
    {"false\n", "1\n", ""},
    {"true\n", "0\n",
     "the kernel demotes pages itself (/sys/kernel/mm/numa/demotion_enabled is true)"},
    {"false\n", "2\n",
     "NUMA balancing promotes pages itself (/proc/sys/kernel/numa_balancing is 2: tiering mode)"},
    {NULL, "3\n", "tiering mode"},
};

static void write_under(const char *root, const char *dir, const char *file, const char *text)
{
    char path[4096], cmd[8192];
    FILE *f;

    snprintf(cmd, sizeof(cmd), "mkdir -p '%s%s'", root, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(path, sizeof(path), "%s%s/%s", root, dir, file);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(test_kernel_tiering)
{
    char root[] = "/tmp/np-tiering.XXXXXX", why[160] = "x", cmd[128];

    ck_assert_ptr_nonnull(mkdtemp(root));
    if (tiering_cases[_i].demotion)
        write_under(root, "/sys/kernel/mm/numa", "demotion_enabled", tiering_cases[_i].demotion);
    if (tiering_cases[_i].balancing)
        write_under(root, "/proc/sys/kernel", "numa_balancing", tiering_cases[_i].balancing);
    ck_assert(np_kernel_tiering(root, why, sizeof(why)) == (tiering_cases[_i].why[0] != '\0'));
    ck_assert_msg(strstr(why, tiering_cases[_i].why) &&
                      (why[0] != '\0') == (tiering_cases[_i].why[0] != '\0'),
                  "case %d: \"%s\"", _i, why);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_numa_balancing)
{
    struct np_err err = {0};
    uint64_t migrated = 0, faults = 0;
    char root[4096];

    snprintf(root, sizeof(root), "%s", np_test_root("host"));
    ck_assert_int_eq(np_proc_numa_balancing(root, 300, &migrated, &faults, &err), 0);
    ck_assert_uint_eq(migrated, 512);
    ck_assert_uint_eq(faults, 2048);
    /* 100 has no sched file in the fixture: gone, as far as the reader can tell */
    ck_assert_int_eq(np_proc_numa_balancing(root, 100, &migrated, &faults, &err), -ESRCH);
    ck_assert_int_eq(np_numa_balancing_enabled(root, NULL, &err), 1);
    ck_assert_int_lt(np_numa_balancing_enabled("/nonexistent", NULL, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/proc/sys/kernel/numa_balancing"));
    /* live: this kernel answers one way or the other, and our own sched file reads */
    ck_assert_int_ge(np_numa_balancing_enabled(NULL, NULL, &err), 0);
    ck_assert_int_eq(np_proc_numa_balancing(NULL, getpid(), &migrated, &faults, &err), 0);
}
END_TEST

START_TEST(test_node_meminfo)
{
    struct np_err err = {0};
    uint64_t total = 0, free_bytes = 0;
    char root[4096];

    snprintf(root, sizeof(root), "%s", np_test_root("host"));
    ck_assert_int_eq(np_node_meminfo(root, 1, NULL, &total, &free_bytes, &err), 0);
    ck_assert_uint_eq(total, 1024ull << 20);
    ck_assert_uint_eq(free_bytes, 512ull << 20);
    ck_assert_int_eq(np_node_meminfo(root, 7, NULL, &total, &free_bytes, &err), -ENOENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "node7/meminfo"));
    ck_assert_int_eq(np_node_meminfo(NULL, 0, NULL, &total, &free_bytes, &err), 0); /* live */
    ck_assert_uint_gt(total, free_bytes);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("procfs");
    TCase *tc = tcase_create("procfs");
    tcase_set_timeout(tc, 60); /* the thread-walk case makes 4,100 directories */

    tcase_add_loop_test(tc, test_stat_parse, 0, sizeof(stat_cases) / sizeof(stat_cases[0]));
    tcase_add_test(tc, test_stat_parse_like_strtoull);
    tcase_add_test(tc, test_read_fixture_and_self);
    tcase_add_test(tc, test_cpu_counters);
    tcase_add_loop_test(tc, test_kept_node_files, 0,
                        (int)(sizeof(kept_cases) / sizeof(kept_cases[0])));
    tcase_add_test(tc, test_cpu_busy_children_switches);
    tcase_add_loop_test(tc, test_children_file, 0,
                        sizeof(children_cases) / sizeof(children_cases[0]));
    tcase_add_loop_test(tc, test_thread_walk_is_capped, 0,
                        (int)(sizeof(thread_counts) / sizeof(thread_counts[0])));
    tcase_add_test(tc, test_numa_balancing);
    tcase_add_loop_test(tc, test_kernel_tiering, 0,
                        sizeof(tiering_cases) / sizeof(tiering_cases[0]));
    tcase_add_test(tc, test_node_meminfo);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
