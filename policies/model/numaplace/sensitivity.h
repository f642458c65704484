/*
 * numaplace/sensitivity.h - a job's slowdown with remote memory predicted from its counters.
 *
 * The measured table (numaplace/model.h: data/sandman-spec2017.csv, or a site's own) gives, per
 * benchmark run, the counters of its local run and its slowdown with all memory on a near node.
 * The model is a least-squares line in logs over the features chosen (by default LLC MPKI and
 * CPI, the two per-instruction rates numaplaced measures):
 *
 *     ln(remote slowdown) = c0 + c1 ln(llc_mpki + 0.01) + c2 ln(cpi)
 *
 * "Sensitive" means a predicted slowdown at or above a threshold chosen by leave-one-benchmark-out
 * cross-validation on the same table (np_sensitivity_cv_threshold): the grid value whose
 * out-of-fold class best agrees with the measured class, by balanced agreement. The figures, and
 * why these features: docs/sensitivity.md, bench/RESULTS.md.
 *
 * Sensitivity is not priority: the prediction only advises, or fills a class where the site asked
 * for it (class_default=auto) through its class_map. Nothing here logs, allocates beyond what it
 * says, or reads anything but the table it is given.
 */
#ifndef NUMAPLACE_SENSITIVITY_H
#define NUMAPLACE_SENSITIVITY_H

#include <stdbool.h>
#include <stddef.h>

#include "numaplace/common.h"
#include "numaplace/model.h"

/** Features a model may use, as bits. */
enum np_sens_feature {
    NP_SENS_LOG_MPKI = 1u << 0, /**< ln(LLC misses per kilo-instruction + 0.01) */
    NP_SENS_LOG_CPI = 1u << 1,  /**< ln(cycles per instruction) */
    NP_SENS_LOG_BW = 1u << 2,   /**< ln(memory bandwidth in MB/s) */
    NP_SENS_LOG_TLB = 1u << 3,  /**< ln(TLB misses per kilo-instruction + 0.01) */
    NP_SENS_NFEATURES = 4
};
#define NP_SENS_FEATURES_DEFAULT (NP_SENS_LOG_MPKI | NP_SENS_LOG_CPI)
#define NP_SENS_FEATURES_ALL     ((1u << NP_SENS_NFEATURES) - 1)

/** The threshold grid the cross-validation chooses from (predicted remote slowdown, x). */
#define NP_SENS_THRESHOLD_MIN  1.20
#define NP_SENS_THRESHOLD_MAX  2.00
#define NP_SENS_THRESHOLD_STEP 0.05

/** What a job's counters say; NaN where not measured. */
struct np_sens_inputs {
    double cpi, llc_mpki, bw_mbps, tlb_mpki;
    const char *why; /**< borrowed: why counters are missing (a perf reason), or NULL */
};

/** A calibrated model. Plain data: copy it freely, nothing to free. */
struct np_sens_model {
    unsigned features;                  /**< enum np_sens_feature bits */
    double coef[1 + NP_SENS_NFEATURES]; /**< intercept, then one per feature in bit order */
    double threshold;                   /**< predicted slowdown >= this: sensitive */
    size_t rows;                        /**< table rows it was fitted on */
    /** This machine's near-node remote penalty (`numaplace characterize`'s profile): predictions
     *  are scaled from the reference machine's to it (numaplace/penalty.h). 0: not measured,
     *  predictions are the reference machine's. */
    double remote_penalty;
};

/**
 * Whether two benchmark names are one program: SPEC's rate and speed twins ("519.lbm_r",
 * "619.lbm_s") share the name between the number and the _r/_s suffix. Cross-validation folds
 * hold whole programs, so a fold is never predicted by a fit that saw its twin.
 */
NP_API bool np_sensitivity_same_code(const char *a, const char *b);

/**
 * Fit @p features on the rows of @p table that have them, leaving out every row of the program
 * of benchmark @p without (np_sensitivity_same_code; NULL: none). @p threshold is stored as given.
 * @return 0, or -EINVAL (no feature, unknown bits, fewer usable rows than parameters + 1, or a
 *         singular system) with @p err
 */
NP_API int np_sensitivity_fit(struct np_sens_model *m, const struct np_model *table,
                              unsigned features, double threshold, const char *without,
                              struct np_err *err);

