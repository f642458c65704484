/* jobs.h - one tracked step, the object: its class, its tasks, its CPUs (job_life.h: its life in
 * the registry). */
#ifndef NUMAPLACED_JOBS_H
#define NUMAPLACED_JOBS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon.h"

/** Free a job that is not (or no longer) in the registry. Accepts NULL. */
void job_free(struct np_daemon_job *j);

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

/** numaplaced's CPUs and those of them that are @p j's (meta.helper_cpus, meta.shared_cpus; once
 *  shared, a CPU stays listed). Nothing when either set is unknown. */
void job_note_helper_cpus(const struct np_daemon *d, struct np_daemon_job *j);

/** Bit n: some CPU of @p cpus is on NUMA node n (nothing when the node map is unknown). */
uint64_t job_cpu_nodes_mask(const struct np_daemon *d, hwloc_const_bitmap_t cpus);

#endif /* NUMAPLACED_JOBS_H */
