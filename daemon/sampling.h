/* sampling.h - what numaplaced learns about the node at start and about each step each interval. */
#ifndef NUMAPLACED_SAMPLING_H
#define NUMAPLACED_SAMPLING_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon.h"

/** Keep the helper off the jobs' CPUs: housekeeping_cpus, or with "auto" the CPUs Slurm
 *  confines this node's slurmd to (its specialized CPUs; housekeeping_slurmd_cpus), read from
 *  proc_root with no call to slurmctld. Says where it runs. */
void sampling_pin_housekeeping(struct np_daemon *d);

/** Which NUMA node each CPU belongs to (d->topology, d->cpu_node). Failure is logged: then
 *  bandwidth cannot be attributed to nodes. */
void sampling_load_topology(struct np_daemon *d);

/** Close the nodes' kept meminfo files (d->meminfo_files) and free them; NULL is fine. */
void sampling_close_meminfo(struct np_daemon *d);

/** Which perf events count on this node (d->perf_mask), and why not when none does. */
void sampling_probe_perf(struct np_daemon *d);

/** Add @p bytes of @p j's memory traffic (one interval's LLC misses x 64 B) to the nodes that
 *  served it (totals.misses_bytes), spread by where its pages are, as the status's node traffic
 *  is (np_node_traffic); before its pages are first read, it is not attributed. */
void sampling_count_node_traffic(struct np_daemon *d, const struct np_daemon_job *j,
                                 uint64_t bytes);

/** One sample of @p j at @p now folded into its stats (and the trace). @p final: its last. */
void sampling_sample_job(struct np_daemon *d, struct np_daemon_job *j, double now,
                         bool node_counters_read, bool final);

/* ---- each interval's work (sampling_tick.c: above sampling, the step's life and the migration
 * triggers it runs) ---- */

/** The interval's work: sample every step, end those whose processes are gone, then run the
 *  migration triggers. */
void sampling_tick(struct np_daemon *d);

#endif /* NUMAPLACED_SAMPLING_H */
