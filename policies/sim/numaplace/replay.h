/*
 * numaplace/replay.h - the thesis's experiment sets replayed over time in the model.
 *
 * Each job does its alone, local work (the table's total_time_s) at a rate 1/slowdown, from where
 * its pages are now (model.h's curve; farther nodes scaled by SLIT, numaplace/penalty.h). The
 * set's requests fire over time, each carried out by the daemon's own planner and the order given
 * (so a new order is scored the same way), in one of two ways (enum np_replay_way). A finished
 * job frees its pages. Deterministic: the same set, config, order and seed give the same times
 * on every machine. Co-location enters as the thesis's measured constant factor per job (corun),
 * unless the config names a contention model (numaplace/contention.h), which also tracks each
 * job's hot pages. A footprint is constant or grows along a curve, new pages on its start node.
 */
#ifndef NUMAPLACE_REPLAY_H
#define NUMAPLACE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "numaplace/contention.h"
#include "numaplace/migration.h"
#include "numaplace/model.h"

/** np_replay_run gives up after this many time steps (the shipped sets take about 10^4). */
#define NP_REPLAY_MAX_STEPS 10000000u

/** The replay's base page: the thesis's machine's (and the scenario files') 4 KiB. */
#define NP_REPLAY_PAGE_BYTES 4096u

/** How a request is carried out. Names from np_replay_way_name. */
enum np_replay_way {
    /** "thesis": every chosen job's whole share of S moves (NP_PLAN_WHOLE_SHARES), at once; a
     *  request's delay counts from the previous request's issue; no free floor. */
    NP_REPLAY_THESIS = 0,
    /** "numaplace": the last job gives only what is missing (NP_PLAN_EXACT), the destination
     *  keeps its free floor, pages move at the rate limit over time; a request's delay counts
     *  from the previous request's answer. */
    NP_REPLAY_NUMAPLACE,
    NP_REPLAY_WAY_COUNT
};
/** "thesis", "numaplace"; "unknown" past the end. Borrowed, static. */
NP_API const char *np_replay_way_name(enum np_replay_way way);

/** np_replay_growth holds at most this many points. */
#define NP_REPLAY_GROWTH_POINTS 8

/** How a footprint grows: at progress[i] (share of its work done, ascending in [0, 1]) the job
 *  holds share[i] (in (0, 1]) of its pages, linear between points, flat beyond the ends, never
 *  shrinking (a share below an earlier one holds the earlier). */
struct np_replay_growth {
    unsigned n; /**< 1 to NP_REPLAY_GROWTH_POINTS */
    double progress[NP_REPLAY_GROWTH_POINTS], share[NP_REPLAY_GROWTH_POINTS];
};

/** The share of its pages a job holds at @p progress along @p growth (NULL: 1). */
NP_API double np_replay_growth_at(const struct np_replay_growth *growth, double progress);

/** One job of a set: its CPUs stay on @p node; all its pages start on @p memory_node. */
struct np_replay_job {
    const struct np_model_row *row; /**< borrowed: slowdown curve and bandwidth */
    double work_s;                  /**< its alone, local run time (> 0) */
    unsigned node;
    unsigned memory_node; /**< a scenario's jobs: @p node (numactl -N k -m k) */
    uint64_t pages;       /**< footprint in base pages (its peak when it grows) */
    /** Borrowed; NULL: @p pages from the start. Else it starts at its curve's first share and
     *  grows with its work, new pages on @p memory_node (numactl -m) while it has room. */
    const struct np_replay_growth *growth;
    enum np_class job_class;
    /** Co-location: its slowdown times this (the thesis's for its mix); 0 = none. */
    double corun;
    /** What the orders are told (np_job_view), calibrated by the caller (bench/order_cv); read
     *  only when @c has_prediction. */
    double predicted_remote;
    bool has_prediction;
    /** Runnable threads (0 counts as 1), OpenMP or not: for the contention model only. */
    unsigned threads;
    bool multi_threaded;
    /** Its speed divided by this for its whole run (0 counts as 1): a draw of the measurements'
     *  co-location noise (bench/order_cv's --sigma-colocation). */
    double noise;
};

/** "Move at least @p pages from @p from to @p to", @p delay_s after the previous one. */
struct np_replay_request {
    double delay_s;
    unsigned from, to;
    uint64_t pages;
};

/** A set to replay. Arrays are borrowed. */
struct np_replay_set {
    unsigned nnodes;
    const struct np_replay_job *jobs;
    size_t njobs;
    const struct np_replay_request *requests;
    size_t nrequests;
};

