/* Two summaries of one job merged: what a later epilog adds to what an earlier one stored
 * (docs/summary-schema.md, "Building and merging"). */
#include "summary_priv.h"

/* Is @p have newer than @p incoming, two parts of one node? A node's part is built from its
 * spool, where a job's reports only accumulate: a later part has at least the steps and the
 * duration of an earlier one. A part retried from pending/ may be older than the one stored. */
static bool newer_part(const json_t *have, const json_t *incoming)
{
    if (jint(have, "step_count") != jint(incoming, "step_count"))
        return jint(have, "step_count") > jint(incoming, "step_count");
    return jnum(have, "duration_s", 0) > jnum(incoming, "duration_s", 0);
}

static const json_t *node_of(const json_t *s, const char *name)
{
    return name ? json_object_get(json_object_get(s, "nodes"), name) : NULL;
}

/* Does @p into keep its own part of @p node over @p other's (its nodes entry and skipped)? */
static bool into_keeps(const json_t *into, const json_t *other, const char *node)
{
    const json_t *have = node_of(into, node), *incoming = node_of(other, node);

    return have && incoming && newer_part(have, incoming);
}

/* skipped: @p other's word on its nodes wins, unless @p into keeps its newer part. */
static int merge_skipped(json_t *into, const json_t *other)
{
    json_t *merged = json_array(), *k;
    size_t i;
    int rc = !merged;

    json_array_foreach(json_object_get(into, "skipped"), i, k)
    {
        const char *node = jstr(k, "node");
        if (!node || into_keeps(into, other, node) ||
            (!node_of(other, node) && !jfind(json_object_get(other, "skipped"), "node", node)))
            rc |= json_array_append_new(merged, json_deep_copy(k));
    }
    json_array_foreach(json_object_get(other, "skipped"), i, k)
    {
        if (!into_keeps(into, other, jstr(k, "node")))
            rc |= json_array_append_new(merged, json_deep_copy(k));
    }
    return json_object_set_new(into, "skipped", merged) || rc ? -ENOMEM : 0;
}

/* Each node of @p other replaces the same node of @p into (unless that one is newer), or joins
 * it; the nodes of @p into's fold go to @p late instead. */
static int merge_nodes(json_t *into, const json_t *other, const struct np_fold_names *fn,
                       struct np_strs *late)
{
    json_t *nodes = json_object_get(into, "nodes"), *n;
    const char *name;

    json_object_foreach(json_object_get(other, "nodes"), name, n)
    {
        const json_t *have = json_object_get(nodes, name);
        if (into_keeps(into, other, name))
            continue;
        if (np_fold_names_has(fn, name)) {
            /* its figures are in the fold's sums and distributions, which cannot give them
             * back: a part no newer than the one kept whole changes nothing, any other is
             * named as not folded in */
            if ((!have || newer_part(n, have)) && np_strs_add_sorted(late, name) != 0)
                return -ENOMEM;
            continue;
        }
        if (json_object_set_new(nodes, name, json_deep_copy(n)) != 0)
            return -ENOMEM;
    }
    return 0;
}

static int merge_trimmed(json_t *into, const json_t *other)
{
    json_t *trimmed = json_object_get(into, "trimmed"), *e;
    size_t i;

    if (!trimmed && json_object_set_new(into, "trimmed", trimmed = json_array()) != 0)
        return -ENOMEM;
    json_array_foreach(json_object_get(other, "trimmed"), i, e)
    {
        if (!jfind(trimmed, "what", jstr(e, "what")) &&
            json_array_append_new(trimmed, json_deep_copy(e)) != 0)
            return -ENOMEM;
    }
    return 0;
}

