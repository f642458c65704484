/*
 * The thesis's static runs as contention-model cases, their score and the parameters' fit
 * (contention_cases.h). Moved from contention_fit.c so auto_score can refit with a mix held out.
 */
#include "contention_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/tables.h"

const char *const fit_group_names[FIT_NGROUPS] = {"characterization (scenarios 1-5)",
                                                  "co-runner sweep (520.omnetpp_r)",
                                                  "static mixes (conf 1-6)"};

static double placement_share(const char *p)
{
    return !strcmp(p, "local") ? 1.0 : !strcmp(p, "remote") ? 0.0 : 0.5;
}

static FILE *open_data(const char *dir, const char *name)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (!(f = fopen(path, "r")))
        fprintf(stderr, "contention cases: cannot read %s\n", path);
    return f;
}

/* The next data line's comma fields (comments and the header skipped). */
static int next_fields(FILE *f, char *line, size_t len, char **fields, int max)
{
    while (fgets(line, (int)len, f)) {
        int n = 0;
        if (line[0] == '#' || !strncmp(line, "benchmark,", 10) || !strncmp(line, "sweep,", 6) ||
            !strncmp(line, "mix,", 4))
            continue;
        line[strcspn(line, "\r\n")] = '\0';
        for (char *p = line; n < max; n++) {
            fields[n] = p;
            if (!(p = strchr(p, ',')))
                return n + 1;
            *p++ = '\0';
        }
        return n;
    }
    return -1;
}

static const struct np_model_row *row_for(const struct np_model *m, const char *bench,
                                          const char *input)
{
    const struct np_model_row *r = np_model_find(m, bench, input);
    return r ? r : !strcmp(input, "0") ? np_model_find(m, bench, "") : NULL;
}

static struct fit_case *add_case(struct fit_set *set, enum fit_group group)
{
    struct fit_case *c;

    if (set->ncases >= FIT_MAX_CASES)
        return NULL;
    c = &set->cases[set->ncases++];
    memset(c, 0, sizeof(*c));
    c->group = group;
    c->mix = FIT_NO_MIX;
    return c;
}

static int load_characterization(struct fit_set *set, const char *dir, const struct np_model *m)
{
    char line[512], *f[16];
    FILE *in = open_data(dir, "thesis-characterization.csv");
    int n;

    if (!in)
        return -1;
    while ((n = next_fields(in, line, sizeof(line), f, 16)) >= 0) {
        const struct np_model_row *row = n >= 9 ? row_for(m, f[0], f[1]) : NULL;
        struct fit_case *c;
        /* scenario 1 local is the reference and remote fixes m: neither tests the model */
        if (!row || !(row->total_time_s > 0) || (!strcmp(f[2], "1") && strcmp(f[3], "interleave")))
            continue;
        if (!(c = add_case(set, FIT_CHARACTERIZATION)))
            break;
        c->jobs[0] = (struct fit_job){row, placement_share(f[3])};
        c->njobs = 1;
        c->hogs = atoi(f[5]);
        c->hog_node = c->hog_mem_node = !strcmp(f[4], "node1");
        c->measured = atof(f[6]) / row->total_time_s;
        snprintf(c->label, sizeof(c->label), "s%s %s %s/%s", f[2], f[3], f[0], f[1]);
    }
    fclose(in);
    return 0;
}

static int load_sweeps(struct fit_set *set, const char *dir, const struct np_model *m)
{
    char line[512], *f[8];
    FILE *in = open_data(dir, "thesis-sweeps.csv");
    int n;

    if (!in)
        return -1;
    while ((n = next_fields(in, line, sizeof(line), f, 8)) >= 0) {
        const struct np_model_row *row = n >= 5 ? row_for(m, f[1], "0") : NULL;
        struct fit_case *c;
        if (!row || strncmp(f[0], "stress", 6) || atoi(f[3]) <= 0 ||
            !(c = add_case(set, FIT_SWEEP)))
            continue;
        c->jobs[0] = (struct fit_job){row, placement_share(f[2])};
        c->njobs = 1;
        c->hogs = atoi(f[3]);
        c->hog_node = c->hog_mem_node = !strcmp(f[0], "stress_2_4");
        c->measured = atof(f[4]) / row->total_time_s;
        snprintf(c->label, sizeof(c->label), "%s %s x%s", f[0], f[2], f[3]);
    }
    fclose(in);
    return 0;
}

