/*
 * auto_score --mixes: the thesis's static mixes (8 jobs on node 0's CPUs; mixes A = 500s_ref and
 * B = 600s_ref) scored under auto, always-local, always-interleave and the oracle.
 *
 * Interleave was never run in the mixes, so every policy's time is the contention model's. The
 * model scoring mix X is refit (fit_search from np_contention_params_sandman) with all six of
 * X's configurations held out; the characterization runs, the sweep and the other mix stay in
 * the fit. A launch-time policy replaces the memory layout, so configurations 1-3 (and 4-6)
 * are one scenario: X without neighbours, and X next to 8 stress-ng hogs on node 1's CPUs drawing
 * from node 0. Each job's slowdown is relative to its alone, local run; each job is decided by
 * np_auto_choose as the plugin would, seeing node 0 drawn by the hogs and the other seven jobs
 * (their alone bandwidth: the mix running). The oracle is the assignment of local or interleave
 * to the eight jobs (all 256 tried) with the smallest geometric-mean slowdown under the same
 * held-out model; "auto best" counts the jobs auto gives the oracle's choice. The held-out
 * model's error on the measured all-local run (configuration 1 or 4) says how far to trust it.
 */
#include "auto_score_mixes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "contention_cases.h"
#include "numaplace/auto.h"
#include "numaplace/tables.h"

struct mix_tally {
    double log_auto, log_local, log_inter, log_oracle, abs_err, bias;
    unsigned jobs, auto_best, auto_interleaved;
};

static bool told_sensitive(const struct np_model_row *row, const char *labels, bool *sensitive)
{
    if (!strcmp(labels, "high"))
        return (*sensitive = true);
    if (!strcmp(labels, "history")) {
        *sensitive = row->remote >= 1.10;
        return true;
    }
    *sensitive = !strcmp(row->sensitivity, "high");
    return row->sensitivity[0] != '\0';
}

/* Bit i of the result: auto interleaves job i of @p c. */
static unsigned auto_mask(const struct fit_params *fp, const struct fit_case *c, const char *labels)
{
    const double threshold = np_auto_threshold(fp->model.remote_latency);
    const double capacity = fp->model.mc_capacity_mbps;
    unsigned mask = 0;

    for (int i = 0; i < c->njobs; i++) {
        struct np_auto_input in = {0};
        struct np_auto_choice out;
        double demand = c->hogs * fp->hog_mbps;
        bool sensitive = false;
        for (int j = 0; j < c->njobs; j++)
            demand += j != i ? c->jobs[j].row->bw_mbps : 0;
        in.user_given = told_sensitive(c->jobs[i].row, labels, &sensitive);
        in.user = sensitive ? NP_SENSITIVITY_HIGH : NP_SENSITIVITY_LOW;
        in.task_nodes = 0x1;
        in.allowed_nodes = 0xf;
        in.advice = true;
        for (unsigned n = 0; n < 4; n++) {
            const double d = n == 0 ? demand : 0;
            in.node[n].known = true;
            in.node[n].utilisation = d / capacity;
            in.node[n].loaded = np_auto_loaded(d * 1e6, capacity * 1e6, threshold);
        }
        np_auto_choose(&in, &out);
        mask |= out.policy != NP_POLICY_LOCAL ? 1u << i : 0;
    }
    return mask;
}

/* The jobs' slowdowns with the jobs of @p mask interleaved over nodes 0 and 1; their log sum. */
static double solve_mask(const struct fit_params *fp, struct fit_case *c, unsigned mask, double *s)
{
    struct fit_cache cache = {.n = 0};
    double sum = 0;

    for (int i = 0; i < c->njobs; i++)
        c->jobs[i].share0 = (mask & (1u << i)) ? 0.5 : 1.0;
    if (fit_solve(fp, c, &cache, s) < 0)
        return NAN;
    for (int i = 0; i < c->njobs; i++)
        sum += log(s[i]);
    return sum;
}

static void score_scenario(const struct fit_params *fp, const struct fit_case *measured_local,
                           const struct fit_set *set, const char *labels, struct mix_tally *t)
{
    struct fit_case c = *measured_local;
    double s_auto[FIT_MIX_JOBS], s[FIT_MIX_JOBS], best = INFINITY;
    const unsigned all = (1u << c.njobs) - 1, chosen = auto_mask(fp, &c, labels);
    unsigned oracle = 0;

    for (unsigned mask = 0; mask <= all; mask++) {
        const double sum = solve_mask(fp, &c, mask, s);
        if (sum < best - 1e-12) {
            best = sum;
            oracle = mask;
        }
    }
    t->log_oracle += best;
    t->log_local += solve_mask(fp, &c, 0, s);
    for (int k = 0; k < set->ncases; k++) { /* the held-out model against the measured run */
        const struct fit_case *m = &set->cases[k];
        if (m->mix == c.mix && m->conf == c.conf) {
            t->abs_err += fabs(log(s[m->target] / m->measured));
            t->bias += log(s[m->target] / m->measured);
        }
    }
    t->log_inter += solve_mask(fp, &c, all, s);
    t->log_auto += solve_mask(fp, &c, chosen, s_auto);
    for (int i = 0; i < c.njobs; i++) {
        t->auto_best += !((chosen ^ oracle) & (1u << i));
        t->auto_interleaved += !!(chosen & (1u << i));
    }
    t->jobs += (unsigned)c.njobs;
}

