/*
 * csv_table.h - what every data table of this component shares (the measured model, the
 * footprints): the file read line by line, each line split at commas, the header's columns
 * found by name, the rows grown as they come. Private.
 */
#ifndef NUMAPLACE_CSV_TABLE_H
#define NUMAPLACE_CSV_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "numaplace/common.h"

#define NP_CSV_MAX_FIELDS 32

/* One kind of table, for np_csv_load. */
struct np_csv_table {
    const char *what;         /* in the message when it cannot be opened ("footprint table") */
    const char *const *names; /* its columns, found by name in the header */
    int count;
    unsigned optional; /* bit c: names[c] may be absent (its index is then -1) */
    int max_fields;    /* fields of a line beyond this are dropped */
    bool whole_lines;  /* a line longer than 1022 bytes is refused, not read as two */
    size_t row_size;
    /* One data row from its @p n fields, the columns' field numbers in @p index.
     * @return 0 or -EINVAL with @p err ("PATH:LINE: ...") */
    int (*parse)(char **fields, int n, const int *index, void *row, const char *path, int lineno,
                 struct np_err *err);
};

/**
 * Read the table at @p path: lines starting with '#' and empty lines are skipped, the first
 * other line is the header, every later one a row. A double quote anywhere is refused (no
 * quoting is read), as is a header lacking a required column. On success *@p rows (free())
 * holds *@p count >= 1 rows; on failure NULL and 0.
 * @return 0, or -errno (cannot open), -EINVAL, -ENOMEM with @p err naming the file and line
 */
int np_csv_load(const struct np_csv_table *table, const char *path, void **rows, size_t *count,
                struct np_err *err);

#endif /* NUMAPLACE_CSV_TABLE_H */
