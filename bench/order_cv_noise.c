/*
 * bench/order_cv's noise draw: every order replayed on the calibrated contention model
 * under noise, seed after seed, and judged by its eq. 6.1 relative to Best+'s under the same draw
 * (paired: within a seed every order sees the same footprints and co-location factors).
 *
 * Per seed, set and job: its footprint times exp(sigma_footprint x N(0,1)) and its speed divided
 * by exp(sigma_colocation x N(0,1)) for its whole run (np_replay_job's noise), drawn by
 * numaplace/draw.h from the seed and the set's index. The defaults come from the thesis's own data:
 *
 * - sigma_colocation 0.105: the pooled within-run standard deviation of ln(time) of identical
 *   instances (same benchmark, same run) in the dynamic sets' Best and Best+ runs
 *   (data/thesis-dynamic-times.csv, 144 degrees of freedom; 0.05-0.15 per run). Identical
 *   instances differ by up to 1.86x in such a run (set 2 Best), which is what a sigma of 0.1
 *   gives as the range of 32 draws (about 4 sigma). It includes real placement differences
 *   between instances, so it is an upper bound on pure noise.
 * - sigma_footprint 0.07: the pooled standard deviation of ln(pages) of identical instances at
 *   the same request of the Best runs' logs (data/thesis-dynamic-footprints.csv, 4,770 degrees
 *   of freedom; the peak footprint of one benchmark across the static runs varies far less,
 *   0.008). A footprint systematically off (the table's are lower bounds) is bench/replay's
 *   --footprint-scale, not noise.
 *
 * Per order, set and way: the mean over seeds of the ratio to Best+ and its 95% percentile
 * interval (the 2.5th and 97.5th percentiles of the seeds' ratios, np_interval_percentile): the
 * range in which one run's outcome falls under this noise, not the uncertainty of the mean.
 * Overall: the sets' mean eq. 6.1 over Best+'s (as the deterministic tables' "mean vs
 * best-plus"), per seed. Random: one run per seed, its shuffles seeded by the noise seed.
 * The seeds can be spread over --workers processes (forked; the figures do not change).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "numaplace/draw.h"
#include "numaplace/json_reals.h"
#include "numaplace/replay.h"

#include "order_cv.h"

/* One seed's ratios: [way][column][set], the last set index the overall figure. */
typedef double seed_ratios[NP_REPLAY_WAY_COUNT][MAXCOLS][MAX_SETS + 1];

#define LEVEL 0.95

/* The rows worth the time: every shipped order, `predicted` from the CV model, a constant and
 * the CV predictions shuffled (no prediction at all is best-plus by construction, and the
 * bench-only candidates are in the deterministic tables). */
static size_t noise_columns(struct column *cols, size_t *best_plus)
{
    struct column all[MAXCOLS];
    size_t bp = 0, n = 0;
    const size_t count = order_cv_make_columns(all, &bp);

    for (size_t c = 0; c < count; c++) {
        const enum calibration cal = all[c].cal;
        if (!np_order_lookup(all[c].ops->name) ||
            (all[c].ops->uses_prediction &&
             !(cal == CAL_CV || cal == CAL_CONSTANT || cal == CAL_SHUFFLED)))
            continue;
        if (c == bp)
            *best_plus = n;
        cols[n++] = all[c];
    }
    return n;
}

/* Seed @p seed's footprints and co-location factors on @p set's jobs, from @p base pages. */
static void draw_noise(struct set *set, const uint64_t *base, size_t index, uint64_t seed,
                       const struct noise_options *o)
{
    uint64_t state = seed * 0x100000001b3ULL + index;

    for (size_t j = 0; j < set->owned.set.njobs; j++) {
        struct np_replay_job *job = &set->owned.jobs[j];
        const double pages = round((double)base[j] * np_draw_lognormal(&state, o->sigma_footprint));
        job->pages = pages < 1 ? 1 : (uint64_t)pages;
        job->noise = np_draw_lognormal(&state, o->sigma_colocation);
    }
}

