/*
 * numaplace/summary.h - one job's per-node reports merged into one summary, its plain-language
 * advice, a seff-like text form, the stored form that fits Slurm's AdminComment and its timeline
 * plot (docs/summary-schema.md, which shows the flow at the end of a job); the node lists a job of
 * tens of thousands of nodes makes long (string sets and Slurm hostlists); the one printer of a
 * report's figures; and `numaplace report`'s text with its hindsight on --numa-policy=auto.
 *
 * A summary is a plain jansson object: callers may read it freely, and should change it only
 * through these functions. Figures keep the report's form: `{"value", "unit", "source"}` or
 * `{"unavailable": why, "source"}`; an unavailable figure stays unavailable with its reason and is
 * never replaced by zero.
 */
#ifndef NUMAPLACE_SUMMARY_H
#define NUMAPLACE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "numaplace/common.h"
#include "numaplace/sensitivity.h"

#define NP_SUMMARY_SCHEMA "numaplace.summary/1"

/** @p n node names (borrowed) as one hostlist for a reader: a new string, or NULL to print them
 *  in the library's own form. The command passes Slurm's (libslurm's hostlist), which the library
 *  does not link. */
typedef char *(*np_hostlist_fn)(const char *const *names, size_t n);

/** The longest stored summary ("NPS1:...", bytes) np_summary_fit should put in AdminComment:
 *  slurmdbd's TEXT column holds 65,535; the rest is room for another tool's note and quoting. */
#define NP_SUMMARY_STORED_MAX 60000

/* Advice thresholds (docs/summary-schema.md explains each). */
#define NP_ADVICE_REMOTE_SHARE          0.50 /**< remote-memory: local share below this on a node */
#define NP_ADVICE_LOCAL_GOOD_SHARE      0.90 /**< local-is-good: local policy and share >= this */
#define NP_ADVICE_HIGH_LOCAL_SHARE      0.90 /**< high-but-remote: class high and share below */
#define NP_ADVICE_BANDWIDTH_BYTES_PER_S 2e9  /**< interleave-may-help: mean bandwidth >= this */
#define NP_ADVICE_SPREAD_SHARE          0.10 /**< ... and >= 2 NUMA nodes each hold >= this share */
#define NP_ADVICE_KERNEL_SHARE          0.10 /**< os-noise: kernel share of CPU time >= this, */
#define NP_ADVICE_INVOLUNTARY_CS_PER_S  100.0  /**< or involuntary context switches/s >= this, */
#define NP_ADVICE_INTERRUPTS_PER_S      1000.0 /**< or interrupts/s on the job's CPUs >= this */
#define NP_ADVICE_SENSITIVITY_MIN_S     30.0 /**< predicted-*: steps that ran at least this long */

/** Most nodes a fold names: a hostlist of a few bytes must not expand to gigabytes when checked
 * (Slurm's largest clusters are a few tens of thousands of nodes). */
#define NP_FOLD_MAX_NODES 65536

/** The worst nodes (lowest local share) a fold keeps whole in `nodes`: the advice names up to 4. */
#define NP_FOLD_KEEP_WORST 8

/* ---- node lists (a struct np_strs owns its strings; np_strs_free accepts NULL, leaves it
 * zeroed) ---- */

struct np_strs {
    char **v;
    size_t n;
};

/** Append @p str (copied). 0 or -ENOMEM. */
NP_API int np_strs_append(struct np_strs *s, const char *str);
/** Append each of @p names[0..n) (copied) that @p s does not hold yet, once, in their order, in
 *  O((s->n + n) log(s->n + n)): a job's node list can name tens of thousands. @p s is unchanged
 *  on failure. 0 or -ENOMEM. */
NP_API int np_strs_append_new(struct np_strs *s, const char *const *names, size_t n);
/** Add @p str to a sorted set (nothing when present). 0 or -ENOMEM. */
NP_API int np_strs_add_sorted(struct np_strs *s, const char *str);
NP_API void np_strs_free(struct np_strs *s);

