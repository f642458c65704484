/*
 * fwq_run: bench/fwq's rotation (fwq_run.c) and the daemons and jobs it starts (fwq_daemons.c);
 * fwq.c has the FWQ loop and the options. One struct fwq_run holds the whole run.
 */
#ifndef NUMAPLACE_BENCH_FWQ_RUN_H
#define NUMAPLACE_BENCH_FWQ_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fwq_stats.h"

#define FWQ_MAX_CPUS  256
#define FWQ_MAX_PROCS 1024

enum fwq_config {
    FWQ_NONE,
    FWQ_SAMPLING,
    FWQ_MIGRATING,
    FWQ_NUMA_MAPS,
    FWQ_NUMAD,
    FWQ_NUMAD_1S,
    FWQ_CONFIGS
};

/** One measurement's raw record: each job CPU's quantum stamps and its FWQ thread. */
struct fwq_slot {
    uint64_t *stamps[FWQ_MAX_CPUS];
    int32_t tids[FWQ_MAX_CPUS];
    int32_t daemon_tids[64]; /**< the daemon's threads, seen at the start or the end */
    size_t ndaemon_tids;
};

/** What was running for a measurement (fwq_daemons.c). */
struct fwq_daemon {
    pid_t pid;      /**< numaplaced or numad, 0 for none */
    char dir[80];   /**< numaplaced's temp directory, under $TMPDIR */
    int migrate_fd; /**< the open migrate request (c), -1 */
    char why[256];  /**< why the configuration is unavailable, "" when it ran */
};

/** Everything measured for one configuration, over every round. */
struct fwq_result {
    char why[256];       /**< "" or why it is unavailable */
    size_t slots;        /**< measurements taken */
    uint32_t *durations; /**< per CPU: rounds x quanta, [cpu][slot * quanta + q] */
    uint8_t *masks;      /**< the same layout: sources that ran inside each quantum */
    uint64_t daemon_cpu_ns, window_ns;
    uint64_t ns_by_source[FWQ_SRC_COUNT];
    uint64_t lost_switches, switches;
    int migrations_done; /**< migrate requests answered within their measurement (c) */
};

struct fwq_run {
    /* options */
    const char *numaplaced, *numad;
    double seconds, quantum_us;
    unsigned rounds;
    int cpus[FWQ_MAX_CPUS], ncpu;
    int helper_cpus[FWQ_MAX_CPUS], nhelper_cpus;
    char helper_cpu_text[256];
    int procs;
    long mib, large_mib, large_maps;
    /* derived */
    uint64_t iters;
    size_t quanta;
    int nodes;
    /* the jobs, alive for the whole run */
    pid_t proc_pids[FWQ_MAX_PROCS], large_pid;
    /* numad's change to khugepaged, undone after each numad measurement */
    char thp_scan_sleep[32];
    struct fwq_result result[FWQ_CONFIGS];
    char trace_why[256]; /**< "" when sched_switch is recorded */
};

struct fwq_trace;
/** Run the FWQ threads for one measurement (fwq.c), draining @p trace's rings when they fill
 * (a trace that did not open has ncpu 0). @return 0 or -errno. */
int fwq_measure(struct fwq_run *run, struct fwq_slot *slot, struct fwq_trace *trace);

/** The whole rotation and its report (fwq_run.c). @return 0 or -1. */
int fwq_run(struct fwq_run *run);

/** Printed label of a configuration. */
const char *fwq_config_label(enum fwq_config c);

/* fwq_daemons.c */
/** Start the N small processes and the large job. @return 0 or -errno. */
int fwq_jobs_start(struct fwq_run *run);
void fwq_jobs_stop(struct fwq_run *run);
/** Set up configuration @p c; on failure @p d->why says why (the row is unavailable). */
void fwq_daemon_start(struct fwq_run *run, enum fwq_config c, struct fwq_daemon *d);
/** Called just before the FWQ threads start (c sends its migrate request here). */
void fwq_daemon_go(struct fwq_run *run, enum fwq_config c, struct fwq_daemon *d);
/** Stop what fwq_daemon_start started; @return 1 when c's migration had answered. */
int fwq_daemon_stop(struct fwq_run *run, enum fwq_config c, struct fwq_daemon *d);
/** CPU time of every thread of @p pid, ns, or 0 when it is gone. */
uint64_t fwq_cpu_ns(pid_t pid);
/** Add the TIDs of @p pid's threads to @p slot's daemon_tids (no duplicates). */
void fwq_daemon_tids(pid_t pid, struct fwq_slot *slot);

#endif
