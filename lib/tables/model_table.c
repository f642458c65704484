/* The measured table's CSV reader (see numaplace/tables.h). */
#include "numaplace/tables.h"

#include <errno.h>
#include <math.h>
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

/* One row: every number column parsed (empty: NAN), the shares from percent to fractions. */
static int parse_row(char **fields, int n, const int *index, void *out, const char *path,
                     int lineno, struct np_err *err)
{
    struct np_model_row *row = out;
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
    for (int c = 0; c < COL_COUNT; c++) {
        const char *value = index[c] >= 0 && index[c] < n ? fields[index[c]] : "";
        if (numbers[c] && parse_number(value, numbers[c]) < 0)
            return np_err_set(err, -EINVAL, "%s:%d: column '%s' is not a number: '%s'", path,
                              lineno, column_names[c], value);
    }
    snprintf(row->benchmark, sizeof(row->benchmark), "%s", fields[index[COL_BENCH]]);
    snprintf(row->input, sizeof(row->input), "%s",
             index[COL_INPUT] < n ? fields[index[COL_INPUT]] : "");
    snprintf(row->sensitivity, sizeof(row->sensitivity), "%s",
             index[COL_SENS] < n ? fields[index[COL_SENS]] : "");
    if (isnan(row->remote) || isnan(row->interleave))
        return np_err_set(err, -EINVAL, "%s:%d: %s lacks its remote or interleave figure", path,
                          lineno, row->benchmark);
    row->remote /= 100.0;
    row->interleave /= 100.0;
    return 0;
}

static const struct np_csv_table model_csv = {
    .what = "model data",
    .names = column_names,
    .count = COL_COUNT,
    .optional = 1u << COL_TLB | 1u << COL_TIME,
    .max_fields = 32,
    .row_size = sizeof(struct np_model_row),
    .parse = parse_row,
};

int np_model_load(const char *path, struct np_model *model, struct np_err *err)
{
    void *rows;
    const int rc = np_csv_load(&model_csv, path, &rows, &model->count, err);

    model->rows = rows;
    return rc;
}
