/* A job's remote-memory slowdown from its counters (see numaplace/sensitivity.h). */
#include "numaplace/sensitivity.h"

#include "numaplace/penalty.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NCOEF (1 + NP_SENS_NFEATURES)
/* Keeps ln() finite for codes that almost never miss (548.exchange2_r: 0.0002 MPKI) without
 * letting those outliers of the log scale steer the fit. */
#define RATE_FLOOR 0.01

/* The feature vector (1, then one entry per bit of @p features); false when an input is missing
 * or not positive. */
static bool features_of(unsigned features, double cpi, double mpki, double bw, double tlb,
                        double x[NCOEF], int *nx)
{
    const double raw[NP_SENS_NFEATURES] = {mpki + RATE_FLOOR, cpi, bw, tlb + RATE_FLOOR};

    *nx = 0;
    x[(*nx)++] = 1.0;
    for (int f = 0; f < NP_SENS_NFEATURES; f++) {
        if (!(features & (1u << f)))
            continue;
        if (!(raw[f] > 0) || !isfinite(raw[f]))
            return false;
        x[(*nx)++] = log(raw[f]);
    }
    return true;
}

static bool row_features(unsigned features, const struct np_model_row *r, double x[NCOEF], int *nx)
{
    return features_of(features, r->ipc > 0 ? 1.0 / r->ipc : NAN, r->llc_mpki, r->bw_mbps,
                       r->tlb_mpki, x, nx);
}

/* Solve the k x k system a z = b in place by Gaussian elimination with partial pivoting.
 * false when singular. */
static bool solve(double a[NCOEF][NCOEF], double b[NCOEF], int k, double z[NCOEF])
{
    for (int c = 0; c < k; c++) {
        int p = c;
        for (int r = c + 1; r < k; r++)
            if (fabs(a[r][c]) > fabs(a[p][c]))
                p = r;
        if (fabs(a[p][c]) < 1e-12)
            return false;
        if (p != c) {
            for (int j = 0; j < k; j++) {
                const double t = a[c][j];
                a[c][j] = a[p][j];
                a[p][j] = t;
            }
            const double t = b[c];
            b[c] = b[p];
            b[p] = t;
        }
        for (int r = c + 1; r < k; r++) {
            const double f = a[r][c] / a[c][c];
            for (int j = c; j < k; j++)
                a[r][j] -= f * a[c][j];
            b[r] -= f * b[c];
        }
    }
    for (int r = k - 1; r >= 0; r--) {
        double s = b[r];
        for (int j = r + 1; j < k; j++)
            s -= a[r][j] * z[j];
        z[r] = s / a[r][r];
    }
    return true;
}

int np_sensitivity_fit(struct np_sens_model *m, const struct np_model *table, unsigned features,
                       double threshold, const char *without, struct np_err *err)
{
    double ata[NCOEF][NCOEF] = {{0}}, atb[NCOEF] = {0}, z[NCOEF] = {0};
    size_t used = 0;
    int k = 0;

    memset(m, 0, sizeof(*m));
    if (table->count && !table->rows)
        return np_err_set(err, -EINVAL, "sensitivity: a table of %zu rows without rows",
                          table->count);
    if (features == 0 || (features & ~NP_SENS_FEATURES_ALL))
        return np_err_set(err, -EINVAL,
                          "sensitivity features 0x%x: accepted: a non-empty set of 0x%x", features,
                          NP_SENS_FEATURES_ALL);
    /* Normal equations: (X'X) c = X'y with y = ln(remote slowdown). */
    for (size_t i = 0; i < table->count; i++) {
        const struct np_model_row *r = &table->rows[i];
        double x[NCOEF];
        if ((without && strcmp(r->benchmark, without) == 0) || !(r->remote > 0) ||
            !row_features(features, r, x, &k))
            continue;
        for (int a = 0; a < k; a++) {
            for (int b = 0; b < k; b++)
                ata[a][b] += x[a] * x[b];
            atb[a] += x[a] * log(r->remote);
        }
        used++;
    }
    if (k == 0) { /* no row had the features: count them for the message */
        double x[NCOEF];
        (void)features_of(features, 1, 1, 1, 1, x, &k);
    }
    if (used < (size_t)k + 1)
        return np_err_set(err, -EINVAL,
                          "sensitivity: %zu table rows have the model's inputs; at least %d needed",
                          used, k + 1);
    if (!solve(ata, atb, k, z))
        return np_err_set(err, -EINVAL,
                          "sensitivity: the table's inputs are collinear (singular fit over %zu "
                          "rows)",
                          used);
    m->features = features;
    memcpy(m->coef, z, sizeof(z));
    m->threshold = threshold;
    m->rows = used;
    return 0;
}

