/*
 * numaplace/summary_model.h - a job summary (`numaplace.summary/1`, docs/summary-schema.md) as C
 * data: decoded once and strictly from its JSON, worked on (merge, advice, text, fit, plot) as
 * structs, and encoded back to the same JSON bytes, members in the order they were set. Each
 * struct's members are described once, by a table (summary_records.c) indexed by the enum below.
 *
 * The json_t functions of numaplace/summary.h are wrappers over these; callers that only read a
 * summary (the numaplace command) decode it with np_sum_decode and read the fields.
 *
 * Presence: each struct's `keys` lists the members it has, in JSON order (numaplace/figure.h);
 * the fields of absent members are zero. Ownership: a struct owns everything it points to; free
 * with np_sum_free (accepts NULL).
 */
#ifndef NUMAPLACE_SUMMARY_MODEL_H
#define NUMAPLACE_SUMMARY_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "numaplace/common.h"
#include "numaplace/figure.h"
#include "numaplace/sensitivity.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Each record's members, once: X(member id, JSON name, how its struct holds it). The enums of
 * member ids below and the records' tables (summary_records.c, where the AS_* storage forms are
 * defined: a string, an integer, ... at a struct field) are both made from these lists.
 */
#define NP_MEMBER_ID(id, name, storage) id,

/** Members of the summary object. */
#define NP_SUM_MEMBERS(X)                                                                          \
    X(NP_SUM_SCHEMA, "schema", AS_STR(schema))                                                     \
    X(NP_SUM_JOB_ID, "job_id", AS_INT(job_id))                                                     \
    X(NP_SUM_UID, "uid", AS_INT(uid))                                                              \
    X(NP_SUM_USER, "user", AS_STR(user))                                                           \
    X(NP_SUM_POLICY_REQUESTED, "policy_requested", AS_STRS(policy_requested))                      \
    X(NP_SUM_POLICY_APPLIED, "policy_applied", AS_MAP(policy_applied))                             \
    X(NP_SUM_SENSITIVITY, "sensitivity", AS_STR(sensitivity))                                      \
    X(NP_SUM_START, "start", AS_STR(start))                                                        \
    X(NP_SUM_END, "end", AS_STR(end))                                                              \
    X(NP_SUM_NODES, "nodes", AS_OBJECT(nodes, nnodes, &node_elem, struct np_sum_node, name))       \
    X(NP_SUM_TOTALS, "totals", AS_RECORD(totals, &totals_rec))                                     \
    X(NP_SUM_MISSING_NODES, "missing_nodes", AS_STRS(missing_nodes))                               \
    X(NP_SUM_SKIPPED, "skipped", AS_ARRAY(skipped, nskipped, &skip_elem))                          \
    X(NP_SUM_TRIMMED, "trimmed", AS_ARRAY(trimmed, ntrimmed, &trim_elem))                          \
    /* per-node figures as distributions (optional: added later) */                                \
    X(NP_SUM_NODES_FOLDED, "nodes_folded", AS_CUSTOM(folded, &np_sum_folded_ops))
enum np_sum_member { NP_SUM_MEMBERS(NP_MEMBER_ID) NP_SUM_NMEMBERS };

