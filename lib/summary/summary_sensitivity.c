/* A finished job's predicted sensitivity to placement, from the counters its summary's steps
 * carry (numaplace/summary_model.h; the model: numaplace/sensitivity.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "numaplace/summary_defs.h"
#include "numaplace/summary_model.h"

int np_sum_step_predict(const struct np_sum_step *st, const struct np_sens_model *model,
                        double *slowdown, struct np_err *err)
{
    struct np_sens_inputs in = {NAN, NAN, NAN, NAN, NULL};

    *slowdown = NAN;
    if (!model)
        return np_err_set(err, -ENODATA, "unavailable: no sensitivity table loaded");
    if (np_keys_has(&st->keys, NP_STEP_COUNTERS_UNAVAILABLE))
        in.why = st->counters_unavailable;
    else if (!np_keys_has(&st->keys, NP_STEP_CPI) && !np_keys_has(&st->keys, NP_STEP_LLC_MPKI))
        in.why = "the summary predates per-step counters";
    if (np_keys_has(&st->keys, NP_STEP_CPI))
        in.cpi = st->cpi;
    if (np_keys_has(&st->keys, NP_STEP_LLC_MPKI))
        in.llc_mpki = st->llc_mpki;
    if (np_keys_has(&st->keys, NP_STEP_BANDWIDTH))
        in.bw_mbps = st->bandwidth_bytes_per_s / 1e6;
    return np_sensitivity_predict(model, &in, slowdown, err);
}

void np_sum_predict(const struct np_sum *s, const struct np_sens_model *model,
                    struct np_sum_prediction *out)
{
    bool any_step = false;

    memset(out, 0, sizeof(*out));
    for (size_t k = 0; k < s->nnodes; k++) {
        const struct np_sum_node *n = &s->nodes[k];
        for (size_t i = 0; i < n->nsteps; i++) {
            const struct np_sum_step *st = &n->steps[i];
            struct np_err err = {0};
            double x;
            if (st->duration_s < NP_ADVICE_SENSITIVITY_MIN_S)
                continue;
            any_step = true;
            if (np_sum_step_predict(st, model, &x, &err) < 0) {
                if (!out->why[0])
                    snprintf(out->why, sizeof(out->why), "%s", err.msg);
                continue;
            }
            if (!out->available || x > out->slowdown) {
                out->available = true;
                out->slowdown = x;
                out->node = n->name;
                out->step = st->step;
            }
        }
    }
    if (out->available) {
        out->sensitive = np_sensitivity_is_sensitive(model, out->slowdown);
        out->why[0] = '\0';
    } else if (!any_step) {
        bool trimmed = false;
        for (size_t k = 0; k < s->nnodes; k++)
            trimmed |= s->nodes[k].step_count > 0 && s->nodes[k].nsteps == 0;
        if (trimmed)
            snprintf(out->why, sizeof(out->why),
                     "unavailable: the summary's steps were trimmed to fit AdminComment");
        else
            snprintf(out->why, sizeof(out->why), "unavailable: no step ran %.0f s or more",
                     NP_ADVICE_SENSITIVITY_MIN_S);
    }
}
