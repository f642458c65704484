/*
 * An order by predicted effect against best-plus, scored honestly (issue 16): the sensitivity
 * model that makes the predictions is calibrated without the benchmarks of the mix being scored
 * (leave-set-out cross-validation), and also on the whole table (in-sample); both are reported,
 * beside the shipped orders, with the measured slowdown as an oracle bound.
 *
 *   order_cv [CSV] [--mixes N]
 *
 * Mixes as bench/orders_sim: 8 jobs drawn (seeded) from every row of the table, CPUs on a random
 * node of 4, memory on node 0 and sometimes partly at home; one request moves a quarter, half or
 * three quarters of node 0's pages to node 1. Each request is carried out both ways: numaplace's
 * (the last job moved in part) and the thesis's (every chosen job's whole share on the source
 * node moves; the request size is a lower bound). A case's figure is the geometric mean over its
 * jobs of the modelled slowdown after the move (the thesis's eq. 6.1 scale); the table gives its
 * ratio to best-plus's, as a geometric mean over cases, with the cases won and lost.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/sensitivity.h"
#include "numaplace/sim.h"

#define NJOBS       8
#define NNODES      4
#define MAXCOLS     32
#define RANDOM_REPS 20

/* Where the orders' predictions come from. */
enum calibration { CAL_CV, CAL_CV_TWINS, CAL_IN_SAMPLE, CAL_ORACLE, CAL_COUNT };
static const char *const calibration_names[CAL_COUNT] = {"CV (set's benchmarks left out)",
                                                         "CV (and their _r/_s twins)", "in-sample",
                                                         "oracle (measured)"};

enum mode { MODE_PARTIAL, MODE_WHOLE, MODE_COUNT };
static const char *const mode_names[MODE_COUNT] = {"numaplace (last job in part)",
                                                   "thesis (whole shares)"};

struct column {
    const struct np_order_ops *ops;
    enum calibration cal; /* for an order that uses predictions */
    char name[64];
};

struct tally {
    double log_ratio_sum; /* ln(figure / best-plus's) over cases */
    unsigned won, lost, cases, unpredicted;
};

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* "619.lbm_s" -> "lbm": the code both suites share. */
static void stem_of(const char *benchmark, char *out, size_t size)
{
    const char *dot = strchr(benchmark, '.');
    const char *start = dot ? dot + 1 : benchmark;
    size_t len = strcspn(start, "_");

    snprintf(out, size, "%.*s", (int)(len < size ? len : size - 1), start);
}

static bool in_mix(const struct np_model_row *r, const struct np_sim_job *jobs, size_t n,
                   bool twins)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(r->benchmark, jobs[i].row->benchmark) == 0)
            return true;
        if (twins) {
            char a[32], b[32];
            stem_of(r->benchmark, a, sizeof(a));
            stem_of(jobs[i].row->benchmark, b, sizeof(b));
            if (strcmp(a, b) == 0)
                return true;
        }
    }
    return false;
}

/* The product's model (features and fit) on @p table without the mix's benchmarks. */
static int fit_without(struct np_sens_model *m, const struct np_model *table,
                       const struct np_sim_job *jobs, size_t n, bool twins, bool leave_out)
{
    struct np_model kept = {.rows = calloc(table->count, sizeof(*kept.rows))};
    struct np_err err = {0};
    int rc;

    if (!kept.rows)
        return -1;
    for (size_t i = 0; i < table->count; i++)
        if (!leave_out || !in_mix(&table->rows[i], jobs, n, twins))
            kept.rows[kept.count++] = table->rows[i];
    rc = np_sensitivity_fit(m, &kept, NP_SENS_FEATURES_DEFAULT, 0, NULL, &err);
    if (rc < 0)
        fprintf(stderr, "order_cv: %s\n", err.msg);
    free(kept.rows);
    return rc;
}

/* Each job's prediction as the daemon would make it from the benchmark's counters. */
static int predict(struct np_sim_job *jobs, size_t n, const struct np_model *table,
                   enum calibration cal)
{
    struct np_sens_model m;

    if (cal != CAL_ORACLE &&
        fit_without(&m, table, jobs, n, cal == CAL_CV_TWINS, cal != CAL_IN_SAMPLE) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const struct np_model_row *r = jobs[i].row;
        const struct np_sens_inputs in = {r->ipc > 0 ? 1.0 / r->ipc : NAN, r->llc_mpki, r->bw_mbps,
                                          r->tlb_mpki, NULL};
        double s = r->remote;
        jobs[i].has_prediction =
            cal == CAL_ORACLE || np_sensitivity_predict(&m, &in, &s, NULL) == 0;
        jobs[i].predicted_remote = jobs[i].has_prediction ? s : NAN;
    }
    return 0;
}

/* One request under @p ops, carried out in @p mode; returns the candidates without prediction. */
static size_t carry_out(struct np_sim_job *jobs, size_t n, const struct np_order_ops *ops,
                        uint64_t seed, unsigned src, unsigned dst, uint64_t pages, enum mode mode)
{
    struct np_job_view views[NJOBS];
    struct np_node_view view = {.nnodes = NNODES, .jobs = views, .njobs = n};
    struct np_request request = {.src = src, .dst = dst, .pages = pages, .target_job = -1};
    struct np_plan plan;
    size_t unpredicted;

    memset(views, 0, sizeof(views));
    for (size_t i = 0; i < n; i++) {
        views[i].id = i;
        views[i].job_class = jobs[i].job_class;
        views[i].cpu_nodes = 1ull << jobs[i].cpu_node;
        views[i].bandwidth = jobs[i].row->bw_mbps * 1e6;
        views[i].predicted_remote = jobs[i].predicted_remote;
        views[i].has_prediction = jobs[i].has_prediction;
        memcpy(views[i].pages_on_node, jobs[i].pages, sizeof(views[i].pages_on_node));
    }
    if (np_plan_make(&view, &request, ops, seed, pages, &plan) < 0)
        return 0;
    for (size_t s = 0; s < plan.nsteps; s++) {
        const struct np_candidate *c = &plan.cands[plan.steps[s].index];
        struct np_sim_job *job = &jobs[c->job_index];
        const uint64_t moved = mode == MODE_WHOLE ? c->pages_on_src : plan.steps[s].pages;
        job->pages[src] -= moved;
        job->pages[dst] += moved;
    }
    unpredicted = plan.unpredicted;
    np_plan_fini(&plan);
    return unpredicted;
}

