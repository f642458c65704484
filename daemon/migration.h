/*
 * migration.h - numaplaced's side of migration: the node view the engine works on, the queue of
 * requests for the worker (migrator.h), the triggers with their back-off, and the booking of
 * what moved into the jobs' reports.
 */
#ifndef NUMAPLACED_MIGRATION_H
#define NUMAPLACED_MIGRATION_H

#include "daemon.h"
#include "migrator.h"

/** Start the worker when migration is on and it is not running yet; says how it is set up. */
void migration_start(struct np_daemon *d);

/** Stopping: end the running request after its current batch, book and answer it, stop the
 *  worker. */
void migration_stop(struct np_daemon *d);

/** The node as the engine sees it, a deep copy the worker may own. New (migrator_view_free). */
struct np_node_view *migration_build_view(const struct np_daemon *d);

/**
 * The traffic each memory node serves now (np_node_traffic over the jobs' latest figures), for
 * `numaplace status` and the metrics: an array of {"node", "source", "bytes_per_s"} with
 * bytes_per_s only where the source is measured, "proxy_rank" for a proxy, and "unavailable"
 * (the reason) otherwise. New reference; NULL when out of memory.
 */
json_t *migration_node_traffic_json(const struct np_daemon *d);

/** Queue one request. @return 0 or -EBUSY (the queue is full) */
int migration_enqueue(struct np_daemon *d, const struct np_request *req,
                      const struct np_order_ops *order, bool dry_run, uint64_t tag);

/** Hand the oldest queued request to the worker when it is idle. */
void migration_submit_next(struct np_daemon *d);

/** The worker finished: book the result, answer the client that asked, submit the next. */
void migration_collect(struct np_daemon *d);

/**
 * Book a finished request at @p now: each job still tracked gets the request in its report (and,
 * unless a dry run, what moved, and its pages read again at the next sample). A request that
 * moved nothing backs its trigger off for NPD_TRIGGER_BACKOFF_S: a homecoming per job, the
 * other triggers as a whole; an administrator's request never.
 */
void migration_book(struct np_daemon *d, const struct migrator_done *done, double now);

/** Index of the order called @p name in np_order_at's table, or -1. */
int migration_order_index(const char *name);

/** May trigger @p kind propose requests at @p now (not backed off)? */
bool migration_trigger_ready(const struct np_daemon *d, enum np_trigger_kind kind, double now);

/** Every interval: the enabled triggers look at the node and may queue requests. */
void migration_run_triggers(struct np_daemon *d);

/** Is @p os a NUMA node of this machine (the kernel's numbering)? */
bool migration_node_exists(const struct np_daemon *d, unsigned os);

/** "nodes 0,1,2,3", for messages. */
void migration_node_list(const struct np_daemon *d, char *out, size_t size);

#endif /* NUMAPLACED_MIGRATION_H */
