/*
 * metrics_process.h - the metrics page's standard process_* families (metrics.h), from
 * numaplaced's own /proc files under proc_root (libmicrohttpd provides none).
 */
#ifndef NUMAPLACED_METRICS_PROCESS_H
#define NUMAPLACED_METRICS_PROCESS_H

#include "metrics_text.h"

struct np_daemon;

/** process_cpu_seconds_total, process_start_time_seconds, process_resident_memory_bytes,
 *  process_open_fds, process_max_fds, each where its file reads. */
void metrics_render_process(const struct np_daemon *d, struct metrics_text *t);

#endif /* NUMAPLACED_METRICS_PROCESS_H */
