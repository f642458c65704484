/* Reading the measured tables (see numaplace/tables.h). Each is a CSV file read line by line,
 * each line split at commas, the header's columns found by name, the rows grown as they come. */
#include "numaplace/tables.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef NUMAPLACE_SENSITIVITY_TABLE
#define NUMAPLACE_SENSITIVITY_TABLE "/usr/share/numaplace/sandman-spec2017.csv"
#endif

#define CSV_MAX_FIELDS 32

/* One kind of table, for csv_load. */
struct csv_table {
    const char *what;         /* in the message when it cannot be opened ("footprint table") */
    const char *const *names; /* its columns, found by name in the header */
    int count;
    unsigned optional; /* bit c: names[c] may be absent */
    int max_fields;    /* fields of a line beyond this are dropped */
    bool whole_lines;  /* a line longer than 1022 bytes is refused, not read as two */
    size_t row_size;
    /* One data row from its columns' fields in @p column ("" when absent or past the line's
     * end). @return 0 or -EINVAL with @p err ("PATH:LINE: ...") */
    int (*parse)(const char *const *column, void *row, const char *path, int lineno,
                 struct np_err *err);
};

/* @p line split at commas in place into @p fields; fields beyond @p max are dropped.
 * @return the number of fields */
static int split(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;

    while (n < max) {
        fields[n++] = p;
        p = strchr(p, ',');
        if (!p)
            break;
        *p++ = '\0';
    }
    return n;
}

/* Each column's field number among the header's @p n fields into @p index (-1 when absent).
 * @return 0 or -EINVAL with @p err naming the first required column absent */
static int header(const struct csv_table *table, char **fields, int n, int *index, const char *path,
                  int lineno, struct np_err *err)
{
    for (int c = 0; c < table->count; c++) {
        index[c] = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(fields[i], table->names[c]) == 0)
                index[c] = i;
        if (index[c] < 0 && !(table->optional >> c & 1u))
            return np_err_set(err, -EINVAL, "%s:%d: header lacks column '%s'", path, lineno,
                              table->names[c]);
    }
    return 0;
}

/*
 * Read the table at @p path: lines starting with '#' and empty lines are skipped, the first
 * other line is the header, every later one a row. A double quote anywhere is refused (no
 * quoting is read), as is a header lacking a required column. On success *@p rows (free())
 * holds *@p count >= 1 rows; on failure NULL and 0.
 * @return 0, or -errno (cannot open), -EINVAL, -ENOMEM with @p err naming the file and line
 */
static int csv_load(const struct csv_table *table, const char *path, void **rows, size_t *count,
                    struct np_err *err)
{
    FILE *f = fopen(path, "re");
    char line[1024], *fields[CSV_MAX_FIELDS];
    int index[CSV_MAX_FIELDS] = {0}; /* every one set by the header, before any row */
    const char *column[CSV_MAX_FIELDS];
    bool have_header = false;
    size_t cap = 0;
    int lineno = 0, rc = 0;

    *rows = NULL;
    *count = 0;
    if (!f)
        return np_err_set(err, -errno, "cannot open %s '%s': %s", table->what, path,
                          strerror(errno));
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        int n;

        lineno++;
        if (table->whole_lines && !strchr(line, '\n') && !feof(f)) {
            /* its rest would be read as the next line */
            rc = np_err_set(err, -EINVAL, "%s:%d: longer than %zu bytes", path, lineno,
                            sizeof(line) - 2);
            break;
        }
        if (line[0] == '#' || line[0] == '\n')
            continue;
        line[strcspn(line, "\r\n")] = '\0';
        /* A quoted field may hold a comma: split at it, its columns would shift silently. */
        if (strchr(line, '"')) {
            rc = np_err_set(err, -EINVAL,
                            "%s:%d: a quoted field (\"): the table takes plain comma-separated "
                            "values, no quoting",
                            path, lineno);
            break;
        }
        n = split(line, fields,
                  table->max_fields < CSV_MAX_FIELDS ? table->max_fields : CSV_MAX_FIELDS);
        if (!have_header) {
            rc = header(table, fields, n, index, path, lineno, err);
            have_header = true;
        } else {
            if (*count == cap) {
                void *grown = realloc(*rows, (cap = cap ? cap * 2 : 64) * table->row_size);
                if (!grown) {
                    rc = np_err_set(err, -ENOMEM, "out of memory reading '%s'", path);
                    break;
                }
                *rows = grown;
            }
            for (int c = 0; c < table->count; c++)
                column[c] = index[c] >= 0 && index[c] < n ? fields[index[c]] : "";
            rc = table->parse(column, (char *)*rows + *count * table->row_size, path, lineno, err);
            *count += rc == 0;
        }
    }
    fclose(f);
    if (rc == 0 && *count == 0)
        rc = np_err_set(err, -EINVAL, "%s: no data rows", path);
    if (rc) {
        free(*rows);
        *rows = NULL;
        *count = 0;
    }
    return rc;
}

