/*
 * The sensitivity model's cross-validation on a measured table: the figures of bench/RESULTS.md
 * ("Sensitivity from counters").
 *
 *   sensitivity_cv [CSV]       (default data/sandman-spec2017.csv)
 *
 * First the table's counts (rows, benchmark names, programs: the folds hold a program's inputs and
 * its rate/speed twin). Then, per candidate feature set, nested leave-one-program-out CV (the
 * threshold chosen on the other programs only) beside the same predictor's plain CV, whose
 * threshold is chosen on the very predictions it is scored on (optimistic: the product's threshold
 * comes from it, its score does not). Then two baselines on the same outer folds: the majority
 * class and a single LLC MPKI cut (in sample too). Last, for the product's feature set, every row
 * whose predicted class is wrong.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "numaplace/sensitivity.h"
#include "numaplace/tables.h"

static const struct {
    const char *name;
    unsigned features;
} sets[] = {
    {"mpki", NP_SENS_LOG_MPKI},
    {"mpki+cpi (product)", NP_SENS_LOG_MPKI | NP_SENS_LOG_CPI},
    {"mpki+bw", NP_SENS_LOG_MPKI | NP_SENS_LOG_BW},
    {"mpki+cpi+bw", NP_SENS_LOG_MPKI | NP_SENS_LOG_CPI | NP_SENS_LOG_BW},
    {"mpki+cpi+tlb", NP_SENS_LOG_MPKI | NP_SENS_LOG_CPI | NP_SENS_LOG_TLB},
    {"mpki+cpi+bw+tlb", NP_SENS_FEATURES_ALL},
};

static void print_score(const char *name, const struct np_sens_score *s)
{
    printf("  %-30s agree %.3f, balanced %.3f, labels %.3f of %zu\n", name, s->agree, s->balanced,
           s->agree_label, s->labelled);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "data/sandman-spec2017.csv";
    struct np_model table;
    struct np_err err = {0};
    struct np_sens_nested nested;
    double *pred;

    if (np_model_load(path, &table, &err) < 0) {
        fprintf(stderr, "sensitivity_cv: %s\n", err.msg);
        return 1;
    }
    pred = calloc(table.count, sizeof(*pred));
    if (np_sensitivity_cv_nested(&table, NP_SENS_FEATURES_DEFAULT, &nested, &err) < 0) {
        fprintf(stderr, "sensitivity_cv: %s\n", err.msg);
        return 1;
    }
    printf("table: %zu rows, %zu benchmark names, %zu programs (folds)\n\n", table.count,
           nested.names, nested.folds);
    printf("| features | rows | nested: rho | thresholds | agree | balanced | agree (labels) | "
           "plain CV: threshold | agree | balanced |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
        struct np_sens_cv cv;
        struct np_sens_nested n;
        if (np_sensitivity_cv_threshold(&table, sets[s].features, &cv, &err) < 0 ||
            np_sensitivity_cv_nested(&table, sets[s].features, &n, &err) < 0) {
            fprintf(stderr, "sensitivity_cv: %s\n", err.msg);
            return 1;
        }
        printf("| %s | %zu | %.3f | %.2f-%.2f | %.3f | %.3f | %.3f of %zu | %.2f | %.3f | %.3f |\n",
               sets[s].name, n.rows, n.spearman, n.threshold_min, n.threshold_max, n.model.agree,
               n.model.balanced, n.model.agree_label, n.model.labelled, cv.threshold, cv.agree,
               cv.balanced);
    }
    printf("\nbaselines, nested on the same %zu rows (threshold chosen per fold as the model's):\n",
           nested.rows);
    print_score("model (mpki+cpi)", &nested.model);
    print_score("majority class", &nested.majority);
    print_score("one LLC MPKI cut", &nested.mpki_cut);
    {
        struct np_sens_cv cv;
        struct np_sens_score in_sample;
        double cut;
        np_sensitivity_cv_threshold(&table, NP_SENS_FEATURES_DEFAULT, &cv, &err);
        if (np_sensitivity_mpki_cut(&table, cv.threshold, &cut, &in_sample) == 0) {
            printf("in sample at the product's threshold %.2f: LLC MPKI >= %.3f\n", cv.threshold,
                   cut);
            print_score("one LLC MPKI cut (in sample)", &in_sample);
        }
    }
    {
        struct np_sens_cv cv;
        np_sensitivity_cv_threshold(&table, NP_SENS_FEATURES_DEFAULT, &cv, &err);
        np_sensitivity_cv(&table, NP_SENS_FEATURES_DEFAULT, cv.threshold, pred, &cv, &err);
        printf("\nproduct model at %.2f: rows whose predicted class is wrong\n", cv.threshold);
        for (size_t i = 0; i < table.count; i++) {
            const struct np_model_row *r = &table.rows[i];
            const char *label = r->sensitivity[0] ? r->sensitivity : "-";
            if (isnan(pred[i]))
                printf("  %s %s: not predicted (no ipc or llc_mpki)\n", r->benchmark, r->input);
            else if ((pred[i] >= cv.threshold) != (r->remote >= cv.threshold) ||
                     (r->sensitivity[0] && (pred[i] >= cv.threshold) != (label[0] == 'h')))
                printf("  %s %s: measured %.2fx, predicted %.2fx, label %s\n", r->benchmark,
                       r->input[0] ? r->input : "-", r->remote, pred[i], label);
        }
        {
            struct np_sens_model m;
            np_sensitivity_fit(&m, &table, NP_SENS_FEATURES_DEFAULT, cv.threshold, NULL, &err);
            printf("\nfit on all %zu rows: ln(remote) = %.4f %+.4f ln(mpki+0.01) %+.4f ln(cpi)\n",
                   m.rows, m.coef[0], m.coef[1], m.coef[2]);
        }
    }
    free(pred);
    np_model_free(&table);
    return 0;
}
