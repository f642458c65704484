/*
 * bench/replay's cross-validated contention model: the two parameters no static run identifies
 * (the hot-share law of numaplace/contention.h and the thesis's mover's rate) fit on the
 * thesis's dynamic sets with one set held out at a time, and scored on the held-out one only.
 */
#ifndef NUMAPLACE_BENCH_REPLAY_CV_H
#define NUMAPLACE_BENCH_REPLAY_CV_H

#include <stdbool.h>
#include <stddef.h>

#include "numaplace/contention.h"

/** One point of the search: the hot-share law and the mover's rate on an idle CPU. */
struct cv_point {
    double hot_fraction, hot_share;
    bool hot_first;
    double mover_mb_s;
};

/** A fold: the sets it holds out (sets 4 and 5 ran one configuration and go together) and
 *  the point fitted on the others by `replay --fit-cv`. */
struct cv_fold {
    const char *held_out[2]; /**< set names; the second may be NULL */
    struct cv_point fitted;
};

#define CV_NFOLDS 4
/** Fitted with constant footprints, and with footprints growing as logged (--growth). */
extern const struct cv_fold cv_folds[CV_NFOLDS], cv_folds_growth[CV_NFOLDS];

/** The fold holding @p set out (of cv_folds_growth when @p growth), or NULL when none does. */
const struct cv_fold *cv_fold_of(const char *set, bool growth);

/** Whether @p fold holds @p set out. */
bool cv_fold_holds(const struct cv_fold *fold, const char *set);

/** The search grid into @p out (at most @p max points); returns how many. @p coarse: the hot
 *  law at four points only (uniform and three others), for the slower replay with growth. */
size_t cv_grid(struct cv_point *out, size_t max, bool coarse);

/** @p params (fit on static runs) with @p point's hot-share law; the mover's rate in bytes/s. */
void cv_apply(const struct cv_point *point, struct np_contention_params *params,
              double *mover_bytes_s);

/** The thesis's own noise per set: the smallest and largest two standard errors of a run's
 *  eq. 6.1 over the set's runs (scripts/thesis-noise.py); false when unavailable (set 1: one
 *  instance of each benchmark, no band). */
bool cv_noise_band(const char *set, double *lo, double *hi);

#endif /* NUMAPLACE_BENCH_REPLAY_CV_H */
