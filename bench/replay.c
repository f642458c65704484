/*
 * The thesis's dynamic experiment sets replayed in the model (policies/sim/replay.c), every
 * order in both ways of carrying a request out, scored as the thesis scored them.
 *
 *   replay [--model CSV] [--footprints CSV] [--footprint-scale X] [--random-runs N]
 *          [--rate-mb-s R] [--floor-mb F] [--step S] [--json] [--growth] [--fit-cv]
 *          [SCENARIO.json...]
 *
 * Default scenarios: data/scenarios/thesis-set-1..5.json. Per set and way: each order's eq. 6.1
 * figure (geometric mean over jobs of the job's time relative to the same job in the Best run;
 * Random: the mean over its seeded runs, as many as the set's runs list, else 3) beside the
 * thesis's measured figure, the modelled total of the jobs' times relative to Best, and the
 * spread between the best and the worst order, with the model alone and with each job's
 * measured co-location factor; then the means over the sets, and the same means with every
 * footprint halved and x1.5; the contention model fit on static runs only (`contention`) and
 * with its hot law and mover's rate from the fold that held the set out (`contention-cv`,
 * replay_cv.h; --fit-cv searches them and prints the folds). --growth lets footprints grow as
 * the Best runs logged them (replay_growth.h). Deterministic: no timing is measured.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/replay_scenario.h"
#include "numaplace/tables.h"
#include "numaplace/scenario_file.h"

#include "replay_cv.h"
#include "replay_growth.h"

#define MAX_ORDERS 16
#define MAX_SETS   16

/* The thesis's measured eq. 6.1 figures relative to its Best run: the "Overall Slowdown" rows of
 * theovaka/Resource_Manager results/resource_manager/TestN/overview.csv (commit d1703a1), the
 * run order of TestN/info.txt; Random is the mean of its runs. Set 1's file is relative to the
 * alone runs (Best 2.566, Random 2.686 2.82 3.049, Worst 3.207): divided by Best here. */
static const struct {
    const char *set, *order;
    double figure;
} measured[] = {
    {"thesis-set-1", "best", 1.0},
    {"thesis-set-1", "random", (2.686 + 2.82 + 3.049) / 3 / 2.566},
    {"thesis-set-1", "worst", 3.207 / 2.566},
    {"thesis-set-2", "best", 1.0},
    {"thesis-set-2", "random", (1.155 + 1.054 + 1.07) / 3},
    {"thesis-set-2", "worst", 1.189},
    {"thesis-set-3", "best", 1.0},
    {"thesis-set-3", "random", (1.15 + 1.206 + 1.181 + 1.113) / 4},
    {"thesis-set-3", "worst", 1.3},
    {"thesis-set-4", "best", 1.0},
    {"thesis-set-4", "random", (1.152 + 1.171 + 1.262) / 3},
    {"thesis-set-4", "worst", 1.242},
    {"thesis-set-4", "best-plus", 1.014},
    {"thesis-set-4", "worst-plus", 1.382},
    {"thesis-set-5", "best", 1.0},
    {"thesis-set-5", "best-plus", 0.925},
    {"thesis-set-5", "worst", 1.11},
    {"thesis-set-5", "worst-plus", 1.29},
};

static double measured_figure(const char *set, const char *order)
{
    for (size_t i = 0; i < sizeof(measured) / sizeof(measured[0]); i++)
        if (!strcmp(measured[i].set, set) && !strcmp(measured[i].order, order))
            return measured[i].figure;
    return NAN;
}

struct options {
    const char *model, *footprints;
    double scale, rate_mb_s, floor_mb, step_s;
    int random_runs; /* 0: the set's own count */
    bool json, fit_cv, growth;
};

/* --growth: footprints grow as the thesis's Best runs logged them (replay_growth.h). */
static struct growth_table growth;
static bool growth_on;

/* The calibrated model (numaplace/contention.h, fit by bench/contention_fit on static runs) and
 * the thesis's manager loop (np_replay_config_thesis_loop). */