int np_sensitivity_predict(const struct np_sens_model *m, const struct np_sens_inputs *in,
                           double *slowdown, struct np_err *err)
{
    static const char *const names[NP_SENS_NFEATURES] = {"LLC MPKI", "CPI", "bandwidth",
                                                         "TLB MPKI"};
    const double given[NP_SENS_NFEATURES] = {in->llc_mpki, in->cpi, in->bw_mbps, in->tlb_mpki};
    double x[NCOEF], y = 0;
    int k;

    *slowdown = NAN;
    for (int f = 0; f < NP_SENS_NFEATURES; f++)
        if ((m->features & (1u << f)) && !(given[f] >= 0 && isfinite(given[f])))
            return np_err_set(err, -ENODATA, "unavailable: no %s (%s)", names[f],
                              in->why && *in->why ? in->why : "not measured");
    if (m->features == 0 ||
        !features_of(m->features, in->cpi, in->llc_mpki, in->bw_mbps, in->tlb_mpki, x, &k))
        return np_err_set(err, -ENODATA, "unavailable: %s",
                          m->features ? "an input is zero (no instructions counted)"
                                      : "no calibrated model");
    for (int j = 0; j < k; j++)
        y += m->coef[j] * x[j];
    *slowdown = exp(y);
    if (m->remote_penalty > 0) {
        const double here =
            np_penalty_scale_slowdown(*slowdown, NP_REFERENCE_REMOTE_PENALTY, m->remote_penalty);
        if (isfinite(here))
            *slowdown = here;
    }
    return 0;
}

bool np_sensitivity_is_sensitive(const struct np_sens_model *m, double slowdown)
{
    return slowdown >= m->threshold;
}

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

/* The class figures of out-of-fold predictions @p pred at @p threshold. */
static void score(const struct np_model *table, const double *pred, double threshold,
                  struct np_sens_cv *out)
{
    size_t pos = 0, neg = 0, tp = 0, tn = 0, labelled = 0, label_ok = 0;

    for (size_t i = 0; i < table->count; i++) {
        const struct np_model_row *r = &table->rows[i];
        bool said, measured;
        if (isnan(pred[i]))
            continue;
        said = pred[i] >= threshold;
        measured = r->remote >= threshold;
        pos += measured;
        neg += !measured;
        tp += measured && said;
        tn += !measured && !said;
        if (strcmp(r->sensitivity, "high") == 0 || strcmp(r->sensitivity, "low") == 0) {
            labelled++;
            label_ok += said == (strcmp(r->sensitivity, "high") == 0);
        }
    }
    out->threshold = threshold;
    out->agree = (pos + neg) > 0 ? (double)(tp + tn) / (double)(pos + neg) : NAN;
    out->balanced = pos && neg ? ((double)tp / (double)pos + (double)tn / (double)neg) / 2.0 : NAN;
    out->labelled = labelled;
    out->agree_label = labelled ? (double)label_ok / (double)labelled : NAN;
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
        bool seen = false;
        int rc;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(table->rows[j].benchmark, r->benchmark) == 0;
        if (seen)
            continue; /* this benchmark's fold is done */
        if ((rc = np_sensitivity_fit(&m, table, features, 0, r->benchmark, err)) < 0)
            return rc;
        for (size_t j = i; j < table->count; j++) {
            const struct np_model_row *o = &table->rows[j];
            const struct np_sens_inputs in = {o->ipc > 0 ? 1.0 / o->ipc : NAN, o->llc_mpki,
                                              o->bw_mbps, o->tlb_mpki, NULL};
            if (strcmp(o->benchmark, r->benchmark) == 0 &&
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
