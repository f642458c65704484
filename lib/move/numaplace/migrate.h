/*
 * numaplace/migrate.h - moving a process's memory between NUMA nodes, rate-limited.
 *
 * Two ways, chosen per process by how much of its memory on S a request needs:
 * - whole: migrate_pages(2) moves everything the process has on S to D in the kernel;
 * - partial: move_pages(2) over the process's mappings, a batch at a time, only the pages
 *   found on S, until the budget is spent, so asking for N pages never moves a 100 GB job whole.
 * Both share one token-bucket rate limiter, so migration never steals the bandwidth it is meant
 * to save. Pages the kernel refuses (busy, pinned, no room on D) are counted by cause; a process
 * that exits mid-move ends its part of the move cleanly.
 */
#ifndef NUMAPLACE_MIGRATE_H
#define NUMAPLACE_MIGRATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "numaplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/** What a move did. Counts are in base pages (the size of the page at each address). */
struct np_move_result {
    uint64_t pages_moved; /**< found on S and now on D */
    uint64_t bytes_moved;
    uint64_t pages_failed[NP_MOVE_FAIL_COUNT];
    uint64_t pages_examined; /**< addresses whose node was queried */
    uint64_t ns_moving;      /**< time in the move system calls */
    uint64_t ns_throttled;   /**< time the rate limiter held the move back */
    bool process_gone;       /**< the process exited during the move */
    bool whole;              /**< done with migrate_pages rather than page by page */
    bool stopped;            /**< options->should_stop ended it before its budget was met */
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
};

/**
 * Move up to @p max_pages base pages of process @p pid from node @p src to node @p dst.
 * @p max_pages UINT64_MAX (or more than the process has on S) moves all of them with
 * migrate_pages; otherwise move_pages moves exactly the pages found on S until the budget is met.
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

#ifdef __cplusplus
}
#endif

#endif /* NUMAPLACE_MIGRATE_H */
