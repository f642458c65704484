/* Two summaries of one job merged: what a later epilog adds to what an earlier one stored
 * (docs/summary-schema.md, "Building and merging"). Works on struct np_sum. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/summary_model.h"
#include "summary_priv.h"

static int copy_skip(struct np_sum_skip *dst, const struct np_sum_skip *src)
{
    bool ok = true;

    dst->keys = src->keys;
    dst->node = np_strdup_or_null(src->node, &ok);
    dst->step = np_strdup_or_null(src->step, &ok);
    dst->reason = np_strdup_or_null(src->reason, &ok);
    return ok ? 0 : -ENOMEM;
}

static void free_skips(struct np_sum_skip *k, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(k[i].node);
        free(k[i].step);
        free(k[i].reason);
    }
    free(k);
}

static json_int_t steps_of(const struct np_sum_node *n)
{
    return np_keys_has(&n->keys, NP_NODE_STEP_COUNT) ? n->step_count : 0;
}

static double duration_of(const struct np_sum_node *n)
{
    return np_keys_has(&n->keys, NP_NODE_DURATION_S) ? n->duration_s : 0;
}

/* Is @p have newer than @p incoming, two parts of one node? A node's part is built from its
 * spool, where a job's reports only accumulate: a later part has at least the steps and the
 * duration of an earlier one. A part retried from pending/ may be older than the one stored. */
static bool newer_part(const struct np_sum_node *have, const struct np_sum_node *incoming)
{
    if (steps_of(have) != steps_of(incoming))
        return steps_of(have) > steps_of(incoming);
    return duration_of(have) > duration_of(incoming);
}

/* Does @p into keep its own part of @p node over @p other's (its nodes entry and skipped)? */
static bool into_keeps(const struct np_sum *into, const struct np_sum *other, const char *node)
{
    const struct np_sum_node *have = node ? np_sum_node_get(into, node) : NULL,
                             *incoming = node ? np_sum_node_get(other, node) : NULL;

    return have && incoming && newer_part(have, incoming);
}

/* skipped: @p other's word on its nodes wins, unless @p into keeps its newer part. */
static int merge_skipped(struct np_sum *into, const struct np_sum *other)
{
    struct np_sum_skip *merged = calloc(into->nskipped + other->nskipped + 1, sizeof(*merged));
    size_t n = 0;
    int rc = 0;

    if (!merged)
        return -ENOMEM;
    for (size_t i = 0; i < into->nskipped; i++) {
        const char *node = into->skipped[i].node;
        if (!node || into_keeps(into, other, node) ||
            (!np_sum_node_get(other, node) && !np_sum_skipped_has(other, node)))
            rc |= copy_skip(&merged[n++], &into->skipped[i]);
    }
    for (size_t i = 0; i < other->nskipped; i++)
        if (!into_keeps(into, other, other->skipped[i].node))
            rc |= copy_skip(&merged[n++], &other->skipped[i]);
    free_skips(into->skipped, into->nskipped);
    into->skipped = merged;
    into->nskipped = n;
    np_keys_set(&into->keys, NP_SUM_SKIPPED);
    return rc ? -ENOMEM : 0;
}

/* Each node of @p other replaces the same node of @p into (unless that one is newer), or joins
 * it. */
static int merge_nodes(struct np_sum *into, const struct np_sum *other, struct np_strs *late)
{
    for (size_t i = 0; i < other->nnodes; i++) {
        struct np_sum_node copy,
            *have = (struct np_sum_node *)np_sum_node_get(into, other->nodes[i].name);
        if (into_keeps(into, other, other->nodes[i].name))
            continue;
        if (np_sum_in_fold(into, other->nodes[i].name)) {
            /* its figures are in the fold's sums and distributions, which cannot give them
             * back: a part no newer than the one kept whole changes nothing, any other is
             * named as not folded in */
            if ((!have || newer_part(&other->nodes[i], have)) &&
                np_strs_add_sorted(late, other->nodes[i].name) != 0)
                return -ENOMEM;
            continue;
        }
        if (np_sum_node_copy(&copy, &other->nodes[i]) != 0)
            return -ENOMEM;
        if (have) {
            np_sum_node_free(have);
            *have = copy;
        } else {
            struct np_sum_node *added = np_sum_node_append(into);
            if (!added) {
                np_sum_node_free(&copy);
                return -ENOMEM;
            }
            *added = copy;
        }
    }
    return 0;
}

