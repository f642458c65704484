/*
 * helper_cost: what numaplaced costs, measured on a real numaplaced (run as root).
 *
 *   helper_cost NUMAPLACED [SECONDS] [MiB-per-process] [PROCESSES]
 *
 * Part 1, helper CPU: for 1, 16 and 64 monitored processes (each has touched MiB-per-process,
 * default 16, and then sleeps), and for each backend (proc; perf,proc), start numaplaced in a
 * temp directory with interval_ms=1000, register the processes as tasks of one job over the
 * real protocol, let it sample for SECONDS (default 30), and read the helper's CPU time from
 * /proc/<pid>/schedstat (nanoseconds) before and after: percent of one core. The configurations
 * are rotated round by round (3 rounds) so drift on a shared machine hits them all alike.
 *
 * Part 2, numa_maps against process size: a child touches 1 GiB, then 8 GiB, with transparent
 * huge pages allowed and refused (MADV_NOHUGEPAGE), and the median of 5 reads of its numa_maps
 * through np_numa_maps_usage, beside one read of stat + status, is printed.
 *
 * With PROCESSES, only that count with the proc backend, one round, and no part 2: a helper to
 * attach a profiler to (its pid is printed on stderr).
 *
 * With ratio:PROCESSES, that count with each backend, 3 rounds rotated, no part 2, and the ratio
 * of the two backends' medians: the figure to compare between machines whose CPUs differ in speed
 * (the emulated guests: an emulated core's time is no core's), since both are measured in one run
 * on one machine.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "numaplace/procfs.h"
#include "numaplace/protocol.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_ns(pid_t pid)
{
    char path[64];
    unsigned long long ns = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return -1;
    if (fscanf(f, "%llu", &ns) != 1)
        ns = 0;
    fclose(f);
    return (double)ns;
}

/* A process that touches @p mb MiB and sleeps until killed. */
static pid_t sleeper(long mb, bool hugepages)
{
    pid_t pid = fork();

    if (pid == 0) {
        size_t len = (size_t)mb << 20;
        char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            _exit(1);
        if (!hugepages)
            madvise(p, len, MADV_NOHUGEPAGE);
        memset(p, 1, len);
        for (;;)
            pause();
    }
    return pid;
}

static int ping(const char *sock)
{
    json_t *reply = NULL;
    int rc = np_proto_call(sock, "{\"v\":1,\"op\":\"ping\"}\n", 200, &reply, NULL);
    json_decref(reply);
    return rc;
}