static double geomean_slowdown(const struct np_sim_job *jobs, size_t n)
{
    double sum = 0;

    for (size_t i = 0; i < n; i++)
        sum += log(np_sim_slowdown(&jobs[i], NNODES));
    return exp(sum / (double)n);
}

int main(int argc, char **argv)
{
    const char *path = "data/sandman-spec2017.csv";
    static const double shares[] = {0.25, 0.5, 0.75};
    struct column cols[32];
    struct tally tally[MODE_COUNT][32];
    struct np_model model;
    struct np_err err = {0};
    size_t ncols = 0, best_plus = 0;
    int mixes = 1000;
    uint64_t state = 2020;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mixes") && i + 1 < argc)
            mixes = atoi(argv[++i]);
        else
            path = argv[i];
    }
    if (mixes <= 0) {
        fprintf(stderr, "order_cv: --mixes takes a positive count\n");
        return 2;
    }
    if (np_model_load(path, &model, &err) < 0) {
        fprintf(stderr, "order_cv: %s\n", err.msg);
        return 1;
    }
    for (size_t o = 0; np_order_at(o); o++) {
        cols[ncols] = (struct column){.ops = np_order_at(o)};
        snprintf(cols[ncols].name, sizeof(cols[ncols].name), "%s", np_order_at(o)->name);
        if (!strcmp(np_order_at(o)->name, "best-plus"))
            best_plus = ncols;
        ncols++;
    }
    for (size_t o = 0; np_order_candidate_at(o); o++)
        for (int c = 0; c < CAL_COUNT; c++) {
            cols[ncols] = (struct column){.ops = np_order_candidate_at(o), .cal = c};
            snprintf(cols[ncols].name, sizeof(cols[ncols].name), "%s, %s",
                     np_order_candidate_at(o)->name, calibration_names[c]);
            ncols++;
        }
    memset(tally, 0, sizeof(tally));

    for (int m = 0; m < mixes; m++) {
        struct np_sim_job base[NJOBS];
        uint64_t on_src = 0;
        memset(base, 0, sizeof(base));
        for (int j = 0; j < NJOBS; j++) {
            base[j].row = &model.rows[next(&state) % model.count];
            base[j].cpu_node = (unsigned)(next(&state) % NNODES);
            base[j].pages[0] = 50 + next(&state) % 200;
            if (next(&state) % 2)
                base[j].pages[base[j].cpu_node] += 50 + next(&state) % 100;
            on_src += base[j].pages[0];
        }
        for (size_t r = 0; r < sizeof(shares) / sizeof(shares[0]); r++) {
            const uint64_t want = (uint64_t)(shares[r] * (double)on_src);
            for (int mode = 0; mode < MODE_COUNT; mode++) {
                double fig[32];
                for (size_t c = 0; c < ncols; c++) {
                    const bool random = !strcmp(cols[c].ops->name, "random");
                    const int reps = random ? RANDOM_REPS : 1;
                    double log_sum = 0;
                    for (int k = 0; k < reps; k++) {
                        struct np_sim_job jobs[NJOBS];
                        memcpy(jobs, base, sizeof(jobs));
                        if (cols[c].ops->uses_prediction &&
                            predict(jobs, NJOBS, &model, cols[c].cal) < 0)
                            return 1;
                        tally[mode][c].unpredicted += (unsigned)carry_out(
                            jobs, NJOBS, cols[c].ops, (uint64_t)k + 1, 0, 1, want, mode);
                        log_sum += log(geomean_slowdown(jobs, NJOBS));
                    }
                    fig[c] = exp(log_sum / reps);
                }
                for (size_t c = 0; c < ncols; c++) {
                    struct tally *t = &tally[mode][c];
                    t->log_ratio_sum += log(fig[c] / fig[best_plus]);
                    t->won += fig[c] < fig[best_plus] - 1e-12;
                    t->lost += fig[c] > fig[best_plus] + 1e-12;
                    t->cases++;
                }
            }
        }
    }

    printf("order_cv: %d mixes x %zu request sizes, %d jobs on %d nodes, model %s (%zu rows)\n",
           mixes, sizeof(shares) / sizeof(shares[0]), NJOBS, NNODES, path, model.count);
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        printf("\n%s: geometric-mean slowdown relative to best-plus (below 1: better)\n",
               mode_names[mode]);
        printf("| order, predictions from | vs best-plus | cases better | cases worse |\n");
        printf("|---|---|---|---|\n");
        for (size_t c = 0; c < ncols; c++) {
            const struct tally *t = &tally[mode][c];
            printf("| %s | %.5f | %.1f%% | %.1f%% |\n", cols[c].name,
                   exp(t->log_ratio_sum / t->cases), 100.0 * t->won / t->cases,
                   100.0 * t->lost / t->cases);
        }
    }
    np_model_free(&model);
    return 0;
}