/* The nodes of @p late join `nodes_folded.not_updated`. */
static int note_not_updated(json_t *into, const struct np_strs *late)
{
    json_t *fold = json_object_get(into, "nodes_folded");
    struct np_strs all = {0};
    char *list = NULL;
    int rc = 0;

    if (late->n == 0)
        return 0;
    if (jstr(fold, "not_updated"))
        rc = np_hostlist_expand(jstr(fold, "not_updated"), NP_FOLD_MAX_NODES, &all, NULL);
    for (size_t i = 0; !rc && i < late->n; i++)
        rc = np_strs_add_sorted(&all, late->v[i]);
    if (!rc && (rc = np_hostlist_compress(&all, &list)) == 0)
        rc = json_object_set_new(fold, "not_updated", json_string(list));
    free(list);
    np_strs_free(&all);
    return rc ? -ENOMEM : 0;
}

/* A summary whose nodes were folded merges parts into its fold; an unfolded one merged into a
 * folded one: the folded one is taken as the base (its fold cannot be merged into nodes). */
static int merge_into_folded(json_t *into, const json_t *other, struct np_err *err)
{
    json_t *base = json_deep_copy(other);
    int rc = base ? np_summary_merge_deferred(base, into, err) : -ENOMEM;

    rc = rc ? rc : np_summary_recompute(base);
    if (!rc && (json_object_clear(into) != 0 || json_object_update(into, base) != 0))
        rc = -ENOMEM;
    json_decref(base);
    return rc == -ENOMEM ? np_err_set(err, rc, "out of memory merging summaries") : rc;
}

int np_summary_merge(json_t *into, json_t *other, struct np_err *err)
{
    int rc = np_summary_validate(into, err);

    if (!rc && into != other && (rc = np_summary_validate(other, err)) == 0)
        rc = np_summary_merge_deferred(into, other, err);
    if (!rc && np_summary_recompute(into) != 0)
        rc = np_err_set(err, -ENOMEM, "out of memory merging summaries");
    return rc;
}

int np_summary_merge_deferred(json_t *into, json_t *other, struct np_err *err)
{
    const json_int_t job = jint(into, "job_id"), other_job = jint(other, "job_id");
    const json_t *uid = json_object_get(into, "uid"), *other_uid = json_object_get(other, "uid");
    struct np_strs late = {0};
    struct np_fold_names fn;
    int rc = 0;

    if (into == other)
        return np_summary_recompute(into);
    if (json_object_get(other, "nodes_folded")) {
        if (json_object_get(into, "nodes_folded"))
            return np_err_set(err, -EINVAL,
                              "cannot merge two summaries of job %lld whose nodes were both "
                              "folded into distributions: merge the parts into one of them",
                              (long long)job);
        if (job == other_job)
            return merge_into_folded(into, other, err);
    }
    if (job != other_job)
        return np_err_set(err, -EINVAL,
                          "cannot merge the summary of job %lld into that of job %lld",
                          (long long)other_job, (long long)job);
    if (uid && other_uid && jint(into, "uid") != jint(other, "uid"))
        return np_err_set(
            err, -EINVAL, "cannot merge summaries of job %lld with uids %lld and %lld",
            (long long)job, (long long)jint(into, "uid"), (long long)jint(other, "uid"));
    if (!uid && other_uid)
        rc |= json_object_set_new(into, "uid", json_integer(jint(other, "uid")));
    if (!jstr(into, "user") && jstr(other, "user"))
        rc |= json_object_set_new(into, "user", json_string(jstr(other, "user")));
    if (rc || merge_skipped(into, other) != 0)
        return np_err_set(err, -ENOMEM, "out of memory merging summaries");
    rc = np_fold_names_get(into, &fn);
    rc = rc ? rc : merge_nodes(into, other, &fn, &late);
    rc = rc ? rc : note_not_updated(into, &late);
    np_strs_free(&late);
    np_strs_free(&fn.sorted);
    if (rc)
        return np_err_set(err, -ENOMEM, "out of memory merging the nodes");
    if (!json_object_get(into, "missing_nodes"))
        rc |= json_object_set_new(into, "missing_nodes", json_array());
    rc |= jstrs_append_new(json_object_get(into, "missing_nodes"),
                           json_object_get(other, "missing_nodes"));
    if (rc || merge_trimmed(into, other) != 0)
        return np_err_set(err, -ENOMEM, "out of memory merging summaries");
    return 0;
}