/** Members of `nodes.NAME`. */
#define NP_NODE_MEMBERS(X)                                                                         \
    X(NP_NODE_STEPS, "steps", AS_ARRAY(steps, nsteps, &step_elem))                                 \
    X(NP_NODE_STEP_COUNT, "step_count", AS_INT(step_count))                                        \
    X(NP_NODE_DURATION_S, "duration_s", AS_REAL(duration_s))                                       \
    X(NP_NODE_START, "start", AS_STR(start))                                                       \
    X(NP_NODE_END, "end", AS_STR(end))                                                             \
    X(NP_NODE_POLICY_REQUESTED, "policy_requested", AS_STRS(policy_requested))                     \
    X(NP_NODE_POLICY_APPLIED, "policy_applied", AS_MAP(policy_applied))                            \
    X(NP_NODE_SENSITIVITY, "sensitivity", AS_STR(sensitivity))                                     \
    X(NP_NODE_LOCAL_SHARE, "local_share", AS_FIGURE(local_share, NP_FIGURE_PLAIN))                 \
    X(NP_NODE_PAGES_PEAK_BYTES, "pages_peak_bytes", AS_CUSTOM(pages_peak_bytes, &bytes_ops))       \
    X(NP_NODE_PAGES_END_BYTES, "pages_end_bytes", AS_CUSTOM(pages_end_bytes, &bytes_ops))          \
    X(NP_NODE_CPI, "cpi", AS_FIGURE(cpi, NP_FIGURE_CPI))                                           \
    X(NP_NODE_BANDWIDTH, "bandwidth", AS_FIGURE(bandwidth, NP_FIGURE_BANDWIDTH))                   \
    X(NP_NODE_MIGRATIONS, "migrations", AS_RECORD(migrations, &migr_rec))                          \
    X(NP_NODE_PAGES_MOVED_BYTES, "pages_moved_bytes", AS_INT(pages_moved_bytes))                   \
    X(NP_NODE_OS_INTERFERENCE, "os_interference", AS_RECORD(os, &os_rec))                          \
    X(NP_NODE_TIMELINE, "timeline", AS_RECORD(timeline, &timeline_rec))
enum np_sum_node_member { NP_NODE_MEMBERS(NP_MEMBER_ID) NP_NODE_NMEMBERS };

/** Members of `nodes.NAME.steps[]`. */
#define NP_STEP_MEMBERS(X)                                                                         \
    X(NP_STEP_STEP, "step", AS_STR(step))                                                          \
    X(NP_STEP_POLICY, "policy", AS_STR(policy))                                                    \
    X(NP_STEP_APPLIED, "applied", AS_MAP(applied))                                                 \
    X(NP_STEP_SENSITIVITY, "sensitivity", AS_STR(sensitivity))                                     \
    X(NP_STEP_CPUS, "cpus", AS_STR(cpus))                                                          \
    X(NP_STEP_COMPLETE, "complete", AS_BOOL(complete))                                             \
    X(NP_STEP_DURATION_S, "duration_s", AS_REAL(duration_s))                                       \
    X(NP_STEP_LOCAL_NODES, "local_nodes", AS_NUMS(local_nodes, nlocal_nodes))                      \
    X(NP_STEP_START, "start", AS_STR(start))                                                       \
    X(NP_STEP_END, "end", AS_STR(end))                                                             \
    /* added with the sensitivity prediction (optional: summaries written before lack them): */    \
    /* the report's class, what decided it (class_source), perf_counts cycles / instructions, */   \
    /* LLC load + store misses per 1000 instructions, bandwidth.mean_bytes_per_s, and why cpi */   \
    /* or llc_mpki is missing */                                                                   \
    X(NP_STEP_CLASS, "class", AS_STR(job_class))                                                   \
    X(NP_STEP_CLASS_SOURCE, "class_source", AS_STR(class_source))                                  \
    X(NP_STEP_CPI, "cpi", AS_REAL(cpi))                                                            \
    X(NP_STEP_LLC_MPKI, "llc_mpki", AS_REAL(llc_mpki))                                             \
    X(NP_STEP_BANDWIDTH, "bandwidth_bytes_per_s", AS_REAL(bandwidth_bytes_per_s))                  \
    X(NP_STEP_COUNTERS_UNAVAILABLE, "counters_unavailable", AS_STR(counters_unavailable))          \
    /* added with numaplaced's CPU sharing (optional): the report's helper.shared_cpus */          \
    X(NP_STEP_HELPER_SHARED_CPUS, "helper_shared_cpus", AS_STR(helper_shared_cpus))
enum np_sum_step_member { NP_STEP_MEMBERS(NP_MEMBER_ID) NP_STEP_NMEMBERS };

/** One step of a node (`nodes.NAME.steps[]`). */
struct np_sum_step {
    struct np_keys keys;
    char *step, *policy, *sensitivity, *cpus, *start, *end;
    char *job_class, *class_source, *counters_unavailable;
    char *helper_shared_cpus; /**< NULL when the report did not say */
    double cpi, llc_mpki, bandwidth_bytes_per_s;
    struct np_map applied; /**< policy -> tasks */
    bool complete;
    double duration_s;
    struct np_num *local_nodes; /**< as the report wrote them */
    size_t nlocal_nodes;
};

