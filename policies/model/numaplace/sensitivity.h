/*
 * numaplace/sensitivity.h - a job's slowdown with remote memory predicted from its counters: a
 * least-squares line in logs fitted on the measured table (numaplace/model.h), by default
 *
 *     ln(remote slowdown) = c0 + c1 ln(llc_mpki + 0.01) + c2 ln(cpi)
 *
 * "Sensitive": a prediction at or above the threshold chosen by leave-one-program-out
 * cross-validation (np_sensitivity_cv_threshold; docs/sensitivity.md). Sensitivity is not
 * priority: it advises, or fills a class where the site asked (class_default=auto). No I/O.
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
    /** This machine's near-node penalty (numaplace/penalty.h) predictions are scaled to; 0: the
     *  reference machine's. */
    double remote_penalty;
};

/** Whether two benchmark names are one program (SPEC's twins "519.lbm_r", "619.lbm_s"): a
 *  cross-validation fold holds a whole program. */
NP_API bool np_sensitivity_same_code(const char *a, const char *b);

/** Fit @p features on the rows of @p table that have them, but the program of @p without (NULL:
 *  none); @p threshold is stored as given. @return 0, or -EINVAL (no feature, unknown bits, fewer
 *  usable rows than parameters + 1, a singular system) with @p err */
NP_API int np_sensitivity_fit(struct np_sens_model *m, const struct np_model *table,
                              unsigned features, double threshold, const char *without,
                              struct np_err *err);

/** The predicted slowdown with all memory on a near node (on this machine when @p m has its
 *  remote_penalty). @return 0, or -ENODATA with @p err "unavailable: no CPI (why)" naming the
 *  first missing input and @p in->why (never a guess) */
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

/** For each program, fit without its rows and predict them into @p predicted (NULL, or
 *  table->count entries; NaN: a feature missing). @return 0, or a failed fit's -errno with @p err
 */
NP_API int np_sensitivity_cv(const struct np_model *table, unsigned features, double threshold,
                             double *predicted, struct np_sens_cv *out, struct np_err *err);

/** Choose the grid's threshold by cross-validation: the highest balanced agreement, the lowest
 *  among equals, its figures in @p out. @return 0, or as np_sensitivity_cv */
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

/** Per program, choose the threshold and fit on the other programs alone, then score its rows;
 *  the baselines get the same inner rows, so no choice sees the rows it is scored on. @return 0,
 *  or as np_sensitivity_cv */
NP_API int np_sensitivity_cv_nested(const struct np_model *table, unsigned features,
                                    struct np_sens_nested *out, struct np_err *err);

/** The LLC MPKI cut (sensitive when mpki >= cut) best agreeing (balanced, in sample, the lowest
 *  among equals) with the measured class at @p threshold. @return 0, or -EINVAL: no cut splits */
NP_API int np_sensitivity_mpki_cut(const struct np_model *table, double threshold, double *cut,
                                   struct np_sens_score *out);

/** Spearman's rank correlation of @p n pairs (ties get their mean rank); NaN when undefined. */
NP_API double np_spearman(const double *x, const double *y, size_t n);

#endif /* NUMAPLACE_SENSITIVITY_H */
