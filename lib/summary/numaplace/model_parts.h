/*
 * numaplace/model_parts.h - the small pieces the report and summary models are built from:
 * ordered keys, numbers that remember whether they were integers, strings, ordered
 * string -> number maps (model_parts.c), and Slurm hostlists of node names (summary_hostlist.c).
 *
 * Key order: jansson keeps an object's members in the order they were first set and
 * `numaplace ... --json` prints them so. The models record that order (struct np_keys) so that
 * decoding and encoding again gives the same bytes.
 *
 * Ownership: every struct here owns its strings and arrays; free with the matching _free
 * (which accepts NULL and leaves the struct zeroed).
 */
#ifndef NUMAPLACE_MODEL_PARTS_H
#define NUMAPLACE_MODEL_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "numaplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- member order ---- */

#define NP_KEYS_MAX 32

/** The members an object has, by the caller's member ids, in the order they were first set. */
struct np_keys {
    unsigned char n;
    unsigned char k[NP_KEYS_MAX];
};

NP_API bool np_keys_has(const struct np_keys *ks, unsigned key);
/** Mark @p key present; a new member goes last, an existing one keeps its place (jansson). */
NP_API void np_keys_set(struct np_keys *ks, unsigned key);
NP_API void np_keys_del(struct np_keys *ks, unsigned key);

/**
 * Record the members of @p obj (borrowed) in their order: each key must be one of @p names
 * (@p count of them, indexed by member id). @p what names the object in the message.
 * @return 0, or -EINVAL naming the unknown key and the accepted ones
 */
NP_API int np_keys_scan(const json_t *obj, const char *const *names, unsigned count,
                        struct np_keys *ks, const char *what, struct np_err *err);

/* ---- numbers ---- */

enum np_num_kind { NP_NUM_NULL = 0, NP_NUM_INT, NP_NUM_REAL };

/** A JSON number as it was written: an integer stays an integer, a real a real. */
struct np_num {
    enum np_num_kind kind;
    json_int_t i;
    double r;
};

NP_API struct np_num np_num_int(json_int_t v);
NP_API struct np_num np_num_real(double v);
/** Its value as a double (0 for null). */
NP_API double np_num_value(const struct np_num *n);
/** Its value as an integer, reals rounded (0 for null). */
NP_API json_int_t np_num_int_value(const struct np_num *n);
/** New reference. */
NP_API json_t *np_num_json(const struct np_num *n);
/** @return 0, or -EINVAL (not a number, or null when @p nullable is false) with @p err */
NP_API int np_num_decode(const json_t *j, bool nullable, struct np_num *n, const char *what,
                         struct np_err *err);

/** An array of numbers as written (timeline series, a step's local NUMA nodes). */
struct np_nums {
    struct np_num *v;
    size_t n;
};

/* ---- ordered maps of numbers: bytes per NUMA node, tasks per policy, pages per cause ---- */

struct np_map_entry {
    char *key;
    struct np_num v;
};

struct np_map {
    struct np_map_entry *e;
    size_t n;
};

/** The entry for @p key, or NULL. Borrowed. */
NP_API struct np_map_entry *np_map_get(const struct np_map *m, const char *key);
/** Set @p key to @p v: an existing entry keeps its place, a new one goes last. 0 or -ENOMEM. */
NP_API int np_map_set(struct np_map *m, const char *key, struct np_num v);
/** The sum of the values, each rounded to an integer. */
NP_API json_int_t np_map_sum(const struct np_map *m);
/** dst[k] += src[k], each rounded to an integer (bytes per node, tasks per policy). 0 or -ENOMEM */
NP_API int np_map_add(struct np_map *dst, const struct np_map *src);
/** dst[k] = max(dst[k], src[k]) as integers. 0 or -ENOMEM */
NP_API int np_map_max(struct np_map *dst, const struct np_map *src);
NP_API int np_map_copy(struct np_map *dst, const struct np_map *src);
NP_API void np_map_free(struct np_map *m);
/** @p obj must be an object of numbers. @return 0, -EINVAL / -ENOMEM with @p err */
NP_API int np_map_decode(const json_t *obj, struct np_map *m, const char *what, struct np_err *err);
/** New reference, NULL on out-of-memory. */
NP_API json_t *np_map_json(const struct np_map *m);

/* ---- strings ---- */

struct np_strs {
    char **v;
    size_t n;
};

NP_API bool np_strs_has(const struct np_strs *s, const char *str);
/** Append @p str (copied). 0 or -ENOMEM. */
NP_API int np_strs_append(struct np_strs *s, const char *str);
/**
 * Append each of @p names[0..n) (copied) that @p s does not hold yet, once, in their order: what
 * np_strs_has before each np_strs_append does, in O((s->n + n) log(s->n + n)) (a job's node list
 * can name tens of thousands). @p s is unchanged on failure. 0 or -ENOMEM.
 */
NP_API int np_strs_append_new(struct np_strs *s, const char *const *names, size_t n);
/** Add @p str to a sorted set (nothing when present). 0 or -ENOMEM. */
NP_API int np_strs_add_sorted(struct np_strs *s, const char *str);
NP_API int np_strs_copy(struct np_strs *dst, const struct np_strs *src);
NP_API void np_strs_free(struct np_strs *s);
/** @p arr must be an array of strings. @return 0, -EINVAL / -ENOMEM with @p err */
NP_API int np_strs_decode(const json_t *arr, struct np_strs *s, const char *what,
                          struct np_err *err);
NP_API json_t *np_strs_json(const struct np_strs *s);

/**
 * @p names (borrowed, any order) as a Slurm-style hostlist: "node[0001-0100,0102],login1" (a
 * prefix and zero-padded numbers in ranges; names without a number as they are).
 * @param out receives a new string (free()). @return 0 or -ENOMEM
 */
NP_API int np_hostlist_compress(const struct np_strs *names, char **out);
/**
 * @p list expanded into @p out, sorted (strcmp) and without duplicates, at most @p max names.
 * @return 0, -EINVAL (not a hostlist of node names, or more than @p max) / -ENOMEM with @p err
 */
NP_API int np_hostlist_expand(const char *list, size_t max, struct np_strs *out,
                              struct np_err *err);
/** Whether @p names, sorted as np_hostlist_expand sorts, holds @p name. */
NP_API bool np_strs_sorted_has(const struct np_strs *names, const char *name);

/** A copy of @p s (NULL stays NULL); sets *ok false on out-of-memory. */
NP_API char *np_strdup_or_null(const char *s, bool *ok);
/** Replace *dst with a copy of @p s. 0 or -ENOMEM. */
NP_API int np_str_set(char **dst, const char *s);

/**
 * One more element, zeroed, at the end of an array: @p array_ptr is the address of its pointer
 * (a T **), *@p n its length, @p size sizeof(T). Both are updated.
 * @return the new element, or NULL out of memory (the array and *@p n unchanged)
 */
NP_API void *np_array_append(void *array_ptr, size_t *n, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* NUMAPLACE_MODEL_PARTS_H */
