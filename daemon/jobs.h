/* jobs.h - one tracked step: created at its first registration, finished into a report. */
#ifndef NUMAPLACED_JOBS_H
#define NUMAPLACED_JOBS_H

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

/** Free a job that is not (or no longer) in the registry. Accepts NULL. */
void job_free(struct np_daemon_job *j);

/**
 * The step ended (@p complete) or cannot be followed any more: take its final sample, write its
 * report, end its trace, drop it from the registry (journaled), free it. With a writer
 * (d->writer) the report is flushed there: the step stays in the registry, j->finishing, until
 * job_report_done.
 */
void job_finish(struct np_daemon *d, struct np_daemon_job *j, bool complete);

/** Its report is durable or held (the writer's completion): drop it from the registry, free it,
 *  and answer the step_end client waiting on j->reply_tag, if any. */
void job_report_done(struct np_daemon *d, struct np_daemon_job *j);

/** Its entry in j->tasks for @p pid, or NULL. Borrowed. */
json_t *job_task_entry(const struct np_daemon_job *j, pid_t pid);

/** Set its priority class (and the name its report carries). */
void job_set_class(struct np_daemon_job *j, enum np_class cls);

/** Say what decided its class (the report's class_source): "label", "default", "admin" or
 * "auto: ..." (docs/sensitivity.md). */
void job_set_class_source(struct np_daemon_job *j, const char *source);

/**
 * Follow the sampler's effective CPUs (the registered ones narrowed to the tasks' affinity):
 * meta.effective_cpus, and meta.local_nodes / stats.local_nodes, which the migration view and
 * the local share read. meta.cpus and meta.registered_nodes keep what was registered.
 * @return whether they changed
 */
bool job_follow_effective_cpus(const struct np_daemon *d, struct np_daemon_job *j);

/** The helper's CPUs and those of them that are @p j's (meta.helper_cpus, meta.shared_cpus; once
 *  shared, a CPU stays listed). Nothing when either set is unknown. */
void job_note_helper_cpus(const struct np_daemon *d, struct np_daemon_job *j);

#endif /* NUMAPLACED_JOBS_H */