static struct np_contention_params contention;

/* One order's score in one set and way. */
struct score {
    double figure, total, spacing;
    unsigned long long asked, moved;
    size_t fired, short_, overshot, runs;
};

struct set_data {
    struct np_scenario scenario;
};

/* The orders that need no model: those ranking by prediction come last in the table and are
 * scored by bench/order_cv, which calibrates the model per set (here they would be best-plus). */
static size_t count_orders(void)
{
    size_t n = 0;

    while (np_order_at(n) && !np_order_at(n)->uses_prediction && n < MAX_ORDERS)
        n++;
    return n;
}

static int random_runs(const struct np_scenario *s, const struct options *o, bool *own)
{
    int n = 0;

    for (size_t i = 0; i < s->nruns; i++)
        n += !strcmp(s->runs[i]->name, "random");
    *own = n > 0;
    return o->random_runs > 0 ? o->random_runs : n > 0 ? n : 3;
}

/* Score every order of one set in one way into @p scores (indexed as np_order_at). */
static int score_set(const struct np_replay_set *set, const struct np_replay_config *config,
                     int nrandom, struct score *scores)
{
    struct np_replay_result best, r;
    struct np_err err = {0};

    if (np_replay_run(set, config, np_order_lookup("best"), 0, &best, &err) < 0) {
        fprintf(stderr, "replay: %s\n", err.msg);
        return -1;
    }
    for (size_t o = 0; o < count_orders(); o++) {
        const struct np_order_ops *ops = np_order_at(o);
        const int runs = strcmp(ops->name, "random") ? 1 : nrandom;
        struct score *sc = &scores[o];

        memset(sc, 0, sizeof(*sc));
        for (int k = 0; k < runs; k++) {
            if (np_replay_run(set, config, ops, (uint64_t)k + 1, &r, &err) < 0) {
                fprintf(stderr, "replay: %s\n", err.msg);
                np_replay_result_fini(&best);
                return -1;
            }
            sc->figure += np_replay_figure(r.job_time_s, best.job_time_s, r.njobs) / runs;
            sc->total += r.total_job_s / best.total_job_s / runs;
            sc->asked += r.pages_asked;
            sc->moved += r.pages_moved;
            sc->fired += r.requests_fired;
            sc->spacing += r.spacing_n ? r.spacing_sum_s / (double)r.spacing_n / runs : 0;
            sc->short_ += r.requests_short;
            sc->overshot += r.requests_overshot;
            sc->runs++;
            np_replay_result_fini(&r);
        }
    }
    np_replay_result_fini(&best);
    return 0;
}

/* The spread between the best and the worst order's figure, and which they are. */
static double spread(const struct score *scores, size_t *lo, size_t *hi)
{
    *lo = *hi = 0;
    for (size_t o = 1; o < count_orders(); o++) {
        if (scores[o].figure < scores[*lo].figure)
            *lo = o;
        if (scores[o].figure > scores[*hi].figure)
            *hi = o;
    }
    return scores[*hi].figure / scores[*lo].figure - 1.0;
}

static void config_for(const struct options *o, enum np_replay_way way, struct np_replay_config *c)
{
    np_replay_config_sandman(c, way);
    c->rate_bytes_s = o->rate_mb_s * 1e6;
    c->free_floor_pages = (uint64_t)(o->floor_mb * 1024 * 1024 / NP_REPLAY_PAGE_BYTES);
    c->step_s = o->step_s;
}

/* The model without and with the thesis's measured co-location factors, and the calibrated
 * contention model (with the manager's loop in the thesis way). */
static const struct {
    const char *name;
    unsigned flags;
    bool contention, cv; /* cv: the hot law and mover's rate of the fold holding the set out */
} variants[] = {{"alone", 0, false, false},
                {"co-run", NP_REPLAY_WITH_CORUN, false, false},
                {"contention", 0, true, false},
                {"contention-cv", 0, true, true}};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

/* How one set is modelled: the replay's flags, the contention model (NULL: none) and the thesis
 * loop's mover rate. */
