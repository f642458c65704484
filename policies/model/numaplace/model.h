/*
 * numaplace/model.h - the measured slowdown model (data/sandman-spec2017.csv, installed under
 * /usr/share/numaplace; a site may give its own table in the same columns). Each benchmark ran
 * alone with its memory local, remote (a near node) and interleaved over both: a job's slowdown
 * as a function of its remote share, piecewise-linear through (0, 1), (1/2, interleave) and (1,
 * remote). Interleave sits well below the straight line for bandwidth-bound codes (619.lbm_s:
 * 1.73 at one half against 3.99 fully remote): a line through the ends would overstate it.
 */
#ifndef NUMAPLACE_MODEL_H
#define NUMAPLACE_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "numaplace/common.h"

/** One measured benchmark run (a CSV row). */
struct np_model_row {
    char benchmark[32];
    char input[8];
    double ipc, llc_mpki, bw_mbps; /**< local metrics; NaN when the source was unreadable */
    double tlb_mpki;               /**< NaN also when the table has no tlb_mpki column */
    double total_time_s;           /**< the local run's wall time; NaN when absent (optional) */
    double remote, interleave;     /**< slowdown factors (remote_pct / 100) */
    char sensitivity[8];           /**< "high", "low" or "" */
};

/** The table. Free with np_model_free. */
struct np_model {
    struct np_model_row *rows; /**< owned */
    size_t count;
};

NP_API void np_model_free(struct np_model *model);

/** The row for @p benchmark (and @p input, or the first row when NULL). Borrowed or NULL. */
NP_API const struct np_model_row *np_model_find(const struct np_model *model, const char *benchmark,
                                                const char *input);

/** Slowdown (>= 1 normally) of @p row with @p remote_share in [0, 1] of its memory remote. */
NP_API double np_model_slowdown(const struct np_model_row *row, double remote_share);

#endif /* NUMAPLACE_MODEL_H */
