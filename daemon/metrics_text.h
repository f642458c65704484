/* metrics_text.h - numaplaced's Prometheus page (text format 0.0.4; the contract in numaplaced(8),
 * METRICS), rendered in the loop's thread (metrics.c) into a growing buffer (metrics_text.c): a
 * family's HELP and TYPE, then its series, each opened, labelled and closed by its value. */
#ifndef NUMAPLACED_METRICS_TEXT_H
#define NUMAPLACED_METRICS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "numaplace/common.h"

/** A growing text buffer. */
struct metrics_text {
    char *buf; /**< owned, NUL-terminated */
    size_t len, cap;
    bool oom; /**< an append failed: the text is incomplete */
};

void metrics_putf(struct metrics_text *t, const char *fmt, ...) NP_PRINTF(2, 3);

/** HELP and TYPE of one family (its samples must follow at once: one group per family). */
void metrics_family(struct metrics_text *t, const char *name, const char *type, const char *help);

/** Open a series: its name; labels follow with metrics_label/_code, the value closes it. */
void metrics_series(struct metrics_text *t, const char *name);

/** One label, escaped (@p first opens the braces). */
void metrics_label(struct metrics_text *t, bool first, const char *key, const char *value);

/** One label whose value is a name from one of the code's tables, written as a code: lower
 *  snake_case ('-' and ' ' become '_'); a value with anything but [a-z0-9_-] is "other". */
void metrics_label_code(struct metrics_text *t, bool first, const char *key, const char *value);

/** Close a series with its value (@p labelled: braces to close); NaN and Inf as spelled. */
void metrics_value_u64(struct metrics_text *t, bool labelled, uint64_t v);
void metrics_value_f(struct metrics_text *t, bool labelled, double v);

/** A family of one unlabelled series: HELP, TYPE and the series with its value. */
void metrics_single_u64(struct metrics_text *t, const char *name, const char *type,
                        const char *help, uint64_t v);
void metrics_single_f(struct metrics_text *t, const char *name, const char *type, const char *help,
                      double v);

struct np_daemon;

/** Render the page into @p text (free text->buf); user names not known yet are asked for, never
 *  waited on. @return 0 or -ENOMEM (nothing owned then) */
int metrics_render(struct np_daemon *d, struct metrics_text *text);

#endif /* NUMAPLACED_METRICS_TEXT_H */
