/*
 * numaplace/replay.h - the thesis's experiment sets replayed over time in the model.
 *
 * Each job does its alone, local work at a rate 1/slowdown from where its pages are now (model.h;
 * farther nodes scaled by SLIT). Requests fire over time and go through the daemon's own planner
 * and the given order, so a new order is scored the same way. Co-location is the thesis's factor
 * per job (corun) unless the config names a contention model. Deterministic on every machine.
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
    /** "thesis": NP_PLAN_WHOLE_SHARES at once, no free floor; delays count from the previous
     *  request's issue. */
    NP_REPLAY_THESIS = 0,
    /** "numaplace": NP_PLAN_EXACT, the free floor kept, moves at the rate limit; delays count
     *  from the previous request's answer. */
    NP_REPLAY_NUMAPLACE,
    NP_REPLAY_WAY_COUNT
};
/** "thesis", "numaplace"; "unknown" past the end. Borrowed, static. */
NP_API const char *np_replay_way_name(enum np_replay_way way);

/** np_replay_growth holds at most this many points. */
#define NP_REPLAY_GROWTH_POINTS 8

/** At progress[i] (share of work done, ascending in [0, 1]) the job holds share[i] (in (0, 1])
 *  of its pages: linear between points, flat beyond, never shrinking. */
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
    /** Borrowed; NULL: @p pages from the start. Else new pages go on @p memory_node while it
     *  has room. */
    const struct np_replay_growth *growth;
    enum np_class job_class;
    double corun;            /**< co-location: its slowdown times this; 0 = none */
    double predicted_remote; /**< told the orders (np_job_view); read only when @c has_prediction */
    bool has_prediction;
    unsigned threads; /**< runnable threads (0 counts as 1), for the contention model only */
    bool multi_threaded;
    double noise; /**< its speed divided by this (0 counts as 1): co-location noise drawn */
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
    /** Borrowed; NULL: the table's curve times corun. Else solved together every step. */
    const struct np_contention_params *contention;
    /** The thesis's manager loop (thesis way; 0: requests fire at their delays): each pass
     *  sleeps poll_s, works pass_work_s (slower when every node is oversubscribed) and moves at
     *  mover_rate_bytes_s (0: at once), the moved job stalled meanwhile. */
    double poll_s, pass_work_s, mover_rate_bytes_s;
    unsigned cpus_per_node; /**< for the loop's CPU share; 0 = 16 */
};

/** The thesis's manager loop (docs/replay.md): 5 s sleep, 1.67 s of work per pass (mix B's
 *  log), moves at bench_migrate's 290 MB/s (the thesis timed none). */
#define NP_REPLAY_LOOP_POLL_S      5.0
#define NP_REPLAY_LOOP_PASS_WORK_S 1.67
#define NP_REPLAY_LOOP_MOVER_BPS   290e6

/** @p config with @p contention (borrowed) and the thesis's loop (NP_REPLAY_LOOP_*), as bench's. */
NP_API void np_replay_config_thesis_loop(struct np_replay_config *config,
                                         const struct np_contention_params *contention);

/** Sandman (SLIT for 4 nodes, 64,500 MiB each), a 1 s step and numaplaced.conf's defaults. */
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
    /** Gaps between requests before the first job ended: sum and count */
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
