/*
 * The sensitivity model's leave-one-benchmark-out cross-validation on a measured table, for each
 * candidate feature set: the figures of bench/RESULTS.md ("Sensitivity from counters").
 *
 *   sensitivity_cv [CSV]       (default data/sandman-spec2017.csv)
 *
 * Each line: the features, rows predicted, Spearman rho, the threshold the CV chooses, agreement
 * of the predicted class with the measured class (plain and balanced) and with the table's
 * labels; then, for the product's feature set, every row whose predicted class is wrong.
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

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "data/sandman-spec2017.csv";
    struct np_model table;
    struct np_err err = {0};
    double *pred;

    if (np_model_load(path, &table, &err) < 0) {
        fprintf(stderr, "sensitivity_cv: %s\n", err.msg);
        return 1;
    }
    pred = calloc(table.count, sizeof(*pred));
    printf("| features | rows | Spearman rho | threshold | agree (measured) | balanced | agree "
           "(labels) |\n|---|---|---|---|---|---|---|\n");
    for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
        struct np_sens_cv cv;
        if (np_sensitivity_cv_threshold(&table, sets[s].features, &cv, &err) < 0) {
            fprintf(stderr, "sensitivity_cv: %s\n", err.msg);
            return 1;
        }
        printf("| %s | %zu | %.3f | %.2f | %.3f | %.3f | %.3f of %zu |\n", sets[s].name, cv.rows,
               cv.spearman, cv.threshold, cv.agree, cv.balanced, cv.agree_label, cv.labelled);
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
