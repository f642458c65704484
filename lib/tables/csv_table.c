/* The data tables' shared reader (see csv_table.h). */
#include "csv_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static int header(const struct np_csv_table *table, char **fields, int n, int *index,
                  const char *path, int lineno, struct np_err *err)
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

int np_csv_load(const struct np_csv_table *table, const char *path, void **rows, size_t *count,
                struct np_err *err)
{
    FILE *f = fopen(path, "re");
    char line[1024], *fields[NP_CSV_MAX_FIELDS];
    int index[NP_CSV_MAX_FIELDS];
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
                  table->max_fields < NP_CSV_MAX_FIELDS ? table->max_fields : NP_CSV_MAX_FIELDS);
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
            rc = table->parse(fields, n, index, (char *)*rows + *count * table->row_size, path,
                              lineno, err);
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
