/*
 * numaplace/report.h - from samples to a job report (schema: docs/report-schema.md).
 *
 * np_step_figures accumulates one job's samples (np_sample, from any backend); np_report_new turns
 * it into the versioned JSON report numaplaced writes to its spool at the end of each step on
 * each node (reading a report back, and its text, are the summary component's). The trace
 * functions write and replay the same samples, so a recorded run gives the same report offline.
 */
#ifndef NUMAPLACE_REPORT_H
#define NUMAPLACE_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "numaplace/common.h"
#include "numaplace/engine.h"
#include "numaplace/procfs.h"
#include "numaplace/names.h"

/* Major version /1 (what readers check, np_report_check), minor .1: class_prediction. A minor
 * version adds optional members only; readers of /1 read every /1.N. */
#define NP_REPORT_SCHEMA       "numaplace.report/1.1"
#define NP_REPORT_SCHEMA_MAJOR "numaplace.report/1"
#define NP_TRACE_SCHEMA        "numaplace.trace/1"

/** The sensitivity model's prediction that decided a step's class (class_default=auto): the
 * report's `class_prediction`, from which its class_source text is derived. */
struct np_class_prediction {
    bool known; /**< false: no prediction decided the class */
    bool sensitive;
    double slowdown, llc_mpki, cpi;
};

/** What is known of a job (one step on one node) besides its samples. */
struct np_job_meta {
    uint32_t job_id, step_id;
    uid_t uid;
    char node[64];
    double start_epoch, end_epoch; /**< wall clock; end 0 while running */
    double interval_s;
    char policy_requested[32];
    char sensitivity[8]; /**< the label the plugin registered (after the site's checks) */
    char job_class[8];   /**< the helper's priority class, "high" or "low" ("" = unknown) */
    /** what decided the class: "label", "default", "admin", "auto: ..." ("" = not said) */
    char class_source[192];
    struct np_class_prediction prediction; /**< when the model's prediction decided the class */
    char cpus[256]; /**< the step's CPUs on this node, as registered (its allocation) */
    /** where its processes may run: cpus narrowed to their affinity ("" = not known) */
    char effective_cpus[256];
    char helper_cpus[256]; /**< the CPUs numaplaced may run on ("" = not known) */
    char shared_cpus[256]; /**< the step's CPUs numaplaced may also run on ("" = none) */
    char backends[64];     /**< "perf,proc", "replay", ... */
    /** why the step runs on /proc alone where the node has perf counters (numaplaced's
     *  descriptor budget); "" when it does not */
    char backends_reason[256];
    /** what says the node's CPU is emulated (np_cpu_emulated), "" when it is not: its
     *  counters count the emulator's definitions */
    char emulated_cpu[256];
    uint64_t local_nodes;      /**< bit n: its effective CPUs are on NUMA node n (0 = unknown) */
    uint64_t registered_nodes; /**< bit n: its registered cpus are on node n (0 = unknown) */
    /** The node's memory tier by NUMA node (0 the fastest), where it has more than one: the
     *  report then adds pages.by_tier. All 0 (one tier, or not known): no by_tier. */
    unsigned node_tier[NP_SAMPLE_MAX_NODES];
    json_t *tasks; /**< borrowed, may be NULL: [{task, pid, policy, mode, nodes, cpus}] */
};

/** @p bytes (per NUMA node) summed by @p node_tier: {"0": bytes, ...}, or NULL on a node of one
 *  tier (every @p node_tier 0) or out of memory. New reference. */
NP_API json_t *np_bytes_by_tier(const uint64_t *bytes, const unsigned *node_tier);

/** Points a report's timeline keeps at most: older points are thinned, never the span. */
#define NP_TIMELINE_MAX_POINTS 128
/** NUMA nodes a timeline point records (the plot's limit). */
#define NP_TIMELINE_MAX_NODES 16
/** Events (migrations) a timeline keeps at most. */
#define NP_TIMELINE_MAX_EVENTS 32

