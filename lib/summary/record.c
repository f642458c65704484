/* Records described by tables (record.h): one decoder, encoder, free and copy for all of them. */
#include "record.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/model_parts.h"

/* A member's path for messages, cut when long. */
#define PATHF(buf, ...) np_strf(buf, sizeof(buf), __VA_ARGS__)

static struct np_keys *keys_of(const struct np_record *rec, const void *obj)
{
    return (struct np_keys *)((char *)obj + rec->keys_off);
}

static int expected(struct np_err *err, const char *path, const char *what)
{
    return np_err_set(err, -EINVAL, "%s: expected %s", path, what);
}

static int oom(struct np_err *err, const char *path)
{
    return np_err_set(err, -ENOMEM, "%s: out of memory", path);
}

/* A new zeroed array of @p n + 1 elements (never NULL for an empty array) into *@p slot. */
static void *new_array(void *slot, size_t n, size_t size)
{
    void *a = calloc(n + 1, size);

    memcpy(slot, &a, sizeof(a));
    return a;
}

static int field_decode(const struct np_field *f, const json_t *v, void *obj, const char *path,
                        struct np_err *err)
{
    void *at = (char *)obj + f->off;
    size_t *count = (size_t *)((char *)obj + f->count_off);
    char sub[300];
    int rc;

    switch (f->type) {
    case NP_F_STR:
        if (!json_is_string(v))
            return expected(err, path, "a string");
        if (!(*(char **)at = strdup(json_string_value(v))))
            return oom(err, path);
        return 0;
    case NP_F_INT:
        if (!json_is_integer(v))
            return expected(err, path, "an integer");
        *(json_int_t *)at = json_integer_value(v);
        return 0;
    case NP_F_REAL:
        if (!json_is_number(v))
            return expected(err, path, "a number");
        *(double *)at = json_number_value(v);
        return 0;
    case NP_F_BOOL:
        if (!json_is_boolean(v))
            return expected(err, path, "true or false");
        *(bool *)at = json_is_true(v);
        return 0;
    case NP_F_NUM:
        return np_num_decode(v, false, (struct np_num *)at, path, err);
    case NP_F_NUMS:
    case NP_F_NUMS_OR_NULL: {
        struct np_num *nums;
        json_t *e;
        size_t i;
        if (!json_is_array(v))
            return expected(err, path, "an array of numbers");
        if (!(nums = new_array(at, json_array_size(v), sizeof(*nums))))
            return oom(err, path);
        json_array_foreach((json_t *)v, i, e)
        {
            PATHF(sub, "%s[%zu]", path, i);
            if ((rc = np_num_decode(e, f->type == NP_F_NUMS_OR_NULL, &nums[i], sub, err)) != 0)
                return rc;
            (*count)++;
        }
        return 0;
    }
    case NP_F_STRS:
        return np_strs_decode(v, (struct np_strs *)at, path, err);
    case NP_F_MAP:
        return np_map_decode(v, (struct np_map *)at, path, err);
    case NP_F_RECORD:
        return np_rec_decode(f->rec, v, at, path, err);
    case NP_F_ARRAY: {
        char *base;
        json_t *e;
        size_t i;
        if (!json_is_array(v))
            return expected(err, path, "an array");
        if (!(base = new_array(at, json_array_size(v), f->elem_size)))
            return oom(err, path);
        json_array_foreach((json_t *)v, i, e)
        {
            PATHF(sub, "%s[%zu]", path, i);
            (*count)++; /* before decoding it: np_rec_free frees a half-decoded element */
            if ((rc = field_decode(f->elem, e, base + i * f->elem_size, sub, err)) != 0)
                return rc;
        }
        return 0;
    }
    case NP_F_OBJECT: {
        const char *key;
        char *base;
        json_t *e;
        if (!json_is_object(v))
            return expected(err, path, "an object");
        if (!(base = new_array(at, json_object_size(v), f->elem_size)))
            return oom(err, path);
        json_object_foreach((json_t *)v, key, e)
        {
            char *elem = base + *count * f->elem_size;
            PATHF(sub, "%s.%s", path, key);
            (*count)++;
            if (!(*(char **)(elem + f->name_off) = strdup(key)))
                return oom(err, sub);
            if ((rc = field_decode(f->elem, e, elem, sub, err)) != 0)
                return rc;
        }
        return 0;
    }
    case NP_F_CUSTOM:
        return f->ops->decode(v, at, path, err);
    }
    return expected(err, path, "a member this numaplace knows");
}

int np_rec_decode(const struct np_record *rec, const json_t *j, void *obj, const char *what,
                  struct np_err *err)
{
    const char *names[NP_KEYS_MAX] = {0}, *self = *what ? what : rec->root;
    struct np_keys *ks = keys_of(rec, obj);
    int rc;

    for (unsigned id = 0; id < rec->n && id < NP_KEYS_MAX; id++)
        names[id] = rec->fields[id].name;
    if ((rc = np_keys_scan(j, names, rec->n, ks, self, err)) != 0)
        return rc;
    for (unsigned id = 0; id < rec->n; id++)
        if (rec->fields[id].required && !np_keys_has(ks, id))
            return np_err_set(err, -EINVAL, "%s: missing member \"%s\"", self,
                              rec->fields[id].name);
    for (unsigned i = 0; !rc && i < ks->n; i++) {
        const struct np_field *f = &rec->fields[ks->k[i]];
        char path[300];
        if (*what)
            PATHF(path, "%s.%s", what, f->name);
        else
            PATHF(path, "%s", f->name);
        rc = field_decode(f, json_object_get(j, f->name), obj, path, err);
    }
    return rc || !rec->check ? rc : rec->check(obj, self, err);
}

