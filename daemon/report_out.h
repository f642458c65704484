/* report_out.h - what numaplaced writes: a step's report to the spool, samples to the trace. */
#ifndef NUMAPLACED_REPORT_OUT_H
#define NUMAPLACED_REPORT_OUT_H

#include <stdbool.h>

#include <jansson.h>

#include "daemon.h"

/** Write the step's report to <spool_dir>/<job>.<step>.<host>.json, owned by numaplaced, mode
 *  0600, the job's user in a read ACL entry: the user reads it, only numaplaced writes it (root
 *  trusts it in the epilog). A spool without ACLs keeps it root-only (logged once per spool).
 *  The report is built once, into j->final_report (sets meta.end_epoch), unless the step has one
 *  already (restored with it): that one is written. Failures are logged; a refused report is
 *  held (report_hold.h) and its step stays in the registry.
 *  @return false: done now (written or lost: the step may be forgotten); true: queued to
 *          d->writer, and d->report_durable(d, j) runs on the loop once it is durable (or held),
 *          or held now (without a writer) */
bool report_out_write(struct np_daemon *d, struct np_daemon_job *j, bool complete);

/** (Re)open the trace cfg.record names (none when empty). @return 0 or -errno (logged) */
int trace_open(struct np_daemon *d);

/** Append one trace line (stolen; NULL is ignored) when a trace is open. */
void trace_line(struct np_daemon *d, json_t *line);

#endif /* NUMAPLACED_REPORT_OUT_H */
