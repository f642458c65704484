/* `nodes_folded` of a summary to and from JSON (docs/summary-schema.md, "Folded nodes"), strict
 * like the rest of the summary: only its members, each of its type, its names a hostlist of as
 * many nodes as it says. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "summary_priv.h"

const char *const np_sumk_dist[NP_DIST_N] = {
    "local_share", "cpi",        "bandwidth_bytes_per_s", "kernel_time_share",
    "duration_s",  "step_count", "pages_moved_bytes",
};

void np_sum_folded_free(struct np_sum_folded *f)
{
    free(f->names);
    free(f->not_updated);
    np_strs_free(&f->sorted);
    for (unsigned d = 0; d < NP_DIST_N; d++) {
        free(f->dist[d].min_node);
        free(f->dist[d].max_node);
    }
    np_strs_free(&f->policy_requested);
    np_map_free(&f->policy_applied);
    free(f->sensitivity);
    free(f->start);
    free(f->end);
    memset(f, 0, sizeof(*f));
}

/* ---- encoding: members in the order decoded, else in the tables' order ---- */

enum { FOLD_NODES, FOLD_NAMES, FOLD_FIGURES, FOLD_SUMS, FOLD_NOT_UPDATED, FOLD_N };
static const char *const fold_keys[FOLD_N] = {"nodes", "names", "figures", "sums", "not_updated"};

enum { D_COUNT, D_MIN, D_MIN_NODE, D_P50, D_P90, D_MAX, D_MAX_NODE, D_PERCENTILES_OF, D_N };
static const char *const dist_keys[D_N] = {"count", "min", "min_node", "p50",
                                           "p90",   "max", "max_node", "percentiles_of"};

enum {
    S_STEPS,
    S_PAGES_MOVED_BYTES,
    S_MIGRATION_REQUESTS,
    S_LS_NODES,
    S_LS_SECONDS,
    S_LS_X_SECONDS,
    S_LS_BYTE_SECONDS,
    S_LS_X_BYTE_SECONDS,
    S_LS_ALL_BYTES,
    S_K_NODES,
    S_K_SECONDS,
    S_K_X_SECONDS,
    S_POLICY_REQUESTED,
    S_POLICY_APPLIED,
    S_SENSITIVITY,
    S_START,
    S_END,
    S_N
};
static const char *const sums_keys[S_N] = {
    "steps",
    "pages_moved_bytes",
    "migration_requests",
    "local_share_nodes",
    "local_share_seconds",
    "local_share_x_seconds",
    "local_share_byte_seconds",
    "local_share_x_byte_seconds",
    "local_share_all_bytes",
    "kernel_time_share_nodes",
    "kernel_time_share_seconds",
    "kernel_time_share_x_seconds",
    "policy_requested",
    "policy_applied",
    "sensitivity",
    "start",
    "end",
};

/* @p have (decoded order), then every member of 0..@p n-1 that @p present says is there. */
static struct np_keys order(const struct np_keys *have, unsigned n,
                            bool (*present)(const void *, unsigned), const void *obj)
{
    struct np_keys ks = *have;

    for (unsigned k = 0; k < n; k++)
        if (present(obj, k))
            np_keys_set(&ks, k);
        else
            np_keys_del(&ks, k);
    return ks;
}

static bool always(const void *obj, unsigned k)
{
    (void)obj;
    (void)k;
    return true;
}

static bool sums_present(const void *obj, unsigned k)
{
    const struct np_sum_folded *f = obj;

    return k == S_SENSITIVITY ? f->sensitivity != NULL
           : k == S_START     ? f->start != NULL
           : k == S_END       ? f->end != NULL
                              : true;
}

static bool fold_present(const void *obj, unsigned k)
{
    return k != FOLD_NOT_UPDATED || ((const struct np_sum_folded *)obj)->not_updated;
}

static bool figure_present(const void *obj, unsigned k)
{
    return ((const struct np_sum_folded *)obj)->has_dist[k];
}

static bool set(json_t *o, const char *key, json_t *v)
{
    return v && json_object_set_new(o, key, v) == 0;
}

