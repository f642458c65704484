/*
 * metrics.h - numaplaced's Prometheus page (text exposition format 0.0.4): the node's memory and
 * memory traffic, migration, sampling and delivery counters, numaplaced's own process figures,
 * and each running step's figures, rendered from struct np_daemon in the loop's thread. Rates
 * are Prometheus's to compute (rate() over the counters); sizes are bytes. Serving it is http.c's
 * job; names and labels are the contract in numaplaced(8) (METRICS) and docs/prometheus.md.
 */
#ifndef NUMAPLACED_METRICS_H
#define NUMAPLACED_METRICS_H

#include "metrics_text.h"

struct np_daemon;

/**
 * Render the page. Steps whose user name is not known yet have it looked up (once per step).
 * @param text receives the page (free text->buf)
 * @return 0 or -ENOMEM (nothing owned then)
 */
int metrics_render(struct np_daemon *d, struct metrics_text *text);

#endif /* NUMAPLACED_METRICS_H */
