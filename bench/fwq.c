/*
 * fwq: OS noise on the CPUs a job would use, with and without numaplaced and numad (run as root).
 *
 *   fwq NUMAPLACED [--seconds S] [--rounds R] [--quantum-us U] [--cpus LIST] [--helper-cpus LIST]
 *       [--procs N] [--mib M] [--large-mib M] [--large-maps N] [--numad PATH|none]
 *
 * A fixed-work-quantum loop (FWQ, as in the OS-noise papers): one thread pinned on each job CPU
 * times equal work quanta (calibrated once to U us, default 50) with CLOCK_MONOTONIC; a quantum's
 * detour is its time minus the fastest quantum on that CPU over the whole run. Each measurement
 * is a fixed number of quanta (S seconds' worth, default 10) on every job CPU at once, in one of
 * six configurations, rotated round by round (R rounds, default 6: each configuration takes each
 * place in the rotation once per 6 rounds) so drift hits them all alike:
 *   a  no daemon;
 *   b  numaplaced sampling N processes (default 64, M MiB touched each, default 16) at 1 Hz;
 *   c  numaplaced while a rate-limited migration (the default 200 MB/s) runs: needs two NUMA
 *      nodes, else the row says unavailable and why;
 *   d  numaplaced reading the numa_maps of a large job (one process, --large-mib MiB in
 *      --large-maps mappings) every second, beside the N processes;
 *   e  numad at its default interval, f  numad -i 1 (the helper's 1 s rate).
 * The N processes and the large job live for the whole run (every configuration sees the same
 * memory); each daemon is started for its measurement and stopped after it. Triggers are off in
 * numaplaced, so b and d are sampling only. Reported per configuration: the ratio of total FWQ
 * time to a, the detour distribution, the daemon's CPU time (every thread's
 * /proc/PID/task/TID/schedstat), and where detours went: sched_switch records on each job CPU
 * (perf_event_open on the tracepoint, CLOCK_MONOTONIC) say which task ran in the FWQ thread's
 * place; what no switch explains is time lost in place (interrupts, the tick, the hypervisor).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fwq_run.h"
#include "fwq_trace.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The work of one quantum: dependent integer arithmetic the compiler cannot fold. */
static uint64_t work(uint64_t iters, uint64_t seed)
{
    volatile uint64_t x = seed;

    for (uint64_t i = 0; i < iters; i++)
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x;
}

struct fwq_thread {
    uint64_t iters;
    size_t quanta;
    uint64_t *stamps; /* quanta + 1 */
    pthread_barrier_t *start;
    int *done; /* FWQ threads finished, atomically */
    int cpu;
    int32_t tid;
};

static void *fwq_thread_main(void *arg)
{
    struct fwq_thread *t = arg;
    uint64_t sink = 0;

    t->tid = (int32_t)syscall(SYS_gettid);
    pthread_barrier_wait(t->start);
    t->stamps[0] = now_ns();
    for (size_t i = 0; i < t->quanta; i++) {
        sink += work(t->iters, i);
        t->stamps[i + 1] = now_ns();
    }
    __atomic_fetch_add(t->done, 1, __ATOMIC_RELEASE);
    return (void *)(uintptr_t)(sink & 1);
}

int fwq_measure(struct fwq_run *run, struct fwq_slot *slot, struct fwq_trace *trace)
{
    struct fwq_thread th[FWQ_MAX_CPUS];
    pthread_t tids[FWQ_MAX_CPUS];
    struct pollfd fds[FWQ_MAX_CPUS];
    pthread_barrier_t start;
    int rc = 0, started = 0, done = 0;

    pthread_barrier_init(&start, NULL, (unsigned)run->ncpu + 1);
    for (int i = 0; i < run->ncpu; i++) {
        pthread_attr_t attr;
        cpu_set_t set;

        th[i] = (struct fwq_thread){.cpu = run->cpus[i],
                                    .iters = run->iters,
                                    .quanta = run->quanta,
                                    .stamps = slot->stamps[i],
                                    .start = &start,
                                    .done = &done};
        CPU_ZERO(&set);
        CPU_SET(run->cpus[i], &set);
        pthread_attr_init(&attr);
        pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
        rc = -pthread_create(&tids[i], &attr, fwq_thread_main, &th[i]);
        pthread_attr_destroy(&attr);
        if (rc < 0)
            break;
        started++;
    }
    if (rc < 0) {
        /* the barrier cannot release the threads already started: this is fatal */
        fprintf(stderr, "fwq: pthread_create: %s\n", strerror(-rc));
        exit(1);
    }
    pthread_barrier_wait(&start);
    /* asleep until a ring is half full (its drain shows as "this benchmark") or the end */
    for (int i = 0; i < trace->ncpu; i++)
        fds[i] = (struct pollfd){.fd = trace->fd[i], .events = POLLIN};
    while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < started) {
        if (poll(fds, (nfds_t)trace->ncpu, 200) <= 0)
            continue;
        for (int i = 0; i < trace->ncpu; i++)
            if (fds[i].revents & POLLIN)
                fwq_trace_drain(trace, i);
    }
    for (int i = 0; i < started; i++) {
        pthread_join(tids[i], NULL);
        slot->tids[i] = th[i].tid;
    }
    pthread_barrier_destroy(&start);
    return rc;
}