struct model_spec {
    unsigned flags;
    struct np_contention_params contention;
    bool with_contention;
    double mover_bytes_s;
};

/* Variant @p v for set @p set; the cross-validated one takes the fold holding the set out (a set
 * no fold holds is scored with the static-only parameters). */
static struct model_spec spec_for(size_t v, const char *set)
{
    struct model_spec m = {variants[v].flags, contention, variants[v].contention,
                           NP_REPLAY_LOOP_MOVER_BPS};
    const struct cv_fold *fold = variants[v].cv ? cv_fold_of(set, growth_on) : NULL;

    if (fold)
        cv_apply(&fold->fitted, &m.contention, &m.mover_bytes_s);
    return m;
}

struct inputs {
    const struct options *o;
    const struct np_model *model;
    const struct np_footprints *fp;
};

/* Build @p s's set with @p scale and @p flags and score every order in @p way. */
static int evaluate(const struct inputs *in, const struct np_scenario *s, double scale,
                    const struct model_spec *m, enum np_replay_way way, struct score *scores)
{
    struct np_replay_owned owned;
    struct np_replay_config c;
    struct np_err err = {0};
    bool own;
    int rc;

    if (np_replay_set_from_scenario(s, in->model, in->fp, scale, m->flags, &owned, &err) < 0) {
        fprintf(stderr, "replay: %s: %s\n", s->name, err.msg);
        return -1;
    }
    for (size_t j = 0; in->o->growth && j < owned.set.njobs; j++)
        owned.jobs[j].growth = growth_find(&growth, owned.jobs[j].row->benchmark);
    config_for(in->o, way, &c);
    if (m->with_contention) {
        np_replay_config_thesis_loop(&c, &m->contention);
        c.mover_rate_bytes_s = m->mover_bytes_s;
    }
    rc = score_set(&owned.set, &c, random_runs(s, in->o, &own), scores);
    np_replay_owned_fini(&owned);
    return rc;
}

static void print_header(const char *first, const char *last)
{
    printf("| %s | way | model |", first);
    for (size_t k = 0; k < count_orders(); k++)
        printf(" %s |", np_order_at(k)->name);
    printf(" spread | %s |\n|---|---|---|", last);
    for (size_t k = 0; k <= count_orders() + 1; k++)
        printf("---|");
    printf("\n");
}

/* The thesis's own figures for a set: its runs only, and their spread. */
static void print_measured(const struct np_scenario *s)
{
    double lo = INFINITY, hi = -INFINITY;

    printf("| %s | measured on Sandman | |", s->name);
    for (size_t k = 0; k < count_orders(); k++) {
        const double m = measured_figure(s->name, np_order_at(k)->name);
        if (isnan(m)) {
            printf(" not run |");
            continue;
        }
        printf(" %.3f |", m);
        lo = fmin(lo, m);
        hi = fmax(hi, m);
    }
    if (hi > lo)
        printf(" %.1f%% | |\n", 100 * (hi / lo - 1));
    else
        printf(" unavailable (no figures) | |\n");
}

/* The thesis's figures averaged over the sets that ran each order. */
static void print_measured_means(const struct set_data *sets, size_t nsets)
{
    printf("| measured | on Sandman | |");
    for (size_t k = 0; k < count_orders(); k++) {
        double sum = 0;
        int n = 0;
        for (size_t i = 0; i < nsets; i++) {
            const double m = measured_figure(sets[i].scenario.name, np_order_at(k)->name);
            if (!isnan(m)) {
                sum += m;
                n++;
            }
        }
        if (n)
            printf(" %.3f (%d sets) |", sum / n, n);
        else
            printf(" not run |");
    }
    printf(" | |\n");
}

/* How a row compares with the measured figures: mean absolute error over the measured cells,
 * whether the orders rank as measured (every measured pair in the same order), the ratio of the
 * spreads (max / min - 1 over the measured cells). */
struct validation {
    double mae, spread_ratio;
    bool ranks;
    int cells;
};