/**
 * @p names (borrowed, any order) as a Slurm-style hostlist: "node[0001-0100,0102],login1" (a
 * prefix and zero-padded numbers in ranges; names without a number as they are).
 * @param out receives a new string (free()). @return 0 or -ENOMEM
 */
NP_API int np_hostlist_compress(const struct np_strs *names, char **out);
/**
 * @p list expanded into @p out, sorted (strcmp) and without duplicates, at most @p max names.
 * @return 0, -EINVAL (not a hostlist of node names, or more than @p max) / -ENOMEM with @p err
 */
NP_API int np_hostlist_expand(const char *list, size_t max, struct np_strs *out,
                              struct np_err *err);

/**
 * An empty summary of job @p job_id (no nodes, no reports).
 * @return a new reference, NULL on out-of-memory
 */
NP_API json_t *np_summary_new(uint32_t job_id);

/**
 * Name the job's user (`user`); the summary holds only the uid otherwise. @p user is copied.
 * @return 0, or -EINVAL (not a summary, empty name) / -ENOMEM with @p err
 */
NP_API int np_summary_set_user(json_t *summary, const char *user, struct np_err *err);

/**
 * Check that @p summary (borrowed) is a summary this numaplace reads.
 * @return 0, -EINVAL (not a summary) or -EPROTO (another schema version) with @p err
 */
NP_API int np_summary_check(const json_t *summary, struct np_err *err);

/**
 * Check @p summary (borrowed) strictly, as it enters from outside (a stored AdminComment, a part
 * file): np_summary_check, then the schema's members only, each of its type, and a fold that is
 * consistent (docs/summary-schema.md).
 * @return 0, or -EINVAL naming the member and what it should be / -EPROTO / -ENOMEM, with @p err
 */
NP_API int np_summary_validate(const json_t *summary, struct np_err *err);

/**
 * Fold one step's report (borrowed; copied where kept) into @p summary: the step joins its node's
 * steps and the node's figures, then the totals and missing_nodes are recomputed.
 *
 * A report with another schema version is not an error: it is recorded in `skipped` with the
 * reason and the function returns 0 with @p err->code 0 and @p err->msg saying what was skipped
 * (check `err.msg[0]`).
 * @return 0; -EINVAL (not a summary, not a report, a report of another job or uid, no node or
 *         step); -EEXIST (that node's step is in the summary already); -ENOMEM; each with @p err
 */
NP_API int np_summary_add_report(json_t *summary, json_t *report, struct np_err *err);

/**
 * The job's allocated nodes, as names separated by commas, spaces or newlines (the caller expands
 * Slurm hostlists with `scontrol show hostnames`). Each one without a report (and without a
 * skipped report) is listed in `missing_nodes` until its report is added or merged. May be called
 * before or after the reports are added; calls accumulate.
 * @return 0, or -EINVAL (not a summary; empty list; a name with characters other than letters,
 *         digits, '.', '-', '_', such as an unexpanded "node[1-4]") / -ENOMEM with @p err
 */
NP_API int np_summary_expect_nodes(json_t *summary, const char *hostlist, struct np_err *err);

/**
 * Merge @p other (borrowed; its parts are copied) into @p into, both summaries of the same job:
 * each node in @p other replaces the same node in @p into unless @p into's part of it is newer,
 * `skipped` and `trimmed` are united, and totals and missing_nodes are recomputed
 * (docs/summary-schema.md, "Building and merging"; into a folded summary: "Folded nodes").
 * @return 0, or -EINVAL (not summaries, different jobs or uids, both folded) / -EPROTO / -ENOMEM
 *         with @p err
 */
NP_API int np_summary_merge(json_t *into, json_t *other, struct np_err *err);

/** np_summary_merge without recomputing the totals, nor checking either summary (the caller
 *  checked them with np_summary_validate), for many parts merged in a row (recomputing after each
 *  made merging N parts cost N^2): call np_summary_recompute once after the last. */
