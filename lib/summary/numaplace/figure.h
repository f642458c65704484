/*
 * numaplace/figure.h - the "value or unavailable with a reason" figure of reports, summaries and
 * `numaplace status`, as C data, with its one JSON decoder, encoder and printer. It is built from
 * the small pieces of numaplace/model_parts.h.
 *
 * A figure is `{"value": number, "unit": "...", "source": "..."}` or
 * `{"unavailable": "why", "source": "..."}` (docs/report-schema.md), plus the members a summary
 * adds (`seconds`, `steps`, ...). A figure that could not be measured stays unavailable with its
 * reason: nothing here turns it into a number.
 *
 * Ownership: every struct here owns its strings and arrays; free with the matching _free
 * (which accepts NULL and leaves the struct zeroed).
 */
#ifndef NUMAPLACE_FIGURE_H
#define NUMAPLACE_FIGURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "numaplace/common.h"
#include "numaplace/model_parts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- figures ---- */

/** How a figure names its number (and its peak). */
enum np_figure_kind {
    NP_FIGURE_PLAIN = 0, /**< "value" */
    NP_FIGURE_CPI,       /**< "mean", "median", "p95" */
    NP_FIGURE_BANDWIDTH, /**< "mean_bytes_per_s", "peak_bytes_per_s", "per_node" (reports) */
    NP_FIGURE_RATE,      /**< "per_s" and "count" (interrupts on the job's CPUs) */
};

/** Member ids of a figure (struct np_keys). */
enum np_figure_member {
    NP_FIG_VALUE = 0, /**< value, mean, mean_bytes_per_s or per_s by kind */
    NP_FIG_UNIT,
    NP_FIG_SOURCE,
    NP_FIG_UNAVAILABLE,
    NP_FIG_SECONDS,
    NP_FIG_STEPS,
    NP_FIG_BYTE_SECONDS,
    NP_FIG_WEIGHTING,
    NP_FIG_NODES,
    NP_FIG_PEAK, /**< p95 or peak_bytes_per_s */
    NP_FIG_INTERVALS,
    NP_FIG_MEDIAN,
    NP_FIG_COUNT,
    NP_FIG_PER_NODE,
    NP_FIG_NMEMBERS
};

/** A report's per-NUMA-node bandwidth. */
struct np_figure_node {
    struct np_keys keys; /**< member order as decoded (empty: numaplace's) */
    char *node;
    double mean, peak;
};

/**
 * A figure. Which members it has, and in which order they are written, is @p keys; the fields of
 * absent members are zero. Unavailable: NP_FIG_UNAVAILABLE in keys and @p reason set.
 */
struct np_figure {
    enum np_figure_kind kind;
    struct np_keys keys;
    struct np_num value;
    char *unit, *source, *reason, *weighting;
    double seconds, byte_seconds, peak, median;
    json_int_t steps, nodes, intervals, count;
    struct np_figure_node *per_node;
    size_t nper_node;
};

/** Has a number (and no "unavailable"). */
NP_API bool np_figure_available(const struct np_figure *f);
/** Its number (0 when it has none). */
NP_API double np_figure_value(const struct np_figure *f);
/** An available figure {value, unit?, source?} (strings copied; NULL leaves the member out).
 * @return 0 or -ENOMEM */
NP_API int np_figure_set_value(struct np_figure *f, enum np_figure_kind kind, struct np_num value,
                               const char *unit, const char *source);
/** {unavailable: why (or "not measured" when empty), source?}. @return 0 or -ENOMEM */
NP_API int np_figure_set_unavailable(struct np_figure *f, const char *why, const char *source);
NP_API void np_figure_free(struct np_figure *f);

/**
 * Decode a figure of @p kind from @p obj (borrowed). Strict: only the members of a figure, each
 * of its type. @p what names the figure ("nodes.node1.local_share") in the message.
 * @return 0, -EINVAL / -ENOMEM with @p err
 */
NP_API int np_figure_decode(const json_t *obj, enum np_figure_kind kind, struct np_figure *f,
                            const char *what, struct np_err *err);
/** New reference: the members in @p f->keys order. NULL on out-of-memory. */
NP_API json_t *np_figure_json(const struct np_figure *f);

/** How np_figure_print writes a number. */
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
 * The one way a figure is printed: its number ("1.48 s"), or "unavailable (why)", or
 * @p st->none. Callers print the label.
 * @return 1 (a number), 0 (unavailable), -1 (neither)
 */
NP_API int np_figure_print(FILE *out, const json_t *f, const struct np_figure_style *st);

/** Whether @p fig (borrowed) is a figure as np_figure_print reads it: only a plain figure's
 *  members, each of its type. @return 0, or -EINVAL naming the member with @p err */
NP_API int np_figure_check(const json_t *fig, struct np_err *err);

#ifdef __cplusplus
}
#endif

#endif /* NUMAPLACE_FIGURE_H */
