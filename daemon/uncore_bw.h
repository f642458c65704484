/*
 * uncore_bw.h - each memory node's traffic from its memory controllers' own counters, where the
 * node's kernel and libpfm4 have them (Intel IMC): it replaces the estimate spread from jobs'
 * misses (np_node_traffic) node by node, with source "uncore". Elsewhere it says why not, once.
 */
#ifndef NUMAPLACED_UNCORE_BW_H
#define NUMAPLACED_UNCORE_BW_H

#include "daemon.h"
#include "numaplace/migration.h"

/** Detect, encode and open the counters (perf on, as root); logs what it found. */
void uncore_bw_start(struct np_daemon *d);

/** After SIGHUP: counters already counting stay open with their rates (reopening would leave
 * one interval without a rate, on the estimate); a change of `perf`, or counters not open, starts
 * afresh. @p perf_before: `perf` before the reload. */
void uncore_bw_reload(struct np_daemon *d, bool perf_before);

/** Read them once per interval, adding each node's bytes to totals.uncore_bytes. */
void uncore_bw_tick(struct np_daemon *d);

/** Does a memory controller counted now serve @p node (its traffic then from uncore_bytes)? */
bool uncore_bw_counts_node(const struct np_daemon *d, unsigned node);

/** Replace @p view's per-node traffic by the counters' where they have a rate. */
void uncore_bw_apply(const struct np_daemon *d, struct np_node_view *view);

/** Close them. */
void uncore_bw_stop(struct np_daemon *d);

#endif /* NUMAPLACED_UNCORE_BW_H */
