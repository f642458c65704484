/*
 * An order by predicted effect against best-plus, scored honestly: the sensitivity
 * model that makes the predictions is calibrated without the benchmarks of the mix being scored
 * (leave-set-out cross-validation), and also on the whole table (in-sample); both are reported,
 * beside the shipped orders, with the measured slowdown as an oracle bound.
 *
 *   order_cv [--model CSV] [--footprints CSV] [--footprint-scale X] [--seeds N]
 *            [--sigma-footprint S] [--sigma-colocation S] [--workers N] [--noise-only] [--cv]
 *            [--json]
 *            [SCENARIO.json...]
 *   order_cv [--model CSV] --mixes N         random mixes
 *   order_cv [--model CSV] --tiered SEEDS    random mixes demoted on a tiered machine
 *                                            (order_cv_tiers.c)
 *
 * Defaults: data/sandman-spec2017.csv, data/spec2017-footprints.csv,
 * data/scenarios/thesis-set-1..5; 20 noise seeds, sigmas 0.07 and 0.105 (order_cv_noise.c says
 * where they come from). --cv runs the contention model with bench/replay's cross-validated hot
 * law and mover rate (replay_cv.h: each set under the fold holding it out). --noise-only skips
 * the deterministic tables; --json prints only the
 * noise table, as JSON.
 *
 * Mixes as bench/orders_sim: 8 jobs drawn (seeded) from every row of the table, CPUs on a random
 * node of 4, memory on node 0 and sometimes partly at home; one request moves a quarter, half or
 * three quarters of node 0's pages to node 1. Each request is carried out both ways: numaplace's
 * (the last job moved in part) and the thesis's (every chosen job's whole share on the source
 * node moves; the request size is a lower bound). A case's figure is the geometric mean over its
 * jobs of the modelled slowdown after the move (the thesis's eq. 6.1 scale); the table gives its
 * ratio to best-plus's, as a geometric mean over cases, with the cases won and lost.
 *
 * The sets: the thesis's experiment sets (data/scenarios/thesis-set-*.json) replayed over time
 * (numaplace/replay.h), both ways of carrying out requests; a set's figure under an order is the
 * thesis's eq. 6.1, the geometric mean over its jobs of each job's time relative to the same job
 * in the set's Best run (Random: the mean of three runs, as the thesis); the mean is over sets;
 * the last column, the sum of the set's job times relative to best-plus's, is the mean over sets.
 * Three times: the model alone, with the replay's co-location factors (NP_REPLAY_WITH_CORUN), and
 * on the calibrated contention model (numaplace/contention.h) with the thesis's manager loop, as
 * bench/replay runs it. Ablations of `predicted`: every job predicted 2.0x, the CV
 * predictions shuffled across the set's jobs (mean over 20 seeds) and no prediction at all (the
 * per-page footprint rule alone). Then every order again on the contention model under noise
 * (order_cv_noise.c): footprints and co-location factors drawn per seed, a mean and a 95%
 * percentile interval over seeds of each order's eq. 6.1 relative to Best+'s.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/contention.h"
#include "numaplace/draw.h"
#include "numaplace/replay_scenario.h"
#include "numaplace/sensitivity.h"
#include "numaplace/sim.h"
#include "numaplace/tables.h"
#include "numaplace/scenario_file.h"

#include "order_cv.h"
#include "replay_cv.h"

#define NJOBS           8
#define NNODES          4
#define RANDOM_REPS     20
#define SET_RANDOM_RUNS 3

/* --footprint-scale: every job's footprint times this (the thesis's are lower bounds). */
static double footprint_scale = 1.0;

static const char *const calibration_names[CAL_COUNT] = {"CV (set's benchmarks left out)",
                                                         "CV (and their _r/_s twins)",
                                                         "in-sample",
                                                         "oracle (measured)",
                                                         "constant 2.0x (ablation)",
                                                         "CV shuffled across jobs (ablation)",
                                                         "none: footprint rule alone (ablation)"};
