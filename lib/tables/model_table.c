/* The measured table's CSV reader (see numaplace/tables.h). */
#include "numaplace/tables.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_table.h"

enum column {
    COL_BENCH,
    COL_INPUT,
    COL_IPC,
    COL_LLC,
    COL_BW,
    COL_REMOTE,
    COL_INTERLEAVE,
    COL_SENS,
    COL_TLB,  /* optional: a site's table may lack it */
    COL_TIME, /* optional: only the replay (numaplace/replay.h) needs it */
    COL_COUNT
};
static const char *const column_names[COL_COUNT] = {
    "benchmark",  "input",          "ipc",         "llc_mpki", "bw_mbps",
    "remote_pct", "interleave_pct", "sensitivity", "tlb_mpki", "total_time_s"};

static int parse_number(const char *text, double *out)
{
    char *end;

    if (!*text) {
        *out = NAN;
        return 0;
    }
    *out = strtod(text, &end);
    return *end == '\0' ? 0 : -1;
}
int np_model_load(const char *path, struct np_model *model, struct np_err *err)
{
    FILE *f = fopen(path, "re");
    char line[1024];
    int index[COL_COUNT];
    bool have_header = false;
    size_t cap = 0;
    int lineno = 0, rc = 0;

    memset(model, 0, sizeof(*model));
    if (!f)
        return np_err_set(err, -errno, "cannot open model data '%s': %s", path, strerror(errno));
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        char *fields[32];
        int n;

        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        n = np_csv_split(line, fields, 32);
        if (!have_header) {
            rc = np_csv_header(fields, n, column_names, COL_COUNT, 1u << COL_TLB | 1u << COL_TIME,
                               index, path, lineno, err);
            have_header = true;
            continue;
        }
        if (model->count == cap) {
            struct np_model_row *grown;
            cap = cap ? cap * 2 : 64;
            grown = realloc(model->rows, cap * sizeof(*grown));
            if (!grown) {
                rc = np_err_set(err, -ENOMEM, "out of memory reading '%s'", path);
                break;
            }
            model->rows = grown;
        }
        {
            struct np_model_row *row = &model->rows[model->count];
            double *numbers[] = {NULL,
                                 NULL,
                                 &row->ipc,
                                 &row->llc_mpki,
                                 &row->bw_mbps,
                                 &row->remote,
                                 &row->interleave,
                                 NULL,
                                 &row->tlb_mpki,
                                 &row->total_time_s};
            memset(row, 0, sizeof(*row));
            for (int c = 0; c < COL_COUNT && rc == 0; c++) {
                const char *value = index[c] >= 0 && index[c] < n ? fields[index[c]] : "";
                if (numbers[c] && parse_number(value, numbers[c]) < 0)
                    rc = np_err_set(err, -EINVAL, "%s:%d: column '%s' is not a number: '%s'", path,
                                    lineno, column_names[c], value);
            }
            if (rc)
                break;
            snprintf(row->benchmark, sizeof(row->benchmark), "%s", fields[index[COL_BENCH]]);
            snprintf(row->input, sizeof(row->input), "%s",
                     index[COL_INPUT] < n ? fields[index[COL_INPUT]] : "");
            snprintf(row->sensitivity, sizeof(row->sensitivity), "%s",
                     index[COL_SENS] < n ? fields[index[COL_SENS]] : "");
            if (isnan(row->remote) || isnan(row->interleave)) {
                rc = np_err_set(err, -EINVAL, "%s:%d: %s lacks its remote or interleave figure",
                                path, lineno, row->benchmark);
                break;
            }
            row->remote /= 100.0;
            row->interleave /= 100.0;
            model->count++;
        }
    }
    fclose(f);
    if (rc == 0 && model->count == 0)
        rc = np_err_set(err, -EINVAL, "%s: no data rows", path);
    if (rc)
        np_model_free(model);
    return rc;
}
