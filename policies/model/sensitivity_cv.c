/* Cross-validating the sensitivity model (numaplace/sensitivity.h), a fold a whole program:
 * np_sensitivity_cv_threshold chooses the product's threshold; np_sensitivity_cv_nested estimates
 * how the whole procedure, threshold choice included, does on programs it never saw. */
#include "numaplace/sensitivity.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Mean ranks (1-based) of @p v into @p rank. */
static void ranks(const double *v, size_t n, double *rank)
{
    for (size_t i = 0; i < n; i++) {
        size_t below = 0, equal = 0;
        for (size_t j = 0; j < n; j++) {
            below += v[j] < v[i];
            equal += v[j] == v[i];
        }
        rank[i] = (double)below + (double)(equal + 1) / 2.0;
    }
}

double np_spearman(const double *x, const double *y, size_t n)
{
    double *rx = calloc(n ? n : 1, sizeof(*rx)), *ry = calloc(n ? n : 1, sizeof(*ry));
    double rho = NAN;

    if (rx && ry && n > 1) {
        double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
        ranks(x, n, rx);
        ranks(y, n, ry);
        for (size_t i = 0; i < n; i++) {
            mx += rx[i] / (double)n;
            my += ry[i] / (double)n;
        }
        for (size_t i = 0; i < n; i++) {
            sxy += (rx[i] - mx) * (ry[i] - my);
            sxx += (rx[i] - mx) * (rx[i] - mx);
            syy += (ry[i] - my) * (ry[i] - my);
        }
        if (sxx > 0 && syy > 0)
            rho = sxy / sqrt(sxx * syy);
    }
    free(rx);
    free(ry);
    return rho;
}

/* Class counts of one predictor against the measured class and the labels. */
struct tally {
    size_t pos, neg, tp, tn, labelled, label_ok;
};

static void tally_add(struct tally *t, const struct np_model_row *r, bool said, double threshold)
{
    const bool measured = r->remote >= threshold;

    t->pos += measured;
    t->neg += !measured;
    t->tp += measured && said;
    t->tn += !measured && !said;
    if (strcmp(r->sensitivity, "high") == 0 || strcmp(r->sensitivity, "low") == 0) {
        t->labelled++;
        t->label_ok += said == (strcmp(r->sensitivity, "high") == 0);
    }
}

static struct np_sens_score tally_score(const struct tally *t)
{
    const size_t n = t->pos + t->neg;

    return (struct np_sens_score){
        .rows = n,
        .agree = n ? (double)(t->tp + t->tn) / (double)n : NAN,
        .balanced = t->pos && t->neg
                        ? ((double)t->tp / (double)t->pos + (double)t->tn / (double)t->neg) / 2.0
                        : NAN,
        .labelled = t->labelled,
        .agree_label = t->labelled ? (double)t->label_ok / (double)t->labelled : NAN,
    };
}

/* The class figures of out-of-fold predictions @p pred at @p threshold. */
static void score(const struct np_model *table, const double *pred, double threshold,
                  struct np_sens_cv *out)
{
    struct tally t = {0};
    struct np_sens_score s;

    for (size_t i = 0; i < table->count; i++)
        if (!isnan(pred[i]))
            tally_add(&t, &table->rows[i], pred[i] >= threshold, threshold);
    s = tally_score(&t);
    out->threshold = threshold;
    out->agree = s.agree;
    out->balanced = s.balanced;
    out->labelled = s.labelled;
    out->agree_label = s.agree_label;
}

/* Whether row @p i is its code's first in @p table (a fold is done at its first row). */
static bool first_of_code(const struct np_model *table, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (np_sensitivity_same_code(table->rows[j].benchmark, table->rows[i].benchmark))
            return false;
    return true;
}

/* The model's inputs from a table row. */
static struct np_sens_inputs row_inputs(const struct np_model_row *r)
{
    return (struct np_sens_inputs){r->ipc > 0 ? 1.0 / r->ipc : NAN, r->llc_mpki, r->bw_mbps,
                                   r->tlb_mpki, NULL};
}

