/*
 * numaplace/engine.h - moving a process's memory (the mover), and carrying out one migration
 * request over the jobs of one node with it (the engine).
 *
 * Data flows one way: the policies (numaplace/migration.h) turn a node view into requests and
 * plans; the engine caps a request by the destination's free floor, plans it with the same
 * planner the simulator uses, moves each planned job's pages with the mover and returns
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
#include "numaplace/migration.h"

/* The mover: a process's memory moved between NUMA nodes, rate-limited, in two ways
 * (np_move_path_choose):
 * - pages: move_pages(2) over the process's mappings, a batch at a time, only the pages found
 *   on S, until the budget is spent, so asking for N pages never moves a 100 GB job whole;
 * - whole: one migrate_pages(2) moves everything the process has on S to D in the kernel, then
 *   one page-by-page pass over what stayed moves what it can and says why the rest stayed.
 * Without options->move_shared, a page another process maps too (shared memory, shared files
 * and libraries, copy-on-write pages after fork) never moves: move_pages gets MPOL_MF_MOVE,
 * which refuses it (EACCES: counted as `shared`), and migrate_pages runs without CAP_SYS_NICE,
 * so the kernel skips it too (not MPOL_MF_MOVE_ALL). Both ways share one token-bucket rate limiter,
 * so migration never steals the bandwidth it is meant to save. Pages the kernel refuses (busy,
 * pinned, no room on D) are counted by cause; a process that exits mid-move, or whose pid has gone
 * to another process, ends its part of the move cleanly. */
/** A token bucket over bytes. rate 0 = unlimited. Not thread-safe: one per mover thread. */
struct np_rate_limiter {
    double bytes_per_s;
    double burst_bytes; /**< bucket depth: how far ahead a batch may run */
    double tokens;
    uint64_t last_ns;
};

/** @p bytes_per_s 0 disables limiting; the burst is a quarter second of rate (>= 1 batch). */
NP_API void np_rate_limiter_init(struct np_rate_limiter *rl, double bytes_per_s);

/** Sleep until @p bytes may pass, then take them. Returns the nanoseconds slept. */
NP_API uint64_t np_rate_limiter_take(struct np_rate_limiter *rl, uint64_t bytes);

/** Monotonic clock in nanoseconds. */
NP_API uint64_t np_now_ns(void);

/** Why pages did not move, by the status move_pages(2) reported for them. */
enum np_move_failure {
    NP_MOVE_FAIL_BUSY = 0, /**< EBUSY: locked or under I/O, pinned by the kernel or a device */
    NP_MOVE_FAIL_NOMEM,    /**< ENOMEM: no room on the destination */
    NP_MOVE_FAIL_ACCESS,   /**< EACCES: shared with other processes (MPOL_MF_MOVE only) */
    NP_MOVE_FAIL_OTHER,    /**< anything else the kernel said */
    NP_MOVE_FAIL_COUNT
};

NP_API const char *np_move_failure_name(enum np_move_failure f);

/** The cause a per-page status of move_pages(2) (a negative errno) counts under. */
NP_API enum np_move_failure np_move_failure_of_status(int status);

/** How a process's pages move. */
enum np_move_path {
    NP_MOVE_PATH_PAGES = 0, /**< move_pages(2), batch by batch, under the rate limit */
    NP_MOVE_PATH_WHOLE,     /**< one migrate_pages(2) */
};

/** The path of a move of @p max_pages (UINT64_MAX: all the process has on S) at @p bytes_per_s
 *  (0: no limit): whole only for all of it with no limit. */
NP_API enum np_move_path np_move_path_choose(uint64_t max_pages, double bytes_per_s);

/** The move_pages(2) flag: MPOL_MF_MOVE_ALL when @p move_shared, else MPOL_MF_MOVE. */
NP_API int np_move_pages_flag(bool move_shared);

/** What a move did. Counts are in base pages (the size of the page at each address). */
struct np_move_result {
    uint64_t pages_moved; /**< found on S and now on D */
    uint64_t bytes_moved;
    uint64_t pages_failed[NP_MOVE_FAIL_COUNT];
    uint64_t pages_examined; /**< addresses whose node was queried */
    uint64_t ns_moving;      /**< time in the move system calls */
    uint64_t ns_throttled;   /**< time the rate limiter held the move back */
    bool process_gone;       /**< the process exited during the move */
    bool whole;              /**< done with migrate_pages (then page by page for what stayed) */
    bool stopped;            /**< options->should_stop ended it before its budget was met */
    bool replaced; /**< the pid had become another process (start time or uid changed): the
                        move ended there, before touching it (process_gone is set too) */
};

/** Options of a move. */
struct np_move_options {
    unsigned batch_pages; /**< addresses per move_pages call (default 1024 when 0) */
    bool dry_run;         /**< find and count the pages on S, move nothing: pages_moved then
                               counts the pages that would have moved */
    const char *root;     /**< filesystem root for /proc/<pid>/maps (NULL = "/") */
    /** Asked before each batch (and before a whole move): true ends the move there, with
     *  result->stopped. Called from the moving thread; NULL = never stop early. */
    bool (*should_stop)(void *arg);
    void *stop_arg;
    /** Move pages other processes map too (MPOL_MF_MOVE_ALL; migrate_pages with CAP_SYS_NICE).
     *  false (the default): they stay and count as `shared`. */
    bool move_shared;
    /** Nonzero: the process's start time (/proc/<pid>/stat, clock ticks after boot), checked
     *  with its real uid before each batch and before a whole move, so a long move never
     *  touches a later process that got the pid. 0: not checked. */
    uint64_t starttime_ticks;
    uid_t uid; /**< its real uid, checked with starttime_ticks */
};

/**
 * Move up to @p max_pages base pages (UINT64_MAX: all) of process @p pid from node @p src to node
 * @p dst, by the path np_move_path_choose gives (the mover, above).
 * @param rl      shared rate limiter, or NULL for none
 * @param result  zeroed and filled in, also on partial failure
 * @return 0 (including a process that exited: see result->process_gone), or a negative errno
 *         for a failure of the move itself (EPERM: not allowed; EINVAL: bad node) with @p err
 */
NP_API int np_move_process_pages(pid_t pid, unsigned src, unsigned dst, uint64_t max_pages,
                                 const struct np_move_options *options, struct np_rate_limiter *rl,
                                 struct np_move_result *result, struct np_err *err);

/** Add @p add's counts into @p total (the flags are or-ed). */
NP_API void np_move_result_add(struct np_move_result *total, const struct np_move_result *add);

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
    unsigned src_tier, dst_tier;     /**< the view's tiers of S and D (equal within a tier) */
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
