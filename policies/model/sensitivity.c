/* A job's remote-memory slowdown from its counters (see numaplace/sensitivity.h). */
#include "numaplace/sensitivity.h"

#include "numaplace/penalty.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define NCOEF (1 + NP_SENS_NFEATURES)
/* Keeps ln() finite for codes that almost never miss (548.exchange2_r: 0.0002 MPKI) without
 * letting those outliers of the log scale steer the fit. */
#define RATE_FLOOR 0.01

/* The feature vector (1, then one per bit of @p features); false: an input missing or <= 0. */
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

/* Solve the k x k system a z = b in place (Gauss, partial pivoting); false when singular. */
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
        if ((without && np_sensitivity_same_code(r->benchmark, without)) || !(r->remote > 0) ||
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

/* The name between the number and the _r/_s suffix: "519.lbm_r" and "619.lbm_s" are "lbm". */
static size_t code_span(const char *benchmark, const char **start)
{
    const char *dot = strchr(benchmark, '.');
    size_t len;

    *start = dot ? dot + 1 : benchmark;
    len = strlen(*start);
    if (len > 2 && (*start)[len - 2] == '_' &&
        ((*start)[len - 1] == 'r' || (*start)[len - 1] == 's'))
        len -= 2;
    return len;
}

bool np_sensitivity_same_code(const char *a, const char *b)
{
    const char *sa, *sb;
    const size_t la = code_span(a, &sa), lb = code_span(b, &sb);

    return la == lb && strncmp(sa, sb, la) == 0;
}

bool np_sensitivity_is_sensitive(const struct np_sens_model *m, double slowdown)
{
    return slowdown >= m->threshold;
}