static json_t *dist_json(const struct np_sum_dist *d)
{
    const struct np_keys ks = order(&d->keys, D_N, always, d);
    json_t *o = json_object();

    for (unsigned i = 0; o && i < ks.n; i++) {
        const unsigned k = ks.k[i];
        json_t *v = k == D_COUNT            ? json_integer(d->count)
                    : k == D_PERCENTILES_OF ? json_integer(d->percentiles_of)
                    : k == D_MIN_NODE       ? json_string(d->min_node ? d->min_node : "")
                    : k == D_MAX_NODE       ? json_string(d->max_node ? d->max_node : "")
                                            : json_real(k == D_MIN   ? d->min
                                                        : k == D_P50 ? d->p50
                                                        : k == D_P90 ? d->p90
                                                                     : d->max);
        if (!set(o, dist_keys[k], v))
            json_decref(o), o = NULL;
    }
    return o;
}

static json_t *sum_value(const struct np_sum_folded *f, unsigned k)
{
    switch (k) {
    case S_STEPS:
        return json_integer(f->steps);
    case S_PAGES_MOVED_BYTES:
        return json_integer(f->pages_moved_bytes);
    case S_MIGRATION_REQUESTS:
        return json_integer(f->migration_requests);
    case S_LS_NODES:
        return json_integer(f->ls_nodes);
    case S_LS_SECONDS:
        return json_real(f->ls_seconds);
    case S_LS_X_SECONDS:
        return json_real(f->ls_x_seconds);
    case S_LS_BYTE_SECONDS:
        return json_real(f->ls_byte_seconds);
    case S_LS_X_BYTE_SECONDS:
        return json_real(f->ls_x_byte_seconds);
    case S_LS_ALL_BYTES:
        return json_boolean(f->ls_all_bytes);
    case S_K_NODES:
        return json_integer(f->k_nodes);
    case S_K_SECONDS:
        return json_real(f->k_seconds);
    case S_K_X_SECONDS:
        return json_real(f->k_x_seconds);
    case S_POLICY_REQUESTED:
        return np_strs_json(&f->policy_requested);
    case S_POLICY_APPLIED:
        return np_map_json(&f->policy_applied);
    case S_SENSITIVITY:
        return json_string(f->sensitivity);
    case S_START:
        return json_string(f->start);
    default:
        return json_string(f->end);
    }
}

static json_t *sums_json(const struct np_sum_folded *f)
{
    const struct np_keys ks = order(&f->sums_keys, S_N, sums_present, f);
    json_t *o = json_object();

    for (unsigned i = 0; o && i < ks.n; i++)
        if (!set(o, sums_keys[ks.k[i]], sum_value(f, ks.k[i])))
            json_decref(o), o = NULL;
    return o;
}

static json_t *figures_json(const struct np_sum_folded *f, const struct np_keys *fks)
{
    json_t *o = json_object();

    for (unsigned q = 0; o && q < fks->n; q++)
        if (!set(o, np_sumk_dist[fks->k[q]], dist_json(&f->dist[fks->k[q]])))
            json_decref(o), o = NULL;
    return o;
}

json_t *np_sum_folded_json(const struct np_sum_folded *f)
{
    const struct np_keys ks = order(&f->keys, FOLD_N, fold_present, f),
                         fks = order(&f->figure_keys, NP_DIST_N, figure_present, f);
    json_t *o = json_object();

    for (unsigned i = 0; o && i < ks.n; i++) {
        const unsigned k = ks.k[i];
        json_t *v = NULL;
        if (k == FOLD_NODES)
            v = json_integer(f->nodes);
        else if (k == FOLD_NAMES)
            v = json_string(f->names ? f->names : "");
        else if (k == FOLD_NOT_UPDATED)
            v = json_string(f->not_updated);
        else if (k == FOLD_SUMS)
            v = sums_json(f);
        else
            v = figures_json(f, &fks);
        if (!set(o, fold_keys[k], v))
            json_decref(o), o = NULL;
    }
    return o;
}

/* ---- decoding ---- */

#define BAD(what) np_err_set(err, -EINVAL, "nodes_folded.%s: %s", what, jerr.text)
#define OOM       np_err_set(err, -ENOMEM, "nodes_folded: out of memory")