/** Members of `migrations`. */
#define NP_MIGR_MEMBERS(X)                                                                         \
    X(NP_MIGR_IN_BYTES, "in_bytes", AS_MAP(in_bytes))                                              \
    X(NP_MIGR_OUT_BYTES, "out_bytes", AS_MAP(out_bytes))                                           \
    X(NP_MIGR_REQUESTS, "requests", AS_INT(requests))                                              \
    X(NP_MIGR_DRY_RUN_REQUESTS, "dry_run_requests", AS_INT(dry_run_requests))                      \
    X(NP_MIGR_MOVING_S, "moving_s", AS_REAL(moving_s))                                             \
    X(NP_MIGR_FAILED_PAGES, "failed_pages", AS_MAP(failed_pages))                                  \
    X(NP_MIGR_TRIGGERS, "triggers",                                                                \
      AS_OBJECT(triggers, ntriggers, &trigger_elem, struct np_sum_trigger, name))                  \
    X(NP_MIGR_SOURCE, "source", AS_STR(source))
enum np_sum_migr_member { NP_MIGR_MEMBERS(NP_MEMBER_ID) NP_MIGR_NMEMBERS };

/** Members of `migrations.triggers.NAME`. */
#define NP_TRIG_MEMBERS(X)                                                                         \
    X(NP_TRIG_REQUESTS, "requests", AS_INT(requests))                                              \
    X(NP_TRIG_DRY_RUN, "dry_run", AS_INT(dry_run))                                                 \
    X(NP_TRIG_MOVED_PAGES, "moved_pages", AS_INT(moved_pages))
enum np_sum_trigger_member { NP_TRIG_MEMBERS(NP_MEMBER_ID) NP_TRIG_NMEMBERS };

/** `migrations.triggers.NAME`. */
struct np_sum_trigger {
    struct np_keys keys;
    char *name;
    json_int_t requests, dry_run, moved_pages;
};

struct np_sum_migrations {
    struct np_keys keys;
    struct np_map in_bytes, out_bytes, failed_pages;
    json_int_t requests, dry_run_requests;
    double moving_s;
    struct np_sum_trigger *triggers;
    size_t ntriggers;
    char *source;
};

/** Members of `os_interference`, each a figure (fig[id]). */
#define NP_OS_MEMBERS(X)                                                                           \
    X(NP_OS_KERNEL_TIME_SHARE, "kernel_time_share", AS_FIGURE_AT(NP_OS_KERNEL_TIME_SHARE))         \
    X(NP_OS_INVOLUNTARY_CS_PER_S, "involuntary_cs_per_s",                                          \
      AS_FIGURE_AT(NP_OS_INVOLUNTARY_CS_PER_S))                                                    \
    X(NP_OS_INTERRUPTS_PER_S, "interrupts_per_s", AS_FIGURE_AT(NP_OS_INTERRUPTS_PER_S))            \
    X(NP_OS_SOFTIRQS_PER_S, "softirqs_per_s", AS_FIGURE_AT(NP_OS_SOFTIRQS_PER_S))                  \
    X(NP_OS_OTHER_CPU_TIME_S, "other_cpu_time_s", AS_FIGURE_AT(NP_OS_OTHER_CPU_TIME_S))
enum np_sum_os_member { NP_OS_MEMBERS(NP_MEMBER_ID) NP_OS_NMEMBERS };

/** `os_interference`: each member a figure, indexed by enum np_sum_os_member. */
struct np_sum_os {
    struct np_keys keys;
    struct np_figure fig[NP_OS_NMEMBERS];
};

/** Bytes per NUMA node, or unavailable (`pages_peak_bytes`, `pages_end_bytes`). */
struct np_sum_bytes {
    bool is_map;
    struct np_map map;
    struct np_figure unavailable; /**< when !is_map */
};

