/* The pieces the report and summary models are built from (numaplace/model_parts.h): ordered
 * keys, numbers that stay integers or reals, strings and ordered maps. */
#include "numaplace/model_parts.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- arrays ---- */

void *np_array_append(void *array_ptr, size_t *n, size_t size)
{
    void *items, *grown;

    /* through memcpy: array_ptr points at a T *, which is not a void * to the compiler */
    memcpy(&items, array_ptr, sizeof(items));
    grown = realloc(items, (*n + 1) * size);
    if (!grown)
        return NULL;
    memcpy(array_ptr, &grown, sizeof(grown));
    memset((char *)grown + *n * size, 0, size);
    return (char *)grown + (*n)++ * size;
}

/* ---- keys ---- */

bool np_keys_has(const struct np_keys *ks, unsigned key)
{
    for (unsigned i = 0; i < ks->n; i++)
        if (ks->k[i] == key)
            return true;
    return false;
}

void np_keys_set(struct np_keys *ks, unsigned key)
{
    if (!np_keys_has(ks, key) && ks->n < NP_KEYS_MAX)
        ks->k[ks->n++] = (unsigned char)key;
}

void np_keys_del(struct np_keys *ks, unsigned key)
{
    for (unsigned i = 0; i < ks->n; i++)
        if (ks->k[i] == key) {
            memmove(&ks->k[i], &ks->k[i + 1], ks->n - i - 1);
            ks->n--;
            return;
        }
}

int np_keys_scan(const json_t *obj, const char *const *names, unsigned count, struct np_keys *ks,
                 const char *what, struct np_err *err)
{
    const char *key;
    json_t *v;

    memset(ks, 0, sizeof(*ks));
    if (!json_is_object(obj))
        return np_err_set(err, -EINVAL, "%s: expected an object", what);
    json_object_foreach((json_t *)obj, key, v)
    {
        unsigned id = 0;
        while (id < count && (!names[id] || strcmp(names[id], key) != 0))
            id++;
        if (id == count) {
            char accepted[512];
            size_t o = 0;
            accepted[0] = '\0';
            for (unsigned k = 0; k < count; k++) {
                int w;
                if (!names[k])
                    continue;
                w = snprintf(accepted + o, sizeof(accepted) - o, "%s%s", o ? ", " : "", names[k]);
                if (w < 0 || (size_t)w >= sizeof(accepted) - o)
                    break;
                o += (size_t)w;
            }
            return np_err_set(err, -EINVAL, "%s: unknown member \"%s\" (accepted: %s)", what, key,
                              accepted);
        }
        np_keys_set(ks, id);
    }
    return 0;
}

/* ---- numbers ---- */

struct np_num np_num_int(json_int_t v)
{
    return (struct np_num){.kind = NP_NUM_INT, .i = v, .r = (double)v};
}

struct np_num np_num_real(double v)
{
    return (struct np_num){.kind = NP_NUM_REAL, .r = v};
}

double np_num_value(const struct np_num *n)
{
    return n->kind == NP_NUM_INT ? (double)n->i : n->kind == NP_NUM_REAL ? n->r : 0;
}

json_int_t np_num_int_value(const struct np_num *n)
{
    return n->kind == NP_NUM_INT ? n->i : n->kind == NP_NUM_REAL ? (json_int_t)llround(n->r) : 0;
}

json_t *np_num_json(const struct np_num *n)
{
    return n->kind == NP_NUM_INT    ? json_integer(n->i)
           : n->kind == NP_NUM_REAL ? json_real(n->r)
                                    : json_null();
}

int np_num_decode(const json_t *j, bool nullable, struct np_num *n, const char *what,
                  struct np_err *err)
{
    if (json_is_integer(j))
        *n = np_num_int(json_integer_value(j));
    else if (json_is_real(j))
        *n = np_num_real(json_real_value(j));
    else if (nullable && json_is_null(j))
        *n = (struct np_num){0};
    else
        return np_err_set(err, -EINVAL, "%s: expected a number%s", what,
                          nullable ? " or null" : "");
    return 0;
}

/* ---- strings ---- */

char *np_strdup_or_null(const char *s, bool *ok)
{
    char *c;

    if (!s)
        return NULL;
    c = strdup(s);
    if (!c)
        *ok = false;
    return c;
}

int np_str_set(char **dst, const char *s)
{
    char *c = s ? strdup(s) : NULL;

    if (s && !c)
        return -ENOMEM;
    free(*dst);
    *dst = c;
    return 0;
}

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

