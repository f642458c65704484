/* The data tables' shared steps (see csv_table.h). */
#include "csv_table.h"

#include <errno.h>
#include <string.h>

int np_csv_split(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;

    line[strcspn(line, "\r\n")] = '\0';
    while (n < max) {
        fields[n++] = p;
        p = strchr(p, ',');
        if (!p)
            break;
        *p++ = '\0';
    }
    return n;
}

int np_csv_header(char **fields, int n, const char *const *names, int count, unsigned optional,
                  int *index, const char *path, int lineno, struct np_err *err)
{
    for (int c = 0; c < count; c++) {
        index[c] = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(fields[i], names[c]) == 0)
                index[c] = i;
        if (index[c] < 0 && !(optional >> c & 1u))
            return np_err_set(err, -EINVAL, "%s:%d: header lacks column '%s'", path, lineno,
                              names[c]);
    }
    return 0;
}
