/*
 * numaplace/figure.h - the one printer of the "value or unavailable with a reason" figure of
 * reports, summaries and `numaplace status`: `{"value": number, "unit": "...", "source": "..."}`
 * or `{"unavailable": "why", "source": "..."}` (docs/report-schema.md), plus the members a
 * summary adds (`seconds`, `steps`, ...). A figure that could not be measured stays unavailable
 * with its reason: nothing here turns it into a number.
 */
#ifndef NUMAPLACE_FIGURE_H
#define NUMAPLACE_FIGURE_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "numaplace/common.h"
#include "numaplace/model_parts.h"

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
 * The one way a figure (borrowed, may be NULL) is printed: its number ("1.48 s"), or
 * "unavailable (why)", or @p st->none. Callers print the label.
 * @return 1 (a number), 0 (unavailable), -1 (neither)
 */
NP_API int np_figure_print(FILE *out, const json_t *f, const struct np_figure_style *st);

/** Whether @p fig (borrowed) is a figure as np_figure_print reads it: only a plain figure's
 *  members, each of its type (summary_schema.c). @return 0, or -EINVAL naming the member with
 *  @p err */
NP_API int np_figure_check(const json_t *fig, struct np_err *err);

#endif /* NUMAPLACE_FIGURE_H */
