/* What the summary_*.c files share and nobody else needs (numaplace/summary.h is the interface):
 * the headers they all use, small readers of a summary's JSON, the totals' sums, and the folded
 * nodes' names. */
#ifndef NUMAPLACE_SUMMARY_PRIV_H
#define NUMAPLACE_SUMMARY_PRIV_H

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "numaplace/summary.h"

/* A step shorter than this weighs as much as this in time-weighted means (an incomplete step
 * reports duration 0 but still says something about its node). */
#define MIN_WEIGHT_S 1.0

/* The per-node figures `nodes_folded.figures` holds as distributions, in this order. */
enum np_sum_dist_figure {
    NP_DIST_LOCAL_SHARE = 0,
    NP_DIST_CPI,
    NP_DIST_BANDWIDTH,
    NP_DIST_KERNEL_TIME_SHARE,
    NP_DIST_DURATION_S,
    NP_DIST_STEP_COUNT,
    NP_DIST_PAGES_MOVED_BYTES,
    NP_DIST_N
};
/* Their JSON names (summary_schema.c). */
extern const char *const np_dist_names[NP_DIST_N];

/* An ISO 8601 UTC time as reports write it ("2024-05-01T10:00:00Z"), comparable as a string. */
static inline bool np_iso_ok(const char *s)
{
    return s && strlen(s) == 20 && isdigit((unsigned char)s[0]) && s[19] == 'Z';
}

/* "1.5 GiB" */
static inline void np_human_bytes(double bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    unsigned u = 0;

    while (fabs(bytes) >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f B", bytes);
    else
        snprintf(buf, len, "%.1f %s", bytes, units[u]);
}

/* What a node name may hold: letters, digits, '.', '-', '_'. */
static inline bool np_node_char_ok(char c)
{
    return isalnum((unsigned char)c) || c == '.' || c == '-' || c == '_';
}

/* strcmp for qsort and bsearch over an array of strings. */
static inline int np_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ---- reading a summary's JSON (members absent or of another type read as absent) ---- */

/* The number at @p key of @p o, else @p dflt. */
static inline double jnum(const json_t *o, const char *key, double dflt)
{
    const json_t *v = json_object_get(o, key);

    return json_is_number(v) ? json_number_value(v) : dflt;
}

/* The integer at @p key of @p o, else 0. */
static inline json_int_t jint(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static inline const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static inline const char *jstr_or(const json_t *o, const char *key, const char *dflt)
{
    return jstr(o, key) ? jstr(o, key) : dflt;
}

/* A number rounded to an integer (0 for anything else), as maps of bytes and tasks count. */
static inline json_int_t jround(const json_t *v)
{
    return json_is_integer(v) ? json_integer_value(v)
           : json_is_real(v)  ? (json_int_t)llround(json_real_value(v))
                              : 0;
}

/* Figure @p f has a number at @p value_key and no "unavailable": *@p v gets it. */
static inline bool jfig(const json_t *f, const char *value_key, double *v)
{
    const json_t *x = json_object_get(f, value_key);

    if (!json_is_number(x) || json_object_get(f, "unavailable"))
        return false;
    *v = json_number_value(x);
    return true;
}

/* The figure @p key of @p o: its reason when it is unavailable, else NULL. */
static inline const char *jwhy(const json_t *o, const char *key)
{
    return jstr(json_object_get(o, key), "unavailable");
}

/* ---- changing it (summary_build.c) ---- */

/* o[key] += @p by, an integer. 0, or -1 on out-of-memory. */
static inline int jadd(json_t *o, const char *key, json_int_t by)
{
    return json_object_set_new(o, key, json_integer(jint(o, key) + by));
}
/* dst[k] += src[k], each rounded to an integer (bytes per node, tasks per policy). 0 or -ENOMEM */
int jmap_add(json_t *dst, const json_t *src);
/* Add @p str to the sorted array of strings @p arr (nothing when present). 0 or -ENOMEM. */
int jstrs_add_sorted(json_t *arr, const char *str);
/* The class a job (or its fold) takes from one more node's @p node: high wins, unknown gives way.
 */
const char *np_class_of(const char *have, const char *node);
/* The first object of array @p arr whose string @p key is @p value (NULL: none), or NULL. */
json_t *jfind(const json_t *arr, const char *key, const char *value);

/* ---- what the totals add up over the nodes (summary_build.c); a fold keeps its share ---- */

/* A node's figures as the totals and the fold add them (the fit reads them before it trims). */
struct np_node_figs {
    const char *name;
    double v[NP_DIST_N]; /* NAN: none */
    double k_seconds;
    json_int_t requests;
};
void np_node_figs_read(const char *name, const json_t *n, struct np_node_figs *nf);

struct np_sums {
    json_int_t steps, moved, requests, ls_nodes, k_nodes;
    double ls_s, ls_xs, ls_bs, ls_xbs, k_s, k_xs; /* local share, kernel: weights, x-weighted */
    bool all_bytes;
    const char *sens, *start, *end;
};
/* `nodes_folded.sums` (NULL: none yet) read. */
struct np_sums np_sums_read(const json_t *sums);
/* Node @p n with its figures @p nf added, its requested policies to @p policies and its tasks
 * per policy to @p applied (NULL: not). 0 or -ENOMEM. */
int np_sums_add(struct np_sums *f, const json_t *n, const struct np_node_figs *nf, json_t *policies,
                json_t *applied);

/* A report's timeline checked as a summary's (summary_schema.c). 0 or -EINVAL with @p err. */
int np_timeline_check(const json_t *tl, const char *what, struct np_err *err);

/* The keys of object @p obj (a summary's nodes, a map) in order: a new array of borrowed strings
 * (free()), NULL on out-of-memory. */
const char **np_sorted_keys(const json_t *obj, size_t *n);

/* Whether @p names, sorted as np_hostlist_expand sorts, holds @p name (summary_hostlist.c). */
bool np_strs_sorted_has(const struct np_strs *names, const char *name);

/* The names folded into `nodes_folded`, expanded and sorted, to ask whether a node is in the fold
 * (summary_build.c). Empty when the summary is not folded; free sorted with np_strs_free. */
struct np_fold_names {
    bool folded;
    struct np_strs sorted;
};
int np_fold_names_get(const json_t *summary, struct np_fold_names *f);
static inline bool np_fold_names_has(const struct np_fold_names *f, const char *name)
{
    return f->folded && np_strs_sorted_has(&f->sorted, name);
}
/* Nodes that reported: those in `nodes` plus those folded and not kept whole. */
size_t np_fold_names_count(const json_t *summary, const struct np_fold_names *f);

#endif /* NUMAPLACE_SUMMARY_PRIV_H */