/** How to replay. Start from np_replay_config_sandman. */
struct np_replay_config {
    enum np_replay_way way;
    double step_s;             /**< longest time step; requests and answers fall exactly */
    uint64_t node_pages;       /**< memory per node: no move fills a node beyond it */
    uint64_t free_floor_pages; /**< numaplace: a destination keeps this much free */
    double rate_bytes_s;       /**< numaplace: the move rate limit; 0 = instant */
    uint8_t distance[NP_MAX_NODES][NP_MAX_NODES]; /**< SLIT; 0 = unknown (counted as near) */
    /** Borrowed; NULL: each job's slowdown is the table's curve times its corun. Else the running
     *  jobs' slowdowns are solved together every step (no corun factor). */
    const struct np_contention_params *contention;
    /** The thesis's manager loop (thesis way only; 0: requests fire at their delays). Each pass
     *  sleeps poll_s, works pass_work_s on an idle CPU and carries out its request synchronously
     *  at mover_rate_bytes_s (0: at once); unbound, they get cpus_per_node / (threads on the
     *  least loaded node + 1) of a CPU when every node is oversubscribed. A request fires at a
     *  pass's start once delay_s passed since the last; a moved job stalls while its pages copy. */
    double poll_s, pass_work_s, mover_rate_bytes_s;
    unsigned cpus_per_node; /**< for the loop's CPU share; 0 = 16 */
};

/** The thesis's manager loop (docs/replay.md): a 5-s sleep per pass; 1.67 s of work per pass on
 *  an idle CPU (the static mix-B run, 8 jobs on one node, logged 3,315 passes in 22,124 s); moves
 *  at 290 MB/s (bench_migrate's raw migrate_pages rate: the thesis timed no move). */
#define NP_REPLAY_LOOP_POLL_S      5.0
#define NP_REPLAY_LOOP_PASS_WORK_S 1.67
#define NP_REPLAY_LOOP_MOVER_BPS   290e6

/** @p config with @p contention (borrowed) and the thesis's loop (NP_REPLAY_LOOP_*), as bench's. */
NP_API void np_replay_config_thesis_loop(struct np_replay_config *config,
                                         const struct np_contention_params *contention);

/** The thesis's machine and numaplace's defaults: Sandman's SLIT for 4 nodes (more nodes:
 *  unknown, so near), 64,500 MiB per node, a 1 s step, numaplaced.conf's free_floor_mb = 256 and
 *  migration_rate_mb_s = 200. */
NP_API void np_replay_config_sandman(struct np_replay_config *config, enum np_replay_way way);

/** What one replay gave. Free with np_replay_result_fini. */
struct np_replay_result {
    double *job_time_s; /**< owned: each job's wall time (it starts at 0) */
    size_t njobs;
    double total_job_s;       /**< sum of the jobs' times */
    double makespan_s;        /**< the last job's end */
    uint64_t pages_asked;     /**< over the requests fired */
    uint64_t pages_moved;     /**< pages that actually moved */
    size_t requests_fired;    /**< requests issued before every job ended */
    size_t requests_short;    /**< fired but planned less than asked */
    size_t requests_overshot; /**< thesis way: planned more than asked (whole shares) */
    double moving_s;          /**< numaplace way: time the mover was busy */
    double first_end_s;       /**< when the first job ended */
    /** Sum and count of the gaps between requests before the first job ended (the logs' spacing) */
    double spacing_sum_s;
    size_t spacing_n;
};
NP_API void np_replay_result_fini(struct np_replay_result *result);

/** Replay @p set under @p order (NULL: np_order_default()); @p seed drives "random", reshuffled
 *  per request. @p result is filled, owning memory, on 0. @return 0, or -EINVAL with @p err
 *  naming the bad member ("jobs[3].node") or the jobs not ending in NP_REPLAY_MAX_STEPS, -ENOMEM */
NP_API int np_replay_run(const struct np_replay_set *set, const struct np_replay_config *config,
                         const struct np_order_ops *order, uint64_t seed,
                         struct np_replay_result *result, struct np_err *err);

/** The thesis's eq. 6.1: the geometric mean of each job's time over its time in the reference
 *  (Best) run. NAN when @p n is 0 or a time is not positive. */
NP_API double np_replay_figure(const double *times, const double *reference, size_t n);

#endif /* NUMAPLACE_REPLAY_H */
