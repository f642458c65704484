/* The footprint table's CSV reader (see numaplace/tables.h). */
#include "numaplace/tables.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_table.h"

enum { COL_BENCH, COL_INPUT, COL_PAGES, COL_CORUN, COL_COUNT };
static const char *const column_names[COL_COUNT] = {"benchmark", "input", "footprint_pages",
                                                    "corun_factor"};

static int parse_row(char **fields, int n, const int *index, void *out, const char *path,
                     int lineno, struct np_err *err)
{
    struct np_footprint *row = out;
    const char *text =
        index[COL_PAGES] >= 0 && index[COL_PAGES] < n ? fields[index[COL_PAGES]] : "";
    char *end;
    unsigned long long pages;

    if (index[COL_BENCH] < 0 || index[COL_BENCH] >= n || !*fields[index[COL_BENCH]])
        return np_err_set(err, -EINVAL, "%s:%d: column 'benchmark' is empty", path, lineno);
    errno = 0;
    pages = strtoull(text, &end, 10);
    if (!*text || *end || errno || pages == 0 || pages > NP_FOOTPRINT_MAX_PAGES || text[0] == '-')
        return np_err_set(err, -EINVAL,
                          "%s:%d: column 'footprint_pages' is not a page count (1 to %" PRIu64
                          "): '%s'",
                          path, lineno, NP_FOOTPRINT_MAX_PAGES, text);
    memset(row, 0, sizeof(*row));
    row->corun = NAN;
    text = index[COL_CORUN] >= 0 && index[COL_CORUN] < n ? fields[index[COL_CORUN]] : "";
    if (*text) {
        row->corun = strtod(text, &end);
        if (*end || !(row->corun >= 1) || !isfinite(row->corun))
            return np_err_set(err, -EINVAL,
                              "%s:%d: column 'corun_factor' is not a factor (1 or more): '%s'",
                              path, lineno, text);
    }
    text = index[COL_INPUT] >= 0 && index[COL_INPUT] < n ? fields[index[COL_INPUT]] : "";
    /* never cut: a cut name could match another benchmark's row */
    if (strlen(fields[index[COL_BENCH]]) >= sizeof(row->benchmark) ||
        strlen(text) >= sizeof(row->input))
        return np_err_set(err, -EINVAL, "%s:%d: column '%s' is longer than %zu bytes", path, lineno,
                          strlen(text) >= sizeof(row->input) ? "input" : "benchmark",
                          strlen(text) >= sizeof(row->input) ? sizeof(row->input) - 1
                                                             : sizeof(row->benchmark) - 1);
    snprintf(row->benchmark, sizeof(row->benchmark), "%s", fields[index[COL_BENCH]]);
    snprintf(row->input, sizeof(row->input), "%s", text);
    row->pages = pages;
    return 0;
}

static const struct np_csv_table footprint_csv = {
    .what = "footprint table",
    .names = column_names,
    .count = COL_COUNT,
    .optional = 1u << COL_CORUN,
    .max_fields = 16,
    .whole_lines = true,
    .row_size = sizeof(struct np_footprint),
    .parse = parse_row,
};

int np_footprints_load(const char *path, struct np_footprints *table, struct np_err *err)
{
    void *rows;
    const int rc = np_csv_load(&footprint_csv, path, &rows, &table->count, err);

    table->rows = rows;
    return rc;
}
