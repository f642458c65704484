/*
 * numaplace/sampler.h - the live backends (proc and perf) for one job on this node.
 *
 * A sampler follows a job's tasks (registered pids) and their descendants (found through
 * /proc/<pid>/task/<tid>/children each interval) and fills one np_sample per call. perf counters
 * are opened on each task when it is added, with inheritance, so threads and children count
 * from the start. Figures that depend on the node as a whole (interrupts, softirqs, CPU busy
 * time) are read once per interval for all jobs (np_node_counters) and summed over the job's
 * CPUs. Every reader takes a filesystem root.
 */
#ifndef NUMAPLACE_SAMPLER_H
#define NUMAPLACE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <hwloc.h>

#include "numaplace/common.h"
#include "numaplace/perf.h"
#include "numaplace/procfs.h"

/* What a sampler keeps about a job's processes from one interval to the next, so that each interval
 * costs less than reading every file afresh:
 *
 * - their /proc/<pid>/stat, main-thread children and status files stay open and are read with pread
 *   (an open(2) and close(2) of a /proc file cost more than generating it), within a budget of
 *   descriptors shared by every cache of the process (struct np_fd_budget);
 * - their last numa_maps reading, with what it depended on: a process whose faults and resident
 *   size have not moved, on a node where no page has migrated, no huge page was collapsed and
 *   KSM has not scanned since (struct np_pages_epoch), has the same pages per node, so the page
 *   table walk is not repeated.
 *
 * A kept descriptor outlives its process harmlessly: reading it fails (-ESRCH), and the pid is
 * opened again by path in case another process got it. Entries are kept sorted by pid.
 * Ownership: the cache owns its entries and descriptors; the budget is borrowed. */
/** A reading is used at most this many times in a row, then walked again: a change no counter
 *  shows (another process's ptrace write to a copy-on-write page) lasts a bounded time. */
#define NP_PROC_CACHE_MAX_REUSE 9

/** Descriptors the caches of one process may keep open between them (0: none kept). */
struct np_fd_budget {
    long left;
};

/** What must not have changed on the node for a numa_maps reading to hold (/proc/vmstat's
 * pgmigrate_success and thp_collapse_alloc, KSM's full_scans). */
struct np_pages_epoch {
    bool known; /**< false: could not be read, so no reading is reused */
    uint64_t migrated, collapsed, ksm_scans;
};

struct np_proc_entry {
    pid_t pid;
    uint64_t starttime_ticks;
    int stat_fd, children_fd, status_fd; /**< -1: not kept */
    bool seen;                           /**< found in the current interval */
    /* the last numa_maps reading and what it depended on */
    bool have_pages;
    unsigned reuses; /**< times the reading was used again since it was walked */
    uint64_t node_bytes[NP_SAMPLE_MAX_NODES];
    uint64_t pages_minflt, pages_majflt, pages_rss;
    struct np_pages_epoch pages_epoch;
};

struct np_proc_cache {
    char root[1024];
    struct np_fd_budget *budget;   /**< borrowed; NULL: no descriptor is kept */
    struct np_proc_entry *entries; /**< owned, sorted by pid */
    unsigned count, cap;
};

#define NP_SAMPLER_MAX_PROCESSES 4096 /**< per job and interval; more are left out and said */

/** Node-wide per-CPU counters, read once per interval. */
struct np_node_counters {
    unsigned max_cpus;
    uint64_t *interrupts, *softirqs, *busy_ticks; /**< by CPU number */
    uint64_t *all_ticks; /**< by CPU number: every tick the kernel accounted, idle too */
    unsigned cpus_read;  /**< CPUs in the last /proc/stat reading (0: none) */
    bool have_irq, have_busy, balancing; /**< balancing: the kernel's NUMA balancing is on */
    bool irq_read; /**< interrupts and softirqs were read (or tried) at this interval */
    /** owned: the node files, kept open between intervals (np_kept_file) */
    struct np_kept_file interrupts_file, softirqs_file, stat_file, balancing_file;
    char irq_reason[NP_REASON_MAX], busy_reason[NP_REASON_MAX], balancing_reason[NP_REASON_MAX];
};

/** @return 0 or -ENOMEM. Free with np_node_counters_fini (accepts NULL). */
NP_API int np_node_counters_init(struct np_node_counters *nc, unsigned max_cpus);
NP_API void np_node_counters_fini(struct np_node_counters *nc);

/** Read /proc/interrupts, /proc/softirqs, /proc/stat and whether NUMA balancing is on, under
 * @p root. Failures are recorded as reasons in @p nc, never returned. */
NP_API void np_node_counters_read(struct np_node_counters *nc, const char *root);

/** The part of np_node_counters_read for /proc/interrupts and /proc/softirqs. They are the
 * costliest node files (the kernel walks every interrupt descriptor) and a job's report needs
 * only its first and last reading: a caller that records no trace may skip them at the other
 * intervals (np_node_counters_skip_irq), with the same figures in reports. */
NP_API void np_node_counters_read_irq(struct np_node_counters *nc, const char *root);

/** Mark interrupts and softirqs not read at this interval (have_irq false, with the reason). */
NP_API void np_node_counters_skip_irq(struct np_node_counters *nc);

/** The rest of np_node_counters_read: /proc/stat and whether NUMA balancing is on. */
NP_API void np_node_counters_read_cpu(struct np_node_counters *nc, const char *root);

