/*
 * Fit the contention model (numaplace/contention.h) on the thesis's static runs only, and print
 * how well it reproduces them.
 *
 *   contention_fit [--data DIR] [--fit]
 *
 * Cases, from DIR (default data/): thesis-characterization.csv (scenarios 1-5: interleave alone,
 * and every placement next to 1 or 10 stress-ng memory hogs on the CPUs' node or the other one),
 * thesis-sweeps.csv (520.omnetpp_r next to 0-10 hogs) and thesis-static-mixes.csv (8 jobs on one
 * node's CPUs, configurations 1-6). Each case's modelled time relative to the job's alone, local
 * time is set beside the measured one. Without --fit it scores np_contention_params_sandman's
 * parameters; with --fit it searches them (coordinate descent on a multiplicative grid, the
 * objective the mean over the three groups of each group's mean |ln(model / measured)|) and
 * prints them. The dynamic sets are not read. Deterministic. The cases, score and search are
 * contention_cases.c's (bench/auto_score refits with a static mix held out).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "contention_cases.h"
#include "numaplace/tables.h"

int main(int argc, char **argv)
{
    const char *dir = "data";
    bool do_fit = false, verbose = false;
    static struct fit_set set;
    struct np_model model;
    struct fit_params fp;
    const struct np_contention_params *p = &fp.model;
    double e[FIT_NGROUPS], b[FIT_NGROUPS];

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--data") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--fit"))
            do_fit = true;
        else if (!strcmp(argv[i], "--cases"))
            verbose = true;
        else {
            fprintf(stderr,
                    "contention_fit: unknown option '%s': accepted are --data DIR, "
                    "--fit, --cases\n",
                    argv[i]);
            return 2;
        }
    }
    if (fit_load_dir(&set, &model, dir, "contention_fit") < 0)
        return 1;
    fit_params_sandman(&fp);
    if (do_fit)
        fit_search(&fp, &set, FIT_NO_MIX);
    fit_score(&fp, &set, FIT_NO_MIX, e, b);
    printf("contention_fit: %d static cases from %s/ (the dynamic sets are not read)%s\n",
           set.ncases, dir, do_fit ? "; parameters fit here" : "; np_contention_params_sandman");
    printf("parameters: mc_capacity_mbps %.0f, link_capacity_mbps %.0f, remote_latency %.3f, "
           "llc_gain %.3f, llc_half_mbps %.0f, omp_exponent %.3f; stress-ng hog %.0f MB/s\n",
           p->mc_capacity_mbps, p->link_capacity_mbps, p->remote_latency, p->llc_gain,
           p->llc_half_mbps, p->omp_exponent, fp.hog_mbps);
    printf("\n| group | cases | mean abs ln error | as a factor | bias (mean ln) "
           "|\n|---|---|---|---|---|\n");
    for (int g = 0; g < FIT_NGROUPS; g++) {
        int n = 0;
        for (int i = 0; i < set.ncases; i++)
            n += set.cases[i].group == (enum fit_group)g;
        printf("| %s | %d | %.3f | x%.2f | %+.3f |\n", fit_group_names[g], n, e[g], exp(e[g]),
               b[g]);
    }
    if (verbose) {
        struct fit_cache cache = {.n = 0};
        printf("\n| case | measured | model |\n|---|---|---|\n");
        for (int i = 0; i < set.ncases; i++) {
            const struct fit_case *c = &set.cases[i];
            double s[FIT_MIX_JOBS];
            printf("| %s | %.3f | %.3f |\n", c->label, c->measured,
                   fit_solve(&fp, c, &cache, s) < 0 ? NAN : s[c->target]);
        }
    }
    np_model_free(&model);
    return 0;
}
