/*
 * numaplace/perf.h - perf_event counters on one process, its threads and its children.
 *
 * Events are named as libpfm4 names them and encoded by libpfm4 (never by hand), so the same
 * names work on every PMU libpfm4 knows. Every event is opened with inherit=1: threads and
 * children created after the open count too. Cycles and instructions form one group, read in
 * one call (PERF_FORMAT_GROUP), so a CPI over a short interval compares counts of the same
 * instant and both are multiplexed together; the other events are each their own fd, and a
 * kernel or PMU that refuses the group gets the pair as two fds.
 *
 * A missing counter is a normal state, not an error: virtual machines often expose no
 * hardware PMU, and perf_event_paranoid may forbid counting. Each event that cannot be opened
 * keeps a one-line reason in its struct np_perf_counters, for the report to show instead of a
 * number.
 */
#ifndef NUMAPLACE_PERF_H
#define NUMAPLACE_PERF_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <stddef.h>

#include "numaplace/common.h"

/** The events numaplace counts. Hardware ones first, then the kernel's software ones. */
enum np_perf_event {
    NP_PERF_CYCLES,
    NP_PERF_INSTRUCTIONS,
    NP_PERF_LLC_LOAD_MISSES,
    NP_PERF_LLC_STORE_MISSES,
    NP_PERF_TASK_CLOCK,
    NP_PERF_CONTEXT_SWITCHES,
    NP_PERF_PAGE_FAULTS,
    NP_PERF_NEVENTS
};

/** Masks of (1u << event) bits for np_perf_open(). Hardware events need a PMU. */
#define NP_PERF_HARDWARE_MASK                                                                      \
    ((1u << NP_PERF_CYCLES) | (1u << NP_PERF_INSTRUCTIONS) | (1u << NP_PERF_LLC_LOAD_MISSES) |     \
     (1u << NP_PERF_LLC_STORE_MISSES))
#define NP_PERF_SOFTWARE_MASK                                                                      \
    ((1u << NP_PERF_TASK_CLOCK) | (1u << NP_PERF_CONTEXT_SWITCHES) | (1u << NP_PERF_PAGE_FAULTS))
#define NP_PERF_ALL_MASK (NP_PERF_HARDWARE_MASK | NP_PERF_SOFTWARE_MASK)

/** Room for one event's reason, NUL included. */
#define NP_PERF_REASON_MAX 160

/**
 * The libpfm4 name of @p ev ("perf::CYCLES", ...), or NULL when @p ev is out of range.
 * Borrowed, static storage.
 */
NP_API const char *np_perf_event_name(enum np_perf_event ev);

/**
 * A short JSON-friendly label of @p ev ("cycles", "task_clock_ns", ...), or NULL when @p ev is
 * out of range. Borrowed, static storage.
 */
NP_API const char *np_perf_event_label(enum np_perf_event ev);

/** Why counters do not count, as a code for machines (the metrics page's reason label); the
 *  reason sentence stays for people (logs, reports, status). Names: np_perf_why_name. */
enum np_perf_why {
    NP_PERF_WHY_NONE,              /**< "none": it counts */
    NP_PERF_WHY_NOT_PROBED,        /**< "not_probed": not tried yet */
    NP_PERF_WHY_PERF_OFF,          /**< "perf_off": the perf backend is turned off */
    NP_PERF_WHY_LIBPFM,            /**< "libpfm_unavailable": libpfm4 would not initialise */
    NP_PERF_WHY_EVENT_UNKNOWN,     /**< "event_unknown": libpfm4 cannot encode it here */
    NP_PERF_WHY_NO_PMU,            /**< "no_pmu": no hardware PMU (a VM, or not exposed) */
    NP_PERF_WHY_EVENT_UNSUPPORTED, /**< "event_unsupported": the PMU lacks this event */
    NP_PERF_WHY_PARANOID,          /**< "perf_paranoid": perf_event_paranoid, no CAP_PERFMON */
    NP_PERF_WHY_OUT_OF_FDS,        /**< "out_of_fds" */
    NP_PERF_WHY_PROCESS_GONE,      /**< "process_gone" */
    NP_PERF_WHY_OTHER,             /**< "other": another error (the reason names it) */
    NP_PERF_WHY_COUNT
};

