/*
 * csv_table.h - the two steps every data table of this component shares (the measured model,
 * the footprints): a line split at commas, and a header's columns found by name. Private.
 */
#ifndef NUMAPLACE_CSV_TABLE_H
#define NUMAPLACE_CSV_TABLE_H

#include "numaplace/common.h"

/** Split @p line at commas in place (its newline dropped); fields beyond @p max are dropped.
 *  @return the number of fields */
int np_csv_split(char *line, char **fields, int max);

/**
 * Find each of @p count column @p names among the header's @p n fields: @p index[c] is its field
 * number, -1 when absent. A column absent whose bit is not in @p optional is an error naming it.
 * @return 0 or -EINVAL with @p err ("PATH:LINE: header lacks column 'NAME'")
 */
int np_csv_header(char **fields, int n, const char *const *names, int count, unsigned optional,
                  int *index, const char *path, int lineno, struct np_err *err);

#endif /* NUMAPLACE_CSV_TABLE_H */
