/*
 * numaplace/engine.h - carrying out one migration request over the jobs of one node.
 *
 * Data flows one way: the policies (numaplace/migration.h) turn a node view into requests and
 * plans; the engine caps a request by the destination's free floor, plans it with the same
 * planner the simulator uses, moves each planned job's pages (numaplace/migrate.h) and returns
 * per-job outcomes, which the daemon books into the jobs' reports. Nothing here reads the
 * registry or writes reports.
 */
#ifndef NUMAPLACE_ENGINE_H
#define NUMAPLACE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "numaplace/common.h"
#include "numaplace/migrate.h"
#include "numaplace/migration.h"

/** Engine settings (numaplaced.conf). */
struct np_engine_config {
    const struct np_order_ops *order; /**< NULL = best-plus */
    uint64_t seed;                    /**< for the random order */
    uint64_t free_floor_bytes;        /**< never push a destination below this */
    bool dry_run;
    bool move_shared; /**< pages other processes map move too (np_move_options.move_shared) */
    /** Asked before each batch from the moving thread: true ends the request there (the
     *  result says "stopped"). NULL = run every request to its end. */
    bool (*should_stop)(void *arg);
    void *stop_arg;
};

/** What happened to one job in one request. */
struct np_job_outcome {
    size_t job_index; /**< into view->jobs */
    uint64_t planned; /**< pages the plan gave this job */
    struct np_move_result moved;
};

/** What one request did. Free with np_request_result_fini. */
struct np_request_result {
    struct np_request request;
    const char *order;        /**< order name used. Borrowed, static */
    bool used_proxy;          /**< some candidate's bandwidth was the proxy */
    uint64_t candidates;      /**< low jobs with pages on S */
    uint64_t unpredicted;     /**< candidates without a prediction, for an order ranking by one */
    uint64_t planned;         /**< pages planned (< request.pages: ended short) */
    uint64_t moved;           /**< pages actually moved */
    uint64_t capped_by_floor; /**< pages dropped so D stays above its free floor */
    bool stopped;             /**< config->should_stop ended it early */
    bool dry_run;             /**< config->dry_run: "moved" counts what would move */
    struct np_job_outcome *outcomes; /**< owned */
    size_t noutcomes;
    char summary[640]; /**< one line: what, how far it got, why */
};

NP_API void np_request_result_fini(struct np_request_result *r);

/** How a request ended (numaplaced's counters, numaplace_migration_requests_total). */
enum np_request_outcome {
    NP_OUTCOME_DONE = 0, /**< moved what it asked for */
    NP_OUTCOME_SHORT,    /**< moved less: candidates ran out, the floor, failures, stopped */
    NP_OUTCOME_FAILED,   /**< refused (np_engine_run_request returned an error) */
    NP_OUTCOME_DRY_RUN,  /**< decided and logged, nothing moved */
    NP_OUTCOME_COUNT
};

/** The outcome of a request that returned @p rc with @p result (unread when @p rc < 0). */
NP_API enum np_request_outcome np_request_outcome_of(int rc,
                                                     const struct np_request_result *result);
/** "done", "short", "failed", "dry_run"; "unknown" past the end. Borrowed, static. */
NP_API const char *np_request_outcome_name(enum np_request_outcome o);

/**
 * Carry out one request: candidates are the LOW jobs with pages on S (high jobs are never
 * moved away); order them, cap the pages so D keeps its free floor, plan, and move job by job
 * through @p rl. Every decision goes to @p log with its trigger and reason.
 * @param result filled (and owning memory) whenever the return is 0
 * @return 0, or -EINVAL (bad nodes), -ENOMEM
 */
NP_API int np_engine_run_request(const struct np_node_view *view,
                                 const struct np_engine_config *config,
                                 const struct np_request *request, struct np_rate_limiter *rl,
                                 const struct np_log *log, struct np_request_result *result,
                                 struct np_err *err);

#endif /* NUMAPLACE_ENGINE_H */
