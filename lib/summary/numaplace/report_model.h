/*
 * numaplace/report_model.h - a step's report (`numaplace.report/1`, docs/report-schema.md) as C
 * data, read once for the summary (np_summary_add_report) and for its text (np_report_print).
 *
 * Reports are read leniently, member by member, where the summary always did: a report written
 * by an older numaplace lacks members (`local_nodes`, `pages.local_share`, `timeline`, migration
 * details) and a figure that is missing or malformed becomes unavailable with that said, never a
 * zero. The schema is open to new optional members, so unknown members are ignored.
 *
 * Ownership: struct np_report owns its strings and arrays; free with np_report_model_free.
 */
#ifndef NUMAPLACE_REPORT_MODEL_H
#define NUMAPLACE_REPORT_MODEL_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "numaplace/common.h"
#include "numaplace/figure.h"
#include "numaplace/summary_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a report figure was found. */
enum np_report_figure_state {
    NP_REPORT_FIGURE_ABSENT = 0,  /**< not an object: the report predates it */
    NP_REPORT_FIGURE_UNAVAILABLE, /**< {"unavailable": why} */
    NP_REPORT_FIGURE_MALFORMED,   /**< an object without its number */
    NP_REPORT_FIGURE_VALUE,       /**< measured */
};

/** A figure as a step's report holds it: its number (value, mean or per_s), peak and intervals, or
 * why not. The summary's own figure, which adds steps and nodes up, is struct np_figure (figure.h).
 */
struct np_report_figure {
    enum np_report_figure_state state;
    double value, peak, intervals;
    bool has_peak, has_intervals;
    bool unavailable_member; /**< has an "unavailable" member, of any type */
    char *reason;            /**< NP_REPORT_FIGURE_UNAVAILABLE: the report's reason */
    char *source;            /**< the figure's source, NULL when it has none */
};

struct np_report_task {
    char *policy; /**< NULL when the task did not report one */
};

struct np_report_request {
    char *trigger; /**< NULL: not recorded */
    bool dry_run;
    json_int_t moved_pages;
};

/** A report's `migrations`. */
struct np_report_migrations {
    bool present; /**< an object without "unavailable" */
    struct np_map in_bytes, out_bytes, failed_pages;
    double moving_s;
    struct np_report_request *requests;
    size_t nrequests;
    char *source;
};

enum np_report_pages_state { NP_RPAGES_ABSENT = 0, NP_RPAGES_UNAVAILABLE, NP_RPAGES_READ };

/** A report's `pages`. */
struct np_report_pages {
    enum np_report_pages_state state;
    char *reason, *source;
    struct np_map peak_bytes; /**< its numeric members */
    bool has_end_bytes;
    struct np_map end_bytes;
    double peak_total_bytes; /**< -1 when absent */
    bool has_local_share;
    struct np_report_figure local_share;
};

/** The perf_counts a report's sensitivity inputs come from (perf_counts.NAME's value). */
enum np_report_perf {
    NP_RPERF_CYCLES = 0,
    NP_RPERF_INSTRUCTIONS,
    NP_RPERF_LLC_LOAD_MISSES,
    NP_RPERF_LLC_STORE_MISSES,
    NP_RPERF_N
};

struct np_report {
    char *schema, *node, *step, *start, *end, *sensitivity, *cpus, *policy_requested;
    char *job_class, *class_source; /**< `class`, `class_source`; NULL when absent */
    char *helper_shared_cpus;       /**< `helper.shared_cpus`; NULL when absent */
    char *emulated_cpu; /**< `sampling.emulated_cpu`: the counters are an emulator's; NULL: not */
    bool has_job_id, has_uid, complete;
    json_int_t job_id, uid;
    double duration_s;
    struct np_report_task *tasks;
    size_t ntasks;
    bool has_local_nodes;
    struct np_nums local_nodes;
    struct np_report_figure cpi, bandwidth;
    struct np_report_figure perf[NP_RPERF_N]; /**< absent when the report has no perf_counts */
    struct np_report_pages pages;
    struct np_report_migrations migrations;
    /* os_interference: kernel_time_share, involuntary_cs_per_s, interrupts_on_cpus (per_s),
     * softirqs_on_cpus (per_s), other_cpu_time_s; indexed by enum np_sum_os_member */
    struct np_report_figure os[NP_OS_NMEMBERS];
    bool has_timeline;
    struct np_sum_timeline timeline;
};

/**
 * Read @p json (borrowed): with @p full false only its ids and the members beside them (enough to
 * skip a report of another schema version); with @p full everything. Only a report that is no
 * JSON object, or whose timeline, end_bytes or local_nodes hold something other than numbers, is
 * refused.
 * @return 0, -EINVAL / -ENOMEM with @p err
 */
NP_API int np_report_model_decode(const json_t *json, bool full, struct np_report *r,
                                  struct np_err *err);

NP_API void np_report_model_free(struct np_report *r);

/** Print a report as text (borrowed). @return 0 or -EIO. */
NP_API int np_report_print(FILE *out, json_t *report);

#ifdef __cplusplus
}
#endif

#endif /* NUMAPLACE_REPORT_MODEL_H */
