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

/** The per-step families (metrics_steps.c), as many steps as metrics_step_series allows. */
void metrics_render_steps(struct np_daemon *d, struct metrics_text *t, const unsigned *os,
                          unsigned count);

/** process_cpu_seconds_total, process_start_time_seconds, process_resident_memory_bytes,
 *  process_open_fds, process_max_fds (metrics_process.c), each where its file reads. */
void metrics_render_process(const struct np_daemon *d, struct metrics_text *t);

#endif /* NUMAPLACED_METRICS_H */
