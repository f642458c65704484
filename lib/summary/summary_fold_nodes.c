/* The last stage of np_sum_fit (docs/summary-schema.md, "Folded nodes"): when even the trimmed
 * per-node form does not fit AdminComment, the nodes are folded into distributions of their
 * figures and sums of their share of the totals; the worst few stay whole. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "summary_priv.h"

/* ---- a node's figures before the fit trims them ---- */

static double fig_or_nan(const struct np_sum_node *n, unsigned member, const struct np_figure *f)
{
    double v;

    return np_node_fig(n, member, f, &v) ? v : NAN;
}

static void snap_node(const struct np_sum_node *n, struct np_fold_snap *sn)
{
    double k;

    sn->v[NP_DIST_LOCAL_SHARE] = fig_or_nan(n, NP_NODE_LOCAL_SHARE, &n->local_share);
    sn->v[NP_DIST_CPI] = fig_or_nan(n, NP_NODE_CPI, &n->cpi);
    sn->v[NP_DIST_BANDWIDTH] = fig_or_nan(n, NP_NODE_BANDWIDTH, &n->bandwidth);
    sn->v[NP_DIST_KERNEL_TIME_SHARE] = np_os_fig(n, NP_OS_KERNEL_TIME_SHARE, &k) ? k : NAN;
    sn->v[NP_DIST_DURATION_S] = np_keys_has(&n->keys, NP_NODE_DURATION_S) ? n->duration_s : NAN;
    sn->v[NP_DIST_STEP_COUNT] =
        np_keys_has(&n->keys, NP_NODE_STEP_COUNT) ? (double)n->step_count : NAN;
    sn->v[NP_DIST_PAGES_MOVED_BYTES] =
        np_keys_has(&n->keys, NP_NODE_PAGES_MOVED_BYTES) ? (double)n->pages_moved_bytes : NAN;
    sn->k_seconds = isnan(sn->v[NP_DIST_KERNEL_TIME_SHARE])
                        ? 0
                        : np_fig_member(&n->os.fig[NP_OS_KERNEL_TIME_SHARE], NP_FIG_SECONDS,
                                        n->os.fig[NP_OS_KERNEL_TIME_SHARE].seconds, MIN_WEIGHT_S);
    sn->requests = np_keys_has(&n->keys, NP_NODE_MIGRATIONS) &&
                           np_keys_has(&n->migrations.keys, NP_MIGR_REQUESTS)
                       ? n->migrations.requests
                       : 0;
}

int np_fold_snapshot(const struct np_sum *s, struct np_fold_snap **out, struct np_map *applied)
{
    int rc = 0;

    memset(applied, 0, sizeof(*applied));
    *out = calloc(s->nnodes ? s->nnodes : 1, sizeof(**out));
    if (!*out)
        return -ENOMEM;
    for (size_t i = 0; i < s->nnodes; i++) {
        snap_node(&s->nodes[i], &(*out)[i]);
        if (!np_sum_in_fold(s, s->nodes[i].name))
            rc |= np_map_add(applied, &s->nodes[i].policy_applied);
    }
    return rc ? -ENOMEM : 0;
}

/* ---- distributions ---- */

struct valued {
    double v;
    const char *node;
    size_t idx;
};

static int cmp_valued(const void *a, const void *b)
{
    const struct valued *x = a, *y = b;

    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return strcmp(x->node, y->node); /* ties: the first name holds min and max alike */
}

/* Nearest rank: the value of the ceil(p x n)-th node, a node's own figure. */
static double rank(const struct valued *v, size_t n, double p)
{
    size_t r = (size_t)ceil(p * (double)n);

    return v[(r ? r : 1) - 1].v;
}

/* Add the @p n values of new nodes to @p d: count, min and max exactly; percentiles when the
 * distribution had none yet, else they stay those of the nodes they were taken over. */