static struct validation validate(const struct np_scenario *s, const struct score *scores)
{
    struct validation v = {0, NAN, true, 0};
    double mlo = INFINITY, mhi = -INFINITY, lo = INFINITY, hi = -INFINITY;

    for (size_t k = 0; k < count_orders(); k++) {
        const double m = measured_figure(s->name, np_order_at(k)->name);
        if (isnan(m))
            continue;
        v.mae += fabs(scores[k].figure - m);
        v.cells++;
        mlo = fmin(mlo, m);
        mhi = fmax(mhi, m);
        lo = fmin(lo, scores[k].figure);
        hi = fmax(hi, scores[k].figure);
        for (size_t q = 0; q < count_orders(); q++) {
            const double mq = measured_figure(s->name, np_order_at(q)->name);
            if (!isnan(mq) && mq < m && !(scores[q].figure < scores[k].figure))
                v.ranks = false;
        }
    }
    if (v.cells)
        v.mae /= v.cells;
    if (mhi > mlo)
        v.spread_ratio = (hi / lo - 1) / (mhi / mlo - 1);
    return v;
}

/* The fold's fitted values and the set's noise band, as JSON members. */
static void print_cv_json(const char *set)
{
    const struct cv_fold *f = cv_fold_of(set, growth_on);
    double lo, hi;

    if (!f) {
        printf(", \"fold\": null");
        return;
    }
    printf(", \"fold\": {\"held_out\": [\"%s\"%s%s%s], \"hot_fraction\": %g, \"hot_share\": %g, "
           "\"hot_moves\": \"%s\", \"mover_mb_s\": %g}",
           f->held_out[0], f->held_out[1] ? ", \"" : "", f->held_out[1] ? f->held_out[1] : "",
           f->held_out[1] ? "\"" : "", f->fitted.hot_fraction, f->fitted.hot_share,
           f->fitted.hot_first ? "first" : "last", f->fitted.mover_mb_s);
    if (cv_noise_band(set, &lo, &hi))
        printf(", \"noise_band\": [%.3f, %.3f]", lo, hi);
    else
        printf(", \"noise_band\": null");
    printf(", \"measured\": {");
    for (size_t k = 0, n = 0; k < count_orders(); k++) {
        const double m = measured_figure(set, np_order_at(k)->name);
        if (!isnan(m))
            printf("%s\"%s\": %.4f", n++ ? ", " : "", np_order_at(k)->name, m);
    }
    printf("}");
}

static void print_cv_text(const char *set)
{
    const struct cv_fold *f = cv_fold_of(set, growth_on);
    double lo, hi;

    if (!f) {
        printf("; no fold holds this set out: static-only parameters");
        return;
    }
    printf("; fold without %s%s%s: hot %g of pages, %g of traffic, moved %s; mover %g MB/s",
           f->held_out[0], f->held_out[1] ? " and " : "", f->held_out[1] ? f->held_out[1] : "",
           f->fitted.hot_fraction, f->fitted.hot_share, f->fitted.hot_first ? "first" : "last",
           f->fitted.mover_mb_s);
    if (cv_noise_band(set, &lo, &hi))
        printf("; noise +-%.3f to +-%.3f", lo, hi);
    else
        printf("; noise band unavailable (one instance of each benchmark)");
}

