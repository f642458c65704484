/*
 * placement_hint.h - the placement hint numaplaced gives a step with --numa-policy=auto before its
 * tasks start (op "advise", docs/auto.md): each memory node's traffic against its capacity, and
 * what this user's earlier runs of the same job name on this node said about its sensitivity.
 *
 * Capacities come from the machine profile (`numaplace characterize`: the most a node's memory
 * served, alone or under its loaders); without one no node is called loaded, and the reply says
 * why. The history is history.c's, kept across restarts in the state directory.
 */
#ifndef NUMAPLACED_PLACEMENT_HINT_H
#define NUMAPLACED_PLACEMENT_HINT_H

#include "daemon.h"

/** Read the machine profile's capacities and the loaded threshold (start and SIGHUP). */
void hint_load(struct np_daemon *d);

/** Each interval, with auto_load=cpu-busy: every node's CPUs' busy share since the last one. */
void hint_tick(struct np_daemon *d);

/** The reply to advise (root only). New reference. */
json_t *op_advise(struct np_daemon *d, const struct np_peer *peer, uint32_t job_id,
                  uint32_t step_id, uid_t uid, const char *name);

/** At register: the job name advise was told for this step, if any, into @p j. */
void hint_claim_name(struct np_daemon *d, struct np_daemon_job *j);

/** At a step's end: remember its sensitivity under its user and name, when both are known. */
void hint_remember(struct np_daemon *d, const struct np_daemon_job *j);

#endif /* NUMAPLACED_PLACEMENT_HINT_H */