static int dist_add(struct np_sum_dist *d, bool *has, struct valued *v, size_t n)
{
    int rc = 0;

    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_valued);
    if (!*has) {
        memset(d, 0, sizeof(*d));
        d->count = d->percentiles_of = (json_int_t)n;
        d->min = v[0].v;
        d->max = v[n - 1].v;
        d->p50 = rank(v, n, 0.5);
        d->p90 = rank(v, n, 0.9);
        *has = true;
        rc |= np_str_set(&d->min_node, v[0].node);
        rc |= np_str_set(&d->max_node, v[n - 1].node);
        return rc ? -ENOMEM : 0;
    }
    d->count += (json_int_t)n;
    if (v[0].v < d->min) {
        d->min = v[0].v;
        rc |= np_str_set(&d->min_node, v[0].node);
    }
    if (v[n - 1].v > d->max) {
        d->max = v[n - 1].v;
        rc |= np_str_set(&d->max_node, v[n - 1].node);
    }
    return rc ? -ENOMEM : 0;
}

/* ---- the fold's share of the totals (as np_sum_recompute adds a node) ---- */

static int sums_add(struct np_sum_folded *f, const struct np_sum_node *n,
                    const struct np_fold_snap *sn)
{
    const struct np_figure *ls = &n->local_share;
    const char *ns = np_keys_has(&n->keys, NP_NODE_SENSITIVITY) ? n->sensitivity : NULL;
    const char *start = np_keys_has(&n->keys, NP_NODE_START) ? n->start : NULL;
    const char *end = np_keys_has(&n->keys, NP_NODE_END) ? n->end : NULL;
    int rc = 0;

    f->steps += np_keys_has(&n->keys, NP_NODE_STEP_COUNT) ? n->step_count : 0;
    f->pages_moved_bytes +=
        np_keys_has(&n->keys, NP_NODE_PAGES_MOVED_BYTES) ? n->pages_moved_bytes : 0;
    f->migration_requests += sn->requests;
    if (!isnan(sn->v[NP_DIST_LOCAL_SHARE])) {
        const double x = sn->v[NP_DIST_LOCAL_SHARE];
        const double w = np_fig_member(ls, NP_FIG_SECONDS, ls->seconds, MIN_WEIGHT_S);
        const double bs = np_fig_member(ls, NP_FIG_BYTE_SECONDS, ls->byte_seconds, -1);
        f->ls_seconds += w;
        f->ls_x_seconds += x * w;
        if (bs > 0) {
            f->ls_byte_seconds += bs;
            f->ls_x_byte_seconds += x * bs;
        } else {
            f->ls_all_bytes = false;
        }
        f->ls_nodes++;
    }
    if (!isnan(sn->v[NP_DIST_KERNEL_TIME_SHARE])) {
        f->k_seconds += sn->k_seconds;
        f->k_x_seconds += sn->v[NP_DIST_KERNEL_TIME_SHARE] * sn->k_seconds;
        f->k_nodes++;
    }
    for (size_t k = 0; k < n->policy_requested.n; k++)
        rc |= np_strs_add_sorted(&f->policy_requested, n->policy_requested.v[k]);
    if (ns &&
        (!f->sensitivity || strcmp(ns, "high") == 0 || strcmp(f->sensitivity, "unknown") == 0))
        rc |= np_str_set(&f->sensitivity, ns);
    if (np_iso_ok(start) && (!f->start || strcmp(start, f->start) < 0))
        rc |= np_str_set(&f->start, start);
    if (np_iso_ok(end) && (!f->end || strcmp(end, f->end) > 0))
        rc |= np_str_set(&f->end, end);
    return rc ? -ENOMEM : 0;
}

/* ---- the fold ---- */

