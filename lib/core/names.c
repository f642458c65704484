/* Names of enum values from one table each (see numaplace/names.h). */
#include "numaplace/names.h"

#include <errno.h>
#include <pthread.h>
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

static size_t name_list_sep(const struct np_name_table *table, const char *separator, char *buf,
                            size_t len)
{
    size_t need = 0;

    if (len)
        buf[0] = '\0';
    for (unsigned i = 0; i < table->count; i++) {
        const unsigned v = table->list_order ? table->list_order[i] : i;
        if (v >= table->count || !table->names[v])
            continue;
        const int n = snprintf(need < len ? buf + need : NULL, need < len ? len - need : 0, "%s%s",
                               need ? separator : "", table->names[v]);
        need += n > 0 ? (size_t)n : 0;
    }
    return need;
}

size_t np_name_list(const struct np_name_table *table, char *buf, size_t len)
{
    return name_list_sep(table, ", ", buf, len);
}

/* A few tables' lists, each built once: the lists are small and the tables static. */
const char *np_name_list_static(const struct np_name_table *table, const char *separator)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct {
        const struct np_name_table *table;
        const char *separator;
        char text[256];
    } cache[16];
    static size_t ncached;
    const char *found = NULL;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ncached && !found; i++)
        if (cache[i].table == table && strcmp(cache[i].separator, separator) == 0)
            found = cache[i].text;
    if (!found && ncached < sizeof(cache) / sizeof(cache[0])) {
        cache[ncached].table = table;
        cache[ncached].separator = separator;
        name_list_sep(table, separator, cache[ncached].text, sizeof(cache[ncached].text));
        found = cache[ncached++].text;
    }
    pthread_mutex_unlock(&lock);
    return found ? found : "(too many name lists)";
}