#define CONSTANT_PREDICTION 2.0
/* Shuffled predictions: the mean over this many seeds. */
#define SHUFFLE_SEEDS 20

/* The calibrated contention model and the thesis's manager loop, as bench/replay runs them. */
static struct np_contention_params contention;
bool order_cv_contention, order_cv_cross_validated;

enum mode { MODE_PARTIAL, MODE_WHOLE, MODE_COUNT };
static const char *const mode_names[MODE_COUNT] = {"numaplace (last job in part)",
                                                   "thesis (whole shares)"};

struct tally {
    double log_ratio_sum; /* ln(figure / best-plus's) over cases */
    unsigned won, lost, cases, unpredicted;
};

/* "619.lbm_s" -> "lbm": the code both suites share. */
static void stem_of(const char *benchmark, char *out, size_t size)
{
    const char *dot = strchr(benchmark, '.');
    const char *start = dot ? dot + 1 : benchmark;
    size_t len = strcspn(start, "_");

    snprintf(out, size, "%.*s", (int)(len < size ? len : size - 1), start);
}

static bool in_mix(const struct np_model_row *r, const struct np_model_row *const *mix, size_t n,
                   bool twins)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(r->benchmark, mix[i]->benchmark) == 0)
            return true;
        if (twins) {
            char a[32], b[32];
            stem_of(r->benchmark, a, sizeof(a));
            stem_of(mix[i]->benchmark, b, sizeof(b));
            if (strcmp(a, b) == 0)
                return true;
        }
    }
    return false;
}

/* The product's model (features and fit) on @p table without the mix's benchmarks. */
static int fit_without(struct np_sens_model *m, const struct np_model *table,
                       const struct np_model_row *const *mix, size_t n, bool twins, bool leave_out)
{
    struct np_model kept = {.rows = calloc(table->count, sizeof(*kept.rows))};
    struct np_err err = {0};
    int rc;

    if (!kept.rows)
        return -1;
    for (size_t i = 0; i < table->count; i++)
        if (!leave_out || !in_mix(&table->rows[i], mix, n, twins))
            kept.rows[kept.count++] = table->rows[i];
    rc = np_sensitivity_fit(m, &kept, NP_SENS_FEATURES_DEFAULT, 0, NULL, &err);
    if (rc < 0)
        fprintf(stderr, "order_cv: %s\n", err.msg);
    free(kept.rows);
    return rc;
}

/* The model @p cal gives for a mix of @p n rows (none for the oracle). */
static int calibrate(struct np_sens_model *m, const struct np_model *table,
                     const struct np_model_row *const *mix, size_t n, enum calibration cal)
{
    memset(m, 0, sizeof(*m));
    return cal == CAL_ORACLE
               ? 0
               : fit_without(m, table, mix, n, cal == CAL_CV_TWINS, cal != CAL_IN_SAMPLE);
}

/* A job's prediction as the daemon would make it from the benchmark's counters. */
static bool predict_row(const struct np_sens_model *m, const struct np_model_row *r,
                        enum calibration cal, double *slowdown)
{
    const struct np_sens_inputs in = {r->ipc > 0 ? 1.0 / r->ipc : NAN, r->llc_mpki, r->bw_mbps,
                                      r->tlb_mpki, NULL};

    *slowdown = r->remote;
    if (cal == CAL_CONSTANT)
        *slowdown = CONSTANT_PREDICTION;
    if (cal == CAL_NONE)
        return false;
    return cal == CAL_ORACLE || cal == CAL_CONSTANT ||
           np_sensitivity_predict(m, &in, slowdown, NULL) == 0;
}

/* The predictions (and whether each exists) permuted by np_draw_permutation(@p seed). */
static int shuffle_predictions(double *value, bool *has, size_t n, uint64_t seed)
{
    size_t *perm = calloc(n ? n : 1, sizeof(*perm));
    double *v = calloc(n ? n : 1, sizeof(*v));
    bool *h = calloc(n ? n : 1, sizeof(*h));
    const int rc = perm && v && h ? 0 : -1;

    if (rc == 0) {
        np_draw_permutation(perm, n, seed);
        for (size_t i = 0; i < n; i++) {
            v[i] = value[perm[i]];
            h[i] = has[perm[i]];
        }
        memcpy(value, v, n * sizeof(*v));
        memcpy(has, h, n * sizeof(*h));
    }
    free(perm);
    free(v);
    free(h);
    return rc;
}