/* Lowest local share first (the remote-memory advice's figure), nodes without one last. */
static int cmp_worst(const void *a, const void *b)
{
    const struct valued *x = a, *y = b;

    if (isnan(x->v) != isnan(y->v))
        return isnan(x->v) ? 1 : -1;
    if (!isnan(x->v) && x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return strcmp(x->node, y->node);
}

/* Keep the NP_FOLD_KEEP_WORST worst nodes of @p s; free the others. */
static int keep_worst(struct np_sum *s, const struct np_fold_snap *snap)
{
    struct valued *order = malloc(s->nnodes * sizeof(*order));
    const size_t nkept = NP_FOLD_KEEP_WORST; /* np_sum_fold_nodes folds only past that many */
    struct np_sum_node *kept = calloc(nkept, sizeof(*kept));

    if (!order || !kept) {
        free(order);
        free(kept);
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->nnodes; i++)
        order[i] = (struct valued){snap[i].v[NP_DIST_LOCAL_SHARE], s->nodes[i].name, i};
    qsort(order, s->nnodes, sizeof(*order), cmp_worst);
    for (size_t i = 0; i < s->nnodes; i++) {
        struct np_sum_node *n = &s->nodes[order[i].idx];
        if (i < nkept)
            kept[i] = *n;
        else
            np_sum_node_free(n);
    }
    free(order);
    free(s->nodes);
    s->nodes = kept;
    s->nnodes = nkept;
    s->nodes_cap = 0;
    return 0;
}

int np_sum_fold_nodes(struct np_sum *s, const struct np_fold_snap *snap,
                      const struct np_map *applied)
{
    struct np_sum_folded *f = &s->folded;
    struct valued *vals = malloc((s->nnodes ? s->nnodes : 1) * sizeof(*vals));
    struct np_strs names = {0};
    const bool was = np_keys_has(&s->keys, NP_SUM_NODES_FOLDED);
    size_t fresh = 0;
    int rc = 0;

    if (s->nnodes <= NP_FOLD_KEEP_WORST) { /* all would stay whole: folding only adds */
        free(vals);
        return 0;
    }
    if (!vals)
        return -ENOMEM;
    if (!was) {
        np_sum_folded_free(f);
        f->ls_all_bytes = true;
    }
    for (unsigned d = 0; !rc && d < NP_DIST_N; d++) {
        size_t n = 0;
        for (size_t i = 0; i < s->nnodes; i++)
            if (!np_sum_in_fold(s, s->nodes[i].name) && !isnan(snap[i].v[d]))
                vals[n++] = (struct valued){snap[i].v[d], s->nodes[i].name, i};
        rc = dist_add(&f->dist[d], &f->has_dist[d], vals, n);
    }
    free(vals);
    for (size_t i = 0; !rc && i < s->nnodes; i++)
        if (!np_sum_in_fold(s, s->nodes[i].name)) {
            rc = sums_add(f, &s->nodes[i], &snap[i]);
            fresh++;
        }
    if (rc || np_map_add(&f->policy_applied, applied) != 0)
        return -ENOMEM;
    /* the names: those folded before and the fresh ones (always kept: without them a later
     * part could not be told from one already folded) */
    rc |= np_strs_copy(&names, &f->sorted);
    for (size_t i = 0; !rc && i < s->nnodes; i++)
        if (!np_sum_in_fold(s, s->nodes[i].name))
            rc |= np_strs_append(&names, s->nodes[i].name);
    free(f->names);
    f->names = NULL;
    rc = rc ? rc : np_hostlist_compress(&names, &f->names);
    np_strs_free(&f->sorted);
    rc = rc ? rc : np_hostlist_expand(f->names, SIZE_MAX, &f->sorted, NULL);
    np_strs_free(&names);
    f->nodes += (json_int_t)fresh;
    np_keys_set(&s->keys, NP_SUM_NODES_FOLDED);
    if (rc)
        return rc == -EINVAL ? rc : -ENOMEM; /* -EINVAL: a name no hostlist holds */
    if (keep_worst(s, snap) != 0)
        return -ENOMEM;
    return np_sum_recompute(s) ? -ENOMEM : 1;
}
