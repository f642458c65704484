/* Names of enum values from one table each (see numaplace/names.h). */
#include "numaplace/names.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *np_name_of(const struct np_name_table *table, unsigned value)
{
    return value < table->count && table->names[value] ? table->names[value] : "unknown";
}

int np_name_parse(const struct np_name_table *table, const char *text, unsigned *out,
                  struct np_err *err)
{
    char accepted[256];

    for (unsigned v = 0; text && v < table->count; v++)
        if (table->names[v] && strcmp(text, table->names[v]) == 0) {
            *out = v;
            return 0;
        }
    np_name_list(table, accepted, sizeof(accepted));
    return np_err_set(err, -EINVAL, "invalid %s '%s': accepted values are %s", table->what,
                      text ? text : "(null)", accepted);
}

size_t np_name_list(const struct np_name_table *table, char *buf, size_t len)
{
    size_t need = 0;

    if (len)
        buf[0] = '\0';
    for (unsigned i = 0; i < table->count; i++) {
        const unsigned v = table->list_order ? table->list_order[i] : i;
        if (v >= table->count || !table->names[v])
            continue;
        const int n = snprintf(need < len ? buf + need : NULL, need < len ? len - need : 0, "%s%s",
                               need ? ", " : "", table->names[v]);
        need += n > 0 ? (size_t)n : 0;
    }
    return need;
}