/* Iterations of work() whose fastest of 300 quanta on @p cpu takes about @p target_ns. */
static uint64_t calibrate(int cpu, uint64_t target_ns)
{
    cpu_set_t set, old;
    uint64_t iters = 1000;

    sched_getaffinity(0, sizeof(old), &old);
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
    for (int pass = 0; pass < 4; pass++) {
        uint64_t best = UINT64_MAX;
        for (int i = 0; i < 300; i++) {
            uint64_t t0 = now_ns();
            work(iters, (uint64_t)i);
            uint64_t d = now_ns() - t0;
            if (d < best)
                best = d;
        }
        iters = (uint64_t)((double)iters * (double)target_ns / (double)(best ? best : 1));
        if (iters < 1)
            iters = 1;
    }
    sched_setaffinity(0, sizeof(old), &old);
    return iters;
}

static void usage(void)
{
    fprintf(stderr,
            "usage (as root): fwq NUMAPLACED [--seconds S (10)] [--rounds R (6)] "
            "[--quantum-us U (50)]\n"
            "  [--cpus LIST (every CPU this process may use)] [--helper-cpus LIST (none: the "
            "daemons share the job's CPUs)]\n"
            "  [--procs N (64)] [--mib M (16)] [--large-mib M (2048)] [--large-maps N (2048)] "
            "[--numad PATH|none (/usr/bin/numad)]\n");
}

static int parse_list(const char *opt, const char *text, int *cpus, int *n)
{
    int rc = fwq_cpu_list_parse(text, cpus, FWQ_MAX_CPUS);

    if (rc <= 0) {
        fprintf(stderr, "fwq: %s=%s: expected a CPU list such as 0-3,8 (at most %d CPUs)\n", opt,
                text, FWQ_MAX_CPUS);
        return -1;
    }
    *n = rc;
    return 0;
}

static int parse_positive(const char *opt, const char *text, double max, double *out)
{
    char *end;
    double v = strtod(text, &end);

    if (end == text || *end != '\0' || !(v > 0) || v > max) {
        fprintf(stderr, "fwq: %s=%s: expected a number above 0 and at most %g\n", opt, text, max);
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"seconds", required_argument, NULL, 's'},
                                             {"rounds", required_argument, NULL, 'r'},
                                             {"quantum-us", required_argument, NULL, 'q'},
                                             {"cpus", required_argument, NULL, 'c'},
                                             {"helper-cpus", required_argument, NULL, 'H'},
                                             {"procs", required_argument, NULL, 'p'},
                                             {"mib", required_argument, NULL, 'm'},
                                             {"large-mib", required_argument, NULL, 'L'},
                                             {"large-maps", required_argument, NULL, 'M'},
                                             {"numad", required_argument, NULL, 'n'},
                                             {NULL, 0, NULL, 0}};
    struct fwq_run run = {.seconds = 10,
                          .rounds = 6,
                          .quantum_us = 50,
                          .procs = 64,
                          .mib = 16,
                          .large_mib = 2048,
                          .large_maps = 2048,
                          .numad = "/usr/bin/numad"};
    double v;
    int opt;

    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        const char *name = longopts[0].name;
        for (size_t i = 0; longopts[i].name; i++)
            if (longopts[i].val == opt)
                name = longopts[i].name;
        switch (opt) {
        case 's':
            if (parse_positive(name, optarg, 3600, &run.seconds) < 0)
                return 2;
            break;
        case 'r':
            if (parse_positive(name, optarg, 1000, &v) < 0)
                return 2;
            run.rounds = (unsigned)v;
            break;
        case 'q':
            if (parse_positive(name, optarg, 100000, &run.quantum_us) < 0)
                return 2;
            break;
        case 'c':
            if (parse_list(name, optarg, run.cpus, &run.ncpu) < 0)
                return 2;
            break;
        case 'H':
            if (parse_list(name, optarg, run.helper_cpus, &run.nhelper_cpus) < 0)
                return 2;
            snprintf(run.helper_cpu_text, sizeof(run.helper_cpu_text), "%s", optarg);
            break;
        case 'p':
            if (parse_positive(name, optarg, FWQ_MAX_PROCS, &v) < 0)
                return 2;
            run.procs = (int)v;
            break;
        case 'm':
            if (parse_positive(name, optarg, 1 << 20, &v) < 0)
                return 2;
            run.mib = (long)v;
            break;
        case 'L':
            if (parse_positive(name, optarg, 1 << 24, &v) < 0)
                return 2;
            run.large_mib = (long)v;
            break;
        case 'M':
            if (parse_positive(name, optarg, 60000, &v) < 0)
                return 2;
            run.large_maps = (long)v;
            break;
        case 'n':
            run.numad = strcmp(optarg, "none") == 0 ? NULL : optarg;
            break;
        default:
            usage();
            return 2;
        }
    }
    if (optind != argc - 1 || geteuid() != 0) {
        usage();
        return 2;
    }
    run.numaplaced = argv[optind];
    if (run.ncpu == 0) {
        cpu_set_t set;
        sched_getaffinity(0, sizeof(set), &set);
        for (int c = 0; c < CPU_SETSIZE && run.ncpu < FWQ_MAX_CPUS; c++)
            if (CPU_ISSET(c, &set))
                run.cpus[run.ncpu++] = c;
    }
    if (run.rounds < 1)
        run.rounds = 1;
    run.iters = calibrate(run.cpus[0], (uint64_t)(run.quantum_us * 1000.0));
    run.quanta = (size_t)(run.seconds * 1e6 / run.quantum_us);
    if (run.quanta < 10)
        run.quanta = 10;
    return fwq_run(&run) < 0 ? 1 : 0;
}