static double helper_percent(const char *numaplaced, const char *backends, int nproc,
                             double seconds, long mb)
{
    char dir[] = "/tmp/np-helper-cost-XXXXXX", sock[128], cmd[4096];
    pid_t procs[64], helper;
    double before, after, t0, t1;

    if (!mkdtemp(dir))
        return -1;
    snprintf(sock, sizeof(sock), "%s/s.sock", dir);
    helper = fork();
    if (helper == 0) {
        char a[6][1200];
        snprintf(a[0], sizeof(a[0]), "--socket=%s", sock);
        snprintf(a[1], sizeof(a[1]), "--state_dir=%s/state", dir);
        snprintf(a[2], sizeof(a[2]), "--spool_dir=%s/spool", dir);
        snprintf(a[3], sizeof(a[3]), "--pid_file=");
        snprintf(a[4], sizeof(a[4]), "--log=%s/log", dir);
        snprintf(a[5], sizeof(a[5]), "--backends=%s", backends);
        execl(numaplaced, "numaplaced", "--config=/dev/null", a[0], a[1], a[2], a[3], a[4], a[5],
              "--housekeeping_cpus=none", "--interval_ms=1000", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 600 && ping(sock) != 0; i++) /* 30 s: an emulated guest starts slowly */
        usleep(50000);
    for (int i = 0; i < nproc; i++)
        procs[i] = sleeper(mb, true);
    usleep(300000); /* let them touch their memory */
    for (int i = 0; i < nproc; i++) {
        struct np_proto_request req = {.op = NP_OP_REGISTER};
        json_t *reply = NULL;
        char *line;
        req.reg = (struct np_task_reg){.job_id = 1,
                                       .step_id = 0,
                                       .uid = 0,
                                       .pid = procs[i],
                                       .task_id = i,
                                       .sensitivity = "low"};
        line = np_proto_encode(&req);
        /* 10 s: an emulated guest's numaplaced may take seconds over its first registration */
        if (np_proto_call(sock, line, 10000, &reply, NULL) < 0)
            fprintf(stderr, "helper_cost: registering pid %d failed\n", (int)procs[i]);
        json_decref(reply);
        free(line);
    }
    sleep(2); /* past the first samples and the start-up */
    fprintf(stderr, "helper_cost: numaplaced pid %d sampling %d processes\n", (int)helper, nproc);
    before = cpu_ns(helper);
    t0 = now_s();
    usleep((useconds_t)(seconds * 1e6));
    after = cpu_ns(helper);
    t1 = now_s();
    for (int i = 0; i < nproc; i++) {
        kill(procs[i], SIGKILL);
        waitpid(procs[i], NULL, 0);
    }
    kill(helper, SIGTERM);
    waitpid(helper, NULL, 0);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "helper_cost: could not remove %s\n", dir);
    return (after - before) / ((t1 - t0) * 1e9) * 100.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void numa_maps_cost(long gib, bool hugepages)
{
    pid_t child = sleeper(gib * 1024, hugepages);
    struct np_numa_usage usage;
    struct np_proc_stat st;
    struct np_proc_status ps;
    double times[5], t, st_us;

    /* wait until the child has touched it all */
    for (int i = 0; i < 600; i++) {
        if (np_proc_status_read(NULL, child, &ps, NULL) == 0 &&
            ps.vm_rss_kb >= (uint64_t)gib * 1024 * 1024 * 98 / 100)
            break;
        usleep(100000);
    }
    for (int i = 0; i < 5; i++) {
        t = now_s();
        np_numa_maps_usage(NULL, child, &usage, NULL);
        times[i] = (now_s() - t) * 1e3;
    }
    qsort(times, 5, sizeof(double), cmp_double);
    t = now_s();
    np_proc_stat_read(NULL, child, &st, NULL);
    np_proc_status_read(NULL, child, &ps, NULL);
    st_us = (now_s() - t) * 1e6;
    printf("| %ld GiB | %s | %.1f MiB | %u | %.2f ms | %.0f us |\n", gib,
           hugepages ? "allowed" : "refused (4 KiB pages)", (double)usage.total_bytes / 1048576.0,
           usage.mappings, times[2], st_us);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

int main(int argc, char **argv)
{
    static const int counts[] = {1, 16, 64};
    static const char *const backends[] = {"proc", "perf,proc"};
    double seconds = argc > 2 ? atof(argv[2]) : 30;
    long mb = argc > 3 ? atol(argv[3]) : 16;
    const bool ratio = argc > 4 && strncmp(argv[4], "ratio:", 6) == 0;
    int only = argc > 4 ? atoi(argv[4] + (ratio ? 6 : 0)) : 0;
    double pct[3][2][3];

    if (argc < 2 || geteuid() != 0) {
        fprintf(stderr, "usage (as root): helper_cost NUMAPLACED [SECONDS] [MiB-per-process] "
                        "[PROCESSES]\n");
        return 2;
    }
    if (only < 0 || only > 64) {
        fprintf(stderr, "helper_cost: PROCESSES must be 1 to 64, not %s\n", argv[4]);
        return 2;
    }
    if (ratio && only > 0) {
        double r[2][3];
        for (int round = 0; round < 3; round++)
            for (int b = 0; b < 2; b++) {
                r[b][round] = helper_percent(argv[1], backends[b], only, seconds, mb);
                fprintf(stderr, "round %d: %d processes, %s: %.4f%%\n", round, only, backends[b],
                        r[b][round]);
            }
        qsort(r[0], 3, sizeof(double), cmp_double);
        qsort(r[1], 3, sizeof(double), cmp_double);
        printf("| processes | proc: %% of one core (median of 3, %g s each) | perf,proc | "
               "perf,proc / proc |\n|---|---|---|---|\n| %d | %.3f (%.3f-%.3f) | %.3f "
               "(%.3f-%.3f) | %.2f |\n",
               seconds, only, r[0][1], r[0][0], r[0][2], r[1][1], r[1][0], r[1][2],
               r[0][1] > 0 ? r[1][1] / r[0][1] : 0.0);
        return 0;
    }
    if (only > 0) {
        printf("| processes | backends | %% of one core (one run of %g s) |\n|---|---|---|\n"
               "| %d | proc | %.3f |\n",
               seconds, only, helper_percent(argv[1], "proc", only, seconds, mb));
        return 0;
    }
    printf("## numaplaced CPU, %g s per measurement, 3 rounds rotated, %ld MiB per process\n\n",
           seconds, mb);
    for (int round = 0; round < 3; round++)
        for (int c = 0; c < 3; c++)
            for (int b = 0; b < 2; b++) {
                pct[c][b][round] = helper_percent(argv[1], backends[b], counts[c], seconds, mb);
                fprintf(stderr, "round %d: %d processes, %s: %.4f%%\n", round, counts[c],
                        backends[b], pct[c][b][round]);
            }
    printf("| processes | backends | %% of one core (median of 3) | min | max |\n|---|---|---|---|"
           "---|\n");
    for (int c = 0; c < 3; c++)
        for (int b = 0; b < 2; b++) {
            qsort(pct[c][b], 3, sizeof(double), cmp_double);
            printf("| %d | %s | %.3f | %.3f | %.3f |\n", counts[c], backends[b], pct[c][b][1],
                   pct[c][b][0], pct[c][b][2]);
        }
    printf("\n## numa_maps read against process size (median of 5 reads)\n\n");
    printf("| touched | transparent huge pages | numa_maps total | mappings | numa_maps read | "
           "stat + status read |\n|---|---|---|---|---|---|\n");
    for (int hp = 1; hp >= 0; hp--) {
        numa_maps_cost(1, hp);
        numa_maps_cost(8, hp);
    }
    return 0;
}
