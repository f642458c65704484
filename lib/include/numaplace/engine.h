/*
 * numaplace/engine.h - migration decisions and their execution over the jobs of one node.
 *
 * Data flows one way: the daemon fills a `struct np_node_view` from its registry and samples,
 * triggers (policies/triggers.c) turn the view into requests, the engine orders candidates
 * (policies/orders.c), plans and moves memory (migrate.h), and returns per-job outcomes that the
 * daemon adds to the jobs' reports. Nothing here reads the registry or writes reports.
 */
#ifndef NUMAPLACE_ENGINE_H
#define NUMAPLACE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "numaplace/common.h"
#include "numaplace/migrate.h"
#include "numaplace/order.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NP_MAX_NODES 64

/** Priority class: high jobs are kept local and never moved away; low jobs may be moved. */
enum np_class {
    NP_CLASS_LOW = 0,
    NP_CLASS_HIGH = 1,
};

NP_API const char *np_class_name(enum np_class c);
NP_API int np_class_from_name(const char *text, enum np_class *out, struct np_err *err);

/** One job step on this node, as the engine sees it. Arrays are borrowed from the caller. */
struct np_job_view {
    uint64_t id; /**< job id << 16 | step id (stable tie-breaker) */
    uint32_t job_id, step_id;
    enum np_class job_class;
    uint64_t cpu_nodes; /**< bit i: the job has CPUs on node i */
    const pid_t *pids;  /**< the job's processes (thread group leaders) */
    size_t npids;
    uint64_t pages_on_node[NP_MAX_NODES]; /**< base pages per node (numa_maps) */
    double bandwidth;                     /**< bytes/s: measured, or the proxy */
    bool bandwidth_is_proxy;              /**< no memory counter: see np_bandwidth_proxy */
    bool homecoming_paused; /**< its last homecoming moved nothing: left alone for a while */
};

/** The node: its NUMA nodes' memory and distances, and the jobs on it. */
struct np_node_view {
    unsigned nnodes;
    uint64_t free_bytes[NP_MAX_NODES];
    uint64_t total_bytes[NP_MAX_NODES];
    uint8_t distance[NP_MAX_NODES][NP_MAX_NODES]; /**< SLIT; 0 = unknown */
    double node_bandwidth[NP_MAX_NODES];          /**< bytes/s measured per node */
    bool node_bandwidth_available;
    struct np_job_view *jobs;
    size_t njobs;
};

/**
 * The documented stand-in for memory bandwidth where no counter exists: the job's CPU rate
 * (cores busy, from task-clock or /proc CPU time) times its resident bytes, scaled to look like
 * bytes/s. It only ranks jobs against each other (a busy, large job probably streams more); every
 * log line and report that uses it says "proxy".
 */
NP_API double np_bandwidth_proxy(double cpu_cores_busy, uint64_t resident_bytes);

/** Where a request came from. */
enum np_trigger_kind {
    NP_TRIGGER_ADMIN = 0,  /**< `numaplace migrate`, or a timed script of requests */
    NP_TRIGGER_PRESSURE,   /**< a high job's local node fell below the free-memory floor */
    NP_TRIGGER_BANDWIDTH,  /**< a node's bandwidth stayed above the threshold */
    NP_TRIGGER_HOMECOMING, /**< a high job's pages off its CPUs' nodes are brought home */
    NP_TRIGGER_COUNT,      /**< not a trigger: the number of kinds, to size arrays by kind */
};
NP_API const char *np_trigger_name(enum np_trigger_kind t);

/** Homecoming leaves smaller remote shares alone (e.g. shared libraries' page cache, which
 *  MPOL_MF_MOVE cannot move anyway). */
#define NP_HOMECOMING_MIN_PAGES 256

/** "Move at least N pages from node S to node D", plus who asked and why. */
struct np_request {
    unsigned src, dst;
    uint64_t pages;
    enum np_trigger_kind trigger;
    long target_job; /**< -1: low jobs chosen by the order; else this job only (homecoming) */
    char reason[160];
};

/** Engine settings (helper config). */
struct np_engine_config {
    const struct np_order_ops *order; /**< NULL = best-plus */
    uint64_t seed;                    /**< for the random order */
    uint64_t free_floor_bytes;        /**< never push a destination below this */
    bool dry_run;
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
    const char *order;               /**< order name used. Borrowed, static */
    bool used_proxy;                 /**< some candidate's bandwidth was the proxy */
    uint64_t candidates;             /**< low jobs with pages on S */
    uint64_t planned;                /**< pages planned (< request.pages: ended short) */
    uint64_t moved;                  /**< pages actually moved */
    uint64_t capped_by_floor;        /**< pages dropped so D stays above its free floor */
    bool stopped;                    /**< config->should_stop ended it early */
    bool dry_run;                    /**< config->dry_run: planned and counted, nothing moved */
    struct np_job_outcome *outcomes; /**< owned */
    size_t noutcomes;
    char summary[640]; /**< one line: what, how far it got, why */
};

NP_API void np_request_result_fini(struct np_request_result *r);

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

/** The home node of a job: its CPUs' node with the most free memory (or -1 when none). */
NP_API int np_job_home_node(const struct np_node_view *view, const struct np_job_view *job);

/**
 * A trigger: looks at the view and proposes requests. Triggers are a small ops table in
 * policies/triggers.c; the daemon runs the enabled ones every interval.
 */
struct np_trigger_config {
    /** by enum np_trigger_kind */
    bool enabled[NP_TRIGGER_COUNT];
    uint64_t free_floor_bytes;    /**< pressure: floor on a high job's home node */
    double bandwidth_threshold;   /**< bandwidth: bytes/s per node considered saturated */
    unsigned bandwidth_intervals; /**< bandwidth: intervals above threshold before acting */
};

struct np_trigger_ops {
    const char *name;
    enum np_trigger_kind kind;
    /**
     * Propose up to @p max requests into @p out. @p state is the trigger's own memory between
     * calls (zero-initialised by the caller, NP_TRIGGER_STATE_SIZE bytes).
     * @return the number of requests, or a negative errno; when the trigger cannot work here
     *         (e.g. no bandwidth counters) it returns 0 and sets @p inactive_why.
     */
    int (*propose)(const struct np_node_view *view, const struct np_trigger_config *config,
                   void *state, struct np_request *out, size_t max, char *inactive_why,
                   size_t why_len);
};
#define NP_TRIGGER_STATE_SIZE 512

NP_API const struct np_trigger_ops *np_trigger_at(size_t i);
NP_API const struct np_trigger_ops *np_trigger_lookup(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* NUMAPLACE_ENGINE_H */
