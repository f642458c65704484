/*
 * np_spin: a user-mode busy loop and a hardware-counter hog, for the arm64 guest's PMU cases.
 *
 *   np_spin --loop N [--self-count]   N iterations of a register-only loop; with --self-count it
 *                                     counts its own cycles and instructions (perf_event_open on
 *                                     itself from its first line, kernel and user mode, as
 *                                     numaplaced counts) and prints one JSON line
 *                                     {"pid", "cycles", "instructions"} when done
 *   np_spin --hog K --until PATH      holds K hardware counters on every online CPU (one cycles
 *                                     event and K-1 instructions events, CPU-wide and pinned, so
 *                                     the kernel gives them counters before any other event)
 *                                     until PATH exists; prints "hogging K counters on M CPUs"
 *                                     once they are all on, then exits 0
 *
 * The hog leaves other processes' events fewer counters than they ask for, so the kernel
 * multiplexes them: what a test of multiplexing needs, on any PMU, without knowing the events of
 * the process it watches.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int open_counter(uint64_t config, pid_t pid, int cpu, int pinned)
{
    struct perf_event_attr attr;

    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = config;
    attr.pinned = (unsigned)pinned;
    return (int)syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static uint64_t read_counter(int fd)
{
    uint64_t v = 0;

    if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
        perror("np_spin: read");
        exit(1);
    }
    return v;
}

static int spin(unsigned long long n, int self_count)
{
    int cycles = -1, instructions = -1;
    unsigned long long acc = 0;

    if (self_count) {
        cycles = open_counter(PERF_COUNT_HW_CPU_CYCLES, 0, -1, 0);
        instructions = open_counter(PERF_COUNT_HW_INSTRUCTIONS, 0, -1, 0);
        if (cycles < 0 || instructions < 0) {
            fprintf(stderr, "np_spin: perf_event_open on itself: %s\n", strerror(errno));
            return 1;
        }
    }
    /* The accumulator lives in a register: no memory traffic, no system call. */
    for (unsigned long long i = 0; i < n; i++)
        __asm__ volatile("" : "+r"(acc) : "r"(i));
    if (self_count)
        printf("{\"pid\": %d, \"cycles\": %" PRIu64 ", \"instructions\": %" PRIu64 "}\n",
               (int)getpid(), read_counter(cycles), read_counter(instructions));
    return acc == 1 ? 2 : 0; /* never 2: keeps acc alive */
}

static int hog(int k, const char *until)
{
    const long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
    const struct timespec poll = {0, 50 * 1000 * 1000};
    struct stat st;

    for (long cpu = 0; cpu < ncpus; cpu++)
        for (int i = 0; i < k; i++) {
            const int fd = open_counter(
                i == 0 ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_HW_INSTRUCTIONS, -1, (int)cpu, 1);
            if (fd < 0) {
                fprintf(stderr, "np_spin: counter %d on CPU %ld: perf_event_open: %s\n", i, cpu,
                        strerror(errno));
                return 1;
            }
        }
    printf("hogging %d counters on %ld CPUs\n", k, ncpus);
    fflush(stdout);
    while (stat(until, &st) != 0)
        nanosleep(&poll, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--loop") == 0) {
        const unsigned long long n = strtoull(argv[2], NULL, 10);
        return spin(n, argc >= 4 && strcmp(argv[3], "--self-count") == 0);
    }
    if (argc == 5 && strcmp(argv[1], "--hog") == 0 && strcmp(argv[3], "--until") == 0)
        return hog(atoi(argv[2]), argv[4]);
    fprintf(stderr, "usage: np_spin --loop N [--self-count] | np_spin --hog K --until PATH\n");
    return 2;
}