int np_strs_copy(struct np_strs *dst, const struct np_strs *src)
{
    memset(dst, 0, sizeof(*dst));
    for (size_t i = 0; i < src->n; i++)
        if (np_strs_append(dst, src->v[i]) != 0) {
            np_strs_free(dst);
            return -ENOMEM;
        }
    return 0;
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

int np_strs_decode(const json_t *arr, struct np_strs *s, const char *what, struct np_err *err)
{
    size_t i;
    json_t *v;

    memset(s, 0, sizeof(*s));
    if (!json_is_array(arr))
        return np_err_set(err, -EINVAL, "%s: expected an array of strings", what);
    json_array_foreach((json_t *)arr, i, v)
    {
        if (!json_is_string(v)) {
            np_strs_free(s);
            return np_err_set(err, -EINVAL, "%s[%zu]: expected a string", what, i);
        }
        if (np_strs_append(s, json_string_value(v)) != 0) {
            np_strs_free(s);
            return np_err_set(err, -ENOMEM, "%s: out of memory", what);
        }
    }
    return 0;
}

json_t *np_strs_json(const struct np_strs *s)
{
    json_t *arr = json_array();

    for (size_t i = 0; arr && i < s->n; i++)
        if (json_array_append_new(arr, json_string(s->v[i])) != 0) {
            json_decref(arr);
            return NULL;
        }
    return arr;
}

/* ---- maps ---- */

struct np_map_entry *np_map_get(const struct np_map *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->e[i].key, key) == 0)
            return &m->e[i];
    return NULL;
}

int np_map_set(struct np_map *m, const char *key, struct np_num v)
{
    struct np_map_entry *e = np_map_get(m, key);

    if (!e) {
        e = realloc(m->e, (m->n + 1) * sizeof(*e));
        if (!e)
            return -ENOMEM;
        m->e = e;
        e = &m->e[m->n];
        e->key = strdup(key);
        if (!e->key)
            return -ENOMEM;
        m->n++;
    }
    e->v = v;
    return 0;
}

json_int_t np_map_sum(const struct np_map *m)
{
    json_int_t sum = 0;

    for (size_t i = 0; i < m->n; i++)
        sum += np_num_int_value(&m->e[i].v);
    return sum;
}

/* dst[k] += src[k] (bytes per NUMA node, tasks per policy, pages per cause). */
int np_map_add(struct np_map *dst, const struct np_map *src)
{
    for (size_t i = 0; i < src->n; i++) {
        const struct np_map_entry *have = np_map_get(dst, src->e[i].key);
        const json_int_t sum =
            (have ? np_num_int_value(&have->v) : 0) + np_num_int_value(&src->e[i].v);
        if (np_map_set(dst, src->e[i].key, np_num_int(sum)) != 0)
            return -ENOMEM;
    }
    return 0;
}

/* dst[k] = max(dst[k], src[k]). */
int np_map_max(struct np_map *dst, const struct np_map *src)
{
    for (size_t i = 0; i < src->n; i++) {
        const struct np_map_entry *have = np_map_get(dst, src->e[i].key);
        const json_int_t v = np_num_int_value(&src->e[i].v);
        if ((!have || v > np_num_int_value(&have->v)) &&
            np_map_set(dst, src->e[i].key, np_num_int(v)) != 0)
            return -ENOMEM;
    }
    return 0;
}

int np_map_copy(struct np_map *dst, const struct np_map *src)
{
    memset(dst, 0, sizeof(*dst));
    for (size_t i = 0; i < src->n; i++)
        if (np_map_set(dst, src->e[i].key, src->e[i].v) != 0) {
            np_map_free(dst);
            return -ENOMEM;
        }
    return 0;
}

void np_map_free(struct np_map *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        free(m->e[i].key);
    free(m->e);
    memset(m, 0, sizeof(*m));
}

int np_map_decode(const json_t *obj, struct np_map *m, const char *what, struct np_err *err)
{
    const char *key;
    json_t *v;

    memset(m, 0, sizeof(*m));
    if (!json_is_object(obj))
        return np_err_set(err, -EINVAL, "%s: expected an object of numbers", what);
    json_object_foreach((json_t *)obj, key, v)
    {
        struct np_num n;
        char path[256];
        int rc;
        snprintf(path, sizeof(path), "%s.%s", what, key);
        rc = np_num_decode(v, false, &n, path, err);
        if (!rc && np_map_set(m, key, n) != 0)
            rc = np_err_set(err, -ENOMEM, "%s: out of memory", what);
        if (rc) {
            np_map_free(m);
            return rc;
        }
    }
    return 0;
}

json_t *np_map_json(const struct np_map *m)
{
    json_t *obj = json_object();

    for (size_t i = 0; obj && i < m->n; i++)
        if (json_object_set_new(obj, m->e[i].key, np_num_json(&m->e[i].v)) != 0) {
            json_decref(obj);
            return NULL;
        }
    return obj;
}