/* Out-of-fold predictions into @p pred (table->count entries). */
static int predict_out_of_fold(const struct np_model *table, unsigned features, double *pred,
                               struct np_err *err)
{
    for (size_t i = 0; i < table->count; i++)
        pred[i] = NAN;
    for (size_t i = 0; i < table->count; i++) {
        const struct np_model_row *r = &table->rows[i];
        struct np_sens_model m;
        int rc;
        if (!first_of_code(table, i))
            continue; /* this code's fold is done */
        if ((rc = np_sensitivity_fit(&m, table, features, 0, r->benchmark, err)) < 0)
            return rc;
        for (size_t j = i; j < table->count; j++) {
            const struct np_model_row *o = &table->rows[j];
            const struct np_sens_inputs in = row_inputs(o);
            if (np_sensitivity_same_code(o->benchmark, r->benchmark) &&
                np_sensitivity_predict(&m, &in, &pred[j], NULL) < 0)
                pred[j] = NAN;
        }
    }
    return 0;
}

/* The measured slowdowns of the predicted rows, and those predictions, packed. */
static size_t pack(const struct np_model *table, const double *pred, double *p, double *y)
{
    size_t n = 0;

    for (size_t i = 0; i < table->count; i++)
        if (!isnan(pred[i])) {
            p[n] = pred[i];
            y[n++] = table->rows[i].remote;
        }
    return n;
}

static int cross_validate(const struct np_model *table, unsigned features, bool choose,
                          double threshold, double *predicted, struct np_sens_cv *out,
                          struct np_err *err)
{
    const size_t n = table->count ? table->count : 1;
    double *pred = calloc(n, sizeof(*pred)), *p = calloc(n, sizeof(*p)), *y = calloc(n, sizeof(*y));
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (!pred || !p || !y) {
        free(pred);
        free(p);
        free(y);
        return np_err_set(err, -ENOMEM, "sensitivity: out of memory");
    }
    rc = predict_out_of_fold(table, features, pred, err);
    if (rc == 0) {
        out->rows = pack(table, pred, p, y);
        out->spearman = np_spearman(p, y, out->rows);
        if (!choose) {
            score(table, pred, threshold, out);
        } else {
            struct np_sens_cv best = {.balanced = -1};
            const int steps = (int)lround((NP_SENS_THRESHOLD_MAX - NP_SENS_THRESHOLD_MIN) /
                                          NP_SENS_THRESHOLD_STEP);
            for (int s = 0; s <= steps; s++) {
                struct np_sens_cv c = *out;
                score(table, pred, NP_SENS_THRESHOLD_MIN + s * NP_SENS_THRESHOLD_STEP, &c);
                if (!isnan(c.balanced) && c.balanced > best.balanced + 1e-9)
                    best = c; /* strictly better: among equals the lowest threshold stays */
            }
            if (best.balanced < 0)
                rc = np_err_set(err, -EINVAL,
                                "sensitivity: no threshold in %.2f-%.2f splits the table's "
                                "measured slowdowns",
                                NP_SENS_THRESHOLD_MIN, NP_SENS_THRESHOLD_MAX);
            else
                *out = best;
        }
    }
    if (rc == 0 && predicted)
        memcpy(predicted, pred, table->count * sizeof(*pred));
    free(pred);
    free(p);
    free(y);
    return rc;
}

int np_sensitivity_cv(const struct np_model *table, unsigned features, double threshold,
                      double *predicted, struct np_sens_cv *out, struct np_err *err)
{
    return cross_validate(table, features, false, threshold, predicted, out, err);
}

int np_sensitivity_cv_threshold(const struct np_model *table, unsigned features,
                                struct np_sens_cv *out, struct np_err *err)
{
    return cross_validate(table, features, true, 0, NULL, out, err);
}

int np_sensitivity_mpki_cut(const struct np_model *table, double threshold, double *cut,
                            struct np_sens_score *out)
{
    struct np_sens_score best = {.balanced = -1};
    double best_cut = NAN;

    for (size_t c = 0; c < table->count; c++) {
        const double candidate = table->rows[c].llc_mpki;
        struct tally t = {0};
        struct np_sens_score s;
        if (!(candidate >= 0))
            continue;
        for (size_t i = 0; i < table->count; i++)
            if (table->rows[i].llc_mpki >= 0)
                tally_add(&t, &table->rows[i], table->rows[i].llc_mpki >= candidate, threshold);
        s = tally_score(&t);
        if (!isnan(s.balanced) &&
            (s.balanced > best.balanced + 1e-9 ||
             (fabs(s.balanced - best.balanced) <= 1e-9 && candidate < best_cut))) {
            best = s;
            best_cut = candidate;
        }
    }
    if (best.balanced < 0)
        return -EINVAL;
    *cut = best_cut;
    if (out)
        *out = best;
    return 0;
}