/** The code of @p w ("no_pmu", ...), or NULL out of range. Borrowed, static. */
NP_API const char *np_perf_why_name(enum np_perf_why w);

/** The counters of one monitored process (and, by inheritance, its threads and children). */
struct np_perf_counters {
    pid_t pid;
    int fd[NP_PERF_NEVENTS];                          /**< -1 when not open */
    char reason[NP_PERF_NEVENTS][NP_PERF_REASON_MAX]; /**< why not open; "" when open */
    enum np_perf_why why[NP_PERF_NEVENTS];            /**< the same as a code */
    bool cpi_grouped; /**< cycles leads a group with instructions: read both in one call */
};

/**
 * Initialise libpfm4 (once per process; later calls return the first result). Thread-safe.
 * np_perf_open() calls it, so calling it first only serves to report a broken libpfm4 early.
 * @return 0, or a negative errno with @p err naming the libpfm4 error
 */
NP_API int np_perf_init(struct np_err *err);

/** Set every fd to -1 and every reason to "" (nothing open, nothing to close). */
NP_API void np_perf_counters_init(struct np_perf_counters *c);

/**
 * Open the events of @p event_mask on @p pid (0 = the calling process) on any CPU, counting
 * user and kernel mode from now on, with inherit=1 so threads and children created later are
 * counted. Each event that cannot be encoded or opened stays at fd -1 with a reason naming the
 * event, the call, the errno text and a hint (no hardware PMU, perf_event_paranoid, ...);
 * events outside the mask get the reason "not requested".
 * @param c reset first: close any counters it holds before (np_perf_close()). The fds it
 *          receives are owned by @p c until np_perf_close(); they are O_CLOEXEC.
 * @return the number of events opened (0 when none could be: see the reasons), -ESRCH when
 *         the process does not exist (nothing left open), -EINVAL for a bad pid or mask bits
 *         outside NP_PERF_ALL_MASK, or the negative errno of np_perf_init(), each with @p err
 */
NP_API int np_perf_open(struct np_perf_counters *c, pid_t pid, unsigned event_mask,
                        struct np_err *err);

/** One reading of one event. */
struct np_perf_value {
    bool available;
    /** the count scaled by time_enabled/time_running when the kernel multiplexed the counter
     * (an estimate then); the count itself otherwise, 0 if the process never ran */
    uint64_t value;
    uint64_t time_enabled_ns, time_running_ns;
    /** when !available: why; borrowed from @p c (or static storage), else NULL */
    const char *reason;
};

/**
 * Read @p ev of @p c: the total since the open over the process, its threads and its children
 * (children that exited are folded in by the kernel). Safe on a closed or never opened counter.
 * @return 0, or a negative errno with @p out->available false and @p out->reason set:
 *         -EINVAL (bad @p c or @p ev), -EBADF (not open), -errno or -EIO (the read failed),
 *         -EAGAIN (the process ran but the event never had a hardware counter: multiplexed out;
 *         the times are set)
 */
NP_API int np_perf_read(const struct np_perf_counters *c, enum np_perf_event ev,
                        struct np_perf_value *out);

/**
 * Read every event of @p c as np_perf_read() does, grouped events in one call (so cycles and
 * instructions come from the same instant). @p rc[e] is np_perf_read()'s return for event e.
 */
NP_API void np_perf_read_all(const struct np_perf_counters *c,
                             struct np_perf_value out[NP_PERF_NEVENTS], int rc[NP_PERF_NEVENTS]);

