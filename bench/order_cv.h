/* bench/order_cv's parts shared by its files: order_cv.c (the deterministic tables, the set
 * loading, predictions and replays) and order_cv_noise.c (the noise draw over seeds). */
#ifndef ORDER_CV_H
#define ORDER_CV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "numaplace/migration.h"
#include "numaplace/model.h"
#include "numaplace/replay_scenario.h"
#include "numaplace/scenario.h"

#define MAXCOLS  32
#define MAX_SETS 16

/* Where the orders' predictions come from. */
enum calibration {
    CAL_CV,
    CAL_CV_TWINS,
    CAL_IN_SAMPLE,
    CAL_ORACLE,
    CAL_CONSTANT, /* ablation: every job predicted CONSTANT_PREDICTION */
    CAL_SHUFFLED, /* ablation: the CV predictions shuffled across the jobs (seeded) */
    CAL_NONE,     /* ablation: no prediction, the per-page footprint rule alone */
    CAL_COUNT
};

/* One order (with, for an order that uses predictions, where they come from). */
struct column {
    const struct np_order_ops *ops;
    enum calibration cal; /* for an order that uses predictions */
    char name[80];
};

/* One replayed set. */
struct set {
    char name[65];
    struct np_scenario scenario;
    struct np_replay_owned owned;
};

/* The replays run on the calibrated contention model with the thesis's manager loop. */
extern bool order_cv_contention;
/* ... with the hot law and mover rate of bench/replay's fold holding the set out (--cv). */
extern bool order_cv_cross_validated;

/* Every shipped order, then every candidate (one column per calibration); best-plus's index. */
size_t order_cv_make_columns(struct column *cols, size_t *best_plus);
/* The set's jobs get the predictions of @p cal (shuffled ones permuted by @p seed). */
int order_cv_predict_set(struct set *set, const struct np_model *table, enum calibration cal,
                         uint64_t seed);
/* One replay of @p set; its jobs' times into @p times. */
int order_cv_replay(const struct set *set, enum np_replay_way way, const struct np_order_ops *ops,
                    uint64_t seed, double *times);
int order_cv_load_sets(struct set *sets, size_t nsets, const char *const *paths,
                       const struct np_model *model, const struct np_footprints *footprints,
                       unsigned flags);
void order_cv_free_sets(struct set *sets, size_t nsets);

/* The jobs get the predictions of @p cal (shuffled: one fixed permutation). */
struct np_sim_job;
int order_cv_predict_jobs(struct np_sim_job *jobs, size_t n, const struct np_model *table,
                          enum calibration cal);
/* The orders demoting random mixes on a tiered machine, @p seeds draws (order_cv_tiers.c). */
int order_cv_tiers(const struct np_model *table, int seeds);

/* The noise draw (order_cv_noise.c). */
struct noise_options {
    int seeds, workers;
    double sigma_footprint, sigma_colocation;
    bool json;
};
/* The defaults, from the thesis's own logs and times (order_cv_noise.c says how). */
#define NOISE_SEEDS            20
#define NOISE_SIGMA_FOOTPRINT  0.07
#define NOISE_SIGMA_COLOCATION 0.105

int order_cv_noise(const struct np_model *model, const struct np_footprints *footprints,
                   const char *const *paths, size_t nsets, const struct noise_options *options);

#endif /* ORDER_CV_H */
