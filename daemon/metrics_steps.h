/*
 * metrics_steps.h - the metrics page's per-step families (metrics.h): each running step's memory
 * per node, local ratio, counters and info, for as many steps as metrics_step_series allows.
 */
#ifndef NUMAPLACED_METRICS_STEPS_H
#define NUMAPLACED_METRICS_STEPS_H

#include "metrics_text.h"

struct np_daemon;

/** Render them for the NUMA nodes @p os (their kernel numbers, @p count of them). Steps whose
 *  user name is not known yet have it asked for (user_names.h), never waited on. */
void metrics_render_steps(struct np_daemon *d, struct metrics_text *t, const unsigned *os,
                          unsigned count);

#endif /* NUMAPLACED_METRICS_STEPS_H */
