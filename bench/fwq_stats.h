/*
 * fwq_stats: the arithmetic of bench/fwq apart from its measuring, so that a unit suite
 * (test/unit/test_fwq_stats.c) checks it: the rotation of configurations, the detour statistics,
 * the decoding of sched_switch records and the attribution of a detour to what ran in its place.
 * Nothing here allocates except fwq_cpu_list_parse's caller-sized output; all arrays are borrowed.
 */
#ifndef NUMAPLACE_BENCH_FWQ_STATS_H
#define NUMAPLACE_BENCH_FWQ_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The configuration a rotation runs at @p position of @p round: each configuration once per
 * round, and over @p nconfigs rounds each one takes every position once (drift on a shared
 * machine hits them all alike). */
size_t fwq_rotation_config(unsigned round, unsigned position, size_t nconfigs);

/** Detour thresholds counted by fwq_detour_stats, in ns. */
#define FWQ_THRESHOLDS 3
extern const uint32_t fwq_threshold_ns[FWQ_THRESHOLDS];

struct fwq_detour_stats {
    size_t quanta;
    uint64_t quantum_total_ns; /**< sum of the quanta's times */
    uint64_t detour_total_ns;  /**< sum of their detours */
    uint32_t p50_ns, p99_ns, p999_ns, max_ns;
    size_t over[FWQ_THRESHOLDS]; /**< detours strictly above fwq_threshold_ns[i] */
};

/**
 * Detours of @p n quanta: @p durations_ns[i] minus @p fastest_ns (the fastest quantum on that
 * CPU over the whole run), percentiles by nearest rank. @p scratch (n entries) receives the
 * sorted detours. @return 0, or -EINVAL when a duration is below @p fastest_ns.
 */
int fwq_detour_stats(const uint32_t *durations_ns, size_t n, uint32_t fastest_ns, uint32_t *scratch,
                     struct fwq_detour_stats *out);

/**
 * A quantum of @p duration_ns on a CPU whose fastest quantum took @p own_fastest_ns, expressed
 * against @p common_fastest_ns (the detour kept, so all CPUs share one minimum), at most
 * UINT32_MAX: a quantum recorded at that cap (over 4.29 s, a starved CPU) must stay at the cap,
 * not wrap to a short one.
 */
uint32_t fwq_rebase(uint32_t duration_ns, uint32_t own_fastest_ns, uint32_t common_fastest_ns);

/** Where a detour's time went: what ran on the CPU instead of the FWQ thread. */
enum fwq_source {
    FWQ_SRC_NUMAPLACED,
    FWQ_SRC_NUMAD,
    FWQ_SRC_KWORKER,
    FWQ_SRC_KSOFTIRQD,
    FWQ_SRC_KTHREAD, /**< other kernel threads (rcu, migration, khugepaged, kcompactd, ...) */
    FWQ_SRC_BENCH,   /**< this benchmark's own processes (comm "fwq") */
    FWQ_SRC_OTHER,   /**< every other process: other users' work on a shared machine */
    FWQ_SRC_COUNT
};

/** Printed name of @p src ("numaplaced", "other processes", ...). */
const char *fwq_source_name(enum fwq_source src);

/** The source a task's comm (as sched_switch records it) belongs to. */
enum fwq_source fwq_source_of(const char *comm);

/** One sched_switch record on one CPU. */
struct fwq_switch {
    uint64_t t_ns; /**< CLOCK_MONOTONIC */
    int32_t prev_pid, next_pid;
    char next_comm[16];
};

/** Field offsets of a sched_switch raw record, from the tracepoint's format file. */
struct fwq_switch_layout {
    unsigned prev_pid, next_pid, next_comm, comm_size, min_size;
};

/**
 * Read the offsets of prev_pid, next_pid and next_comm from the text of
 * events/sched/sched_switch/format. @return 0, or -EINVAL when a field is missing or malformed.
 */
int fwq_switch_layout_parse(const char *format_text, struct fwq_switch_layout *out);

/** Decode one raw record of @p len bytes. @return 0, or -EINVAL when it is too short. */
int fwq_switch_decode(const void *raw, size_t len, const struct fwq_switch_layout *layout,
                      uint64_t t_ns, struct fwq_switch *out);

/**
 * Attribute the time other tasks ran on a CPU while the FWQ thread @p fwq_tid timed its quanta
 * there: quantum i runs from @p stamps[i] to @p stamps[i + 1] (n quanta, n + 1 stamps). @p ev
 * (sorted by time) are that CPU's switches. Each stretch from a switch away from @p fwq_tid to
 * the switch back is split by the switches inside it, and each piece's time is added to
 * @p ns_by_source by the task that ran it; bit (1 << source) of @p mask[i] is set for each
 * quantum a piece falls in. Pieces are clipped to [stamps[0], stamps[n]]. A task named like a
 * daemon counts as that daemon only when its TID is one of @p daemon_tids (another user's
 * numaplaced on a shared machine is one of "other processes").
 */
void fwq_attribute(const uint64_t *stamps, size_t n, const struct fwq_switch *ev, size_t nev,
                   int32_t fwq_tid, const int32_t *daemon_tids, size_t ndaemon_tids,
                   uint64_t ns_by_source[FWQ_SRC_COUNT], uint8_t *mask);

/**
 * Parse a CPU list ("0-3,8") into @p cpus (at most @p max). @return the count, or -EINVAL on a
 * malformed list, a descending range or a number above 65535, -E2BIG past @p max.
 */
int fwq_cpu_list_parse(const char *text, int *cpus, int max);

#endif