static int decode_dist(const char *name, const json_t *j, struct np_sum_dist *d, struct np_err *err)
{
    const char *min_node, *max_node;
    json_error_t jerr;
    char what[64];

    snprintf(what, sizeof(what), "nodes_folded.figures.%s", name);
    if (np_keys_scan(j, dist_keys, D_N, &d->keys, what, err) != 0)
        return -EINVAL;
    if (json_unpack_ex((json_t *)j, &jerr, JSON_STRICT, "{s:I, s:F, s:s, s:F, s:F, s:F, s:s, s:I}",
                       "count", &d->count, "min", &d->min, "min_node", &min_node, "p50", &d->p50,
                       "p90", &d->p90, "max", &d->max, "max_node", &max_node, "percentiles_of",
                       &d->percentiles_of) != 0)
        return np_err_set(err, -EINVAL, "%s: %s", what, jerr.text);
    if (d->count < 1 || d->percentiles_of < 1 || d->percentiles_of > d->count ||
        d->count > NP_FOLD_MAX_NODES || !(d->min <= d->p50 && d->p50 <= d->p90 && d->p90 <= d->max))
        return np_err_set(err, -EINVAL,
                          "%s: expected 1 <= percentiles_of <= count <= %d and "
                          "min <= p50 <= p90 <= max",
                          what, NP_FOLD_MAX_NODES);
    if (np_str_set(&d->min_node, min_node) || np_str_set(&d->max_node, max_node))
        return OOM;
    return 0;
}

static int decode_sums(const json_t *j, struct np_sum_folded *f, struct np_err *err)
{
    const char *sens = NULL, *start = NULL, *end = NULL;
    json_t *preq, *papp;
    json_error_t jerr;
    int all_bytes = 0, rc;

    if ((rc = np_keys_scan(j, sums_keys, S_N, &f->sums_keys, "nodes_folded.sums", err)) != 0)
        return rc;
    if (json_unpack_ex((json_t *)j, &jerr, JSON_STRICT,
                       "{s:I, s:I, s:I, s:I, s:F, s:F, s:F, s:F, s:b, s:I, s:F, s:F, s:o, s:o, "
                       "s?s, s?s, s?s}",
                       "steps", &f->steps, "pages_moved_bytes", &f->pages_moved_bytes,
                       "migration_requests", &f->migration_requests, "local_share_nodes",
                       &f->ls_nodes, "local_share_seconds", &f->ls_seconds, "local_share_x_seconds",
                       &f->ls_x_seconds, "local_share_byte_seconds", &f->ls_byte_seconds,
                       "local_share_x_byte_seconds", &f->ls_x_byte_seconds, "local_share_all_bytes",
                       &all_bytes, "kernel_time_share_nodes", &f->k_nodes,
                       "kernel_time_share_seconds", &f->k_seconds, "kernel_time_share_x_seconds",
                       &f->k_x_seconds, "policy_requested", &preq, "policy_applied", &papp,
                       "sensitivity", &sens, "start", &start, "end", &end) != 0)
        return BAD("sums");
    f->ls_all_bytes = all_bytes;
    /* each x-weighted sum is a share (0 to 1) times its weight: a local share outside 0-100% */
    if (!(f->ls_x_seconds >= 0 && f->ls_x_seconds <= f->ls_seconds) ||
        !(f->ls_x_byte_seconds >= 0 && f->ls_x_byte_seconds <= f->ls_byte_seconds) ||
        !(f->k_x_seconds >= 0 && f->k_x_seconds <= f->k_seconds) || !isfinite(f->ls_seconds) ||
        !isfinite(f->ls_byte_seconds) || !isfinite(f->k_seconds))
        return np_err_set(err, -EINVAL,
                          "nodes_folded.sums: expected finite weights, each x_ sum between 0 "
                          "and its weight (shares from 0 to 1)");
    if (f->ls_nodes < 0 || f->ls_nodes > f->nodes || f->k_nodes < 0 || f->k_nodes > f->nodes ||
        (f->ls_nodes && !(f->ls_seconds > 0)) || (f->k_nodes && !(f->k_seconds > 0)) ||
        (f->ls_nodes && f->ls_all_bytes && !(f->ls_byte_seconds > 0)))
        return np_err_set(err, -EINVAL,
                          "nodes_folded.sums: expected node counts between 0 and nodes (%lld), "
                          "with positive weights (byte seconds too when all_bytes)",
                          (long long)f->nodes);
    if ((rc = np_strs_decode(preq, &f->policy_requested, "nodes_folded.sums.policy_requested",
                             err)) != 0 ||
        (rc = np_map_decode(papp, &f->policy_applied, "nodes_folded.sums.policy_applied", err)) !=
            0)
        return rc;
    if ((sens && np_str_set(&f->sensitivity, sens)) || (start && np_str_set(&f->start, start)) ||
        (end && np_str_set(&f->end, end)))
        return OOM;
    return 0;
}

