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
 * prints them. The dynamic sets are not read. Deterministic.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/contention.h"
#include "numaplace/tables.h"

#define MAX_CASES 2048
#define MAX_JOBS  10
#define NGROUPS   3

static const char *const group_names[NGROUPS] = {"characterization (scenarios 1-5)",
                                                 "co-runner sweep (520.omnetpp_r)",
                                                 "static mixes (conf 1-6)"};

/* One measured case: up to 8 jobs on node 0's CPUs, plus hogs; the ratio of job 0 (or, for a
 * mix, of every job: one case per job, sharing the layout) to its alone time. */
struct job_in {
    const struct np_model_row *row;
    double share0; /* share of its accesses on node 0 (the rest on node 1) */
};
struct test_case {
    int group;
    struct job_in jobs[8];
    int njobs, target;
    int hogs, hog_node, hog_mem_node;
    double measured;
    char label[64];
};

static struct test_case cases[MAX_CASES];
static int ncases;

/* The stressor's demand per instance (MB/s): a fit parameter beside the model's own. */
static double hog_mbps = 3000;

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
        fprintf(stderr, "contention_fit: cannot read %s\n", path);
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

static struct test_case *add_case(int group)
{
    if (ncases >= MAX_CASES)
        return NULL;
    memset(&cases[ncases], 0, sizeof(cases[0]));
    cases[ncases].group = group;
    return &cases[ncases++];
}

static int load_characterization(const char *dir, const struct np_model *m)
{
    char line[512], *f[16];
    FILE *in = open_data(dir, "thesis-characterization.csv");
    int n;

    if (!in)
        return -1;
    while ((n = next_fields(in, line, sizeof(line), f, 16)) >= 0) {
        const struct np_model_row *row = n >= 9 ? row_for(m, f[0], f[1]) : NULL;
        struct test_case *c;
        /* scenario 1 local is the reference and remote fixes m: neither tests the model */
        if (!row || !(row->total_time_s > 0) || (!strcmp(f[2], "1") && strcmp(f[3], "interleave")))
            continue;
        if (!(c = add_case(0)))
            break;
        c->jobs[0] = (struct job_in){row, placement_share(f[3])};
        c->njobs = 1;
        c->hogs = atoi(f[5]);
        c->hog_node = c->hog_mem_node = !strcmp(f[4], "node1");
        c->measured = atof(f[6]) / row->total_time_s;
        snprintf(c->label, sizeof(c->label), "s%s %s %s/%s", f[2], f[3], f[0], f[1]);
    }
    fclose(in);
    return 0;
}

static int load_sweeps(const char *dir, const struct np_model *m)
{
    char line[512], *f[8];
    FILE *in = open_data(dir, "thesis-sweeps.csv");
    int n;

    if (!in)
        return -1;
    while ((n = next_fields(in, line, sizeof(line), f, 8)) >= 0) {
        const struct np_model_row *row = n >= 5 ? row_for(m, f[1], "0") : NULL;
        struct test_case *c;
        if (!row || strncmp(f[0], "stress", 6) || atoi(f[3]) <= 0 || !(c = add_case(1)))
            continue;
        c->jobs[0] = (struct job_in){row, placement_share(f[2])};
        c->njobs = 1;
        c->hogs = atoi(f[3]);
        c->hog_node = c->hog_mem_node = !strcmp(f[0], "stress_2_4");
        c->measured = atof(f[4]) / row->total_time_s;
        snprintf(c->label, sizeof(c->label), "%s %s x%s", f[0], f[2], f[3]);
    }
    fclose(in);
    return 0;
}

static int load_mixes(const char *dir, const struct np_model *m)
{
    char line[512], *f[8];
    FILE *in = open_data(dir, "thesis-static-mixes.csv");
    struct job_in mix[2][7][8];
    double time_s[2][7][8];
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
    for (int x = 0; x < 2; x++)
        for (int conf = 1; conf <= 6; conf++)
            for (int t = 0; t < 8; t++) {
                struct test_case *c;
                if (!mix[x][conf][t].row || !(c = add_case(2)))
                    continue;
                memcpy(c->jobs, mix[x][conf], sizeof(c->jobs));
                c->njobs = 8;
                c->target = t;
                c->hogs = conf >= 4 ? 8 : 0;
                c->hog_node = 1;
                c->hog_mem_node = 0;
                c->measured = time_s[x][conf][t];
                snprintf(c->label, sizeof(c->label), "mix %c conf %d %s", 'A' + x, conf,
                         mix[x][conf][t].row->benchmark);
            }
    return 0;
}

/* m per model row under the current parameters (rows are few; cached per evaluation). */
struct m_cache {
    const struct np_model_row *row;
    double m;
};

static double memory_share(const struct np_contention_params *p, struct m_cache *cache, int *ncache,
                           const struct np_model_row *row)
{
    for (int i = 0; i < *ncache; i++)
        if (cache[i].row == row)
            return cache[i].m;
    cache[*ncache] = (struct m_cache){row, np_contention_memory_share(p, row)};
    return cache[(*ncache)++].m;
}

static double predict(const struct np_contention_params *p, const struct test_case *c,
                      struct m_cache *cache, int *ncache)
{
    struct np_contention_job jobs[MAX_JOBS];
    double s[MAX_JOBS];
    int n = 0;