static int load_mixes(struct fit_set *set, const char *dir, const struct np_model *m)
{
    char line[512], *f[8];
    FILE *in = open_data(dir, "thesis-static-mixes.csv");
    struct fit_job mix[FIT_NMIXES][7][FIT_MIX_JOBS];
    double time_s[FIT_NMIXES][7][FIT_MIX_JOBS];
    int n;

    if (!in)
        return -1;
    memset(mix, 0, sizeof(mix));
    while ((n = next_fields(in, line, sizeof(line), f, 8)) >= 0) {
        const int x = f[0][0] == 'B', conf = atoi(f[1]), pos = atoi(f[2]);
        const int base = (conf - 1) % 3 + 1; /* 4-6 lay memory out as 1-3 */
        if (n < 6 || conf < 1 || conf > 6 || pos < 0 || pos > 7)
            continue;
        mix[x][conf][pos].row = row_for(m, f[3], "0");
        mix[x][conf][pos].share0 = base == 2 ? (pos < 4 ? 0 : 1) : base == 3 ? (pos < 4) : 1;
        time_s[x][conf][pos] = atof(f[5]) / atof(f[4]);
    }
    fclose(in);
    for (int x = 0; x < FIT_NMIXES; x++)
        for (int conf = 1; conf <= 6; conf++)
            for (int t = 0; t < FIT_MIX_JOBS; t++) {
                struct fit_case *c;
                if (!mix[x][conf][t].row || !(c = add_case(set, FIT_MIXES)))
                    continue;
                memcpy(c->jobs, mix[x][conf], sizeof(c->jobs));
                c->njobs = FIT_MIX_JOBS;
                c->target = t;
                c->hogs = conf >= 4 ? 8 : 0;
                c->hog_node = 1;
                c->hog_mem_node = 0;
                c->mix = x;
                c->conf = conf;
                c->measured = time_s[x][conf][t];
                snprintf(c->label, sizeof(c->label), "mix %c conf %d %s", 'A' + x, conf,
                         mix[x][conf][t].row->benchmark);
            }
    return 0;
}

int fit_load(struct fit_set *set, const char *dir, const struct np_model *model)
{
    return load_characterization(set, dir, model) < 0 || load_sweeps(set, dir, model) < 0 ||
                   load_mixes(set, dir, model) < 0
               ? -1
               : 0;
}

int fit_load_dir(struct fit_set *set, struct np_model *model, const char *dir, const char *who)
{
    struct np_err err = {0};
    char path[512];

    snprintf(path, sizeof(path), "%s/sandman-spec2017.csv", dir);
    if (np_model_load(path, model, &err) < 0) {
        fprintf(stderr, "%s: %s\n", who, err.msg);
        return -1;
    }
    if (fit_load(set, dir, model) < 0) {
        np_model_free(model);
        return -1;
    }
    return 0;
}

void fit_params_sandman(struct fit_params *fp)
{
    np_contention_params_sandman(&fp->model);
    fp->hog_mbps = NP_CONTENTION_SANDMAN_HOG_MBPS;
}

static double memory_share(const struct np_contention_params *p, struct fit_cache *cache,
                           const struct np_model_row *row)
{
    for (int i = 0; i < cache->n; i++)
        if (cache->row[i] == row)
            return cache->m[i];
    if (cache->n == (int)(sizeof(cache->row) / sizeof(cache->row[0])))
        return np_contention_memory_share(p, row);
    cache->row[cache->n] = row;
    cache->m[cache->n] = np_contention_memory_share(p, row);
    return cache->m[cache->n++];
}