struct np_sampler_task {
    pid_t pid;
    uint64_t starttime_ticks; /**< to tell the task from a later process with its pid */
    bool gone;
    int last_node;        /**< NUMA node of the CPU it last ran on, -1 unknown */
    uint64_t misses_seen; /**< LLC misses already attributed to a node */
    struct np_perf_counters perf;
};

struct np_sampler {
    char root[1024];
    unsigned perf_mask; /**< events to open on each task (0: perf backend off) */
    char perf_off_reason[NP_REASON_MAX];
    const int *cpu_node; /**< borrowed: NUMA node of each CPU number, -1 unknown */
    unsigned ncpu_node;
    hwloc_bitmap_t cpus; /**< owned: the job's CPUs as registered (interrupts, busy time) */
    /** owned: cpus narrowed to where its processes may run (their Cpus_allowed_list, read every
     *  detail interval); empty until narrowed. np_sampler_effective_cpus reads it. */
    hwloc_bitmap_t effective_cpus;
    struct np_sampler_task *tasks;
    unsigned ntasks, cap;
    uint64_t misses_by_node[NP_SAMPLE_MAX_NODES];
    double t0;            /**< CLOCK_MONOTONIC seconds at init */
    bool pages_read;      /**< numa_maps read at least once */
    pid_t *pids;          /**< owned: the processes the last sample found (for migration) */
    uint64_t *starttimes; /**< owned: their start times (clock ticks), to tell a reused pid */
    unsigned npids;
    uint64_t rss_at_pages;      /**< the job's RSS when numa_maps was last read */
    struct np_proc_cache cache; /**< owned: kept descriptors and readings (np_proc_cache) */
};

/**
 * @param root filesystem root of /proc (NULL = "/")
 * @param perf_mask events to open on each task (NP_PERF_*_MASK), 0 for none
 * @param perf_off_reason why perf is off (reported per event) when @p perf_mask is 0, or NULL
 * @param cpu_node borrowed array mapping CPU number to NUMA node (may be NULL)
 * @param cpus the job's CPUs as a list ("0-3,8"); "" or NULL: the tasks' affinity at add time
 * @return 0, -EINVAL (bad @p cpus) or -ENOMEM, with @p err
 */
NP_API int np_sampler_init(struct np_sampler *s, const char *root, unsigned perf_mask,
                           const char *perf_off_reason, const int *cpu_node, unsigned ncpu_node,
                           const char *cpus, struct np_err *err);

/**
 * Let the sampler keep its processes' /proc files open between intervals, taking descriptors
 * from @p budget (borrowed, shared by every sampler; NULL: none kept, the default). Samples are
 * the same either way; only their cost differs.
 */
NP_API void np_sampler_set_fd_budget(struct np_sampler *s, struct np_fd_budget *budget);

/** Run on /proc alone from now on: close every task's perf counters (their descriptors are
 *  freed) and open none for later tasks; @p reason says why in every sample's perf figures. */
NP_API void np_sampler_drop_perf(struct np_sampler *s, const char *reason);

/** Free everything (closes perf counters); accepts NULL. */
NP_API void np_sampler_fini(struct np_sampler *s);

/**
 * Follow one more task: remember its start time and open its perf counters (their failures are
 * kept as per-event reasons, not returned). Adding a pid twice is a no-op.
 * @return 0, -ESRCH (no such process), -ENOMEM, with @p err
 */
NP_API int np_sampler_add_task(struct np_sampler *s, pid_t pid, struct np_err *err);

/**
 * One sample of the job at @p now (CLOCK_MONOTONIC seconds). Every call reads /proc/<pid>/stat
 * of each process (CPU time, faults, RSS) and the perf counters.
 * @param nc node-wide counters of this interval (may be NULL: those figures unavailable)
 * @param pages_due walk numa_maps this time; it is also walked, due or not, on the first call
 *        and whenever the job's RSS moved by more than 1% (and 1 MiB) since the last walk
 * @param detail_due read the context switches (every thread's status), the processes' affinity
 *        from the same files (np_sampler_effective_cpus) and NUMA balancing
 * @return the number of live processes found (0: the job has ended on this node)
 */
NP_API int np_sampler_sample(struct np_sampler *s, double now, const struct np_node_counters *nc,
                             bool pages_due, bool detail_due, struct np_sample *out);

/**
 * The CPUs the job's processes may run on: its registered CPUs narrowed, at the last detail
 * interval, to the union of its processes' affinity (the binding task/affinity applied after the
 * step's allocation was registered). The registered CPUs when nothing narrowed them: no detail
 * interval yet, an affinity that could not be read, or one that does not meet them. Borrowed.
 */
NP_API hwloc_const_bitmap_t np_sampler_effective_cpus(const struct np_sampler *s);

/**
 * Set the node-wide figures of @p out (interrupts, softirqs, busy time of the job's CPUs) from
 * @p nc (NULL: not read), replacing what np_sampler_sample put there: for a sample whose node
 * counters are read after it was taken (a job found ended at an interval that skipped them).
 */
NP_API void np_sampler_node_figures(const struct np_sampler *s, const struct np_node_counters *nc,
                                    struct np_sample *out);

#endif /* NUMAPLACE_SAMPLER_H */
