/*
 * numaplace/sample.h - one job's figures at one instant, from whichever backend measured them.
 *
 * Backends (docs/report-schema.md):
 *   proc    always available: CPU time, context switches, faults, RSS and pages per NUMA node of
 *           the job's processes (its tasks and their descendants), plus interrupts, softirqs and
 *           busy time of the job's CPUs;
 *   perf    perf_event counters opened on each task with inheritance (numaplace/perf.h);
 *   replay  a trace recorded by numaplaced (np_trace_*), fed to the same code downstream.
 *
 * Every figure is cumulative (since the job was registered, or since the process started for
 * /proc CPU times), so rates come from differences of two samples; each group carries whether it
 * is available and, when not, why.
 */
#ifndef NUMAPLACE_SAMPLE_H
#define NUMAPLACE_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "numaplace/common.h"
#include "numaplace/procfs.h"
#include "numaplace/perf.h"

#define NP_SAMPLE_MAX_NODES NP_NUMA_MAPS_MAX_NODES
#define NP_REASON_MAX       512 /* a reason kept per sample: longer errors are cut */

/** One job (one step on one node) at time t. Zero-initialise, or use np_sample_init. */
struct np_sample {
    double t; /**< seconds since the job was registered (CLOCK_MONOTONIC) */
    unsigned processes;

    /* proc: /proc/<pid>/stat of every process (have_proc); context switches from status, read
     * every detail interval (have_cs) */
    double utime_s, stime_s;
    uint64_t minflt, majflt, voluntary_cs, involuntary_cs, rss_bytes;
    /* proc: /proc/<pid>/numa_maps, not read every interval for large jobs (have_pages) */
    uint64_t node_bytes[NP_SAMPLE_MAX_NODES];
    /* proc: /proc/interrupts and /proc/softirqs summed over the job's CPUs (have_irq) */
    uint64_t interrupts, softirqs;
    /* proc: /proc/stat busy time of the job's CPUs (have_cpu_busy) */
    double cpus_busy_s;
    /* proc: the kernel's NUMA balancing, /proc/<pid>/sched of each process (have_balancing) */
    uint64_t balancing_pages_migrated, balancing_faults;
    /* perf: per event, summed over the tasks (have_perf) */
    uint64_t perf[NP_PERF_NEVENTS];
    /** perf: the kernel's time enabled and time on a hardware counter, summed over the tasks;
     *  running < enabled: the kernel multiplexed the event and perf[] is scaled (an estimate) */
    uint64_t perf_enabled_ns[NP_PERF_NEVENTS], perf_running_ns[NP_PERF_NEVENTS];
    /** LLC misses (load + store) attributed to the NUMA node of the CPUs the tasks ran on */
    uint64_t misses_by_node[NP_SAMPLE_MAX_NODES];

    /* why a group is unavailable ("" when it is, or when it was not read this time) */
    char proc_reason[NP_REASON_MAX];
    char pages_reason[NP_REASON_MAX];
    char irq_reason[NP_REASON_MAX];
    char cpu_busy_reason[NP_REASON_MAX];
    char balancing_reason[NP_REASON_MAX];
    char perf_reason[NP_PERF_NEVENTS][NP_REASON_MAX];

    bool have_proc, have_pages, have_irq, have_cpu_busy, have_misses_by_node, have_balancing;
    bool have_cs; /**< voluntary_cs / involuntary_cs were read (every detail interval) */
    /** a limit cut the walk of the step's processes: some were left out (proc_reason says which
     *  limit) and every figure of this sample counts only those seen */
    bool processes_cut;
    bool have_perf[NP_PERF_NEVENTS];
};

/** Clear @p s and mark every figure "not sampled". */
NP_API void np_sample_init(struct np_sample *s);

/**
 * The sample as a JSON object (the trace format, docs/report-schema.md). New reference, NULL on
 * out-of-memory.
 */
NP_API json_t *np_sample_to_json(const struct np_sample *s);

/**
 * {"N": value} for the non-zero entries of a per-NUMA-node array (bytes per node in samples,
 * reports and summaries). New reference, NULL on out-of-memory.
 */
NP_API json_t *np_node_map_json(const uint64_t values[NP_SAMPLE_MAX_NODES]);

/** [n, ...] for the bits set in @p mask (a step's local NUMA nodes). New reference. */
NP_API json_t *np_node_list_json(uint64_t mask);

/**
 * Read a sample back from np_sample_to_json's form (@p obj borrowed).
 * @return 0, or -EINVAL naming the bad member
 */
NP_API int np_sample_from_json(json_t *obj, struct np_sample *s, struct np_err *err);

#endif /* NUMAPLACE_SAMPLE_H */