static int print_set(const struct inputs *in, const struct np_scenario *s, bool *first_json)
{
    bool own;

    (void)random_runs(s, in->o, &own);
    if (!in->o->json)
        print_measured(s);
    for (int way = 0; way < NP_REPLAY_WAY_COUNT; way++)
        for (size_t v = 0; v < NVARIANTS; v++) {
            struct score scores[MAX_ORDERS];
            size_t lo, hi;
            const struct model_spec m = spec_for(v, s->name);
            if (evaluate(in, s, in->o->scale, &m, (enum np_replay_way)way, scores) < 0)
                return -1;
            const struct validation val = validate(s, scores);
            if (in->o->json) {
                printf("%s\n  {\"set\": \"%s\", \"way\": \"%s\", \"model\": \"%s\", "
                       "\"orders\": {",
                       *first_json ? "" : ",", s->name, np_replay_way_name((enum np_replay_way)way),
                       variants[v].name);
                for (size_t k = 0; k < count_orders(); k++)
                    printf("%s\"%s\": %.4f", k ? ", " : "", np_order_at(k)->name, scores[k].figure);
                printf("}, \"mae\": %.4f, \"ranks_as_measured\": %s, \"spread_ratio\": %.3f",
                       val.mae, val.ranks ? "true" : "false", val.spread_ratio);
                if (variants[v].cv)
                    print_cv_json(s->name);
                if (in->o->growth)
                    printf(", \"growth\": true");
                printf(", \"primary\": %s}",
                       variants[v].cv && way == NP_REPLAY_THESIS ? "true" : "false");
                *first_json = false;
                continue;
            }
            printf("| %s | %s | %s |", s->name, np_replay_way_name((enum np_replay_way)way),
                   variants[v].name);
            for (size_t k = 0; k < count_orders(); k++)
                printf(" %.3f (%.3f)%s |", scores[k].figure, scores[k].total,
                       strcmp(np_order_at(k)->name, "random") || own ? "" : "*");
            const double sp = spread(scores, &lo, &hi);
            printf(" %.1f%% (%s over %s) |", 100 * sp, np_order_at(hi)->name,
                   np_order_at(lo)->name);
            for (size_t k = 0; k < count_orders(); k++) /* whole shares overshoot */
                printf(" %.2f",
                       scores[k].asked ? (double)scores[k].moved / (double)scores[k].asked : 0.0);
            printf(" | MAE %.3f, ranks %s, spread x%.2f", val.mae,
                   val.ranks ? "as measured" : "differ", val.spread_ratio);
            if (variants[v].cv)
                print_cv_text(s->name);
            if (variants[v].contention && way == NP_REPLAY_THESIS) {
                printf("; fired/spacing:");
                for (size_t k = 0; k < count_orders(); k++)
                    printf(" %s %.0f/%.0fs", np_order_at(k)->name,
                           (double)scores[k].fired / (double)(scores[k].runs ? scores[k].runs : 1),
                           scores[k].spacing);
            }
            printf(" |\n");
        }
    return 0;
}

/* The mean over sets of each order's figure and total and of the spread, per way and model;
 * @p rank: also the order of the orders by mean figure. */
static int print_means(const struct inputs *in, const struct set_data *sets, size_t nsets,
                       double scale, bool rank)
{
    for (int way = 0; way < NP_REPLAY_WAY_COUNT; way++)
        for (size_t v = 0; v < NVARIANTS; v++) {
            double figure[MAX_ORDERS] = {0}, total[MAX_ORDERS] = {0}, spreads = 0;
            size_t lo, hi, idx[MAX_ORDERS];
            for (size_t i = 0; i < nsets; i++) {
                struct score scores[MAX_ORDERS];
                const struct model_spec m = spec_for(v, sets[i].scenario.name);
                if (evaluate(in, &sets[i].scenario, scale, &m, (enum np_replay_way)way, scores) < 0)
                    return -1;
                for (size_t k = 0; k < count_orders(); k++) {
                    figure[k] += scores[k].figure / (double)nsets;
                    total[k] += scores[k].total / (double)nsets;
                }
                spreads += spread(scores, &lo, &hi) / (double)nsets;
            }
            printf("| x%g | %s | %s |", scale, np_replay_way_name((enum np_replay_way)way),
                   variants[v].name);
            for (size_t k = 0; k < count_orders(); k++)
                printf(" %.3f (%.3f) |", figure[k], total[k]);
            printf(" %.1f%% |", 100 * spreads);
            if (rank) {
                for (size_t k = 0; k < count_orders(); k++)
                    idx[k] = k;
                for (size_t a = 1; a < count_orders(); a++) /* insertion sort by figure */
                    for (size_t b = a; b > 0 && figure[idx[b]] < figure[idx[b - 1]]; b--) {
                        const size_t t = idx[b];
                        idx[b] = idx[b - 1];
                        idx[b - 1] = t;
                    }
                printf(" ");
                for (size_t k = 0; k < count_orders(); k++)
                    printf("%s%s", k ? " < " : "", np_order_at(idx[k])->name);
                printf(" |");
            } else {
                printf(" |");
            }
            printf("\n");
        }
    return 0;
}

