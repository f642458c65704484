/* fd_budget.h - a descriptor reserve no step may take, so a report or a registry save always
 * finds one; above it, a budget for the steps' perf counters (one descriptor per event and task,
 * held for the step's life) and kept /proc files (fd_budget.c). */
#ifndef NUMAPLACED_FD_BUDGET_H
#define NUMAPLACED_FD_BUDGET_H

#include <stddef.h>

struct np_daemon;

/* What can be open at once on top of what is open when a step registers, each at its maximum:
 *   NPD_MAX_CLIENTS (64)          socket clients, every slot taken;
 *   NPD_HTTP_MAX_CONNECTIONS (16) metrics scrapers, plus one accepted and answered 503;
 *   NPD_FD_SAVES (8)              the writer: a report (spool directory, temporary file) and
 *                                 registry.json (state directory, temporary file, journal), a
 *                                 trace, and the held-report retry: at most 7 at once;
 *   NPD_FD_TRANSIENT (16)         slurmd's /proc scan (3), the migrator's /proc reads (2), the name
 *                                 service on the user-name thread (nsswitch files, a socket: 4),
 *                                 hwloc reading sysfs at a reload (2), syslog's reconnect (1),
 *                                 the sampler's file read and closed within an interval (1);
 *   NPD_FD_NODE_FILES (16)        the node's files, kept open from the first interval on, not
 *                                 at start: /proc/stat, interrupts, softirqs, NUMA balancing,
 *                                 vmstat, and one meminfo a NUMA node (eleven nodes);
 *   NPD_FD_MARGIN (24)            what the counts above miss (a library's own descriptor).
 * Listeners, signalfd, timerfd and eventfds are open at start: they are in the count, not the
 * reserve. 64 + 17 + 8 + 16 + 16 + 24 = 145. */
#define NPD_FD_SAVES      8
#define NPD_FD_TRANSIENT  16
#define NPD_FD_NODE_FILES 16
#define NPD_FD_MARGIN     24
#define NPD_FD_RESERVE                                                                             \
    (NPD_MAX_CLIENTS + NPD_HTTP_MAX_CONNECTIONS + 1 + NPD_FD_SAVES + NPD_FD_TRANSIENT +            \
     NPD_FD_NODE_FILES + NPD_FD_MARGIN)

enum fd_verdict { FD_OK, FD_NO_PERF, FD_REFUSE };

/** The budget's figures at one moment. */
struct fd_use {
    long open;      /**< descriptors open now (fd_count_open) */
    long reserve;   /**< of NPD_FD_RESERVE, what is not open already (fd_reserve_left) */
    long limit;     /**< RLIMIT_NOFILE (0: unknown, nothing is checked) */
    long kept_left; /**< kept /proc files the samplers may still open (d->fd_budget.left) */
};

/** What a task whose perf counters take @p perf_need descriptors may have: its counters
 *  (FD_OK), /proc alone because they would eat into the reserve (FD_NO_PERF), or nothing,
 *  the reserve itself being reached (FD_REFUSE). Pure. */
enum fd_verdict fd_verdict(const struct fd_use *u, long perf_need);

/** Entries of @p fd_dir but the one reading it ("/proc/self/fd": every descriptor open in this
 *  process, whoever opened it), or -errno. */
long fd_count_open(const char *fd_dir);

/** NPD_FD_RESERVE less what of it is open now (clients connected, the node's files once
 *  kept), so a descriptor in use is not counted twice, in the count and in the reserve. */
long fd_reserve_left(const struct np_daemon *d);

/** Descriptors the perf counters of one task take with @p perf_mask: one per event. */
long fd_perf_need(unsigned perf_mask);

/** fd_verdict now for a task needing @p perf_need; @p why names the budget unless FD_OK. */
enum fd_verdict fd_check(const struct np_daemon *d, long perf_need, char *why, size_t why_size);

/** Raise the limit to the hard one (this process polls; select's 1024 does not apply) and give
 *  the samplers a quarter of what is above the reserve to keep /proc files open. */
void fd_budget_start(struct np_daemon *d);

#endif /* NUMAPLACED_FD_BUDGET_H */
