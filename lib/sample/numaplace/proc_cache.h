/*
 * numaplace/proc_cache.h - what a sampler keeps about a job's processes from one interval to
 * the next, so that each interval costs less than reading every file afresh:
 *
 * - their /proc/<pid>/stat, main-thread children and status files stay open and are read with pread
 *   (an open(2) and close(2) of a /proc file cost more than generating it), within a budget of
 *   descriptors shared by every cache of the process (struct np_fd_budget);
 * - their last numa_maps reading, with what it depended on: a process whose faults and resident
 *   size have not moved, on a node where no page has migrated, no huge page was collapsed and
 *   KSM has not scanned since (struct np_pages_epoch), has the same pages per node, so the page
 *   table walk is not repeated.
 *
 * A kept descriptor outlives its process harmlessly: reading it fails (-ESRCH), and the pid is
 * opened again by path in case another process got it. Entries are kept sorted by pid.
 * Ownership: the cache owns its entries and descriptors; the budget is borrowed.
 */
#ifndef NUMAPLACE_PROC_CACHE_H
#define NUMAPLACE_PROC_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "numaplace/common.h"
#include "numaplace/procfs.h"
#include "numaplace/sample.h"

/** A reading is used at most this many times in a row, then walked again: a change no counter
 *  shows (another process's ptrace write to a copy-on-write page) lasts a bounded time. */
#define NP_PROC_CACHE_MAX_REUSE 9

/** Descriptors the caches of one process may keep open between them (0: none kept). */
struct np_fd_budget {
    long left;
};

/** What must not have changed on the node for a numa_maps reading to hold (/proc/vmstat's
 * pgmigrate_success and thp_collapse_alloc, KSM's full_scans). */
struct np_pages_epoch {
    bool known; /**< false: could not be read, so no reading is reused */
    uint64_t migrated, collapsed, ksm_scans;
};

/**
 * Read the node's page epoch under @p root (/proc/vmstat; /sys/kernel/mm/ksm/full_scans when
 * present). known stays false when /proc/vmstat or its pgmigrate_success line is missing.
 */
NP_API void np_pages_epoch_read(const char *root, struct np_pages_epoch *out);

struct np_proc_entry {
    pid_t pid;
    uint64_t starttime_ticks;
    int stat_fd, children_fd, status_fd; /**< -1: not kept */
    bool seen;                           /**< found in the current interval */
    /* the last numa_maps reading and what it depended on */
    bool have_pages;
    unsigned reuses; /**< times the reading was used again since it was walked */
    uint64_t node_bytes[NP_SAMPLE_MAX_NODES];
    uint64_t pages_minflt, pages_majflt, pages_rss;
    struct np_pages_epoch pages_epoch;
};

struct np_proc_cache {
    char root[1024];
    struct np_fd_budget *budget;   /**< borrowed; NULL: no descriptor is kept */
    struct np_proc_entry *entries; /**< owned, sorted by pid */
    unsigned count, cap;
};

/** An empty cache reading under @p root (NULL = "/"); @p budget borrowed, may be NULL. */
NP_API void np_proc_cache_init(struct np_proc_cache *c, const char *root,
                               struct np_fd_budget *budget);

/** Close everything and free; accepts NULL. */
NP_API void np_proc_cache_fini(struct np_proc_cache *c);

/** Start an interval: every entry unseen until read again. */
NP_API void np_proc_cache_begin(struct np_proc_cache *c);

/** End an interval: forget the entries not read in it (their process is gone or left). */
NP_API void np_proc_cache_sweep(struct np_proc_cache *c);

/**
 * Read /proc/<pid>/stat through the kept descriptor, or open it (and keep it if the budget
 * allows). A process that is not the one the entry knew (another start time) starts afresh.
 * @return the entry (valid until the next read of another pid), or NULL when the process cannot
 *         be read (gone: err->code -ESRCH) or out of memory
 */
NP_API struct np_proc_entry *np_proc_cache_stat(struct np_proc_cache *c, pid_t pid,
                                                struct np_proc_stat *st, struct np_err *err);

/* The readers below go through the entry of a pid read in this interval (np_proc_cache_stat);
 * another pid is read afresh, as without a cache. */

/**
 * The children of @p pid, as np_proc_children (@p threads_cut may be NULL): with @p threads == 1
 * through the kept main-thread file (opened and kept if the budget allows).
 */
NP_API int np_proc_cache_children(struct np_proc_cache *c, pid_t pid, long threads, pid_t *out,
                                  unsigned max, bool *threads_cut, struct np_err *err);

/**
 * Context switches of @p pid, and its threads' affinity to @p cpus_allowed, as
 * np_proc_ctxt_switches: with @p threads == 1 through its kept status file (opened and kept if
 * the budget allows), read every detail interval.
 */
NP_API int np_proc_cache_ctxt_switches(struct np_proc_cache *c, pid_t pid, long threads,
                                       uint64_t *voluntary, uint64_t *involuntary,
                                       np_cpu_list_fn *cpus_allowed, void *arg, struct np_err *err);

/**
 * Pages per node of @p pid (anonymous and file, in bytes, added to @p node_bytes): its last
 * numa_maps reading when that still holds for @p st and @p epoch, else a new reading.
 * @return 0, -ESRCH, or -errno with @p err (nothing added)
 */
NP_API int np_proc_cache_pages(struct np_proc_cache *c, pid_t pid, const struct np_proc_stat *st,
                               const struct np_pages_epoch *epoch, uint64_t *node_bytes,
                               struct np_err *err);

#endif /* NUMAPLACE_PROC_CACHE_H */
