/*
 * contention_cases.h - the thesis's static runs as test cases for the contention model, and the
 * fit of its parameters on them, with one static mix held out (bench/contention_fit scores and
 * fits; bench/auto_score scores the mixes under models fit without them).
 *
 * Loading reads files; scoring and fitting are pure and deterministic.
 */
#ifndef NUMAPLACE_BENCH_CONTENTION_CASES_H
#define NUMAPLACE_BENCH_CONTENTION_CASES_H

#include "numaplace/contention.h"
#include "numaplace/model.h"

#define FIT_MAX_CASES 2048
#define FIT_MIX_JOBS  8
#define FIT_NMIXES    2 /* A = 500s_ref, B = 600s_ref */
#define FIT_NO_MIX    (-1)

enum fit_group { FIT_CHARACTERIZATION, FIT_SWEEP, FIT_MIXES, FIT_NGROUPS };

extern const char *const fit_group_names[FIT_NGROUPS];

struct fit_job {
    const struct np_model_row *row; /* borrowed from the caller's np_model */
    double share0;                  /* share of its accesses on node 0 (the rest on node 1) */
};

/* One measured case: up to 8 jobs on node 0's CPUs, plus hogs; measured is job target's time
 * relative to its alone, local one (a mix gives one case per job, sharing the layout). */
struct fit_case {
    enum fit_group group;
    struct fit_job jobs[FIT_MIX_JOBS];
    int njobs, target;
    int hogs, hog_node, hog_mem_node;
    int mix, conf; /* a static mix's 0 (A) or 1 (B) and configuration 1-6; FIT_NO_MIX, 0 else */
    double measured;
    char label[64];
};

struct fit_set {
    struct fit_case cases[FIT_MAX_CASES];
    int ncases;
};

/* The model's parameters and the stress-ng hog's demand per instance (MB/s), fit beside them. */
struct fit_params {
    struct np_contention_params model;
    double hog_mbps;
};

/* m per model row under one parameter set (rows are few). Zero it before a parameter set. */
struct fit_cache {
    const struct np_model_row *row[128];
    double m[128];
    int n;
};

/* Appends DIR's thesis-characterization.csv, thesis-sweeps.csv and thesis-static-mixes.csv
 * (rows found in @p model only). 0, or -1 after saying on stderr which file was unreadable. */
int fit_load(struct fit_set *set, const char *dir, const struct np_model *model);

/* Loads DIR's sandman-spec2017.csv into @p model (free it with np_model_free) and appends its
 * static runs with fit_load. 0, or -1 after saying on stderr, after "@p who: ", what failed (the
 * model then freed). */
int fit_load_dir(struct fit_set *set, struct np_model *model, const char *dir, const char *who);

/* np_contention_params_sandman and its hog. */
void fit_params_sandman(struct fit_params *fp);

/* Every job's slowdown in @p c under @p fp (s: c->njobs values); 0, or -1. */
int fit_solve(const struct fit_params *fp, const struct fit_case *c, struct fit_cache *cache,
              double *s);

/* Per group: mean |ln(model / measured)| and mean ln over the cases not of mix @p held_out
 * (FIT_NO_MIX: all); returns the mean over the groups: the fit's objective. */
double fit_score(const struct fit_params *fp, const struct fit_set *set, int held_out,
                 double *group_err, double *group_bias);

/* Coordinate descent on a multiplicative grid from @p fp, minimising fit_score with mix
 * @p held_out left out (its cases play no part: the result does not depend on them). */
void fit_search(struct fit_params *fp, const struct fit_set *set, int held_out);

#endif