/** One point of a job's timeline: the figures of the interval that ended at t. */
struct np_step_figures_point {
    double t;
    uint64_t node_bytes[NP_TIMELINE_MAX_NODES]; /**< the last numa_maps reading */
    double bandwidth, cpi;                      /**< < 0: not measured in this interval */
};

/** One job's accumulated figures. Initialise with np_step_figures_init, free with _fini. */
struct np_step_figures {
    unsigned samples;
    struct np_sample prev, last;
    /* /proc figures vanish with the processes: keep the last sample that had them */
    unsigned proc_samples;
    struct np_sample last_proc;
    /* interrupts and busy time of the job's CPUs: first and last readings */
    unsigned irq_samples, busy_samples, cs_samples;
    double cs_t[2];
    uint64_t involuntary_cs[2];
    double irq_t[2], busy_t[2], busy_s[2], own_s[2];
    uint64_t interrupts[2], softirqs[2];
    /* the kernel's NUMA balancing: the last reading (totals of the live processes) */
    unsigned balancing_samples;
    uint64_t balancing_pages_migrated, balancing_faults;
    /* pages: the first sample that read numa_maps is the start */
    unsigned page_samples;
    uint64_t pages_start[NP_SAMPLE_MAX_NODES], pages_end[NP_SAMPLE_MAX_NODES];
    uint64_t pages_peak[NP_SAMPLE_MAX_NODES], pages_peak_total;
    /* per-interval CPI (cycles / instructions) */
    double *cpi;
    size_t ncpi, cpi_cap;
    /* per-interval bandwidth estimate per node: LLC misses x 64 B / interval */
    unsigned bw_intervals, bw_mem_intervals;
    double bw_sum[NP_SAMPLE_MAX_NODES], bw_peak[NP_SAMPLE_MAX_NODES];
    double bw_total_sum, bw_total_peak;
    /* the same traffic by the memory node serving it: each interval's total spread over the
     * nodes holding the step's pages (the latest numa_maps reading's shares) */
    double bw_mem_sum[NP_SAMPLE_MAX_NODES];
    /* pages numaplaced moved, by node (migration) */
    uint64_t pages_in[NP_SAMPLE_MAX_NODES], pages_out[NP_SAMPLE_MAX_NODES]; /**< bytes */
    double migration_moving_s;                     /**< time in the move system calls */
    uint64_t migration_failed[NP_MOVE_FAIL_COUNT]; /**< pages that would not move, by cause */
    json_t *migration_requests; /**< owned, NULL when none: the requests that moved its pages */
    /* Counters for Prometheus (rate() over them, not the last interval's rate): the sums of
     * every interval's increase. counted_intervals: intervals where cycles and instructions
     * both counted; traffic: LLC misses x 64 B over the bw_intervals. */
    unsigned counted_intervals;
    uint64_t cycles_total, instructions_total, traffic_bytes_total;
    /* the last interval's bandwidth estimate (for the migration engine) */
    double bw_last[NP_SAMPLE_MAX_NODES], bw_last_total;
    double helper_cpu_s; /**< numaplaced's own CPU time spent on this job */
    /* share of the pages on the nodes of the step's CPUs, weighted by how long each reading held */
    /** the nodes of the step's effective CPUs: set by the caller before the first sample, and
     * when they change (0 = unknown) */
    uint64_t local_nodes;
    double local_share_time, local_share_weighted, local_share_last, local_share_t;
    /* a bounded timeline (for plots): every stride-th sample, thinned by half when full */
    struct np_step_figures_point *timeline; /**< owned */
    size_t ntimeline;
    struct {
        double t;
        char label[48];
    } events[NP_TIMELINE_MAX_EVENTS];
    unsigned local_share_readings, timeline_stride, timeline_skipped, nevents;
    bool migration_enabled;
    /* samples whose walk of the processes a limit cut, and the last one's reason */
    unsigned cut_samples;
    char cut_reason[NP_REASON_MAX];
};

/** @return 0 (cannot fail; returns int for symmetry) */
NP_API int np_step_figures_init(struct np_step_figures *js);

