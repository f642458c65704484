/* auto_score --held-out: the figures auto decides with, from a fit that never saw the cases
 * scored (auto_score_refit.h). */
#include "auto_score_refit.h"

#include <stdbool.h>
#include <stdio.h>

#include "contention_cases.h"

/* A case auto_score scores: alone, or next to hogs on the job's own node 0. */
static bool scored(const struct fit_case *c)
{
    return (c->group == FIT_CHARACTERIZATION || c->group == FIT_SWEEP) &&
           (c->hogs == 0 || c->hog_node == 0);
}

int refit_without_scored(const char *dir, double *capacity_mbps, double *hog_mbps,
                         double *remote_latency, int *kept)
{
    static struct fit_set set;
    struct np_model model;
    struct fit_params fp;
    int n = 0;

    set.ncases = 0;
    if (fit_load_dir(&set, &model, dir, "auto_score") < 0)
        return 1;
    for (int i = 0; i < set.ncases; i++)
        if (!scored(&set.cases[i]))
            set.cases[n++] = set.cases[i];
    set.ncases = n;
    fit_params_sandman(&fp);
    fit_search(&fp, &set, FIT_NO_MIX);
    *capacity_mbps = fp.model.mc_capacity_mbps;
    *hog_mbps = fp.hog_mbps;
    *remote_latency = fp.model.remote_latency;
    *kept = n;
    np_model_free(&model);
    return 0;
}