/* One seed: ratio[way][c][k] := order c's eq. 6.1 over best-plus's in set k; [nsets]: overall. */
static int one_seed(struct set *sets, size_t nsets, const struct np_model *model,
                    const struct column *cols, size_t ncols, size_t best_plus, uint64_t seed,
                    double ratio[NP_REPLAY_WAY_COUNT][MAXCOLS][MAX_SETS + 1])
{
    const struct np_order_ops *best = np_order_lookup("best");
    double fig[NP_REPLAY_WAY_COUNT][MAXCOLS][MAX_SETS];
    int rc = 0;

    for (size_t k = 0; k < nsets && rc == 0; k++) {
        const size_t n = sets[k].owned.set.njobs;
        double *ref = calloc(n ? n : 1, sizeof(*ref)), *t = calloc(n ? n : 1, sizeof(*t));
        rc = ref && t ? 0 : -1;
        for (int way = 0; way < NP_REPLAY_WAY_COUNT && rc == 0; way++) {
            rc = order_cv_replay(&sets[k], (enum np_replay_way)way, best, seed, ref);
            for (size_t c = 0; c < ncols && rc == 0; c++) {
                if (cols[c].ops->uses_prediction)
                    rc = order_cv_predict_set(&sets[k], model, cols[c].cal, seed);
                if (rc == 0)
                    rc = order_cv_replay(&sets[k], (enum np_replay_way)way, cols[c].ops, seed, t);
                fig[way][c][k] = rc == 0 ? np_replay_figure(t, ref, n) : NAN;
            }
        }
        free(ref);
        free(t);
    }
    for (int way = 0; way < NP_REPLAY_WAY_COUNT && rc == 0; way++)
        for (size_t c = 0; c < ncols; c++) {
            double sum = 0, sum_bp = 0;
            for (size_t k = 0; k < nsets; k++) {
                ratio[way][c][k] = fig[way][c][k] / fig[way][best_plus][k];
                sum += fig[way][c][k];
                sum_bp += fig[way][best_plus][k];
            }
            ratio[way][c][nsets] = sum / sum_bp;
        }
    return rc;
}

/* Mean, interval and seeds below 1 of one cell over the seeds. */
struct cell {
    double mean, lo, hi;
    int below;
};

static int summarise(const double *x, int seeds, struct cell *cell)
{
    cell->mean = 0;
    cell->below = 0;
    for (int s = 0; s < seeds; s++) {
        cell->mean += x[s] / seeds;
        cell->below += x[s] < 1 - 1e-12;
    }
    return np_interval_percentile(x, (size_t)seeds, LEVEL, &cell->lo, &cell->hi);
}

static json_t *cell_json(const struct cell *c, int seeds)
{
    return json_pack("{s:f, s:f, s:f, s:i, s:i}", "mean", c->mean, "lo", c->lo, "hi", c->hi,
                     "seeds_below_1", c->below, "seeds", seeds);
}

static void print_header(const struct set *sets, size_t nsets, const struct noise_options *o)
{
    printf("\nnoise on the calibrated contention model%s: %d seeds, footprints x exp(%g N), "
           "co-location x exp(%g N) per job; eq. 6.1 relative to best-plus's under the same draw, "
           "mean [95%% percentile interval over seeds]; last column: seeds below 1 (overall)\n",
           order_cv_cross_validated ? " (hot law and mover rate cross-validated)" : "", o->seeds,
           o->sigma_footprint, o->sigma_colocation);
    printf("| way | order, predictions from |");
    for (size_t k = 0; k < nsets; k++)
        printf(" %s |", sets[k].name);
    printf(" overall | seeds below 1 |\n|---|---|");
    for (size_t k = 0; k < nsets + 2; k++)
        printf("---|");
    printf("\n");
}

/* The table (or the JSON) from every seed's ratios. */
static int report(const struct set *sets, size_t nsets, const struct column *cols, size_t ncols,
                  seed_ratios *ratio, const struct noise_options *o)
{
    json_t *rows = json_array();
    double *x = calloc((size_t)o->seeds, sizeof(*x));
    int rc = rows && x ? 0 : -1;

    if (!o->json)
        print_header(sets, nsets, o);
    for (int way = 0; way < NP_REPLAY_WAY_COUNT && rc == 0; way++)
        for (size_t c = 0; c < ncols && rc == 0; c++) {
            json_t *per_set = json_object();
            struct cell cell;
            if (!o->json)
                printf("| %s | %s |", np_replay_way_name((enum np_replay_way)way), cols[c].name);
            for (size_t k = 0; k <= nsets && rc == 0; k++) {
                for (int s = 0; s < o->seeds; s++)
                    x[s] = ratio[s][way][c][k];
                rc = summarise(x, o->seeds, &cell);
                if (rc == 0 && !o->json)
                    printf(" %.4f [%.4f, %.4f] |", cell.mean, cell.lo, cell.hi);
                if (rc == 0 && k < nsets)
                    json_object_set_new(per_set, sets[k].name, cell_json(&cell, o->seeds));
            }
            if (rc == 0 && !o->json)
                printf(" %d of %d |\n", cell.below, o->seeds);
            if (rc == 0)
                json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:o, s:o}", "way",
                                                      np_replay_way_name((enum np_replay_way)way),
                                                      "order", cols[c].ops->name, "name",
                                                      cols[c].name, "sets", per_set, "overall",
                                                      cell_json(&cell, o->seeds)));
            else
                json_decref(per_set);
        }
    if (rc == 0 && o->json) {
        json_t *doc =
            json_pack("{s:s, s:i, s:f, s:f, s:s, s:o}", "model",
                      order_cv_cross_validated ? "contention-cv" : "contention", "seeds", o->seeds,
                      "sigma_footprint", o->sigma_footprint, "sigma_colocation",
                      o->sigma_colocation, "interval", "95% percentile over seeds", "rows", rows);
        rows = NULL;
        rc = doc && json_dumpf(doc, stdout, JSON_INDENT(1) | NP_JSON_REALS) == 0 ? 0 : -1;
        printf("\n");
        json_decref(doc);
    }
    json_decref(rows);
    free(x);
    return rc;
}

