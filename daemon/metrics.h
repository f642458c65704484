/*
 * metrics.h - numaplaced's Prometheus page (text exposition format 0.0.4): the node's memory and
 * bandwidth, migration and sampling counters, and each running step's figures, rendered from
 * struct np_daemon in the loop's thread. Serving it is http.c's job; names and labels are the
 * contract in numaplaced(8) (METRICS).
 */
#ifndef NUMAPLACED_METRICS_H
#define NUMAPLACED_METRICS_H

#include <stdbool.h>
#include <stddef.h>

struct np_daemon;

/** A growing text buffer. */
struct metrics_text {
    char *buf; /**< owned, NUL-terminated */
    size_t len, cap;
    bool oom; /**< an append failed: the text is incomplete */
};

/** Append @p s as a label value: backslash, double quote and newline escaped; other control
 *  characters and bytes that are not UTF-8 become '?' (the page must stay parseable). */
void metrics_append_label_value(struct metrics_text *t, const char *s);

/**
 * Render the page. Steps whose user name is not known yet have it looked up (once per step).
 * @param text receives the page (free text->buf)
 * @return 0 or -ENOMEM (nothing owned then)
 */
int metrics_render(struct np_daemon *d, struct metrics_text *text);

#endif /* NUMAPLACED_METRICS_H */
