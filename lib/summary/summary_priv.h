/* What the summary_*.c files share and nobody else needs (numaplace/summary_model.h is the
 * interface). */
#ifndef NUMAPLACE_SUMMARY_PRIV_H
#define NUMAPLACE_SUMMARY_PRIV_H

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "numaplace/summary_defs.h"
#include "numaplace/summary_model.h"

/* One more node at the end of s->nodes, zeroed: the array grows by doubling, since a store
 * merges a job's parts one node at a time (summary_nodes.c). NULL when out of memory. */
struct np_sum_node *np_sum_node_append(struct np_sum *s);

/* ---- folded nodes (summary_hostlist.c, summary_fold_nodes.c, summary_fold_json.c) ---- */

void np_sum_folded_free(struct np_sum_folded *f);
/* nodes_folded's decoder, encoder and free, as a member of the summary's record (record.h) */
struct np_field_ops;
extern const struct np_field_ops np_sum_folded_ops;

/* A node's figures taken before np_sum_fit trims them (the fold's distributions and sums). */
struct np_fold_snap {
    double v[NP_DIST_N]; /* NAN: none */
    double k_seconds;
    json_int_t requests;
};
/* Snapshot the nodes of @p s (*out: free()), and the tasks per policy of those not folded yet
 * into @p applied (the trims drop each node's). 0 or -ENOMEM. */
int np_fold_snapshot(const struct np_sum *s, struct np_fold_snap **out, struct np_map *applied);
/* Fold the nodes of @p s not yet folded into its distributions and sums, and keep only the
 * NP_FOLD_KEEP_WORST worst nodes in `nodes`. @p snap, @p applied: np_fold_snapshot's.
 * @return whether it changed anything, or -ENOMEM */
int np_sum_fold_nodes(struct np_sum *s, const struct np_fold_snap *snap,
                      const struct np_map *applied);
/* Whether node @p name is in the fold of @p s (false when unknown: names dropped). */
bool np_sum_in_fold(const struct np_sum *s, const char *name);

/* np_summary_check's test (summary_records.c; np_sum_decode runs it first). */
int np_sum_check(const json_t *summary, struct np_err *err);

/* A step shorter than this weighs as much as this in time-weighted means (an incomplete step
 * reports duration 0 but still says something about its node). */
#define MIN_WEIGHT_S 1.0

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

/* A member of a figure that is present: its number, else @p dflt (jansson's nget). */
static inline double np_fig_member(const struct np_figure *f, unsigned member, double value,
                                   double dflt)
{
    return np_keys_has(&f->keys, member) ? value : dflt;
}

/* The node's figure at @p member is there and has a number (no "unavailable"). */
static inline bool np_node_fig(const struct np_sum_node *n, unsigned member,
                               const struct np_figure *f, double *v)
{
    if (!np_keys_has(&n->keys, member) || !np_figure_available(f))
        return false;
    *v = np_num_value(&f->value);
    return true;
}

static inline bool np_os_fig(const struct np_sum_node *n, unsigned which, double *v)
{
    return np_keys_has(&n->keys, NP_NODE_OS_INTERFERENCE) && np_keys_has(&n->os.keys, which) &&
           np_node_fig(n, NP_NODE_OS_INTERFERENCE, &n->os.fig[which], v);
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

/* Node @p n's OS figure @p key has a number. */
static inline bool jos(const json_t *n, const char *key, double *v)
{
    return jfig(json_object_get(json_object_get(n, "os_interference"), key), "value", v);
}

/* The summary's node names in name order: a new array of borrowed strings (free()), NULL on
 * out-of-memory. */
const char **np_summary_sorted_nodes(const json_t *summary, size_t *n);

/* The names folded into `nodes_folded`, expanded and sorted, to ask whether a node is in the fold
 * (summary_nodes.c). Empty when the summary is not folded. */
struct np_fold_names {
    bool folded;
    struct np_strs sorted;
};
int np_fold_names_get(const json_t *summary, struct np_fold_names *f);
static inline bool np_fold_names_has(const struct np_fold_names *f, const char *name)
{
    return f->folded && np_strs_sorted_has(&f->sorted, name);
}
size_t np_fold_names_count(const json_t *summary, const struct np_fold_names *f);

/* The JSON names of the distributions in `nodes_folded.figures`, by enum np_sum_dist_figure. */
extern const char *const np_dist_names[NP_DIST_N];

/* np_summary_print_hostlist, with the "Predicted sensitivity:" line only when @p prediction. */
int np_summary_print_as(FILE *out, const json_t *s, const struct np_sens_model *model,
                        bool prediction, np_hostlist_fn hostlist);

#endif /* NUMAPLACE_SUMMARY_PRIV_H */
