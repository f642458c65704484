/*
 * np_spin: a user-mode busy loop and a hardware-counter hog, for the arm64 guest's PMU cases.
 *
 *   np_spin --loop N [--self-count]   N iterations of a register-only loop; with --self-count it
 *                                     counts its own cycles and instructions (perf_event_open on
 *                                     itself from its first line, kernel and user mode, as
 *                                     numaplaced counts) and prints one JSON line
 *                                     {"pid", "cycles", "instructions"} when done
 *   np_spin --hog K --pid PID --until PATH
 *                                     holds one group of K hardware counters (a cycles leader and
 *                                     K-1 instructions events) on process PID until PATH exists;
 *                                     prints "hogging K counters on PID" once it is open, then
 *                                     exits 0
 *
 * The hog's group sits in the same task's list as the events numaplaced opened on it, at the
 * same (flexible) priority: when both cannot be on the PMU at once, the kernel rotates them every
 * tick, so each counts part of the time. What a test of multiplexing needs, even for events that
 * are one group (a CPU-wide or pinned hog would be scheduled first and starve a group for good).
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

static int open_counter(uint64_t config, pid_t pid, int group_fd)
{
    struct perf_event_attr attr;

    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = config;
    return (int)syscall(SYS_perf_event_open, &attr, pid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
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
        cycles = open_counter(PERF_COUNT_HW_CPU_CYCLES, 0, -1);
        instructions = open_counter(PERF_COUNT_HW_INSTRUCTIONS, 0, -1);
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

static int hog(int k, pid_t pid, const char *until)
{
    const struct timespec poll = {0, 50 * 1000 * 1000};
    struct stat st;
    int leader = -1;

    for (int i = 0; i < k; i++) {
        const int fd = open_counter(i == 0 ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_HW_INSTRUCTIONS,
                                    pid, leader);
        if (fd < 0) {
            fprintf(stderr, "np_spin: counter %d on process %d: perf_event_open: %s\n", i, (int)pid,
                    strerror(errno));
            return 1;
        }
        if (i == 0)
            leader = fd;
    }
    printf("hogging %d counters on %d\n", k, (int)pid);
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
    if (argc == 7 && strcmp(argv[1], "--hog") == 0 && strcmp(argv[3], "--pid") == 0 &&
        strcmp(argv[5], "--until") == 0)
        return hog(atoi(argv[2]), (pid_t)atoi(argv[4]), argv[6]);
    fprintf(stderr,
            "usage: np_spin --loop N [--self-count] | np_spin --hog K --pid PID --until PATH\n");
    return 2;
}
