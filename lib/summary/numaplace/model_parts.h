/*
 * numaplace/model_parts.h - string sets (model_parts.c) and Slurm hostlists of node names
 * (summary_hostlist.c): the node lists of a job summary, which a job of tens of thousands of
 * nodes makes long.
 *
 * Ownership: a struct np_strs owns its strings; free with np_strs_free (accepts NULL and leaves
 * it zeroed).
 */
#ifndef NUMAPLACE_MODEL_PARTS_H
#define NUMAPLACE_MODEL_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "numaplace/common.h"

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
NP_API void np_strs_free(struct np_strs *s);

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

#endif /* NUMAPLACE_MODEL_PARTS_H */