/** Members of a timeline (a report's `timeline`, with `step` and `duration_s` in a summary). */
#define NP_TL_MEMBERS(X)                                                                           \
    X(NP_TL_T, "t", AS_NUMS(t.v, t.n))                                                             \
    X(NP_TL_NODE_BYTES, "node_bytes",                                                              \
      AS_OBJECT(node_bytes, nnode_bytes, &series_elem, struct np_sum_series, node))                \
    X(NP_TL_BANDWIDTH, "bandwidth_bytes_per_s", AS_NUMS_OR_NULL(bandwidth.v, bandwidth.n))         \
    X(NP_TL_CPI, "cpi", AS_NUMS_OR_NULL(cpi.v, cpi.n))                                             \
    X(NP_TL_EVENTS, "events", AS_ARRAY(events, nevents, &event_elem))                              \
    X(NP_TL_EVERY_NTH_SAMPLE, "every_nth_sample", AS_NUM(every_nth_sample))                        \
    X(NP_TL_BANDWIDTH_NOTE, "bandwidth_note", AS_STR(bandwidth_note))                              \
    X(NP_TL_CPI_NOTE, "cpi_note", AS_STR(cpi_note))                                                \
    X(NP_TL_STEP, "step", AS_STR(step))                                                            \
    X(NP_TL_DURATION_S, "duration_s", AS_NUM(duration_s))
enum np_sum_tl_member { NP_TL_MEMBERS(NP_MEMBER_ID) NP_TL_NMEMBERS };

struct np_sum_series {
    char *node; /**< the NUMA node, "0" to "15" */
    struct np_nums bytes;
};

struct np_sum_event {
    struct np_keys keys; /**< 0: t, 1: label */
    struct np_num t;
    char *label;
};

/** The timeline of a node's longest step (a report's `timeline` plus `step`, `duration_s`). */
struct np_sum_timeline {
    struct np_keys keys;
    struct np_nums t, bandwidth, cpi;
    struct np_sum_series *node_bytes;
    size_t nnode_bytes;
    struct np_sum_event *events;
    size_t nevents;
    struct np_num every_nth_sample, duration_s;
    char *bandwidth_note, *cpi_note, *step;
};

/** `nodes.NAME`. */
struct np_sum_node {
    char *name;
    struct np_keys keys;
    struct np_sum_step *steps;
    size_t nsteps;
    json_int_t step_count, pages_moved_bytes;
    double duration_s;
    char *start, *end, *sensitivity;
    struct np_strs policy_requested;
    struct np_map policy_applied;
    struct np_figure local_share, cpi, bandwidth;
    struct np_sum_bytes pages_peak_bytes, pages_end_bytes;
    struct np_sum_migrations migrations;
    struct np_sum_os os;
    struct np_sum_timeline timeline;
};

/** Members of `skipped[]` and `trimmed[]`. */
#define NP_SKIP_MEMBERS(X)                                                                         \
    X(NP_SKIP_NODE, "node", AS_STR(node))                                                          \
    X(NP_SKIP_STEP, "step", AS_STR(step))                                                          \
    X(NP_SKIP_REASON, "reason", AS_STR(reason))
#define NP_TRIM_MEMBERS(X)                                                                         \
    X(NP_TRIM_WHAT, "what", AS_STR(what))                                                          \
    X(NP_TRIM_STORED_BYTES_BEFORE, "stored_bytes_before", AS_INT(stored_bytes_before))
enum np_sum_skip_member { NP_SKIP_MEMBERS(NP_MEMBER_ID) NP_SKIP_NMEMBERS };
enum np_sum_trim_member { NP_TRIM_MEMBERS(NP_MEMBER_ID) NP_TRIM_NMEMBERS };

struct np_sum_skip {
    struct np_keys keys;
    char *node, *step, *reason;
};

struct np_sum_trim {
    struct np_keys keys;
    char *what;
    json_int_t stored_bytes_before;
};

