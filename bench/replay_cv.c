/* bench/replay's cross-validated contention model (replay_cv.h). */
#include "replay_cv.h"

#include <string.h>

/* Fitted by `build/bench/replay --fit-cv` (bench/RESULTS.md gives the run): each fold's point
 * minimises the mean absolute error of eq. 6.1 over the measured cells of the sets it keeps. */
const struct cv_fold cv_folds[CV_NFOLDS] = {
    {{"thesis-set-1", NULL}, {1.0, 1.0, false, 140}},
    {{"thesis-set-2", NULL}, {1.0, 1.0, false, 140}},
    {{"thesis-set-3", NULL}, {1.0, 1.0, false, 140}},
    {{"thesis-set-4", "thesis-set-5"}, {1.0, 1.0, false, 70}},
};

/* The same with footprints growing, by `build/bench/replay --fit-cv --growth` over its whole
 * coarse grid (28 points, 50-450 MB/s): no fold sits at the grid's edge (bench/RESULTS.md). */
const struct cv_fold cv_folds_growth[CV_NFOLDS] = {
    {{"thesis-set-1", NULL}, {1.0, 1.0, false, 140}},
    {{"thesis-set-2", NULL}, {1.0, 1.0, false, 140}},
    {{"thesis-set-3", NULL}, {1.0, 1.0, false, 140}},
    {{"thesis-set-4", "thesis-set-5"}, {1.0, 1.0, false, 70}},
};

bool cv_fold_holds(const struct cv_fold *fold, const char *set)
{
    for (int k = 0; k < 2; k++)
        if (fold->held_out[k] && !strcmp(fold->held_out[k], set))
            return true;
    return false;
}

const struct cv_fold *cv_fold_of(const char *set, bool growth)
{
    const struct cv_fold *folds = growth ? cv_folds_growth : cv_folds;

    for (size_t f = 0; f < CV_NFOLDS; f++)
        if (cv_fold_holds(&folds[f], set))
            return &folds[f];
    return NULL;
}

size_t cv_grid(struct cv_point *out, size_t max, bool coarse)
{
    /* the mover: from a sixth of this project's own figure to half as much again (a first run
     * over 100-1,100 MB/s found everything above 290 worse on every fold) */
    static const double rates[] = {50, 70, 100, 140, 200, 290, 450};
    /* the hot law: a tenth to a half of the footprint carrying three quarters to nearly all the
     * traffic (the first run's 0.5 were no different) */
    static const double fractions[] = {0.1, 0.25, 0.5}, shares[] = {0.75, 0.95};
    /* coarse: three of them, the extremes of what the full grid holds */
    static const struct cv_point coarse_laws[] = {
        {0.25, 0.95, false, 0}, {0.25, 0.95, true, 0}, {0.1, 0.75, false, 0}};
    size_t n = 0;

    for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
        if (n < max)
            out[n++] = (struct cv_point){1.0, 1.0, false, rates[r]}; /* uniform */
        for (size_t c = 0; coarse && c < sizeof(coarse_laws) / sizeof(coarse_laws[0]); c++)
            if (n < max) {
                out[n] = coarse_laws[c];
                out[n++].mover_mb_s = rates[r];
            }
        for (size_t f = 0; !coarse && f < sizeof(fractions) / sizeof(fractions[0]); f++)
            for (size_t h = 0; h < sizeof(shares) / sizeof(shares[0]); h++)
                for (int first = 0; first < 2; first++)
                    if (shares[h] > fractions[f] && n < max)
                        out[n++] = (struct cv_point){fractions[f], shares[h], first, rates[r]};
    }
    return n;
}

void cv_apply(const struct cv_point *point, struct np_contention_params *params,
              double *mover_bytes_s)
{
    params->hot_fraction = point->hot_fraction;
    params->hot_share = point->hot_share;
    params->hot_moves_first = point->hot_first;
    *mover_bytes_s = point->mover_mb_s * 1e6;
}

bool cv_noise_band(const char *set, double *lo, double *hi)
{
    /* scripts/thesis-noise.py: two standard errors of a run's eq. 6.1 from the spread of the
     * identical instances within it, smallest and largest over the set's runs */
    static const struct {
        const char *set;
        double lo, hi;
    } bands[] = {{"thesis-set-2", 0.075, 0.109},
                 {"thesis-set-3", 0.024, 0.145},
                 {"thesis-set-4", 0.024, 0.131},
                 {"thesis-set-5", 0.045, 0.088}};

    for (size_t i = 0; i < sizeof(bands) / sizeof(bands[0]); i++)
        if (!strcmp(bands[i].set, set)) {
            *lo = bands[i].lo;
            *hi = bands[i].hi;
            return true;
        }
    return false;
}
