/*
 * numaplace/uncore.h - the memory controllers' own counters through libpfm4's uncore PMUs: one
 * table of the PMUs and their read/write CAS events, per generation, as libpfm4 names them.
 *
 * Only the table and the encoding are here; the sampler does not open them yet (issue 13 #2).
 * Debian 12's libpfm4 (4.13) has Intel IMC PMUs only: no AMD UMC or DF PMU exists in it, so on
 * AMD the source is "unavailable". Everything returned is borrowed and static.
 */
#ifndef NUMAPLACE_UNCORE_H
#define NUMAPLACE_UNCORE_H

#include <stddef.h>
#include <stdint.h>

#include "numaplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* NUMAPLACE_UNCORE_H */
