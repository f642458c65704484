/* `nodes_folded` of a summary to and from JSON (docs/summary-schema.md, "Folded nodes"), strict
 * like the rest of the summary: only its members, each of its type, its names a hostlist of as
 * many nodes as it says. */
#include <errno.h>
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

/* ---- encoding ---- */

static json_t *dist_json(const struct np_sum_dist *d)
{
    return json_pack("{s:I, s:f, s:s, s:f, s:f, s:f, s:s, s:I}", "count", d->count, "min", d->min,
                     "min_node", d->min_node ? d->min_node : "", "p50", d->p50, "p90", d->p90,
                     "max", d->max, "max_node", d->max_node ? d->max_node : "", "percentiles_of",
                     d->percentiles_of);
}

static json_t *sums_json(const struct np_sum_folded *f)
{
    json_t *o = json_pack(
        "{s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:b, s:I, s:f, s:f, s:o, s:o}", "steps", f->steps,
        "pages_moved_bytes", f->pages_moved_bytes, "migration_requests", f->migration_requests,
        "local_share_nodes", f->ls_nodes, "local_share_seconds", f->ls_seconds,
        "local_share_x_seconds", f->ls_x_seconds, "local_share_byte_seconds", f->ls_byte_seconds,
        "local_share_x_byte_seconds", f->ls_x_byte_seconds, "local_share_all_bytes",
        f->ls_all_bytes, "kernel_time_share_nodes", f->k_nodes, "kernel_time_share_seconds",
        f->k_seconds, "kernel_time_share_x_seconds", f->k_x_seconds, "policy_requested",
        np_strs_json(&f->policy_requested), "policy_applied", np_map_json(&f->policy_applied));
    const char *const strs[] = {f->sensitivity, f->start, f->end};
    const char *const keys[] = {"sensitivity", "start", "end"};

    for (unsigned k = 0; o && k < 3; k++)
        if (strs[k] && json_object_set_new(o, keys[k], json_string(strs[k])) != 0) {
            json_decref(o);
            return NULL;
        }
    return o;
}

json_t *np_sum_folded_json(const struct np_sum_folded *f)
{
    json_t *figs = json_object(), *o;

    for (unsigned d = 0; figs && d < NP_DIST_N; d++)
        if (f->has_dist[d] && json_object_set_new(figs, np_sumk_dist[d], dist_json(&f->dist[d])))
            json_decref(figs), figs = NULL;
    o = json_pack("{s:I, s:s, s:o*, s:o*}", "nodes", f->nodes, "names", f->names ? f->names : "",
                  "figures", figs, "sums", sums_json(f));
    if (o && f->not_updated && json_object_set_new(o, "not_updated", json_string(f->not_updated)))
        json_decref(o), o = NULL;
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

    snprintf(what, sizeof(what), "figures.%s", name);
    if (json_unpack_ex((json_t *)j, &jerr, JSON_STRICT, "{s:I, s:F, s:s, s:F, s:F, s:F, s:s, s:I}",
                       "count", &d->count, "min", &d->min, "min_node", &min_node, "p50", &d->p50,
                       "p90", &d->p90, "max", &d->max, "max_node", &max_node, "percentiles_of",
                       &d->percentiles_of) != 0)
        return BAD(what);
    if (d->count < 1 || d->percentiles_of < 1 || d->percentiles_of > d->count ||
        d->count > NP_FOLD_MAX_NODES || !(d->min <= d->p50 && d->p50 <= d->p90 && d->p90 <= d->max))
        return np_err_set(err, -EINVAL,
                          "nodes_folded.%s: expected 1 <= percentiles_of <= count <= %d and "
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
    if (f->ls_nodes < 0 || f->ls_nodes > f->nodes || f->k_nodes < 0 || f->k_nodes > f->nodes ||
        (f->ls_nodes && !(f->ls_seconds > 0)) || (f->k_nodes && !(f->k_seconds > 0)))
        return np_err_set(err, -EINVAL,
                          "nodes_folded.sums: expected node counts between 0 and nodes (%lld), "
                          "with positive weights",
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
        if (f->dist[d].count > f->nodes)
            return np_err_set(err, -EINVAL, "nodes_folded.figures.%s: count over nodes", key);
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