    memset(jobs, 0, sizeof(jobs));
    for (int i = 0; i < c->njobs; i++, n++) {
        const struct np_model_row *row = c->jobs[i].row;
        const bool omp = np_contention_is_openmp(row->benchmark);
        jobs[n].cpu_node = 0;
        jobs[n].share[0] = c->jobs[i].share0;
        jobs[n].share[1] = 1 - c->jobs[i].share0;
        jobs[n].bw_mbps = row->bw_mbps;
        jobs[n].memory_share = memory_share(p, cache, ncache, row);
        jobs[n].threads = omp ? p->cpus_per_node : 1;
        jobs[n].multi_threaded = omp;
    }
    if (c->hogs > 0) {
        jobs[n].cpu_node = (unsigned)c->hog_node;
        jobs[n].share[c->hog_mem_node] = 1.0;
        jobs[n].bw_mbps = c->hogs * hog_mbps;
        jobs[n].threads = (unsigned)c->hogs;
        jobs[n].fixed_demand = true;
        n++;
    }
    if (np_contention_solve(p, 2, jobs, (size_t)n, NULL, s, NULL) < 0)
        return NAN;
    return s[c->target];
}

/* Per group: mean |ln(model / measured)|; returns the mean over groups. */
static double score(const struct np_contention_params *p, double *group_err, double *group_bias)
{
    struct m_cache cache[128];
    int ncache = 0, count[NGROUPS] = {0};
    double total = 0;

    for (int g = 0; g < NGROUPS; g++)
        group_err[g] = group_bias[g] = 0;
    for (int i = 0; i < ncases; i++) {
        const double e = log(predict(p, &cases[i], cache, &ncache) / cases[i].measured);
        group_err[cases[i].group] += isfinite(e) ? fabs(e) : 10;
        group_bias[cases[i].group] += isfinite(e) ? e : 0;
        count[cases[i].group]++;
    }
    for (int g = 0; g < NGROUPS; g++) {
        group_err[g] /= count[g] ? count[g] : 1;
        group_bias[g] /= count[g] ? count[g] : 1;
        total += group_err[g] / NGROUPS;
    }
    return total;
}

static double objective(const struct np_contention_params *p)
{
    double e[NGROUPS], b[NGROUPS];
    return score(p, e, b);
}

/* Coordinate descent: each parameter times or divided by a step while it helps, steps halving. */
static void fit(struct np_contention_params *p)
{
    double *knobs[] = {
        &p->mc_capacity_mbps, &p->link_capacity_mbps, &p->remote_latency, &p->llc_gain,
        &p->llc_half_mbps,    &p->omp_exponent,       &hog_mbps};
    const double lo[] = {2000, 1000, 1.0, 0, 100, 0, 100};
    const double hi[] = {200000, 100000, 3.0, 20, 100000, 1, 50000};
    const size_t nk = sizeof(knobs) / sizeof(knobs[0]);
    double best = objective(p);

    for (double step = 1.5; step > 1.01; step = sqrt(step))
        for (int pass = 0; pass < 4; pass++)
            for (size_t k = 0; k < nk; k++)
                for (int dir = 0; dir < 2; dir++) {
                    for (;;) {
                        const double old = *knobs[k];
                        double v = dir ? old / step : old * step, e;
                        if (k == 3 && old == 0)
                            v = dir ? 0 : 0.1;
                        if (v < lo[k] || v > hi[k])
                            break;
                        *knobs[k] = v;
                        e = objective(p);
                        if (e < best - 1e-9) {
                            best = e;
                            continue;
                        }
                        *knobs[k] = old;
                        break;
                    }
                }
}

int main(int argc, char **argv)
{
    const char *dir = "data";
    bool do_fit = false, verbose = false;
    struct np_model model;
    struct np_contention_params p;
    struct np_err err = {0};
    char path[512];
    double e[NGROUPS], b[NGROUPS];

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
    snprintf(path, sizeof(path), "%s/sandman-spec2017.csv", dir);
    if (np_model_load(path, &model, &err) < 0) {
        fprintf(stderr, "contention_fit: %s\n", err.msg);
        return 1;
    }
    if (load_characterization(dir, &model) < 0 || load_sweeps(dir, &model) < 0 ||
        load_mixes(dir, &model) < 0)
        return 1;
    np_contention_params_sandman(&p);
    hog_mbps = NP_CONTENTION_SANDMAN_HOG_MBPS;
    if (do_fit)
        fit(&p);
    score(&p, e, b);
    printf("contention_fit: %d static cases from %s/ (the dynamic sets are not read)%s\n", ncases,
           dir, do_fit ? "; parameters fit here" : "; np_contention_params_sandman");
    printf("parameters: mc_capacity_mbps %.0f, link_capacity_mbps %.0f, remote_latency %.3f, "
           "llc_gain %.3f, llc_half_mbps %.0f, omp_exponent %.3f; stress-ng hog %.0f MB/s\n",
           p.mc_capacity_mbps, p.link_capacity_mbps, p.remote_latency, p.llc_gain, p.llc_half_mbps,
           p.omp_exponent, hog_mbps);
    printf("\n| group | cases | mean abs ln error | as a factor | bias (mean ln) "
           "|\n|---|---|---|---|---|\n");
    for (int g = 0; g < NGROUPS; g++) {
        int n = 0;
        for (int i = 0; i < ncases; i++)
            n += cases[i].group == g;
        printf("| %s | %d | %.3f | x%.2f | %+.3f |\n", group_names[g], n, e[g], exp(e[g]), b[g]);
    }
    if (verbose) {
        struct m_cache cache[128];
        int ncache = 0;
        printf("\n| case | measured | model |\n|---|---|---|\n");
        for (int i = 0; i < ncases; i++)
            printf("| %s | %.3f | %.3f |\n", cases[i].label, cases[i].measured,
                   predict(&p, &cases[i], cache, &ncache));
    }
    np_model_free(&model);
    return 0;
}