enum model_column {
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
static const char *const model_columns[COL_COUNT] = {
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
static int parse_model_row(const char *const *column, void *out, const char *path, int lineno,
                           struct np_err *err)
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
        if (numbers[c] && parse_number(column[c], numbers[c]) < 0)
            return np_err_set(err, -EINVAL, "%s:%d: column '%s' is not a number: '%s'", path,
                              lineno, model_columns[c], column[c]);
    }
    snprintf(row->benchmark, sizeof(row->benchmark), "%s", column[COL_BENCH]);
    snprintf(row->input, sizeof(row->input), "%s", column[COL_INPUT]);
    snprintf(row->sensitivity, sizeof(row->sensitivity), "%s", column[COL_SENS]);
    if (isnan(row->remote) || isnan(row->interleave))
        return np_err_set(err, -EINVAL, "%s:%d: %s lacks its remote or interleave figure", path,
                          lineno, row->benchmark);
    row->remote /= 100.0;
    row->interleave /= 100.0;
    return 0;
}

static const struct csv_table model_csv = {
    .what = "model data",
    .names = model_columns,
    .count = COL_COUNT,
    .optional = 1u << COL_TLB | 1u << COL_TIME,
    .max_fields = 32,
    .row_size = sizeof(struct np_model_row),
    .parse = parse_model_row,
};

int np_model_load(const char *path, struct np_model *model, struct np_err *err)
{
    void *rows;
    const int rc = csv_load(&model_csv, path, &rows, &model->count, err);

    model->rows = rows;
    return rc;
}

enum { FP_BENCH, FP_INPUT, FP_PAGES, FP_CORUN, FP_COUNT };
static const char *const footprint_columns[FP_COUNT] = {"benchmark", "input", "footprint_pages",
                                                        "corun_factor"};

static int parse_footprint_row(const char *const *column, void *out, const char *path, int lineno,
                               struct np_err *err)
{
    struct np_footprint *row = out;
    const char *text = column[FP_PAGES];
    char *end;
    unsigned long long pages;

    if (!*column[FP_BENCH])
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
    text = column[FP_CORUN];
    if (*text) {
        row->corun = strtod(text, &end);
        if (*end || !(row->corun >= 1) || !isfinite(row->corun))
            return np_err_set(err, -EINVAL,
                              "%s:%d: column 'corun_factor' is not a factor (1 or more): '%s'",
                              path, lineno, text);
    }
    text = column[FP_INPUT];
    /* never cut: a cut name could match another benchmark's row */
    if (strlen(column[FP_BENCH]) >= sizeof(row->benchmark) || strlen(text) >= sizeof(row->input))
        return np_err_set(err, -EINVAL, "%s:%d: column '%s' is longer than %zu bytes", path, lineno,
                          strlen(text) >= sizeof(row->input) ? "input" : "benchmark",
                          strlen(text) >= sizeof(row->input) ? sizeof(row->input) - 1
                                                             : sizeof(row->benchmark) - 1);
    snprintf(row->benchmark, sizeof(row->benchmark), "%s", column[FP_BENCH]);
    snprintf(row->input, sizeof(row->input), "%s", text);
    row->pages = pages;
    return 0;
}

static const struct csv_table footprint_csv = {
    .what = "footprint table",
    .names = footprint_columns,
    .count = FP_COUNT,
    .optional = 1u << FP_CORUN,
    .max_fields = 16,
    .whole_lines = true,
    .row_size = sizeof(struct np_footprint),
    .parse = parse_footprint_row,
};

int np_footprints_load(const char *path, struct np_footprints *table, struct np_err *err)
{
    void *rows;
    const int rc = csv_load(&footprint_csv, path, &rows, &table->count, err);

    table->rows = rows;
    return rc;
}

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
