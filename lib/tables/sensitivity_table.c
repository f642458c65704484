/* The sensitivity model the product uses, fitted on the installed table (numaplace/tables.h). */
#include "numaplace/tables.h"

#include <string.h>

#ifndef NUMAPLACE_SENSITIVITY_TABLE
#define NUMAPLACE_SENSITIVITY_TABLE "/usr/share/numaplace/sandman-spec2017.csv"
#endif

const char *np_sensitivity_default_table(void)
{
    return NUMAPLACE_SENSITIVITY_TABLE;
}

int np_sensitivity_load(struct np_sens_model *m, const char *path, struct np_err *err)
{
    struct np_model table;
    struct np_sens_cv cv;
    int rc;

    memset(m, 0, sizeof(*m));
    if (!path)
        path = np_sensitivity_default_table();
    if ((rc = np_model_load(path, &table, err)) < 0)
        return rc;
    rc = np_sensitivity_cv_threshold(&table, NP_SENS_FEATURES_DEFAULT, &cv, err);
    if (rc == 0)
        rc = np_sensitivity_fit(m, &table, NP_SENS_FEATURES_DEFAULT, cv.threshold, NULL, err);
    np_model_free(&table);
    return rc;
}