/** Members of `totals`. */
#define NP_TOT_MEMBERS(X)                                                                          \
    X(NP_TOT_NODES, "nodes", AS_INT(nodes))                                                        \
    X(NP_TOT_STEPS, "steps", AS_INT(steps))                                                        \
    X(NP_TOT_MISSING_NODES, "missing_nodes", AS_INT(missing_nodes))                                \
    X(NP_TOT_SKIPPED, "skipped", AS_INT(skipped))                                                  \
    X(NP_TOT_PAGES_MOVED_BYTES, "pages_moved_bytes", AS_INT(pages_moved_bytes))                    \
    X(NP_TOT_MIGRATION_REQUESTS, "migration_requests", AS_INT(migration_requests))                 \
    X(NP_TOT_LOCAL_SHARE, "local_share", AS_FIGURE(local_share, NP_FIGURE_PLAIN))                  \
    X(NP_TOT_KERNEL_TIME_SHARE, "kernel_time_share", AS_FIGURE(kernel_time_share, NP_FIGURE_PLAIN))
enum np_sum_totals_member { NP_TOT_MEMBERS(NP_MEMBER_ID) NP_TOT_NMEMBERS };

struct np_sum_totals {
    struct np_keys keys;
    json_int_t nodes, steps, missing_nodes, skipped, pages_moved_bytes, migration_requests;
    struct np_figure local_share, kernel_time_share;
};

/** Most nodes a fold names: a hostlist of a few bytes must not expand to gigabytes when decoded
 * (Slurm's largest clusters are a few tens of thousands of nodes). */
#define NP_FOLD_MAX_NODES 65536

/** The worst nodes (lowest local share) a fold keeps whole in `nodes`: the advice names up to 4. */
#define NP_FOLD_KEEP_WORST 8

/** The per-node figures `nodes_folded.figures` holds as distributions, in this order. */
enum np_sum_dist_figure {
    NP_DIST_LOCAL_SHARE = 0,
    NP_DIST_CPI,
    NP_DIST_BANDWIDTH,
    NP_DIST_KERNEL_TIME_SHARE,
    NP_DIST_DURATION_S,
    NP_DIST_STEP_COUNT,
    NP_DIST_PAGES_MOVED_BYTES,
    NP_DIST_N
};

/**
 * One per-node figure over the folded nodes that had a number for it. Every number is a node's
 * own (nearest-rank percentiles, never interpolated). @p percentiles_of < @p count when nodes were
 * folded in after the first fold: p50 and p90 are then those of the first @p percentiles_of
 * nodes (a percentile cannot be updated from a distribution), while count, min and max are exact.
 */
struct np_sum_dist {
    struct np_keys keys; /**< member order as decoded (empty: numaplace's order) */
    json_int_t count, percentiles_of;
    double min, p50, p90, max;
    char *min_node, *max_node;
};

/**
 * `nodes_folded` (docs/summary-schema.md, "Folded nodes"): the nodes whose parts np_sum_fit
 * folded into distributions when even the trimmed per-node form did not fit. Their share of every
 * job-wide figure is kept as sums, so totals stay exact; `nodes` keeps the worst few whole (their
 * figures are in the distributions and sums too) and nodes merged after the fold.
 */
struct np_sum_folded {
    struct np_keys keys, figure_keys, sums_keys; /**< member order as decoded (empty: ours) */
    json_int_t nodes;                            /**< nodes in the fold */
    char *names;           /**< their names as a hostlist ("n[001-100],gpu7"); NULL: dropped */
    struct np_strs sorted; /**< @p names expanded and sorted (not encoded) */
    char *not_updated;     /**< hostlist of nodes whose later part could not be folded in */
    struct np_sum_dist dist[NP_DIST_N];
    bool has_dist[NP_DIST_N];
    /* the fold's share of the totals (np_sum_recompute adds the nodes outside it) */
    json_int_t steps, pages_moved_bytes, migration_requests, ls_nodes, k_nodes;
    double ls_seconds, ls_x_seconds, ls_byte_seconds, ls_x_byte_seconds, k_seconds, k_x_seconds;
    bool ls_all_bytes;
    struct np_strs policy_requested;
    struct np_map policy_applied;
    char *sensitivity, *start, *end;
};

