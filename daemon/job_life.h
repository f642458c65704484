/* job_life.h - a step's life in the registry: created at its first registration, finished into
 * a report, forgotten once that is durable. Above the parts it drives (sampling, report_out,
 * clients); they call back through the context, never up here. */
#ifndef NUMAPLACED_JOB_LIFE_H
#define NUMAPLACED_JOB_LIFE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon.h"

/**
 * A new step in d's registry, its class from @p sensitivity and the class_* keys, its sampler on
 * cfg.proc_root and @p cpus. Borrowed (the registry owns it).
 * @return NULL with @p err (max_jobs reached: -ENOSPC; bad @p cpus: -EINVAL; -ENOMEM)
 */
struct np_daemon_job *job_new(struct np_daemon *d, uint32_t job_id, uint32_t step_id, uid_t uid,
                              const char *cpus, const char *policy, const char *sensitivity,
                              struct np_err *err);

/** Whether @p j may open perf counters for one more task within the descriptor budget
 *  (fd_budget.h). When not, the whole step goes to /proc alone, its counters closed, and says
 *  so in its backends_reason (status, report) and the log. True when it has none to open. */
bool job_keep_perf_for_task(struct np_daemon *d, struct np_daemon_job *j);

/**
 * The step ended (@p complete) or cannot be followed any more: take its final sample, write its
 * report, end its trace, drop it from the registry (journaled), free it. With a writer
 * (d->writer) the report is flushed there: the step stays in the registry, j->finishing, its
 * entry with the report journaled (registry_note), until job_report_done. A report the spool
 * refuses is held (report_hold.h): its step stays, finishing, until the spool takes it.
 */
void job_finish(struct np_daemon *d, struct np_daemon_job *j, bool complete);

/** Its report is durable or held (the writer's completion): answer the step_end client waiting
 *  on j->reply_tag, if any, and, unless held, drop it from the registry and free it. */
void job_report_done(struct np_daemon *d, struct np_daemon_job *j);

#endif /* NUMAPLACED_JOB_LIFE_H */