int order_cv_predict_jobs(struct np_sim_job *jobs, size_t n, const struct np_model *table,
                          enum calibration cal)
{
    const struct np_model_row *mix[NJOBS] = {NULL};
    struct np_sens_model m;

    if (n > NJOBS)
        return -1;
    for (size_t i = 0; i < n; i++)
        mix[i] = jobs[i].row;
    if (calibrate(&m, table, mix, n, cal) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        double s;
        jobs[i].has_prediction = predict_row(&m, jobs[i].row, cal, &s);
        jobs[i].predicted_remote = jobs[i].has_prediction ? s : NAN;
    }
    if (cal == CAL_SHUFFLED) {
        double v[NJOBS];
        bool h[NJOBS];
        for (size_t i = 0; i < n; i++) {
            v[i] = jobs[i].predicted_remote;
            h[i] = jobs[i].has_prediction;
        }
        if (shuffle_predictions(v, h, n, 1) < 0)
            return -1;
        for (size_t i = 0; i < n; i++) {
            jobs[i].predicted_remote = v[i];
            jobs[i].has_prediction = h[i];
        }
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

    for (size_t i = 0; i < n; i++)
        np_sim_job_view(&jobs[i], i, &views[i]);
    if (np_plan_make(&view, &request, ops, seed, pages, NP_PLAN_EXACT, &plan) < 0)
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

/* One column per order without predictions; one per calibration for an order with. */
static size_t add_columns(struct column *cols, size_t n, const struct np_order_ops *ops,
                          bool candidate)
{
    for (int c = 0; c < (ops->uses_prediction ? CAL_COUNT : 1); c++) {
        cols[n] = (struct column){.ops = ops, .cal = (enum calibration)c};
        if (ops->uses_prediction)
            snprintf(cols[n].name, sizeof(cols[n].name), "%s%s, %s", ops->name,
                     candidate ? " (bench only)" : "", calibration_names[c]);
        else
            snprintf(cols[n].name, sizeof(cols[n].name), "%s", ops->name);
        n++;
    }
    return n;
}

/* Every shipped order, then every candidate; best-plus's index. */
size_t order_cv_make_columns(struct column *cols, size_t *best_plus)
{
    size_t n = 0;

    for (size_t o = 0; np_order_at(o); o++) {
        if (!strcmp(np_order_at(o)->name, "best-plus"))
            *best_plus = n;
        n = add_columns(cols, n, np_order_at(o), false);
    }
    for (size_t o = 0; np_order_candidate_at(o); o++)
        n = add_columns(cols, n, np_order_candidate_at(o), true);
    return n;
}

static int run_mixes(const struct np_model *model, int mixes)
{
    static const double shares[] = {0.25, 0.5, 0.75};
    struct column cols[MAXCOLS];
    struct tally tally[MODE_COUNT][MAXCOLS];
    size_t best_plus = 0;
    const size_t ncols = order_cv_make_columns(cols, &best_plus);
    uint64_t state = 2020;

    memset(tally, 0, sizeof(tally));
    for (int m = 0; m < mixes; m++) {
        struct np_sim_job base[NJOBS];
        uint64_t on_src = 0;
        memset(base, 0, sizeof(base));
        for (int j = 0; j < NJOBS; j++) {
            base[j].row = &model->rows[np_draw_next(&state) % model->count];
            base[j].cpu_node = (unsigned)(np_draw_next(&state) % NNODES);
            base[j].pages[0] = 50 + np_draw_next(&state) % 200;
            if (np_draw_next(&state) % 2)
                base[j].pages[base[j].cpu_node] += 50 + np_draw_next(&state) % 100;
            on_src += base[j].pages[0];
        }
        for (size_t r = 0; r < sizeof(shares) / sizeof(shares[0]); r++) {
            const uint64_t want = (uint64_t)(shares[r] * (double)on_src);
            for (int mode = 0; mode < MODE_COUNT; mode++) {
                double fig[MAXCOLS];
                for (size_t c = 0; c < ncols; c++) {
                    const bool random = !strcmp(cols[c].ops->name, "random");
                    const int reps = random ? RANDOM_REPS : 1;
                    double log_sum = 0;
                    for (int k = 0; k < reps; k++) {
                        struct np_sim_job jobs[NJOBS];
                        memcpy(jobs, base, sizeof(jobs));
                        if (cols[c].ops->uses_prediction &&
                            order_cv_predict_jobs(jobs, NJOBS, model, cols[c].cal) < 0)
                            return 1;
                        tally[mode][c].unpredicted += (unsigned)carry_out(
                            jobs, NJOBS, cols[c].ops, (uint64_t)k + 1, 0, 1, want, (enum mode)mode);
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
    printf("order_cv: %d mixes x %zu request sizes, %d jobs on %d nodes, model %zu rows\n", mixes,
           sizeof(shares) / sizeof(shares[0]), NJOBS, NNODES, model->count);
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
    return 0;
}

/* ---- the replayed sets ---- */

/* Give the set's jobs the predictions of @p cal (the CV ones: without the set's benchmarks). */
int order_cv_predict_set(struct set *set, const struct np_model *table, enum calibration cal,
                         uint64_t seed)
{
    const size_t n = set->owned.set.njobs;
    const struct np_model_row **mix = calloc(n ? n : 1, sizeof(*mix));
    struct np_sens_model m;
    int rc;

    if (!mix)
        return -1;
    for (size_t i = 0; i < n; i++)
        mix[i] = set->owned.jobs[i].row;
    rc = calibrate(&m, table, mix, n, cal);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct np_replay_job *job = &set->owned.jobs[i];
        double s;
        job->has_prediction = predict_row(&m, job->row, cal, &s);
        job->predicted_remote = job->has_prediction ? s : 0.0;
    }
    if (rc == 0 && cal == CAL_SHUFFLED) {
        double *v = calloc(n ? n : 1, sizeof(*v));
        bool *h = calloc(n ? n : 1, sizeof(*h));
        rc = v && h ? 0 : -1;
        for (size_t i = 0; rc == 0 && i < n; i++) {
            v[i] = set->owned.jobs[i].predicted_remote;
            h[i] = set->owned.jobs[i].has_prediction;
        }
        if (rc == 0)
            rc = shuffle_predictions(v, h, n, seed);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            set->owned.jobs[i].predicted_remote = v[i];
            set->owned.jobs[i].has_prediction = h[i];
        }
        free(v);
        free(h);
    }
    free(mix);
    return rc;
}

/* One replay; the job times into @p times (the set's njobs). */
int order_cv_replay(const struct set *set, enum np_replay_way way, const struct np_order_ops *ops,
                    uint64_t seed, double *times)
{
    struct np_replay_config config;
    struct np_replay_result result;
    struct np_err err = {0};

    struct np_contention_params params = contention;
    const struct cv_fold *fold = order_cv_cross_validated ? cv_fold_of(set->name, false) : NULL;
    double mover = NP_REPLAY_LOOP_MOVER_BPS;

    if (fold) /* bench/replay's contention-cv: the fold holding the set out */
        cv_apply(&fold->fitted, &params, &mover);
    np_replay_config_sandman(&config, way);
    if (order_cv_contention) {
        np_replay_config_thesis_loop(&config, &params);
        config.mover_rate_bytes_s = mover;
    }
    if (np_replay_run(&set->owned.set, &config, ops, seed, &result, &err) < 0) {
        fprintf(stderr, "order_cv: %s: %s\n", set->name, err.msg);
        return -1;
    }
    memcpy(times, result.job_time_s, set->owned.set.njobs * sizeof(*times));
    np_replay_result_fini(&result);
    return 0;
}

int order_cv_load_sets(struct set *sets, size_t nsets, const char *const *paths,
                       const struct np_model *model, const struct np_footprints *footprints,
                       unsigned flags)
{
    for (size_t i = 0; i < nsets; i++) {
        struct np_err err = {0};
        if (np_scenario_load(paths[i], &sets[i].scenario, &err) < 0 ||
            np_replay_set_from_scenario(&sets[i].scenario, model, footprints, footprint_scale,
                                        flags, &sets[i].owned, &err) < 0) {
            fprintf(stderr, "order_cv: %s: %s\n", paths[i], err.msg);
            return -1;
        }
        snprintf(sets[i].name, sizeof(sets[i].name), "%s", sets[i].scenario.name);
    }
    return 0;
}

/* What the orders were told: each benchmark of the set, measured and predicted (CV, in-sample). */
static void print_predictions(struct set *set, const struct np_model *table)
{
    const size_t n = set->owned.set.njobs;
    double *cv = calloc(n ? n : 1, sizeof(*cv));

    if (!cv || order_cv_predict_set(set, table, CAL_CV, 0) < 0) {
        free(cv);
        return;
    }
    for (size_t i = 0; i < n; i++)
        cv[i] = set->owned.jobs[i].has_prediction ? set->owned.jobs[i].predicted_remote : NAN;
    if (order_cv_predict_set(set, table, CAL_IN_SAMPLE, 0) == 0) {
        printf("%s: benchmark measured / CV / in-sample remote slowdown:", set->name);
        for (size_t i = 0; i < n; i++) {
            bool seen = false;
            for (size_t j = 0; j < i && !seen; j++)
                seen = set->owned.jobs[j].row == set->owned.jobs[i].row;
            if (!seen)
                printf(" %s %.2f/%.2f/%.2f", set->owned.jobs[i].row->benchmark,
                       set->owned.jobs[i].row->remote, cv[i], set->owned.jobs[i].predicted_remote);
        }
        printf("\n");
    }
    free(cv);
}

void order_cv_free_sets(struct set *sets, size_t nsets)
{
    for (size_t k = 0; k < nsets; k++) {
        np_replay_owned_fini(&sets[k].owned);
        np_scenario_fini(&sets[k].scenario);
        memset(&sets[k], 0, sizeof(sets[k]));
    }
}

/* Both ways over @p sets (already built), one table each. */
static int score_sets(struct set *sets, size_t nsets, const struct np_model *model,
                      const char *variant)
{
    struct column cols[MAXCOLS];
    size_t best_plus = 0;
    const size_t ncols = order_cv_make_columns(cols, &best_plus);
    const struct np_order_ops *best = np_order_lookup("best");
    int rc = 0;

    for (int way = 0; way < NP_REPLAY_WAY_COUNT && rc == 0; way++) {
        double fig[MAXCOLS][MAX_SETS], total[MAXCOLS][MAX_SETS];
        printf("\n%s, way \"%s\"\n| order, predictions from |", variant,
               np_replay_way_name((enum np_replay_way)way));
        for (size_t k = 0; k < nsets; k++)
            printf(" %s |", sets[k].name);
        printf(" mean | mean vs best-plus | total job time vs best-plus |\n|---|");
        for (size_t k = 0; k < nsets + 3; k++)
            printf("---|");
        printf("\n");
        for (size_t k = 0; k < nsets && rc == 0; k++) {
            const size_t n = sets[k].owned.set.njobs;
            double *ref = calloc(n, sizeof(*ref)), *t = calloc(n, sizeof(*t));
            rc = ref && t ? order_cv_replay(&sets[k], (enum np_replay_way)way, best, 1, ref) : -1;
            for (size_t c = 0; c < ncols && rc == 0; c++) {
                const bool shuffled = cols[c].ops->uses_prediction && cols[c].cal == CAL_SHUFFLED;
                const int runs = shuffled                                   ? SHUFFLE_SEEDS
                                 : strcmp(cols[c].ops->name, "random") == 0 ? SET_RANDOM_RUNS
                                                                            : 1;
                fig[c][k] = 0;
                total[c][k] = 0;
                for (int r = 0; r < runs && rc == 0; r++) {
                    if (cols[c].ops->uses_prediction)
                        rc = order_cv_predict_set(&sets[k], model, cols[c].cal, (uint64_t)r + 1);
                    if (rc < 0)
                        break;
                    rc = order_cv_replay(&sets[k], (enum np_replay_way)way, cols[c].ops,
                                         (uint64_t)r + 1, t);
                    fig[c][k] += np_replay_figure(t, ref, n) / runs;
                    for (size_t j = 0; j < n; j++)
                        total[c][k] += t[j] / runs;
                }
            }
            free(ref);
            free(t);
        }
        for (size_t c = 0; c < ncols && rc == 0; c++) {
            double mean = 0, mean_bp = 0, total_bp = 0;
            printf("| %s |", cols[c].name);
            for (size_t k = 0; k < nsets; k++) {
                printf(" %.4f |", fig[c][k]);
                mean += fig[c][k] / (double)nsets;
                mean_bp += fig[best_plus][k] / (double)nsets;
                total_bp += total[c][k] / total[best_plus][k] / (double)nsets;
            }
            printf(" %.4f | %.4f | %.4f |\n", mean, mean / mean_bp, total_bp);
        }
    }
    return rc;
}

static int run_sets(const struct np_model *model, const struct np_footprints *footprints,
                    const char *const *paths, size_t nsets, const struct noise_options *noise,
                    bool noise_only)
{
    static const struct {
        const char *name;
        unsigned flags;
        bool contention;
    } variants[] = {{"model alone", 0, false},
                    {"co-run (the thesis's co-location factors)", NP_REPLAY_WITH_CORUN, false},
                    {"calibrated contention model (fit on static runs; the thesis's manager loop "
                     "in the thesis way)",
                     0, true}};
    static struct set sets[MAX_SETS];
    int rc = 0;

    if (!noise->json)
        printf("order_cv: %zu replayed sets, model %zu rows, footprints x%g; figure = eq. 6.1 "
               "(geometric mean of each job's time / its time under best), mean over sets\n",
               nsets, model->count, footprint_scale);
    for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]) && rc == 0 && !noise_only; v++) {
        if (order_cv_load_sets(sets, nsets, paths, model, footprints, variants[v].flags) < 0) {
            order_cv_free_sets(sets, nsets);
            return 1;
        }
        for (size_t k = 0; v == 0 && k < nsets; k++)
            print_predictions(&sets[k], model);
        order_cv_contention = variants[v].contention;
        rc = score_sets(sets, nsets, model, variants[v].name);
        order_cv_free_sets(sets, nsets);
    }
    if (rc == 0 && noise->seeds > 0)
        rc = order_cv_noise(model, footprints, paths, nsets, noise);
    return rc ? 1 : 0;
}

/* A sigma in [0, 2] from @p arg, or -1. */
static double parse_sigma(const char *arg)
{
    char *end;
    const double v = strtod(arg, &end);

    return *end || !(v >= 0 && v <= 2) ? -1 : v;
}

int main(int argc, char **argv)
{
    static const char *const default_sets[] = {
        "data/scenarios/thesis-set-1.json", "data/scenarios/thesis-set-2.json",
        "data/scenarios/thesis-set-3.json", "data/scenarios/thesis-set-4.json",
        "data/scenarios/thesis-set-5.json"};
    const char *path = "data/sandman-spec2017.csv",
               *footprint_path = "data/spec2017-footprints.csv";
    const char *set_paths[MAX_SETS];
    size_t nsets = 0;
    struct np_model model;
    struct np_err err = {0};
    int mixes = 0, rc;
    struct noise_options noise = {NOISE_SEEDS, 1, NOISE_SIGMA_FOOTPRINT, NOISE_SIGMA_COLOCATION,
                                  false};
    bool noise_only = false, tiered = false;

    for (int i = 1; i < argc; i++) {
        if ((!strcmp(argv[i], "--mixes") || !strcmp(argv[i], "--tiered")) && i + 1 < argc) {
            tiered = !strcmp(argv[i], "--tiered");
            mixes = atoi(argv[++i]);
            if (mixes <= 0 || mixes > 10000) {
                fprintf(stderr, "order_cv: %s '%s': accepted: a count from 1 to 10000\n",
                        argv[i - 1], argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
            char *end;
            const long seeds = strtol(argv[++i], &end, 10);
            if (*end || seeds < 0 || seeds > 10000) {
                fprintf(stderr, "order_cv: --seeds '%s': accepted: 0 (no noise draw) to 10000\n",
                        argv[i]);
                return 2;
            }
            noise.seeds = (int)seeds;
        } else if ((!strcmp(argv[i], "--sigma-footprint") ||
                    !strcmp(argv[i], "--sigma-colocation")) &&
                   i + 1 < argc) {
            const bool footprint = !strcmp(argv[i], "--sigma-footprint");
            const double sigma = parse_sigma(argv[++i]);
            if (sigma < 0) {
                fprintf(stderr, "order_cv: %s '%s': accepted: a sigma in [0, 2]\n", argv[i - 1],
                        argv[i]);
                return 2;
            }
            *(footprint ? &noise.sigma_footprint : &noise.sigma_colocation) = sigma;
        } else if (!strcmp(argv[i], "--workers") && i + 1 < argc) {
            char *end;
            const long workers = strtol(argv[++i], &end, 10);
            if (*end || workers < 1 || workers > 64) {
                fprintf(stderr, "order_cv: --workers '%s': accepted: 1 to 64 processes\n", argv[i]);
                return 2;
            }
            noise.workers = (int)workers;
        } else if (!strcmp(argv[i], "--noise-only")) {
            noise_only = true;
        } else if (!strcmp(argv[i], "--cv")) {
            order_cv_cross_validated = true;
        } else if (!strcmp(argv[i], "--json")) {
            noise.json = noise_only = true;
        } else if (!strcmp(argv[i], "--model") && i + 1 < argc) {
            path = argv[++i];
        } else if (!strcmp(argv[i], "--footprints") && i + 1 < argc) {
            footprint_path = argv[++i];
        } else if (!strcmp(argv[i], "--footprint-scale") && i + 1 < argc) {
            char *end;
            footprint_scale = strtod(argv[++i], &end);
            if (*end || !(footprint_scale > 0) || footprint_scale > 1000) {
                fprintf(stderr,
                        "order_cv: --footprint-scale '%s': accepted: a factor in (0, 1000]\n",
                        argv[i]);
                return 2;
            }
        } else if (argv[i][0] != '-' && nsets < MAX_SETS) {
            set_paths[nsets++] = argv[i];
        } else {
            fprintf(
                stderr,
                "order_cv: '%s': accepted: --model CSV, --footprints CSV, --footprint-scale X, "
                "--seeds N, --sigma-footprint S, --sigma-colocation S, --workers N, --noise-only, "
                "--cv, --json, "
                "--mixes N, --tiered SEEDS, up to %d SCENARIO.json\n",
                argv[i], MAX_SETS);
            return 2;
        }
    }
    if (nsets == 0)
        for (size_t i = 0; i < sizeof(default_sets) / sizeof(default_sets[0]); i++)
            set_paths[nsets++] = default_sets[i];
    if (np_model_load(path, &model, &err) < 0) {
        fprintf(stderr, "order_cv: %s\n", err.msg);
        return 1;
    }
    np_contention_params_sandman(&contention);
    if (mixes == 0) {
        struct np_footprints footprints;
        if (np_footprints_load(footprint_path, &footprints, &err) < 0) {
            fprintf(stderr, "order_cv: %s\n", err.msg);
            np_model_free(&model);
            return 1;
        }
        rc = run_sets(&model, &footprints, set_paths, nsets, &noise, noise_only);
        np_footprints_free(&footprints);
    } else {
        rc = tiered ? order_cv_tiers(&model, mixes) : run_mixes(&model, mixes);
    }
    np_model_free(&model);
    return rc;
}