static int decode(const json_t *j, struct np_sum_folded *f, struct np_err *err)
{
    const char *names, *not_updated = NULL, *key;
    json_t *figs, *sums, *v;
    json_error_t jerr;
    int rc;

    if ((rc = np_keys_scan(j, fold_keys, FOLD_N, &f->keys, "nodes_folded", err)) != 0)
        return rc;
    if (json_unpack_ex((json_t *)j, &jerr, JSON_STRICT, "{s:I, s:s, s:o, s:o, s?s}", "nodes",
                       &f->nodes, "names", &names, "figures", &figs, "sums", &sums, "not_updated",
                       &not_updated) != 0)
        return np_err_set(err, -EINVAL, "nodes_folded: %s", jerr.text);
    if (f->nodes < 1 || f->nodes > NP_FOLD_MAX_NODES)
        return np_err_set(err, -EINVAL, "nodes_folded.nodes: %lld; expected 1 to %d",
                          (long long)f->nodes, NP_FOLD_MAX_NODES);
    if ((rc = np_hostlist_expand(names, (size_t)f->nodes, &f->sorted, err)) != 0)
        return rc;
    if ((json_int_t)f->sorted.n != f->nodes)
        return np_err_set(err, -EINVAL, "nodes_folded.names: %zu names for %lld nodes", f->sorted.n,
                          (long long)f->nodes);
    if (not_updated) { /* a hostlist too, of folded nodes: checked here, not at a later merge */
        struct np_strs late = {0};
        rc = np_hostlist_expand(not_updated, (size_t)f->nodes, &late, err);
        np_strs_free(&late);
        if (rc != 0)
            return rc;
    }
    if (np_str_set(&f->names, names) || (not_updated && np_str_set(&f->not_updated, not_updated)))
        return OOM;
    if (!json_is_object(figs))
        return np_err_set(err, -EINVAL, "nodes_folded.figures: expected an object");
    json_object_foreach(figs, key, v)
    {
        unsigned d = 0;
        while (d < NP_DIST_N && strcmp(np_sumk_dist[d], key) != 0)
            d++;
        if (d == NP_DIST_N)
            return np_err_set(err, -EINVAL,
                              "nodes_folded.figures: unknown figure '%.40s' (accepted: "
                              "local_share, cpi, bandwidth_bytes_per_s, kernel_time_share, "
                              "duration_s, step_count, pages_moved_bytes)",
                              key);
        if ((rc = decode_dist(key, v, &f->dist[d], err)) != 0)
            return rc;
        np_keys_set(&f->figure_keys, d);
        if (f->dist[d].count > f->nodes)
            return np_err_set(err, -EINVAL, "nodes_folded.figures.%s: count over nodes", key);
        if (!np_strs_sorted_has(&f->sorted, f->dist[d].min_node) ||
            !np_strs_sorted_has(&f->sorted, f->dist[d].max_node))
            return np_err_set(err, -EINVAL,
                              "nodes_folded.figures.%s: min_node and max_node must be in names",
                              key);
        f->has_dist[d] = true;
    }
    return decode_sums(sums, f, err);
}

int np_sum_folded_decode(const json_t *j, struct np_sum_folded *f, struct np_err *err)
{
    int rc;

    memset(f, 0, sizeof(*f));
    rc = decode(j, f, err);
    if (rc)
        np_sum_folded_free(f);
    return rc;
}

int np_sum_folded_copy(struct np_sum_folded *dst, const struct np_sum_folded *src)
{
    json_t *j = np_sum_folded_json(src);
    int rc;

    memset(dst, 0, sizeof(*dst));
    if (!j)
        return -ENOMEM;
    rc = np_sum_folded_decode(j, dst, NULL);
    json_decref(j);
    return rc;
}