NP_API int np_summary_merge_deferred(json_t *into, json_t *other, struct np_err *err);
/** Totals, policies, class, start/end and missing_nodes again from the nodes. 0 or -ENOMEM. */
NP_API int np_summary_recompute(json_t *summary);

/**
 * Plain-language advice from the summary's figures (borrowed): an array of
 * `{"rule": id, "text": one sentence}`, one entry per rule that fires (naming its nodes), in the
 * order of docs/summary-schema.md ("Advice", with the NP_ADVICE_* thresholds above);
 * `[{"rule": "none", "text": "nothing stood out"}]` when none does.
 * @return a new reference, NULL for something that is not a summary or on out-of-memory
 */
NP_API json_t *np_summary_advice(const json_t *summary);

/** As np_summary_advice, with the sensitivity rules (predicted-sensitive, predicted-insensitive)
 *  when @p model (borrowed, may be NULL: those rules stay silent) is given. */
NP_API json_t *np_summary_advice_with(const json_t *summary, const struct np_sens_model *model);

/** A job's predicted sensitivity: its most sensitive step that ran long enough. */
struct np_summary_prediction {
    bool available;
    double slowdown;          /**< the highest step prediction */
    bool sensitive;           /**< slowdown at or above the model's threshold */
    const char *node;         /**< borrowed from the summary: where that step ran */
    const char *step;         /**< borrowed: which step */
    char why[NP_ERR_MSG_MAX]; /**< when !available: "unavailable: ..." */
};

/** Predict over the steps that ran at least NP_ADVICE_SENSITIVITY_MIN_S (shorter ones are mostly
 *  start-up); unavailable, with the first step's reason, when none could be predicted. */
NP_API void np_summary_predict(const json_t *summary, const struct np_sens_model *model,
                               struct np_summary_prediction *out);

/** Whether @p name reported: a node in `nodes` or one folded into `nodes_folded`. */
NP_API bool np_summary_node_reported(const json_t *summary, const char *name);
/** Nodes that reported: those in `nodes` plus those folded and not kept whole. */
NP_API size_t np_summary_node_count(const json_t *summary);
/** Worst (lowest) local share over the nodes; false when no node measured it. */
NP_API bool np_summary_worst_local_share(const json_t *summary, double *share);

/**
 * Print @p summary (borrowed) as text, like seff: the job, a block per node with its local-memory
 * bar, the advice, notes on missing, skipped and trimmed parts (docs/summary-schema.md, "Text").
 * @return 0, -EINVAL (not a summary, NULL @p out) or -EIO (write error)
 */
NP_API int np_summary_print(FILE *out, const json_t *summary);
/** As np_summary_print, with the predicted sensitivity and its advice (np_summary_predict), the
 *  folded nodes written by @p hostlist (may be NULL; see np_hostlist_fn above). */
NP_API int np_summary_print_hostlist(FILE *out, const json_t *summary,
                                     const struct np_sens_model *model, np_hostlist_fn hostlist);

/* ---- the stored form in Slurm's AdminComment: "NPS1:" + base64(zlib(compact JSON)), the way
 * Princeton's jobstats stores "JS1:" summaries: prefixed so other tools' comments are recognised
 * and left alone, versioned by the prefix, compressed because accounting keeps it for every job
 * ---- */

#define NP_STORED_PREFIX "NPS1:"

/* What a stored summary may decode to: past any of these it is no summary numaplace wrote, and is
 * refused as corrupt before jansson builds it (docs/summary-schema.md, "Decoding limits", says
 * why each). */
#define NP_STORED_MAX_JSON_BYTES      (1u << 20) /* twice the ~450 kB an honest one can reach */
#define NP_STORED_MAX_VALUES          131072     /* 1 MiB at 8 bytes a value */
#define NP_STORED_MIN_BYTES_PER_VALUE 4          /* "0," is 2: only a crafted text packs them */
#define NP_STORED_MAX_DEPTH           16         /* 6 used */
#define NP_STORED_MAX_MEMBERS         16384      /* node names of a 16,384-node job */