/** Close every open fd of @p c and set it to -1 (its reason becomes "closed"). NULL is fine. */
NP_API void np_perf_close(struct np_perf_counters *c);

/* The memory controllers' own counters through libpfm4's uncore PMUs: one table of the PMUs and
 * their read/write CAS events, per generation, named and encoded by libpfm4. The reader
 * (np_uncore_open) finds the kernel's PMUs under sysfs (uncore_imc_<N>, one CPU per socket in its
 * cpumask) and counts system-wide. Debian 12's libpfm4 (4.13) has Intel IMC PMUs only, no AMD UMC
 * or DF PMU, so on AMD the source is "unavailable". Everything the table returns is borrowed and
 * static. */
/** One memory-controller PMU (socket or channel 0 of its family) and its CAS events. */
struct np_uncore_pmu {
    const char *pmu;         /**< libpfm4's PMU name, e.g. "snbep_unc_imc0" */
    const char *generation;  /**< "Sandy Bridge-EP", ... */
    const char *read_event;  /**< full libpfm4 name: 64 B per count */
    const char *write_event; /**< full libpfm4 name: 64 B per count */
};

/** The @p i-th table entry, or NULL past the end. */
NP_API const struct np_uncore_pmu *np_uncore_pmu_at(size_t i);

/**
 * libpfm4's own (PFM_OS_NONE) encodings of @p p's two events; libpfm4 must be initialised
 * (np_perf_init) with the PMU active: detected, or forced with LIBPFM_FORCE_PMU.
 * @return 0, or -ENOENT/-EOPNOTSUPP/-EINVAL with @p err naming the event and libpfm4's reason
 */
NP_API int np_uncore_encode(const struct np_uncore_pmu *p, uint64_t *read_code,
                            uint64_t *write_code, struct np_err *err);

/**
 * The first table PMU libpfm4 detects on this machine, or NULL with @p why set to
 * "unavailable: no uncore memory-controller PMU (...)" and the reason.
 */
NP_API const struct np_uncore_pmu *np_uncore_detect(char *why, size_t why_len);

/** One memory controller (the kernel's uncore_imc_<N>) counted on one CPU of its socket. */
struct np_uncore_box {
    char pmu[32];            /**< the kernel's PMU name, e.g. "uncore_imc_0" */
    unsigned cpu;            /**< where its counters are read: its socket's CPU in the cpumask */
    int fd[2];               /**< CAS reads, CAS writes */
    uint64_t last[2];        /**< counts at the last sample */
    double last_t;           /**< time of the last sample, 0 before the first */
    double bytes_per_s;      /**< between the last two samples; negative before the second */
    uint64_t interval_bytes; /**< the bytes of that interval; 0 when the last sample rated none */
};

/** Every memory controller this node's kernel exposes. Owns its boxes and their fds. */
struct np_uncore_reader {
    struct np_uncore_box *boxes;
    size_t nboxes;
    char why[256]; /**< with no box: "unavailable: ..." and the reason */
};

/**
 * Open CAS read and write counters (@p read_config, @p write_config: np_uncore_encode's codes) on
 * every uncore_imc_<N> PMU under @p sys_root ("/sys" on a real node) and on each CPU of its
 * cpumask (pid -1: the whole socket; root, or perf_event_paranoid <= 0).
 * @return the boxes opened (> 0), or a negative errno with @p err and r->why saying why none
 */
NP_API int np_uncore_open(struct np_uncore_reader *r, const char *sys_root, uint64_t read_config,
                          uint64_t write_config, struct np_err *err);

/** Read every box at @p now_s (monotonic seconds). @return the boxes with a rate, or -errno. */
NP_API int np_uncore_sample(struct np_uncore_reader *r, double now_s);

/** Close every counter; @p r may be zeroed or already closed. */
NP_API void np_uncore_close(struct np_uncore_reader *r);

#endif /* NUMAPLACE_PERF_H */