bool np_rec_required_or_set(const struct np_record *rec, const void *obj, unsigned id)
{
    const struct np_field *f = &rec->fields[id];

    return f->required || f->type != NP_F_STR || *(char *const *)((const char *)obj + f->off);
}

/* ---- encoding ---- */

static json_t *field_encode(const struct np_field *f, const void *obj)
{
    const void *at = (const char *)obj + f->off;
    json_t *v = NULL;
    size_t count = 0;

    if (f->type == NP_F_NUMS || f->type == NP_F_NUMS_OR_NULL || f->type == NP_F_ARRAY ||
        f->type == NP_F_OBJECT)
        count = *(const size_t *)((const char *)obj + f->count_off);

    switch (f->type) {
    case NP_F_STR: {
        const char *s = *(char *const *)at;
        return s ? json_string(s) : json_null();
    }
    case NP_F_INT:
        return json_integer(*(const json_int_t *)at);
    case NP_F_REAL:
        return json_real(*(const double *)at);
    case NP_F_BOOL:
        return json_boolean(*(const bool *)at);
    case NP_F_NUM:
        return np_num_json((const struct np_num *)at);
    case NP_F_NUMS:
    case NP_F_NUMS_OR_NULL: {
        const struct np_num *nums = *(struct np_num *const *)at;
        v = json_array();
        for (size_t i = 0; v && i < count; i++)
            if (json_array_append_new(v, np_num_json(&nums[i])) != 0)
                json_decref(v), v = NULL;
        return v;
    }
    case NP_F_STRS:
        return np_strs_json((const struct np_strs *)at);
    case NP_F_MAP:
        return np_map_json((const struct np_map *)at);
    case NP_F_RECORD:
        return np_rec_encode(f->rec, at);
    case NP_F_ARRAY:
    case NP_F_OBJECT: {
        const char *base = *(char *const *)at;
        v = f->type == NP_F_ARRAY ? json_array() : json_object();
        for (size_t i = 0; v && i < count; i++) {
            const char *elem = base + i * f->elem_size;
            json_t *e = field_encode(f->elem, elem);
            if (f->type == NP_F_ARRAY
                    ? json_array_append_new(v, e) != 0
                    : !e || json_object_set_new(v, *(char *const *)(elem + f->name_off), e) != 0)
                json_decref(v), v = NULL;
        }
        return v;
    }
    case NP_F_CUSTOM:
        return f->ops->encode(at);
    }
    return NULL;
}

json_t *np_rec_encode(const struct np_record *rec, const void *obj)
{
    struct np_keys ks = *keys_of(rec, obj);
    json_t *o = json_object();

    for (unsigned id = 0; rec->present && id < rec->n; id++)
        if (rec->present(rec, obj, id))
            np_keys_set(&ks, id);
        else
            np_keys_del(&ks, id);
    for (unsigned i = 0; o && i < ks.n; i++) {
        const unsigned id = ks.k[i];
        json_t *v;
        if (id >= rec->n)
            continue; /* not a member: the model never sets one, but the index must hold */
        v = field_encode(&rec->fields[id], obj);
        if (!v || json_object_set_new(o, rec->fields[id].name, v) != 0)
            json_decref(o), o = NULL;
    }
    return o;
}

/* ---- freeing and copying ---- */

static void field_free(const struct np_field *f, void *obj)
{
    void *at = (char *)obj + f->off;
    size_t *count = (size_t *)((char *)obj + f->count_off);

    switch (f->type) {
    case NP_F_STR:
        free(*(char **)at);
        *(char **)at = NULL;
        break;
    case NP_F_INT:
        *(json_int_t *)at = 0;
        break;
    case NP_F_REAL:
        *(double *)at = 0;
        break;
    case NP_F_BOOL:
        *(bool *)at = false;
        break;
    case NP_F_NUM:
        memset(at, 0, sizeof(struct np_num));
        break;
    case NP_F_NUMS:
    case NP_F_NUMS_OR_NULL:
        free(*(struct np_num **)at);
        *(struct np_num **)at = NULL;
        *count = 0;
        break;
    case NP_F_STRS:
        np_strs_free((struct np_strs *)at);
        break;
    case NP_F_MAP:
        np_map_free((struct np_map *)at);
        break;
    case NP_F_RECORD:
        np_rec_free(f->rec, at);
        break;
    case NP_F_ARRAY:
    case NP_F_OBJECT: {
        char *base = *(char **)at;
        for (size_t i = 0; i < *count; i++) {
            field_free(f->elem, base + i * f->elem_size);
            if (f->type == NP_F_OBJECT)
                free(*(char **)(base + i * f->elem_size + f->name_off));
        }
        free(base);
        *(char **)at = NULL;
        *count = 0;
        break;
    }
    case NP_F_CUSTOM:
        f->ops->free(at);
        break;
    }
}

void np_rec_free(const struct np_record *rec, void *obj)
{
    for (unsigned id = 0; id < rec->n; id++)
        field_free(&rec->fields[id], obj);
    memset(keys_of(rec, obj), 0, sizeof(struct np_keys));
}

void np_rec_drop(const struct np_record *rec, void *obj, unsigned id)
{
    if (id >= rec->n)
        return;
    np_keys_del(keys_of(rec, obj), id);
    field_free(&rec->fields[id], obj);
}

int np_rec_copy(const struct np_record *rec, void *dst, const void *src)
{
    json_t *j = np_rec_encode(rec, src);
    int rc;

    if (!j)
        return -ENOMEM;
    rc = np_rec_decode(rec, j, dst, "copy", NULL);
    json_decref(j);
    if (rc)
        np_rec_free(rec, dst);
    return rc;
}