/**
 * Encode @p summary (borrowed).
 * @param out receives a new NUL-terminated string (free with free())
 * @return its length, or -ENOMEM / -EINVAL (not serialisable) with @p err
 */
NP_API long np_stored_encode(const json_t *summary, char **out, struct np_err *err);

/**
 * Decode a stored summary. Leading/trailing white space is ignored.
 * @param out receives a new reference (json_decref it)
 * @return 0; -ENOMSG when @p text is not a numaplace summary (no prefix: e.g. another tool's
 *         AdminComment); -EPROTO for an unknown version; -EBADMSG for corrupt base64, zlib or
 *         JSON, or JSON past the NP_STORED_MAX_* limits, each with @p err saying what was wrong
 *         and where
 */
NP_API int np_stored_decode(const char *text, json_t **out, struct np_err *err);

/**
 * The stored form of @p summary (np_stored_encode, "NPS1:..."), at most @p max_bytes long (use
 * NP_SUMMARY_STORED_MAX for AdminComment). When it is longer, detail is dropped from @p summary
 * itself in the order of docs/summary-schema.md ("Stored form"; its last step "Folded nodes"),
 * each drop recorded in `trimmed`, until it fits. The ids, totals, missing_nodes, skipped and
 * trimmed are never dropped, and what is stored decodes (np_stored_decode's limits).
 * @param stored receives a new string (free with free()); NULL on failure
 * @return its length; -E2BIG when even the minimal summary does not fit (@p summary is left
 *         trimmed or folded); -EINVAL / -ENOMEM; each with @p err
 */
NP_API long np_summary_fit(json_t *summary, size_t max_bytes, char **stored, struct np_err *err);

/* ---- a job's timeline as a picture (PNG or SVG, drawn with cairo): memory per NUMA node, the
 * local share, bandwidth and CPI under one time axis, migrations marked across them; a figure not
 * measured says "unavailable" and why in its panel (docs/summary-schema.md, "Plot") ---- */

#define NP_PLOT_MAX_NODES 64

struct np_timeline_point {
    double t; /**< seconds since the step started */
    uint64_t bytes_on_node[NP_PLOT_MAX_NODES];
    double bandwidth; /**< bytes/s, if bandwidth_ok */
    bool bandwidth_ok;
    double cpi; /**< if cpi_ok */
    bool cpi_ok;
};

struct np_timeline_event {
    double t;
    char label[48]; /**< e.g. "0->1 512 MiB" */
};

/** Everything borrowed. */
struct np_timeline {
    const char *title;
    unsigned nnodes;
    const struct np_timeline_point *points;
    size_t npoints;
    const struct np_timeline_event *events;
    size_t nevents;
    const char *bandwidth_note; /**< why bandwidth is missing (when no point has it) */
    const char *cpi_note;       /**< why CPI is missing */
    /** The NUMA nodes of the step's CPUs, whose share of its memory is the local share; NULL
     *  when not known (the local share is then unavailable). */
    const unsigned *local_nodes;
    size_t nlocal_nodes;
    const char *start, *end; /**< wall-clock times of the first and last point, as written in
                                  the report; NULL: not shown */
};

/** A string the drawing wrote: its ink's box in the picture's pixels (cairo_text_extents). */
struct np_plot_text {
    double x0, y0, x1, y1;
    char text[96]; /**< its start */
};

/**
 * Draw @p tl into @p path; the format follows the extension (.png or .svg).
 * @return 0, or -EINVAL (unknown extension, too many nodes, no points) / -EIO with @p err
 */
NP_API int np_plot_timeline(const struct np_timeline *tl, const char *path, struct np_err *err);