/* Seeds s with s % workers == worker into ratio[s]. */
static int run_seeds(struct set *sets, uint64_t **base, size_t nsets, const struct np_model *model,
                     const struct column *cols, size_t ncols, size_t best_plus,
                     const struct noise_options *o, int worker, int workers, seed_ratios *ratio)
{
    int rc = 0;

    for (int s = worker; s < o->seeds && rc == 0; s += workers) {
        for (size_t k = 0; k < nsets; k++)
            draw_noise(&sets[k], base[k], k, (uint64_t)s + 1, o);
        rc = one_seed(sets, nsets, model, cols, ncols, best_plus, (uint64_t)s + 1, ratio[s]);
        if (!o->json)
            fprintf(stderr, "order_cv: noise seed %d of %d done\n", s + 1, o->seeds);
    }
    return rc;
}

/* Read @p size bytes from @p fd; 0 or -1. */
static int read_all(int fd, void *buf, size_t size)
{
    char *at = buf;

    while (size > 0) {
        const ssize_t got = read(fd, at, size);
        if (got <= 0)
            return -1;
        at += got;
        size -= (size_t)got;
    }
    return 0;
}

/* The seeds over o->workers forked processes, each writing its seeds' ratios to a pipe. */
static int run_workers(struct set *sets, uint64_t **base, size_t nsets,
                       const struct np_model *model, const struct column *cols, size_t ncols,
                       size_t best_plus, const struct noise_options *o, seed_ratios *ratio)
{
    int fds[64], rc = 0, started = 0;

    for (int w = 0; w < o->workers && rc == 0; w++) {
        int p[2];
        pid_t pid = -1;
        if (pipe(p) < 0 || (pid = fork()) < 0) {
            rc = -1;
            break;
        }
        if (pid == 0) {
            int crc;
            close(p[0]);
            crc = run_seeds(sets, base, nsets, model, cols, ncols, best_plus, o, w, o->workers,
                            ratio);
            for (int s = w; s < o->seeds && crc == 0; s += o->workers)
                crc = write(p[1], ratio[s], sizeof(ratio[s])) == (ssize_t)sizeof(ratio[s]) ? 0 : -1;
            _exit(crc ? 1 : 0);
        }
        close(p[1]);
        fds[started++] = p[0];
    }
    for (int w = 0; w < started; w++) {
        for (int s = w; s < o->seeds && rc == 0; s += o->workers)
            rc = read_all(fds[w], ratio[s], sizeof(ratio[s]));
        close(fds[w]);
    }
    for (int w = 0; w < started; w++) {
        int status = 0;
        if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
            rc = -1;
    }
    return rc;
}

int order_cv_noise(const struct np_model *model, const struct np_footprints *footprints,
                   const char *const *paths, size_t nsets, const struct noise_options *o)
{
    static struct set sets[MAX_SETS];
    struct column cols[MAXCOLS];
    size_t best_plus = 0;
    const size_t ncols = noise_columns(cols, &best_plus);
    seed_ratios *ratio = calloc((size_t)o->seeds, sizeof(*ratio));
    uint64_t *base[MAX_SETS] = {0};
    int rc = ratio && order_cv_load_sets(sets, nsets, paths, model, footprints, 0) == 0 ? 0 : -1;

    order_cv_contention = true;
    for (size_t k = 0; k < nsets && rc == 0; k++) {
        base[k] = calloc(sets[k].owned.set.njobs + 1, sizeof(*base[k]));
        rc = base[k] ? 0 : -1;
        for (size_t j = 0; rc == 0 && j < sets[k].owned.set.njobs; j++)
            base[k][j] = sets[k].owned.jobs[j].pages;
    }
    if (rc == 0)
        rc = o->workers > 1
                 ? run_workers(sets, base, nsets, model, cols, ncols, best_plus, o, ratio)
                 : run_seeds(sets, base, nsets, model, cols, ncols, best_plus, o, 0, 1, ratio);
    if (rc == 0)
        rc = report(sets, nsets, cols, ncols, ratio, o);
    for (size_t k = 0; k < nsets; k++)
        free(base[k]);
    order_cv_free_sets(sets, nsets);
    free(ratio);
    return rc;
}
