/*
 * lifecycle.h - numaplaced's context set up and torn down. Above every part (it starts and stops
 * them all), so the parts depend on the context (daemon.h) and never on this.
 */
#ifndef NUMAPLACED_LIFECYCLE_H
#define NUMAPLACED_LIFECYCLE_H

#include "daemon.h"

/** Everything off: fds -1, the log sink pointed at @p d, default configuration. Cannot fail. */
void np_daemon_init(struct np_daemon *d);

/** Free and close what @p d holds (jobs, clients, socket, pid file, trace, node data,
 *  overrides); the log stays open. Does not save the registry. */
void np_daemon_fini(struct np_daemon *d);

/** Write what the writer still has, run its completions and end it; later writes are made on
 *  the loop thread. Nothing without a writer. */
void np_daemon_stop_writer(struct np_daemon *d);

#endif /* NUMAPLACED_LIFECYCLE_H */
