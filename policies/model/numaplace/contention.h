/*
 * numaplace/contention.h - jobs slowing each other down: memory controllers, inter-socket links,
 * the shared last-level cache and CPUs, calibrated on the thesis's static runs (docs/replay.md).
 * A job's time relative to its alone, local run is
 *
 *   S = cpu x [(1 - m) + m x llc x sum_n share[n] x latency(n)]
 *
 * - m, the memory-bound share of its alone, local time, solved so the model reproduces the
 *   table's alone remote factor (model.h) exactly (np_contention_memory_share).
 * - latency(n) = 1 for the CPUs' node, remote x (distance / 21) for another (the table's near
 *   node was at 21), times the queueing factor 1 / (1 - u) of node n's memory controller at
 *   u = demand / mc_capacity, and for a remote node of the link between the sockets too
 *   (u = its traffic / link_capacity); u is capped at max_utilisation. On a tiered machine a
 *   pair's own latency and a node's own capacity replace the rule and mc_capacity.
 * - llc = 1 + llc_gain x P / (P + llc_half): misses grow with the bandwidth P the other jobs on
 *   the CPUs' node draw (the thesis measured 520.omnetpp_r's misses tripling next to 10 memory
 *   hogs on its node, unchanged next to them on another).
 * - cpu = (T / cpus)^a when the node's runnable threads T exceed its CPUs, else 1; a = 1, or
 *   omp_exponent for a multi-threaded job (its threads wait at barriers instead of competing).
 * - Demand is closed-loop: a job draws bw x llc / S (its misses at its own speed), so slowdowns
 *   and demands are solved together (a damped fixed point).
 *
 * Page hotness: share[n] is the share of the job's accesses node n serves. A footprint is two
 * kinds of pages (np_contention_hot_pages): hot_fraction of them carry hot_share of its accesses,
 * the rest the remainder, each kind's spread evenly (np_contention_hot_shares); hot_share ==
 * hot_fraction is a uniform job. Pages keep their kind when they move; a partial move takes the
 * cold pages first, or the hot with hot_moves_first (np_contention_hot_split). Pure computation:
 * no I/O, no allocation beyond the caller's arrays, deterministic.
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
    /** A tiered machine's own figures, 0 where the rules above hold: the unloaded latency from
     *  CPU node a to memory node b over a's own memory (such a pair is not over a link: a tier's
     *  node hangs on the CPUs' socket), and node b's controller capacity (MB/s). */
    float latency[NP_MAX_NODES][NP_MAX_NODES];
    double node_capacity_mbps[NP_MAX_NODES];
};

/** Sandman (4 nodes x 16 CPUs), the parameters fit by bench/contention_fit (docs/replay.md). */
NP_API void np_contention_params_sandman(struct np_contention_params *params);

/** The thesis's stress-ng memory hog's demand per instance on Sandman (MB/s), fit beside the
 *  parameters by bench/contention_fit (the thesis never measured it). */
#define NP_CONTENTION_SANDMAN_HOG_MBPS 12401.0

/** One job (or a co-runner) as the model sees it. */
struct np_contention_job {
    unsigned cpu_node;
    double share[NP_MAX_NODES]; /**< share of its accesses per node; sums to 1 (or all 0: none) */
    double bw_mbps;             /**< its alone, local bandwidth (the table's bw_mbps) */
    double memory_share;        /**< m: np_contention_memory_share, in [0, 1] */
    unsigned threads;           /**< runnable threads (0 counts as 1; a fixed co-runner's as 0) */
    bool multi_threaded;        /**< its threads cooperate (OpenMP): omp_exponent applies */
    /** A fixed co-runner (a memory hog): draws bw_mbps whatever happens, is not slowed. */
    bool fixed_demand;
};

/** Solve every job's slowdown together into @p slowdown (fixed-demand jobs get 1), with
 *  @p extra_demand_mbps[n] (NULL: none) drawn from node n's controller by something outside
 *  @p jobs. @return 0, or -EINVAL with @p err naming the bad job or parameter */
NP_API int np_contention_solve(const struct np_contention_params *params, unsigned nnodes,
                               const struct np_contention_job *jobs, size_t njobs,
                               const double *extra_demand_mbps, double *slowdown,
                               struct np_err *err);

/** The memory-bound share m at which @p row's job alone, all its memory on a near node, runs at
 *  the table's remote factor (bisection on the model, so the link's queueing at its own bandwidth
 *  counts); 1 when even m = 1 cannot reach it, 0 for a factor <= 1. */
NP_API double np_contention_memory_share(const struct np_contention_params *params,
                                         const struct np_model_row *row);

/**
 * One job's slowdown next to co-runners, for placement (--numa-policy=auto): @p row's job with
 * @p threads runnable threads, its CPUs on @p cpu_node, its accesses spread by @p share over
 * @p nnodes nodes (interleaved over nodes 0 and 1: 0.5 each), while co-runners on node n draw
 * @p corunner_demand_mbps[n] from its memory and keep @p corunner_threads[n] threads runnable
 * (either NULL: none). @return the slowdown against alone and local, or NAN with @p err set
 */
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

/** Access shares from a job's @p hot[n] and @p cold[n] pages per node: share[n] = hot_share x
 *  hot[n] / sum(hot) + (1 - hot_share) x cold[n] / sum(cold); a kind it holds none of passes
 *  its accesses to the other. All zero when it holds no pages. */
NP_API void np_contention_hot_shares(const struct np_contention_params *params, const uint64_t *hot,
                                     const uint64_t *cold, unsigned nnodes, double *share);

/** How many of @p hot and @p cold pages a move of @p want takes from a node (@p hot_out +
 *  @p cold_out = min(want, hot + cold)), cold ones first unless hot_moves_first. */
NP_API void np_contention_hot_split(const struct np_contention_params *params, uint64_t hot,
                                    uint64_t cold, uint64_t want, uint64_t *hot_out,
                                    uint64_t *cold_out);

/** Whether the SPEC CPU 2017 benchmark @p name runs OpenMP threads (the speed suite's
 *  bwaves, lbm, wrf, cam4, pop2, imagick, nab, fotonik3d, roms, xz); false for the rest. */
NP_API bool np_contention_is_openmp(const char *name);

#endif /* NUMAPLACE_CONTENTION_H */
