/* Memory-controller PMUs as libpfm4 names them (see numaplace/uncore.h). */
#include "numaplace/uncore.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfmon/pfmlib.h>

#include "numaplace/perf.h"

/* Socket or channel 0 of each family: the others differ only in the index. Intel's CAS counts
 * are one 64 B line each (the thesis read the same counters with pcm-memory). */
static const struct np_uncore_pmu pmus[] = {
    {"snbep_unc_imc0", "Sandy Bridge-EP", "snbep_unc_imc0::UNC_M_CAS_COUNT:RD",
     "snbep_unc_imc0::UNC_M_CAS_COUNT:WR"},
    {"ivbep_unc_imc0", "Ivy Bridge-EP", "ivbep_unc_imc0::UNC_M_CAS_COUNT:RD",
     "ivbep_unc_imc0::UNC_M_CAS_COUNT:WR"},
    {"hswep_unc_imc0", "Haswell-EP", "hswep_unc_imc0::UNC_M_CAS_COUNT:RD",
     "hswep_unc_imc0::UNC_M_CAS_COUNT:WR"},
    {"bdx_unc_imc0", "Broadwell-X", "bdx_unc_imc0::UNC_M_CAS_COUNT:RD",
     "bdx_unc_imc0::UNC_M_CAS_COUNT:WR"},
    {"skx_unc_imc0", "Skylake-X", "skx_unc_imc0::UNC_M_CAS_COUNT:RD",
     "skx_unc_imc0::UNC_M_CAS_COUNT:WR"},
};
#define NPMUS (sizeof(pmus) / sizeof(pmus[0]))

/* Intel's IMC PMUs exist on x86 machines only, and libpfm4 builds its tables of them only for
 * x86: elsewhere there is nothing to detect or encode, and the reason is the architecture. */
#if !defined(__x86_64__) && !defined(__i386__)
#if defined(__aarch64__)
#define THIS_ARCH "arm64"
#else
#define THIS_ARCH "an architecture other than x86"
#endif
#define NOT_X86                                                                                    \
    "numaplace counts memory controllers through Intel's IMC PMUs, which x86 machines alone "      \
    "have; this build is for " THIS_ARCH
#endif

const struct np_uncore_pmu *np_uncore_pmu_at(size_t i)
{
    return i < NPMUS ? &pmus[i] : NULL;
}

#ifndef NOT_X86
static int encode_one(const char *event, uint64_t *code, struct np_err *err)
{
    uint64_t *codes = NULL;
    int count = 0;
    const int rc = pfm_get_event_encoding(event, PFM_PLM0 | PFM_PLM3, NULL, NULL, &codes, &count);

    if (rc != PFM_SUCCESS || count < 1) {
        free(codes);
        return np_err_set(err,
                          rc == PFM_ERR_NOTFOUND  ? -ENOENT
                          : rc == PFM_ERR_NOTSUPP ? -EOPNOTSUPP
                                                  : -EINVAL,
                          "uncore event %s: libpfm4: %s (its PMU is neither detected here nor "
                          "forced with LIBPFM_FORCE_PMU)",
                          event, rc != PFM_SUCCESS ? pfm_strerror(rc) : "no code");
    }
    *code = codes[0];
    free(codes);
    return 0;
}
#endif

int np_uncore_encode(const struct np_uncore_pmu *p, uint64_t *read_code, uint64_t *write_code,
                     struct np_err *err)
{
#ifdef NOT_X86
    (void)read_code;
    (void)write_code;
    return np_err_set(err, -EOPNOTSUPP, "uncore event %s: %s", p->read_event, NOT_X86);
#else
    int rc = np_perf_init(err);

    if (rc < 0)
        return rc;
    rc = encode_one(p->read_event, read_code, err);
    return rc < 0 ? rc : encode_one(p->write_event, write_code, err);
#endif
}

const struct np_uncore_pmu *np_uncore_detect(char *why, size_t why_len)
{
#ifdef NOT_X86
    snprintf(why, why_len, "unavailable: no uncore memory-controller PMU (%s)", NOT_X86);
    return NULL;
#else
    struct np_err err = {0};

    if (np_perf_init(&err) < 0) {
        snprintf(why, why_len, "unavailable: no uncore memory-controller PMU (%s)", err.msg);
        return NULL;
    }
    for (int p = 0; p < PFM_PMU_MAX; p++) {
        pfm_pmu_info_t info;

        memset(&info, 0, sizeof(info));
        info.size = sizeof(info);
        if (pfm_get_pmu_info((pfm_pmu_t)p, &info) != PFM_SUCCESS || !info.is_present)
            continue;
        for (size_t i = 0; i < NPMUS; i++)
            if (strcmp(info.name, pmus[i].pmu) == 0)
                return &pmus[i];
    }
    snprintf(why, why_len,
             "unavailable: no uncore memory-controller PMU (libpfm4 detects none of its Intel "
             "IMC PMUs here; it has no AMD UMC or DF PMU)");
    return NULL;
#endif
}
