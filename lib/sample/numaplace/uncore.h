/*
 * numaplace/uncore.h - the memory controllers' own counters through libpfm4's uncore PMUs: one
 * table of the PMUs and their read/write CAS events, per generation, as libpfm4 names them.
 *
 * The table and the encoding come from libpfm4; the reader (np_uncore_open) finds the kernel's
 * PMUs under sysfs (uncore_imc_<N>, one CPU per socket in its cpumask) and counts system-wide.
 * Debian 12's libpfm4 (4.13) has Intel IMC PMUs only: no AMD UMC or DF PMU exists in it, so on
 * AMD the source is "unavailable". Everything the table returns is borrowed and static.
 */
#ifndef NUMAPLACE_UNCORE_H
#define NUMAPLACE_UNCORE_H

#include <stddef.h>
#include <stdint.h>

#include "numaplace/common.h"

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

#endif /* NUMAPLACE_UNCORE_H */