static int merge_trimmed(struct np_sum *into, const struct np_sum *other)
{
    np_keys_set(&into->keys, NP_SUM_TRIMMED);
    for (size_t i = 0; i < other->ntrimmed; i++) {
        const struct np_sum_trim *e = &other->trimmed[i];
        struct np_sum_trim *grown;
        bool have = false, ok = true;

        for (size_t k = 0; k < into->ntrimmed; k++)
            if (into->trimmed[k].what && e->what && strcmp(into->trimmed[k].what, e->what) == 0)
                have = true;
        if (have)
            continue;
        grown = realloc(into->trimmed, (into->ntrimmed + 1) * sizeof(*grown));
        if (!grown)
            return -ENOMEM;
        into->trimmed = grown;
        grown[into->ntrimmed] = *e;
        grown[into->ntrimmed].what = np_strdup_or_null(e->what, &ok);
        into->ntrimmed++;
        if (!ok)
            return -ENOMEM;
    }
    return 0;
}

/* The nodes of @p late join `nodes_folded.not_updated`. */
static int note_not_updated(struct np_sum *into, struct np_strs *late)
{
    struct np_strs all = {0};
    char *list = NULL;
    int rc = 0;

    if (late->n == 0)
        return 0;
    if (into->folded.not_updated)
        rc = np_hostlist_expand(into->folded.not_updated, NP_FOLD_MAX_NODES, &all, NULL);
    for (size_t i = 0; !rc && i < late->n; i++)
        rc = np_strs_sorted_has(&all, late->v[i]) ? 0 : np_strs_add_sorted(&all, late->v[i]);
    if (!rc && (rc = np_hostlist_compress(&all, &list)) == 0) {
        free(into->folded.not_updated);
        into->folded.not_updated = list;
    }
    np_strs_free(&all);
    return rc ? -ENOMEM : 0;
}

/* A summary whose nodes were folded merges parts into its fold; an unfolded one merged into a
 * folded one: the folded one is taken as the base (its fold cannot be merged into nodes). */
static int merge_into_folded(struct np_sum *into, const struct np_sum *other, struct np_err *err)
{
    json_t *j = np_sum_encode(other);
    struct np_sum base;
    int rc;

    if (!j)
        return np_err_set(err, -ENOMEM, "out of memory merging summaries");
    rc = np_sum_decode(j, &base, err);
    json_decref(j);
    if (rc)
        return rc;
    rc = np_sum_merge(&base, into, err);
    np_sum_free(into);
    *into = base;
    return rc;
}

int np_sum_merge(struct np_sum *into, const struct np_sum *other, struct np_err *err)
{
    const int rc = np_sum_merge_deferred(into, other, err);

    return rc ? rc : np_sum_recompute(into);
}

int np_sum_merge_deferred(struct np_sum *into, const struct np_sum *other, struct np_err *err)
{
    struct np_strs late = {0};
    int rc = 0;

    if (into == other)
        return np_sum_recompute(into);
    if (np_keys_has(&other->keys, NP_SUM_NODES_FOLDED)) {
        if (np_keys_has(&into->keys, NP_SUM_NODES_FOLDED))
            return np_err_set(err, -EINVAL,
                              "cannot merge two summaries of job %lld whose nodes were both "
                              "folded into distributions: merge the parts into one of them",
                              (long long)into->job_id);
        if (into->job_id == other->job_id)
            return merge_into_folded(into, other, err);
    }
    if (into->job_id != other->job_id)
        return np_err_set(err, -EINVAL,
                          "cannot merge the summary of job %lld into that of job %lld",
                          (long long)other->job_id, (long long)into->job_id);
    if (np_keys_has(&into->keys, NP_SUM_UID) && np_keys_has(&other->keys, NP_SUM_UID) &&
        into->uid != other->uid)
        return np_err_set(err, -EINVAL,
                          "cannot merge summaries of job %lld with uids %lld and %lld",
                          (long long)into->job_id, (long long)into->uid, (long long)other->uid);
    if (!np_keys_has(&into->keys, NP_SUM_UID) && np_keys_has(&other->keys, NP_SUM_UID)) {
        into->uid = other->uid;
        np_keys_set(&into->keys, NP_SUM_UID);
    }
    if (!np_keys_has(&into->keys, NP_SUM_USER) && np_keys_has(&other->keys, NP_SUM_USER)) {
        rc |= np_str_set(&into->user, other->user);
        np_keys_set(&into->keys, NP_SUM_USER);
    }
    if (rc || merge_skipped(into, other) != 0)
        return np_err_set(err, -ENOMEM, "out of memory merging summaries");
    rc = merge_nodes(into, other, &late);
    rc = rc ? rc : note_not_updated(into, &late);
    np_strs_free(&late);
    if (rc)
        return np_err_set(err, -ENOMEM, "out of memory merging the nodes");
    np_keys_set(&into->keys, NP_SUM_MISSING_NODES);
    rc |= np_strs_append_new(&into->missing_nodes, (const char *const *)other->missing_nodes.v,
                             other->missing_nodes.n);
    if (rc || merge_trimmed(into, other) != 0)
        return np_err_set(err, -ENOMEM, "out of memory merging summaries");
    return 0;
}