/* Whether most rows of @p table with a remote figure are sensitive at @p threshold. */
static bool majority_sensitive(const struct np_model *table, double threshold)
{
    size_t pos = 0, neg = 0;

    for (size_t i = 0; i < table->count; i++) {
        pos += table->rows[i].remote >= threshold;
        neg += table->rows[i].remote < threshold;
    }
    return pos > neg;
}

/* The rows of @p table whose code is not @p code's, into @p inner (rows borrowed from a copy). */
static void without_code(const struct np_model *table, const char *code, struct np_model *inner)
{
    inner->count = 0;
    for (size_t i = 0; i < table->count; i++)
        if (!np_sensitivity_same_code(table->rows[i].benchmark, code))
            inner->rows[inner->count++] = table->rows[i];
}

static size_t distinct_names(const struct np_model *table, bool by_code)
{
    size_t n = 0;

    for (size_t i = 0; i < table->count; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = by_code ? np_sensitivity_same_code(table->rows[j].benchmark,
                                                      table->rows[i].benchmark)
                           : strcmp(table->rows[j].benchmark, table->rows[i].benchmark) == 0;
        n += !seen;
    }
    return n;
}

/* One outer fold: choose on @p inner, predict the rows of @p code, tally the three predictors. */
static int outer_fold(const struct np_model *table, const struct np_model *inner, const char *code,
                      unsigned features, struct np_sens_nested *out, struct tally t[3],
                      double *pred, double *measured, struct np_err *err)
{
    struct np_sens_cv cv;
    struct np_sens_model m;
    double cut = INFINITY;
    bool majority;
    int rc;

    if ((rc = cross_validate(inner, features, true, 0, NULL, &cv, err)) < 0 ||
        (rc = np_sensitivity_fit(&m, inner, features, cv.threshold, NULL, err)) < 0)
        return rc;
    out->threshold_min = fmin(out->threshold_min, cv.threshold);
    out->threshold_max = fmax(out->threshold_max, cv.threshold);
    majority = majority_sensitive(inner, cv.threshold);
    (void)np_sensitivity_mpki_cut(inner, cv.threshold, &cut, NULL);
    for (size_t i = 0; i < table->count; i++) {
        const struct np_model_row *r = &table->rows[i];
        const struct np_sens_inputs in = row_inputs(r);
        double p;
        if (!np_sensitivity_same_code(r->benchmark, code) ||
            np_sensitivity_predict(&m, &in, &p, NULL) < 0 || isnan(p))
            continue;
        tally_add(&t[0], r, p >= cv.threshold, cv.threshold);
        tally_add(&t[1], r, majority, cv.threshold);
        tally_add(&t[2], r, r->llc_mpki >= cut, cv.threshold);
        pred[out->rows] = p;
        measured[out->rows++] = r->remote;
    }
    return 0;
}

int np_sensitivity_cv_nested(const struct np_model *table, unsigned features,
                             struct np_sens_nested *out, struct np_err *err)
{
    const size_t n = table->count ? table->count : 1;
    struct np_model inner = {calloc(n, sizeof(*inner.rows)), 0};
    double *pred = calloc(n, sizeof(*pred)), *measured = calloc(n, sizeof(*measured));
    struct tally t[3] = {{0}};
    int rc = 0;

    memset(out, 0, sizeof(*out));
    out->threshold_min = INFINITY;
    out->threshold_max = -INFINITY;
    if (!inner.rows || !pred || !measured) {
        free(inner.rows);
        free(pred);
        free(measured);
        return np_err_set(err, -ENOMEM, "sensitivity: out of memory");
    }
    for (size_t i = 0; rc == 0 && i < table->count; i++) {
        if (!first_of_code(table, i))
            continue;
        without_code(table, table->rows[i].benchmark, &inner);
        rc = outer_fold(table, &inner, table->rows[i].benchmark, features, out, t, pred, measured,
                        err);
    }
    if (rc == 0) {
        out->names = distinct_names(table, false);
        out->folds = distinct_names(table, true);
        out->spearman = np_spearman(pred, measured, out->rows);
        out->model = tally_score(&t[0]);
        out->majority = tally_score(&t[1]);
        out->mpki_cut = tally_score(&t[2]);
    }
    free(inner.rows);
    free(pred);
    free(measured);
    return rc;
}