/** A job summary. */
struct np_sum {
    struct np_keys keys;
    char *schema;
    json_int_t job_id, uid;
    char *user, *sensitivity, *start, *end;
    struct np_strs policy_requested, missing_nodes;
    struct np_map policy_applied;
    struct np_sum_node *nodes; /**< in the order of the JSON object */
    size_t nnodes;
    size_t nodes_cap; /**< nodes' allocated length when more than nnodes (0: nnodes); whoever
                       * replaces nodes sets it */
    struct np_sum_skip *skipped;
    size_t nskipped;
    struct np_sum_trim *trimmed;
    size_t ntrimmed;
    struct np_sum_totals totals;
    struct np_sum_folded folded; /**< when NP_SUM_NODES_FOLDED is in keys */
};

/**
 * Decode @p json (borrowed) strictly: the summary schema's members only, each of its type. The
 * schema is checked first (np_summary_check: -EINVAL not a summary, -EPROTO another version).
 * @return 0, or -EINVAL naming the member and what it should be / -EPROTO / -ENOMEM, with @p err
 */
NP_API int np_sum_decode(const json_t *json, struct np_sum *s, struct np_err *err);

/** The JSON form, members in @p s's order. New reference, NULL on out-of-memory. */
NP_API json_t *np_sum_encode(const struct np_sum *s);

NP_API void np_sum_free(struct np_sum *s);
NP_API void np_sum_node_free(struct np_sum_node *n);

/** Decode a report's `timeline` (or a summary node's). @return 0, -EINVAL / -ENOMEM with @p err */
NP_API int np_sum_timeline_decode(const json_t *j, struct np_sum_timeline *tl, const char *what,
                                  struct np_err *err);
NP_API void np_sum_timeline_free(struct np_sum_timeline *tl);

/** Drop member @p member (enum np_sum_node_member) of @p n and what it holds. */
NP_API void np_sum_node_drop(struct np_sum_node *n, unsigned member);
/** A deep copy of @p src into @p dst. @return 0 or -ENOMEM */
NP_API int np_sum_node_copy(struct np_sum_node *dst, const struct np_sum_node *src);

/* ---- working on a summary (the json_t functions of numaplace/summary.h wrap these; each
 * says what its wrapper says) ---- */

/** An empty summary of job @p job_id. @return 0 or -ENOMEM */
NP_API int np_sum_init(struct np_sum *s, uint32_t job_id);
NP_API int np_sum_set_user(struct np_sum *s, const char *user, struct np_err *err);
/** Fold in @p report (borrowed), as np_summary_add_report. */
NP_API int np_sum_add_report(struct np_sum *s, const json_t *report, struct np_err *err);
NP_API int np_sum_expect_nodes(struct np_sum *s, const char *hostlist, struct np_err *err);
/** Merge @p other into @p into, as np_summary_merge. */
NP_API int np_sum_merge(struct np_sum *into, const struct np_sum *other, struct np_err *err);
/** np_sum_merge without recomputing the totals, for many parts merged in a row (recomputing
 *  after each made merging N parts cost N^2): call np_sum_recompute once after the last. */
NP_API int np_sum_merge_deferred(struct np_sum *into, const struct np_sum *other,
                                 struct np_err *err);
/** Totals, policies, class, start/end and missing_nodes again from the nodes. 0 or -ENOMEM. */
NP_API int np_sum_recompute(struct np_sum *s);
/** Whether a skipped report of @p node is listed. */
NP_API bool np_sum_skipped_has(const struct np_sum *s, const char *node);

/** As np_summary_fit: trims @p s until its stored form fits. */
NP_API long np_sum_fit(struct np_sum *s, size_t max_bytes, char **stored, struct np_err *err);

/** The node named @p name, or NULL. Borrowed. */
NP_API const struct np_sum_node *np_sum_node_get(const struct np_sum *s, const char *name);

/** Whether @p name reported: a node in `nodes` or one folded into `nodes_folded`. */
NP_API bool np_sum_node_reported(const struct np_sum *s, const char *name);

/** Nodes that reported: those in `nodes` plus those folded and not kept whole. */
NP_API size_t np_sum_node_count(const struct np_sum *s);

#ifdef __cplusplus
}
#endif

#endif /* NUMAPLACE_SUMMARY_MODEL_H */