/**
 * Draw @p tl as np_plot_timeline does, into an image in memory only, and say where every string
 * went: the first @p max in @p texts (may be NULL), their count in @p ntexts, the picture's size
 * in @p width and @p height. For checks that no text leaves the picture.
 * @return 0, or -EINVAL as np_plot_timeline
 */
NP_API int np_plot_timeline_texts(const struct np_timeline *tl, struct np_plot_text *texts,
                                  size_t max, size_t *ntexts, double *width, double *height,
                                  struct np_err *err);

/**
 * Draw the timeline kept for @p node (NULL: the first node in name order) with np_plot_timeline:
 * memory per NUMA node, bandwidth, CPI, migrations as events. The format follows @p path's
 * extension (.png or .svg).
 * @return 0; -ENODATA when the node has no timeline (its reports predate timelines, or it was
 *         trimmed to fit AdminComment); -ENOENT (no such node: the message lists them); -EINVAL
 *         (not a summary, malformed timeline, unknown extension); -ENOMEM / -EIO; each with @p err
 */
NP_API int np_summary_plot(const json_t *summary, const char *node, const char *path,
                           struct np_err *err);

/* ---- figures and reports ---- */

/* A figure of reports, summaries and `numaplace status`: `{"value": number, "unit", "source"}` or
 * `{"unavailable": "why", "source"}` (docs/report-schema.md), plus the members a summary adds
 * (`seconds`, `steps`, ...). One that could not be measured stays unavailable with its reason.
 * np_figure_print writes its number so: */
struct np_figure_style {
    double scale;     /**< multiplies the value (100 for a percentage) */
    char conv;        /**< 'g' or 'f' */
    int precision;    /**< digits */
    int width;        /**< minimum width, left-aligned (0: none) */
    const char *unit; /**< written right after the number ("%", " s"); NULL: none */
    const char *none; /**< written when @p f is NULL or has neither number nor reason */
    bool brief;       /**< unavailable: just "unavailable", padded to @p width (status columns) */
};

/**
 * The one way a figure (borrowed, may be NULL) is printed: its number ("1.48 s"), or
 * "unavailable (why)", or @p st->none. Callers print the label.
 * @return 1 (a number), 0 (unavailable), -1 (neither)
 */
NP_API int np_figure_print(FILE *out, const json_t *f, const struct np_figure_style *st);

/** Whether @p fig (borrowed) is a figure as np_figure_print reads it: only a plain figure's
 *  members, each of its type (summary_schema.c). @return 0, or -EINVAL naming the member with
 *  @p err */
NP_API int np_figure_check(const json_t *fig, struct np_err *err);

/* `numaplace report`'s hindsight on --numa-policy=auto (docs/auto.md): the choice the step's
 * tasks got, and the one np_auto_choose gives with the sensitivity this run measured in place of
 * the one auto used, the shape and load as the task's "auto" facts recorded them at launch.
 * Derived when the report is read; nothing is stored. */
struct np_auto_hindsight {
    char made[24];  /**< the policy auto chose (the first task's) */
    char used[16];  /**< the sensitivity it used: "high", "low", "unknown" */
    bool measured;  /**< the model classed this run from its counters */
    char would[24]; /**< measured: the choice with that sensitivity; else "" */
    bool differs;   /**< would is not made: a later run should choose differently */
    char why[320];  /**< one line: the verdict and what it rests on, or why none */
};

/**
 * The hindsight of report @p r (borrowed). @return 1 and @p out filled for a step launched
 * with auto (policy.requested; its verdict unavailable when no task has "auto" facts, as in
 * reports before them); 0 for any other step.
 */
NP_API int np_auto_hindsight(json_t *r, struct np_auto_hindsight *out);

/** Print a step's report (borrowed; docs/report-schema.md) as text, for `numaplace report
 *  --steps`. @return 0 or -EIO. */
NP_API int np_report_print(FILE *out, json_t *report);

#endif /* NUMAPLACE_SUMMARY_H */
