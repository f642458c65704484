/* String sets (numaplace/model_parts.h): a job's node lists, de-duplicated by sorting. */
#include "numaplace/model_parts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool np_strs_has(const struct np_strs *s, const char *str)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], str) == 0)
            return true;
    return false;
}

static int strs_insert(struct np_strs *s, size_t at, const char *str)
{
    char **v = realloc(s->v, (s->n + 1) * sizeof(*v)), *c;

    if (!v)
        return -ENOMEM;
    s->v = v;
    c = strdup(str);
    if (!c)
        return -ENOMEM;
    memmove(&v[at + 1], &v[at], (s->n - at) * sizeof(*v));
    v[at] = c;
    s->n++;
    return 0;
}

int np_strs_append(struct np_strs *s, const char *str)
{
    return strs_insert(s, s->n, str);
}

/* One name of np_strs_append_new's sort: where it comes from decides which copy is first. */
struct strs_entry {
    const char *str;
    size_t order; /* s's own first (0..s->n), then the new names' */
};

static int strs_entry_cmp(const void *a, const void *b)
{
    const struct strs_entry *x = a, *y = b;
    const int c = strcmp(x->str, y->str);

    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

int np_strs_append_new(struct np_strs *s, const char *const *names, size_t n)
{
    const size_t total = s->n + n;
    struct strs_entry *all;
    bool *take;
    char **v;
    size_t added = 0, at = s->n;

    if (n == 0)
        return 0;
    all = malloc(total * sizeof(*all));
    take = calloc(n, sizeof(*take));
    if (!all || !take) {
        free(all);
        free(take);
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->n; i++)
        all[i] = (struct strs_entry){s->v[i], i};
    for (size_t i = 0; i < n; i++)
        all[s->n + i] = (struct strs_entry){names[i], s->n + i};
    qsort(all, total, sizeof(*all), strs_entry_cmp);
    /* the first of each run of equal names is the one kept; a new one only if s lacks it */
    for (size_t i = 0; i < total; i++)
        if ((i == 0 || strcmp(all[i - 1].str, all[i].str) != 0) && all[i].order >= s->n) {
            take[all[i].order - s->n] = true;
            added++;
        }
    free(all);
    v = added ? realloc(s->v, (s->n + added) * sizeof(*v)) : s->v;
    if (!v) {
        free(take);
        return -ENOMEM;
    }
    s->v = v;
    for (size_t i = 0; i < n; i++) {
        if (!take[i])
            continue;
        if (!(v[at] = strdup(names[i]))) {
            while (at > s->n)
                free(v[--at]);
            free(take);
            return -ENOMEM;
        }
        at++;
    }
    s->n = at;
    free(take);
    return 0;
}

int np_strs_add_sorted(struct np_strs *s, const char *str)
{
    size_t i;

    if (!str || np_strs_has(s, str))
        return 0;
    for (i = 0; i < s->n; i++)
        if (strcmp(s->v[i], str) > 0)
            break;
    return strs_insert(s, i, str);
}

void np_strs_free(struct np_strs *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof(*s));
}