/* --fit-cv: every grid point on every set (thesis way, the contention model), then per fold the
 * point with the least mean absolute error over the measured cells of the sets it keeps, scored
 * on the sets it holds out. */
#define CV_MAX_POINTS 256
/* Training errors within this of the least are ties: the uniform law is taken among them. */
#define CV_TIE 0.005
static int fit_cv(const struct inputs *in, const struct set_data *sets, size_t nsets)
{
    static struct cv_point grid[CV_MAX_POINTS];
    static double err_sum[CV_MAX_POINTS][MAX_SETS], ratio[CV_MAX_POINTS][MAX_SETS];
    static int cells[CV_MAX_POINTS][MAX_SETS];
    static bool ranks[CV_MAX_POINTS][MAX_SETS];
    const size_t npoints = cv_grid(grid, CV_MAX_POINTS, in->o->growth);

    for (size_t g = 0; g < npoints; g++)
        for (size_t i = 0; i < nsets; i++) {
            struct model_spec m = {0, contention, true, 0};
            struct score scores[MAX_ORDERS];
            cv_apply(&grid[g], &m.contention, &m.mover_bytes_s);
            if (evaluate(in, &sets[i].scenario, in->o->scale, &m, NP_REPLAY_THESIS, scores) < 0)
                return -1;
            const struct validation v = validate(&sets[i].scenario, scores);
            err_sum[g][i] = v.mae * v.cells;
            cells[g][i] = v.cells;
            ratio[g][i] = v.spread_ratio;
            ranks[g][i] = v.ranks;
            fprintf(stderr, "fit-cv: point %zu of %zu, %s: MAE %.4f\n", g + 1, npoints,
                    sets[i].scenario.name, v.mae);
        }
    printf("| point | hot of pages | hot of traffic | hot moved | mover MB/s |");
    for (size_t i = 0; i < nsets; i++)
        printf(" %s MAE (spread, ranks) |", sets[i].scenario.name);
    printf("\n|---|---|---|---|---|");
    for (size_t i = 0; i < nsets; i++)
        printf("---|");
    printf("\n");
    for (size_t g = 0; g < npoints; g++) {
        printf("| %zu | %g | %g | %s | %g |", g, grid[g].hot_fraction, grid[g].hot_share,
               grid[g].hot_first ? "first" : "last", grid[g].mover_mb_s);
        for (size_t i = 0; i < nsets; i++)
            printf(" %.4f (x%.2f, %s) |", err_sum[g][i] / cells[g][i], ratio[g][i],
                   ranks[g][i] ? "yes" : "no");
        printf("\n");
    }
    printf("\n| fold holds out | hot of pages | hot of traffic | hot moved | mover MB/s | training "
           "MAE | points within 0.005 of the least (their mover MB/s range) | held-out MAE |\n"
           "|---|---|---|---|---|---|---|---|\n");
    for (size_t f = 0; f < CV_NFOLDS; f++) {
        double best = INFINITY, held_err = 0, rlo = INFINITY, rhi = 0;
        size_t arg = 0, near = 0;
        int held_cells = 0;
        double train[CV_MAX_POINTS] = {0};
        for (size_t g = 0; g < npoints; g++) {
            double e = 0;
            int c = 0;
            for (size_t i = 0; i < nsets; i++)
                if (!cv_fold_holds(&cv_folds[f], sets[i].scenario.name)) {
                    e += err_sum[g][i];
                    c += cells[g][i];
                }
            train[g] = c ? e / c : INFINITY;
            if (train[g] < best) { /* the first of equals: the grid lists uniform first */
                best = train[g];
                arg = g;
            }
        }
        size_t uniform = npoints;
        for (size_t g = 0; g < npoints; g++)
            if (train[g] <= best + CV_TIE) {
                near++;
                rlo = fmin(rlo, grid[g].mover_mb_s);
                rhi = fmax(rhi, grid[g].mover_mb_s);
                if (grid[g].hot_share == grid[g].hot_fraction &&
                    (uniform == npoints || train[g] < train[uniform]))
                    uniform = g;
            }
        /* a hot law no better than uniform by more than the tie is not taken */
        if (uniform < npoints)
            arg = uniform;
        for (size_t i = 0; i < nsets; i++)
            if (cv_fold_holds(&cv_folds[f], sets[i].scenario.name)) {
                held_err += err_sum[arg][i];
                held_cells += cells[arg][i];
            }
        printf("| %s%s%s | %g | %g | %s | %g | %.4f | %zu (%g-%g) | %.4f |\n",
               cv_folds[f].held_out[0], cv_folds[f].held_out[1] ? ", " : "",
               cv_folds[f].held_out[1] ? cv_folds[f].held_out[1] : "", grid[arg].hot_fraction,
               grid[arg].hot_share, grid[arg].hot_first ? "first" : "last", grid[arg].mover_mb_s,
               train[arg], near, rlo, rhi, held_cells ? held_err / held_cells : NAN);
    }
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o, const char **files,
                         size_t *nfiles)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const bool value = i + 1 < argc;
        if (!strcmp(a, "--model") && value)
            o->model = argv[++i];
        else if (!strcmp(a, "--footprints") && value)
            o->footprints = argv[++i];
        else if (!strcmp(a, "--footprint-scale") && value)
            o->scale = atof(argv[++i]);
        else if (!strcmp(a, "--random-runs") && value)
            o->random_runs = atoi(argv[++i]);
        else if (!strcmp(a, "--rate-mb-s") && value)
            o->rate_mb_s = atof(argv[++i]);
        else if (!strcmp(a, "--floor-mb") && value)
            o->floor_mb = atof(argv[++i]);
        else if (!strcmp(a, "--step") && value)
            o->step_s = atof(argv[++i]);
        else if (!strcmp(a, "--json"))
            o->json = true;
        else if (!strcmp(a, "--fit-cv"))
            o->fit_cv = true;
        else if (!strcmp(a, "--growth"))
            o->growth = true;
        else if (a[0] == '-') {
            fprintf(stderr,
                    "replay: unknown option '%s': accepted are --model, --footprints, "
                    "--footprint-scale, --random-runs, --rate-mb-s, --floor-mb, --step, --json, "
                    "--fit-cv, --growth\n",
                    a);
            return -1;
        } else if (*nfiles < MAX_SETS)
            files[(*nfiles)++] = a;
    }
    if (!(o->scale > 0) || !(o->step_s > 0) || !(o->rate_mb_s >= 0) || !(o->floor_mb >= 0)) {
        fprintf(stderr, "replay: --footprint-scale and --step must be > 0, --rate-mb-s and "
                        "--floor-mb >= 0\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = {
        "data/scenarios/thesis-set-1.json", "data/scenarios/thesis-set-2.json",
        "data/scenarios/thesis-set-3.json", "data/scenarios/thesis-set-4.json",
        "data/scenarios/thesis-set-5.json"};
    struct options o = {"data/sandman-spec2017.csv",
                        "data/spec2017-footprints.csv",
                        1.0,
                        200,
                        256,
                        1.0,
                        0,
                        false,
                        false,
                        false};
    const char *files[MAX_SETS];
    size_t nfiles = 0;
    struct set_data sets[MAX_SETS];
    struct np_model model;
    struct np_footprints fp;
    struct np_err err = {0};
    const struct inputs in = {&o, &model, &fp};
    int rc = 0;

    if (parse_options(argc, argv, &o, files, &nfiles) < 0)
        return 2;
    if (nfiles == 0)
        for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
            files[nfiles++] = defaults[i];
    if (np_model_load(o.model, &model, &err) < 0 ||
        np_footprints_load(o.footprints, &fp, &err) < 0) {
        fprintf(stderr, "replay: %s\n", err.msg);
        return 1;
    }
    memset(sets, 0, sizeof(sets));
    for (size_t i = 0; i < nfiles && rc == 0; i++)
        if (np_scenario_load(files[i], &sets[i].scenario, &err) < 0) {
            fprintf(stderr, "replay: %s: %s\n", files[i], err.msg);
            rc = 1;
        }
    np_contention_params_sandman(&contention);
    growth_on = o.growth;
    if (rc == 0 && o.growth) {
        char why[512];
        if (growth_load("data", &growth, why, sizeof(why)) < 0) {
            fprintf(stderr, "replay: --growth: %s\n", why);
            rc = 1;
        }
        for (size_t k = 0; rc == 0 && k < growth.n; k++) {
            fprintf(stderr, "replay: growth of %s (%u instances):", growth.rows[k].benchmark,
                    growth.rows[k].instances);
            for (unsigned p = 0; p < growth.rows[k].curve.n; p++)
                fprintf(stderr, " %g:%.3f", growth.rows[k].curve.progress[p],
                        growth.rows[k].curve.share[p]);
            fprintf(stderr, "\n");
        }
    }
    if (rc == 0 && o.fit_cv) {
        rc = fit_cv(&in, sets, nfiles) < 0;
        for (size_t i = 0; i < nfiles; i++)
            np_scenario_fini(&sets[i].scenario);
        np_footprints_free(&fp);
        np_model_free(&model);
        return rc;
    }
    if (rc == 0 && o.json) {
        bool first = true;
        printf("[");
        for (size_t i = 0; i < nfiles && rc == 0; i++)
            rc = print_set(&in, &sets[i].scenario, &first) < 0;
        printf("\n]\n");
        nfiles = rc ? nfiles : 0; /* printed: skip the table */
        for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
            np_scenario_fini(&sets[i].scenario);
        np_footprints_free(&fp);
        np_model_free(&model);
        return rc;
    }
    if (rc == 0) {
        printf("replay: %zu sets, model %s, footprints %s x%g; numaplace way: %g MB/s, free "
               "floor %g MiB; step %g s; Sandman's SLIT, 64,500 MiB per node\n",
               nfiles, o.model, o.footprints, o.scale, o.rate_mb_s, o.floor_mb, o.step_s);
        printf(
            "Cells: eq. 6.1 vs best (total time vs best); * Random not in the set's runs. "
            "Model alone: no contention; co-run: each job's measured co-location factor; "
            "contention: the contention model fit on static runs only, contention-cv: with "
            "its hot law and mover rate from the fold holding the set out; both with the manager's "
            "loop in the thesis way (docs/replay.md). Last column: pages moved / asked per "
            "order, then the row against the measured figures\n\n");
        print_header("set", "pages moved / asked, per order");
    }
    for (size_t i = 0; i < nfiles && rc == 0; i++)
        rc = print_set(&in, &sets[i].scenario, &(bool){true}) < 0;
    if (rc == 0) {
        printf("\nMean over the sets; footprints x0.5 and x1.5 show how the results depend on "
               "them (x2 would overfill a node at the start).\n\n");
        print_header("footprints", "ranking (eq. 6.1)");
        print_measured_means(sets, nfiles);
        const double scales[] = {o.scale, o.scale * 0.5, o.scale * 1.5};
        for (size_t k = 0; k < 3 && rc == 0; k++)
            rc = print_means(&in, sets, nfiles, scales[k], k == 0) < 0;
    }
    for (size_t i = 0; i < nfiles; i++)
        np_scenario_fini(&sets[i].scenario);
    np_footprints_free(&fp);
    np_model_free(&model);
    return rc;
}
