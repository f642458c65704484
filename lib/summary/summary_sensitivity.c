/* A finished job's predicted sensitivity to placement, from the counters its summary's steps
 * carry (the model: numaplace/sensitivity.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "numaplace/summary.h"
#include "summary_priv.h"

int np_summary_step_predict(const json_t *st, const struct np_sens_model *model, double *slowdown,
                            struct np_err *err)
{
    struct np_sens_inputs in = {NAN, NAN, NAN, NAN, NULL};

    *slowdown = NAN;
    if (!model)
        return np_err_set(err, -ENODATA, "unavailable: no sensitivity table loaded");
    in.why = jstr(st, "counters_unavailable");
    if (!json_object_get(st, "counters_unavailable") && !json_object_get(st, "cpi") &&
        !json_object_get(st, "llc_mpki"))
        in.why = "the summary predates per-step counters";
    in.cpi = jnum(st, "cpi", NAN);
    in.llc_mpki = jnum(st, "llc_mpki", NAN);
    in.bw_mbps = jnum(st, "bandwidth_bytes_per_s", NAN) / 1e6;
    return np_sensitivity_predict(model, &in, slowdown, err);
}

void np_summary_predict(const json_t *s, const struct np_sens_model *model,
                        struct np_summary_prediction *out)
{
    bool any_step = false, trimmed = false;
    const char *name;
    json_t *n;

    memset(out, 0, sizeof(*out));
    json_object_foreach(json_object_get(s, "nodes"), name, n)
    {
        json_t *st;
        size_t i;
        json_array_foreach(json_object_get(n, "steps"), i, st)
        {
            struct np_err err = {0};
            double x;
            if (jnum(st, "duration_s", 0) < NP_ADVICE_SENSITIVITY_MIN_S)
                continue;
            any_step = true;
            if (np_summary_step_predict(st, model, &x, &err) < 0) {
                if (!out->why[0])
                    snprintf(out->why, sizeof(out->why), "%s", err.msg);
                continue;
            }
            if (!out->available || x > out->slowdown) {
                out->available = true;
                out->slowdown = x;
                out->node = name;
                out->step = jstr(st, "step");
            }
        }
        trimmed |= jint(n, "step_count") > 0 && json_array_size(json_object_get(n, "steps")) == 0;
    }
    if (out->available) {
        out->sensitive = np_sensitivity_is_sensitive(model, out->slowdown);
        out->why[0] = '\0';
    } else if (!any_step && trimmed) {
        snprintf(out->why, sizeof(out->why),
                 "unavailable: the summary's steps were trimmed to fit AdminComment");
    } else if (!any_step) {
        snprintf(out->why, sizeof(out->why), "unavailable: no step ran %.0f s or more",
                 NP_ADVICE_SENSITIVITY_MIN_S);
    }
}