/** Free what @p js holds, leaving it as np_step_figures_init does; accepts NULL. */
NP_API void np_step_figures_fini(struct np_step_figures *js);

/**
 * Fold in one sample (its t must not go backwards; an older one is ignored with -EINVAL).
 * @return 0, -EINVAL, -ENOMEM
 */
NP_API int np_step_figures_add(struct np_step_figures *js, const struct np_sample *s);

/** Mark an event (e.g. "2->1 64 MiB") on the timeline at @p t; past the limit it is dropped. */
NP_API void np_step_figures_event(struct np_step_figures *js, double t, const char *label);

/**
 * The latest figures (for `numaplace status`): pages per node, CPU use and CPI over the last
 * interval, each with its source or "unavailable". New reference.
 */
NP_API json_t *np_step_figures_latest(const struct np_step_figures *js);

/**
 * The job report (schema NP_REPORT_SCHEMA). @p complete says the step ended (false: numaplaced
 * stopped first or the trace ends early). New reference, NULL on out-of-memory.
 */
NP_API json_t *np_report_new(const struct np_job_meta *meta, const struct np_step_figures *js,
                             bool complete);

/** Check a loaded report's schema. @return 0 or -EINVAL / -EPROTO with @p err. */
NP_API int np_report_check(json_t *report, struct np_err *err);

/** {slowdown, llc_mpki, cpi, sensitive}. New reference, NULL on out-of-memory. */
NP_API json_t *np_class_prediction_json(const struct np_class_prediction *p);
/** Read @p j (borrowed; NULL or absent: @p p not known) strictly: an object of exactly those
 * members. @return 0 (read or absent), -EINVAL (malformed; @p p not known) */
NP_API int np_class_prediction_from_json(const json_t *j, struct np_class_prediction *p);
/** Its class_source line, for people: "auto: predicted 2.07x with remote memory (LLC MPKI 9.00,
 *  CPI 1.50): sensitive". */
NP_API void np_class_prediction_text(const struct np_class_prediction *p, char *buf, size_t len);

/* ---- trace (the replay backend) ---- */

/** Trace lines. Each a new reference; write with json_dumpf(..., JSON_COMPACT) and a '\n'. */
NP_API json_t *np_trace_job_line(const struct np_job_meta *meta);
NP_API json_t *np_trace_sample_line(uint32_t job_id, uint32_t step_id, const struct np_sample *s,
                                    double helper_cpu_s);
NP_API json_t *np_trace_end_line(uint32_t job_id, uint32_t step_id, double end_epoch);

/**
 * Add the step's effective CPUs and their nodes (@p meta's effective_cpus, local_nodes) to a
 * sample line (@p line borrowed): written when they changed after the job line, so a replay's
 * local_nodes follows them from that sample on. Older traces have no such members.
 */
NP_API void np_trace_sample_cpus(json_t *line, const struct np_job_meta *meta);

/** Called with each report a replay produces (borrowed); non-zero stops the replay. */
typedef int np_report_fn(json_t *report, void *arg);

/**
 * Replay a trace: every job in it through np_step_figures, one report per job (at its end line, or
 * at the end of the trace marked incomplete). Malformed lines are an error naming the line.
 * @return the number of reports, or -EINVAL / -ENOMEM with @p err
 */
NP_API int np_trace_replay(FILE *in, const char *name, np_report_fn *fn, void *arg,
                           struct np_err *err);

/* ---- migrations booked into a job's figures ---- */

/**
 * Book what one migration request did to one job: the request joins the report's
 * migrations.requests; unless it was a dry run, the pages moved count in and out by node, the
 * time in the move calls and the pages that would not move add up, and a move of some pages
 * marks an event (e.g. "2->1 64 MiB") on the timeline at @p t (seconds since the job started).
 * Both arguments are borrowed. @return 0, -EINVAL (a node beyond NP_SAMPLE_MAX_NODES), -ENOMEM
 */
NP_API int np_step_figures_book_migration(struct np_step_figures *js,
                                          const struct np_request_result *r,
                                          const struct np_job_outcome *o, double t);

#endif /* NUMAPLACE_REPORT_H */
