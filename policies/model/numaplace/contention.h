/*
 * numaplace/contention.h - jobs slowing each other down (memory controllers, inter-socket links,
 * the LLC, CPUs), calibrated on the thesis's static runs (docs/replay.md). A job's time over its
 * alone, local run is
 *
 *   S = cpu x [(1 - m) + m x llc x sum_n share[n] x latency(n)]
 *
 * - m: the memory-bound share, solved to reproduce the table's alone remote factor (model.h).
 * - latency(n): 1 local, remote x (distance / 21) else, times the queueing 1 / (1 - u) of n's
 *   controller (u = demand / mc_capacity) and, remote, of the link (u = traffic / link_capacity),
 *   u capped at max_utilisation; a tiered machine's pair latency and node capacity replace these.
 * - llc = 1 + llc_gain x P / (P + llc_half), P the other jobs' bandwidth on the CPUs' node (the
 *   thesis saw 520.omnetpp_r's misses triple next to memory hogs on its node only).
 * - cpu = (T / cpus)^a when the node's runnable threads T exceed its CPUs, else 1; a = 1, or
 *   omp_exponent for a multi-threaded job (its threads wait at barriers).
 * - Demand is closed-loop (bw x llc / S), so slowdowns and demands are a damped fixed point.
 *
 * share[n] is the share of the job's accesses node n serves: hot_fraction of its pages carry
 * hot_share of them, each kind spread evenly (hot_share == hot_fraction: uniform). Pages keep
 * their kind when they move, cold first unless hot_moves_first. No I/O, no allocation,
 * deterministic.
 */
#ifndef NUMAPLACE_CONTENTION_H
#define NUMAPLACE_CONTENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "numaplace/migration.h"
#include "numaplace/model.h"

/** np_contention_solve takes at most this many jobs and co-runners. */
#define NP_CONTENTION_MAX_JOBS 1024

/** The model's parameters. Start from np_contention_params_sandman. */
struct np_contention_params {
    double mc_capacity_mbps;   /**< one node's memory controller (MB/s) */
    double link_capacity_mbps; /**< one inter-socket link, both directions together (MB/s) */
    double remote_latency;     /**< unloaded near-remote access cost relative to local */
    double max_utilisation;    /**< the queueing factor's cap: 1 / (1 - max) at most */
    double llc_gain;           /**< misses x (1 + gain) when co-runners' demand is unbounded */
    double llc_half_mbps;      /**< co-runners' demand at half that gain */
    double omp_exponent;       /**< a multi-threaded job's exponent on CPU oversubscription */
    double hot_fraction;       /**< share of a job's footprint that is hot, in (0, 1] */
    double hot_share;          /**< share of its accesses its hot pages carry, in [0, 1] */
    bool hot_moves_first;      /**< a partial move takes hot pages first (else last) */
    unsigned cpus_per_node;
    uint8_t distance[NP_MAX_NODES][NP_MAX_NODES]; /**< SLIT; 0 = unknown (counted as near, 21) */
    /** A tiered machine's own figures, 0 where the rules above hold: latency[a][b] over a's own
     *  memory, the whole path's (no link queueing is added to such a pair: a simplification),
     *  and node b's controller capacity (MB/s). */
    float latency[NP_MAX_NODES][NP_MAX_NODES];
    double node_capacity_mbps[NP_MAX_NODES];
};

/** Sandman (4 nodes x 16 CPUs), the parameters fit by bench/contention_fit (docs/replay.md). */
NP_API void np_contention_params_sandman(struct np_contention_params *params);

/** The thesis's stress-ng hog's demand per instance on Sandman (MB/s), fit by
 *  bench/contention_fit (the thesis never measured it). */
#define NP_CONTENTION_SANDMAN_HOG_MBPS 12401.0

/** One job (or a co-runner) as the model sees it. */
struct np_contention_job {
    unsigned cpu_node;
    double share[NP_MAX_NODES]; /**< share of its accesses per node; sums to 1 (or all 0: none) */
    double bw_mbps;             /**< its alone, local bandwidth (the table's bw_mbps) */
    double memory_share;        /**< m: np_contention_memory_share, in [0, 1] */
    unsigned threads;           /**< runnable threads (0 counts as 1; a fixed co-runner's as 0) */
    bool multi_threaded;        /**< its threads cooperate (OpenMP): omp_exponent applies */
    bool fixed_demand;          /**< a memory hog: draws bw_mbps whatever happens, not slowed */
};

/** Solve every job's slowdown together into @p slowdown (fixed-demand jobs get 1), with
 *  @p extra_demand_mbps[n] (NULL: none) drawn from node n's controller by something outside
 *  @p jobs. @return 0, or -EINVAL with @p err naming the bad job or parameter */
NP_API int np_contention_solve(const struct np_contention_params *params, unsigned nnodes,
                               const struct np_contention_job *jobs, size_t njobs,
                               const double *extra_demand_mbps, double *slowdown,
                               struct np_err *err);

/** m at which @p row's job alone, its memory on a near node, runs at the table's remote factor
 *  (bisection, so the link's queueing counts); 1 when unreachable, 0 for a factor <= 1. */
NP_API double np_contention_memory_share(const struct np_contention_params *params,
                                         const struct np_model_row *row);

/** For --numa-policy=auto: @p row's job (CPUs on @p cpu_node, accesses spread by @p share over
 *  @p nnodes) next to co-runners drawing @p corunner_demand_mbps[n] from node n with
 *  @p corunner_threads[n] threads runnable (either NULL: none). @return the slowdown over alone
 *  and local, or NAN with @p err set */
NP_API double np_contention_job_slowdown(const struct np_contention_params *params,
                                         const struct np_model_row *row, unsigned threads,
                                         bool multi_threaded, unsigned cpu_node,
                                         const double *share, unsigned nnodes,
                                         const double *corunner_demand_mbps,
                                         const unsigned *corunner_threads, struct np_err *err);

/** Whether @p params spread a job's accesses evenly over its pages (hot_share == hot_fraction). */
NP_API bool np_contention_uniform(const struct np_contention_params *params);

/** The hot part of a footprint: hot_fraction x @p pages, rounded to the nearest page. */
NP_API uint64_t np_contention_hot_pages(const struct np_contention_params *params, uint64_t pages);

/** share[n] = hot_share x hot[n] / sum(hot) + (1 - hot_share) x cold[n] / sum(cold); a kind
 *  with no pages passes its accesses to the other; all zero without pages. */
NP_API void np_contention_hot_shares(const struct np_contention_params *params, const uint64_t *hot,
                                     const uint64_t *cold, unsigned nnodes, double *share);

/** How many of @p hot and @p cold pages a move of @p want takes from a node (@p hot_out +
 *  @p cold_out = min(want, hot + cold)), cold ones first unless hot_moves_first. */
NP_API void np_contention_hot_split(const struct np_contention_params *params, uint64_t hot,
                                    uint64_t cold, uint64_t want, uint64_t *hot_out,
                                    uint64_t *cold_out);

/** Whether SPEC CPU 2017's @p name runs OpenMP threads (speed suite: bwaves, lbm, wrf, cam4,
 *  pop2, imagick, nab, fotonik3d, roms, xz). */
NP_API bool np_contention_is_openmp(const char *name);

#endif /* NUMAPLACE_CONTENTION_H */