/**
 * The predicted slowdown of a job with all its memory remote (on a near node), on this machine
 * when @p m has its remote_penalty, else on the reference machine.
 * @return 0 with *@p slowdown, or -ENODATA with @p err "unavailable: no CPI (why)" naming the
 *         first missing input and @p in->why (never a guess)
 */
NP_API int np_sensitivity_predict(const struct np_sens_model *m, const struct np_sens_inputs *in,
                                  double *slowdown, struct np_err *err);

/** Whether @p slowdown (from np_sensitivity_predict) is at or above @p m's threshold. */
NP_API bool np_sensitivity_is_sensitive(const struct np_sens_model *m, double slowdown);

/** Leave-one-program-out cross-validation figures at one threshold. */
struct np_sens_cv {
    double threshold;
    size_t rows;        /**< rows predicted (rows lacking a feature are left out) */
    double spearman;    /**< rank correlation, predicted vs measured remote slowdown */
    double agree;       /**< share of rows whose predicted class is their measured class */
    double balanced;    /**< mean of that share among measured-sensitive and -insensitive rows */
    size_t labelled;    /**< rows the table labels high or low */
    double agree_label; /**< share of labelled rows whose predicted class is the label */
};

/**
 * Cross-validate: for each program (a benchmark's inputs and its rate/speed twin), fit without
 * all its rows and predict them.
 * @param predicted receives one prediction per table row (NaN when the row lacks a feature);
 *        at least table->count entries, or NULL
 * @return 0, or the negative errno of a failed fit with @p err
 */
NP_API int np_sensitivity_cv(const struct np_model *table, unsigned features, double threshold,
                             double *predicted, struct np_sens_cv *out, struct np_err *err);

/**
 * Choose the threshold from the grid by cross-validation: the highest balanced agreement, the
 * lowest threshold among equals. @p out receives that threshold's figures.
 * @return 0, or as np_sensitivity_cv
 */
NP_API int np_sensitivity_cv_threshold(const struct np_model *table, unsigned features,
                                       struct np_sens_cv *out, struct np_err *err);

/** How one predictor of the class did: agreement with the measured class and with the labels. */
struct np_sens_score {
    size_t rows;        /**< rows scored */
    double agree;       /**< share whose predicted class is their measured class */
    double balanced;    /**< mean of that share among measured-sensitive and -insensitive rows */
    size_t labelled;    /**< rows the table labels high or low */
    double agree_label; /**< share of labelled rows whose predicted class is the label */
};

/** Nested cross-validation of the whole procedure, and two baselines scored on the same rows. */
struct np_sens_nested {
    size_t rows;                   /**< rows predicted in the outer folds */
    size_t names;                  /**< distinct benchmark names in the table */
    size_t folds;                  /**< outer folds: distinct programs */
    double spearman;               /**< outer predictions vs measured remote slowdown */
    double threshold_min;          /**< the lowest threshold an inner CV chose */
    double threshold_max;          /**< the highest */
    struct np_sens_score model;    /**< the model at its fold's threshold */
    struct np_sens_score majority; /**< the inner rows' majority class, for every row */
    struct np_sens_score mpki_cut; /**< one cut on LLC MPKI, chosen on the inner rows */
};

/**
 * Nested leave-one-program-out cross-validation: for each program, the threshold is chosen by
 * np_sensitivity_cv_threshold on the other programs alone, the model fitted on them, and the
 * program's rows predicted and scored at that threshold (the measured class is remote >= that
 * threshold too). The baselines get the same inner rows and threshold. No choice sees the rows
 * it is scored on. @return 0, or as np_sensitivity_cv
 */
NP_API int np_sensitivity_cv_nested(const struct np_model *table, unsigned features,
                                    struct np_sens_nested *out, struct np_err *err);

/**
 * The single LLC MPKI cut (sensitive when mpki >= cut) with the best balanced agreement with the
 * measured class at @p threshold on @p table itself (in sample; the lowest cut among equals).
 * @return 0, or -EINVAL when no cut splits the rows
 */
NP_API int np_sensitivity_mpki_cut(const struct np_model *table, double threshold, double *cut,
                                   struct np_sens_score *out);

/** Spearman's rank correlation of @p n pairs (ties get their mean rank); NaN when undefined. */
NP_API double np_spearman(const double *x, const double *y, size_t n);

#endif /* NUMAPLACE_SENSITIVITY_H */