int fit_solve(const struct fit_params *fp, const struct fit_case *c, struct fit_cache *cache,
              double *s)
{
    const struct np_contention_params *p = &fp->model;
    struct np_contention_job jobs[FIT_MIX_JOBS + 1];
    double all[FIT_MIX_JOBS + 1];
    int n = 0;

    memset(jobs, 0, sizeof(jobs));
    for (int i = 0; i < c->njobs; i++, n++) {
        const struct np_model_row *row = c->jobs[i].row;
        const bool omp = np_contention_is_openmp(row->benchmark);
        jobs[n].cpu_node = 0;
        jobs[n].share[0] = c->jobs[i].share0;
        jobs[n].share[1] = 1 - c->jobs[i].share0;
        jobs[n].bw_mbps = row->bw_mbps;
        jobs[n].memory_share = memory_share(p, cache, row);
        jobs[n].threads = omp ? p->cpus_per_node : 1;
        jobs[n].multi_threaded = omp;
    }
    if (c->hogs > 0) {
        jobs[n].cpu_node = (unsigned)c->hog_node;
        jobs[n].share[c->hog_mem_node] = 1.0;
        jobs[n].bw_mbps = c->hogs * fp->hog_mbps;
        jobs[n].threads = (unsigned)c->hogs;
        jobs[n].fixed_demand = true;
        n++;
    }
    if (np_contention_solve(p, 2, jobs, (size_t)n, NULL, all, NULL) < 0)
        return -1;
    memcpy(s, all, (size_t)c->njobs * sizeof(*s));
    return 0;
}

double fit_score(const struct fit_params *fp, const struct fit_set *set, int held_out,
                 double *group_err, double *group_bias)
{
    struct fit_cache cache = {.n = 0};
    int count[FIT_NGROUPS] = {0};
    double total = 0;

    for (int g = 0; g < FIT_NGROUPS; g++)
        group_err[g] = group_bias[g] = 0;
    for (int i = 0; i < set->ncases; i++) {
        const struct fit_case *c = &set->cases[i];
        double s[FIT_MIX_JOBS], e;
        if (held_out != FIT_NO_MIX && c->mix == held_out)
            continue;
        e = fit_solve(fp, c, &cache, s) < 0 ? NAN : log(s[c->target] / c->measured);
        group_err[c->group] += isfinite(e) ? fabs(e) : 10;
        group_bias[c->group] += isfinite(e) ? e : 0;
        count[c->group]++;
    }
    for (int g = 0; g < FIT_NGROUPS; g++) {
        group_err[g] /= count[g] ? count[g] : 1;
        group_bias[g] /= count[g] ? count[g] : 1;
        total += group_err[g] / FIT_NGROUPS;
    }
    return total;
}

static double objective(const struct fit_params *fp, const struct fit_set *set, int held_out)
{
    double e[FIT_NGROUPS], b[FIT_NGROUPS];
    return fit_score(fp, set, held_out, e, b);
}

/* Each parameter times or divided by a step while it helps, steps halving. */
void fit_search(struct fit_params *fp, const struct fit_set *set, int held_out)
{
    struct np_contention_params *p = &fp->model;
    double *knobs[] = {&p->mc_capacity_mbps, &p->link_capacity_mbps, &p->remote_latency,
                       &p->llc_gain,         &p->llc_half_mbps,      &p->omp_exponent,
                       &fp->hog_mbps};
    const double lo[] = {2000, 1000, 1.0, 0, 100, 0, 100};
    const double hi[] = {200000, 100000, 3.0, 20, 100000, 1, 50000};
    const size_t nk = sizeof(knobs) / sizeof(knobs[0]);
    double best = objective(fp, set, held_out);

    for (double step = 1.5; step > 1.01; step = sqrt(step))
        for (int pass = 0; pass < 4; pass++)
            for (size_t k = 0; k < nk; k++)
                for (int dir = 0; dir < 2; dir++)
                    for (;;) {
                        const double old = *knobs[k];
                        double v = dir ? old / step : old * step, e;
                        if (k == 3 && old == 0)
                            v = dir ? 0 : 0.1;
                        if (v < lo[k] || v > hi[k])
                            break;
                        *knobs[k] = v;
                        e = objective(fp, set, held_out);
                        if (e < best - 1e-9) {
                            best = e;
                            continue;
                        }
                        *knobs[k] = old;
                        break;
                    }
}