static void add_tally(struct mix_tally *to, const struct mix_tally *t)
{
    to->log_auto += t->log_auto;
    to->log_local += t->log_local;
    to->log_inter += t->log_inter;
    to->log_oracle += t->log_oracle;
    to->abs_err += t->abs_err;
    to->bias += t->bias;
    to->jobs += t->jobs;
    to->auto_best += t->auto_best;
    to->auto_interleaved += t->auto_interleaved;
}

static void print_tally(const char *name, const struct mix_tally *t, bool json, bool last)
{
    const double n = t->jobs ? t->jobs : 1;
    const double a = exp(t->log_auto / n), l = exp(t->log_local / n), i = exp(t->log_inter / n);
    const double o = exp(t->log_oracle / n);

    if (json)
        printf("    \"%s\": {\"jobs\": %u, \"auto\": %.4f, \"local\": %.4f, \"interleave\": "
               "%.4f, \"oracle\": %.4f, \"auto_over_oracle\": %.4f, \"auto_best\": %u, "
               "\"auto_interleaved\": %u, \"heldout_local_abs_ln_error\": %.4f, "
               "\"heldout_local_bias\": %+.4f}%s\n",
               name, t->jobs, a, l, i, o, a / o, t->auto_best, t->auto_interleaved, t->abs_err / n,
               t->bias / n, last ? "" : ",");
    else
        printf("%-12s %4u %8.4f %8.4f %10.4f %8.4f %8.4f %5u/%-3u %5u %9.3f %+7.3f\n", name,
               t->jobs, a, l, i, o, a / o, t->auto_best, t->jobs, t->auto_interleaved,
               t->abs_err / n, t->bias / n);
}

int score_mixes(const char *dir, const char *labels, bool json)
{
    static struct fit_set set;
    struct np_model model;
    struct fit_params fp[FIT_NMIXES];
    struct mix_tally per[FIT_NMIXES][2], saturated = {0}, overall = {0};

    if (fit_load_dir(&set, &model, dir, "auto_score") < 0)
        return 1;
    memset(per, 0, sizeof(per));
    for (int x = 0; x < FIT_NMIXES; x++) {
        fit_params_sandman(&fp[x]);
        fit_search(&fp[x], &set, x);
        for (int hogs = 0; hogs < 2; hogs++)
            for (int i = 0; i < set.ncases; i++)
                if (set.cases[i].mix == x && set.cases[i].conf == (hogs ? 4 : 1) &&
                    set.cases[i].target == 0) {
                    score_scenario(&fp[x], &set.cases[i], &set, labels, &per[x][hogs]);
                    break;
                }
    }
    if (json)
        printf("{\n  \"labels\": \"%s\", \"held_out\": \"each mix, all 6 configurations\",\n"
               "  \"scenarios\": {\n",
               labels);
    else {
        printf("labels %s; each mix scored under a fit without it (its 6 configurations)\n",
               labels);
        for (int x = 0; x < FIT_NMIXES; x++)
            printf("fit without mix %c: mc_capacity %.0f MB/s, hog %.0f MB/s, remote_latency "
                   "%.3f (loaded above %.1f%%), link %.0f, llc_gain %.3f, llc_half %.0f, omp "
                   "%.3f\n",
                   'A' + x, fp[x].model.mc_capacity_mbps, fp[x].hog_mbps,
                   fp[x].model.remote_latency, 100 * np_auto_threshold(fp[x].model.remote_latency),
                   fp[x].model.link_capacity_mbps, fp[x].model.llc_gain, fp[x].model.llc_half_mbps,
                   fp[x].model.omp_exponent);
        printf("%-12s %4s %8s %8s %10s %8s %8s %9s %5s %9s %7s\n", "scenario", "jobs", "auto",
               "local", "interleave", "oracle", "auto/or", "auto best", "inter", "local err",
               "bias");
    }
    for (int x = 0; x < FIT_NMIXES; x++)
        for (int hogs = 0; hogs < 2; hogs++) {
            char name[32];
            snprintf(name, sizeof(name), "%c %s", 'A' + x, hogs ? "8 hogs" : "alone");
            print_tally(name, &per[x][hogs], json, false);
            add_tally(&overall, &per[x][hogs]);
            if (hogs)
                add_tally(&saturated, &per[x][hogs]);
        }
    print_tally("saturated", &saturated, json, false);
    print_tally("overall", &overall, json, true);
    if (json)
        printf("  }\n}\n");
    np_model_free(&model);
    return 0;
}
