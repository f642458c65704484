/* A job summary trimmed to fit Slurm's AdminComment (docs/summary-schema.md, "Stored form"), and
 * its last stage ("Folded nodes"): when even the trimmed per-node form does not fit, the nodes are
 * folded into distributions of their figures and sums of their share of the totals; the worst
 * few stay whole. */
#include "summary_priv.h"

/* ---- the trims: each returns whether it removed anything ---- */

static bool drop(json_t *o, const char *key)
{
    return json_object_del(o, key) == 0;
}

/* The `source` of every figure under the node (their reasons stay). */
static bool drop_sources(json_t *n)
{
    static const char *const figures[] = {"local_share", "cpi", "bandwidth"};
    json_t *os = json_object_get(n, "os_interference"), *f;
    const char *key;
    bool dropped = false;

    for (size_t k = 0; k < sizeof(figures) / sizeof(figures[0]); k++)
        dropped |= drop(json_object_get(n, figures[k]), "source");
    for (size_t k = 0; k < 2; k++) {
        f = json_object_get(n, k ? "pages_end_bytes" : "pages_peak_bytes");
        if (json_object_get(f, "unavailable")) /* a map's "source" would be a NUMA node's */
            dropped |= drop(f, "source");
    }
    json_object_foreach(os, key, f)
    {
        dropped |= drop(f, "source");
    }
    return drop(json_object_get(n, "migrations"), "source") || dropped;
}

/* Everything but the local share, step count, duration, bytes moved, start/end, policy and
 * class. */
static bool drop_node_details(json_t *n)
{
    static const char *const keep[] = {"local_share",       "step_count", "duration_s",
                                       "pages_moved_bytes", "start",      "end",
                                       "policy_requested",  "sensitivity"};
    const char *key;
    json_t *v;
    void *tmp;
    bool dropped = false;

    json_object_foreach_safe(n, tmp, key, v)
    {
        bool kept = false;
        for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
            kept |= strcmp(keep[k], key) == 0;
        if (!kept)
            dropped |= drop(n, key);
    }
    return dropped;
}

/* In order: a trim drops a node's members @p keys ("member" or "object.member"), or what
 * @p drop says. */
static const struct {
    const char *what, *keys[5];
    bool (*drop)(json_t *node);
} trim_steps[] = {
    {"timeline", {"timeline"}, NULL},
    {"steps", {"steps"}, NULL},
    {"numa-node-pages",
     {"pages_peak_bytes", "pages_end_bytes", "migrations.in_bytes", "migrations.out_bytes"},
     NULL},
    {"os-interference-details",
     {"os_interference.involuntary_cs_per_s", "os_interference.interrupts_per_s",
      "os_interference.softirqs_per_s", "os_interference.other_cpu_time_s"},
     NULL},
    {"sources", {NULL}, drop_sources},
    {"node-details", {NULL}, drop_node_details},
};

static int record_trim(json_t *s, const char *what, long before)
{
    json_t *trimmed = json_object_get(s, "trimmed"), *e = jfind(trimmed, "what", what);

    if (e)
        return json_object_set_new(e, "stored_bytes_before", json_integer(before)) ? -ENOMEM : 0;
    return json_array_append_new(trimmed, json_pack("{s:s, s:I}", "what", what,
                                                    "stored_bytes_before", (json_int_t)before))
               ? -ENOMEM
               : 0;
}

/* ---- the fold: a node's figures before the fit trims them ---- */

/* Snapshot the nodes of @p s (*out: free()), and the tasks per policy of those not folded yet
 * into @p applied (the trims drop each node's). 0 or -ENOMEM. */
static int snapshot(const json_t *s, const struct np_fold_names *fn, struct np_node_figs **out,
                    json_t *applied)
{
    const json_t *nodes = json_object_get(s, "nodes"), *n;
    const char *name;
    size_t i = 0;
    int rc = 0;

    *out = calloc(json_object_size(nodes) + 1, sizeof(**out));
    if (!*out)
        return -ENOMEM;
    json_object_foreach((json_t *)nodes, name, n)
    {
        np_node_figs_read(name, n, &(*out)[i++]);
        if (!np_fold_names_has(fn, name))
            rc |= jmap_add(applied, json_object_get(n, "policy_applied"));
    }
    return rc ? -ENOMEM : 0;
}

struct valued {
    double v;
    const char *node;
};

/* Lowest first, none (NAN) last, ties by name (the first name holds min and max alike): a
 * distribution's order, and the worst nodes' (the local share, the remote-memory advice's). */
static int cmp_valued(const void *a, const void *b)
{
    const struct valued *x = a, *y = b;

    if (isnan(x->v) != isnan(y->v))
        return isnan(x->v) ? 1 : -1;
    if (!isnan(x->v) && x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return strcmp(x->node, y->node);
}

/* Nearest rank: the value of the ceil(p x n)-th node, a node's own figure. */
static double rank(const struct valued *v, size_t n, double p)
{
    size_t r = (size_t)ceil(p * (double)n);

    return v[(r ? r : 1) - 1].v;
}

/* Add the @p n values of new nodes to the distribution @p name of @p figures: count, min and max
 * exactly; percentiles when the distribution had none yet, else they stay those of the nodes
 * they were taken over. */
static int dist_add(json_t *figures, const char *name, struct valued *v, size_t n)
{
    json_t *d = json_object_get(figures, name);
    int rc = 0;

    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_valued);
    if (!d)
        return json_object_set_new(figures, name,
                                   json_pack("{s:I, s:f, s:s, s:f, s:f, s:f, s:s, s:I}", "count",
                                             (json_int_t)n, "min", v[0].v, "min_node", v[0].node,
                                             "p50", rank(v, n, 0.5), "p90", rank(v, n, 0.9), "max",
                                             v[n - 1].v, "max_node", v[n - 1].node,
                                             "percentiles_of", (json_int_t)n))
                   ? -ENOMEM
                   : 0;
    rc |= jadd(d, "count", (json_int_t)n);
    if (v[0].v < jnum(d, "min", 0))
        rc |= json_object_set_new(d, "min", json_real(v[0].v)) ||
              json_object_set_new(d, "min_node", json_string(v[0].node));
    if (v[n - 1].v > jnum(d, "max", 0))
        rc |= json_object_set_new(d, "max", json_real(v[n - 1].v)) ||
              json_object_set_new(d, "max_node", json_string(v[n - 1].node));
    return rc ? -ENOMEM : 0;
}

/* The fold's share of the totals into `nodes_folded.sums` (each member there already). */
static int sums_write(json_t *sj, const struct np_sums *f)
{
    json_t *u = json_pack(
        "{s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:b, s:I, s:f, s:f}", "steps", f->steps,
        "pages_moved_bytes", f->moved, "migration_requests", f->requests, "local_share_nodes",
        f->ls_nodes, "local_share_seconds", f->ls_s, "local_share_x_seconds", f->ls_xs,
        "local_share_byte_seconds", f->ls_bs, "local_share_x_byte_seconds", f->ls_xbs,
        "local_share_all_bytes", f->all_bytes, "kernel_time_share_nodes", f->k_nodes,
        "kernel_time_share_seconds", f->k_s, "kernel_time_share_x_seconds", f->k_xs);
    int rc = !u || json_object_update(sj, u) != 0 ||
             (f->sens && json_object_set_new(sj, "sensitivity", json_string(f->sens))) ||
             (f->start && json_object_set_new(sj, "start", json_string(f->start))) ||
             (f->end && json_object_set_new(sj, "end", json_string(f->end)));

    json_decref(u);
    return rc ? -ENOMEM : 0;
}

/* Keep the NP_FOLD_KEEP_WORST worst nodes of @p s, worst first. */
static int keep_worst(json_t *s, const struct np_node_figs *snap, size_t n)
{
    struct valued *order = malloc((n + 1) * sizeof(*order));
    json_t *nodes = json_object_get(s, "nodes"), *kept = json_object();
    int rc = !order || !kept;

    for (size_t i = 0; !rc && i < n; i++)
        order[i] = (struct valued){snap[i].v[NP_DIST_LOCAL_SHARE], snap[i].name};
    if (!rc)
        qsort(order, n, sizeof(*order), cmp_valued);
    for (size_t i = 0; !rc && i < NP_FOLD_KEEP_WORST; i++)
        rc = json_object_set(kept, order[i].node, json_object_get(nodes, order[i].node));
    free(order);
    return json_object_set_new(s, "nodes", kept) || rc ? -ENOMEM : 0;
}

/* Fold the nodes of @p s not yet folded into its distributions and sums, and keep only the
 * NP_FOLD_KEEP_WORST worst nodes in `nodes`. @return whether it changed anything, -EINVAL (a
 * name no hostlist holds) or -ENOMEM */
static int fold_nodes(json_t *s, const struct np_fold_names *fn, const struct np_node_figs *snap,
                      const json_t *applied)
{
    const json_t *nodes = json_object_get(s, "nodes"), *n;
    const size_t count = json_object_size(nodes);
    json_t *fold = json_object_get(s, "nodes_folded"), *sj, *figures;
    struct valued *vals = malloc((count + 1) * sizeof(*vals));
    struct np_sums f;
    struct np_strs names = {0};
    char *list = NULL;
    const char *name;
    size_t fresh = 0, i;
    int rc = 0;

    if (count <= NP_FOLD_KEEP_WORST || !vals) { /* all would stay whole: folding only adds */
        free(vals);
        return vals ? 0 : -ENOMEM;
    }
    if (!fold) { /* zero sums, then the policies, in the schema's order */
        fold = json_pack("{s:i, s:s, s:{}, s:{}}", "nodes", 0, "names", "", "figures", "sums");
        rc |=
            json_object_set_new(s, "nodes_folded", fold) ||
            sums_write(json_object_get(fold, "sums"), &(struct np_sums){.all_bytes = true}) ||
            json_object_set_new(json_object_get(fold, "sums"), "policy_requested", json_array()) ||
            json_object_set_new(json_object_get(fold, "sums"), "policy_applied", json_object());
    }
    sj = json_object_get(fold, "sums");
    figures = json_object_get(fold, "figures");
    f = np_sums_read(sj);
    for (unsigned d = 0; !rc && d < NP_DIST_N; d++) {
        size_t nv = 0;
        for (i = 0; i < count; i++)
            if (!np_fold_names_has(fn, snap[i].name) && !isnan(snap[i].v[d]))
                vals[nv++] = (struct valued){snap[i].v[d], snap[i].name};
        rc = dist_add(figures, np_dist_names[d], vals, nv);
    }
    free(vals);
    i = 0;
    json_object_foreach((json_t *)nodes, name, n)
    {
        if (!np_fold_names_has(fn, name)) {
            rc |= np_sums_add(&f, n, &snap[i], json_object_get(sj, "policy_requested"), NULL);
            fresh++;
        }
        i++;
    }
    rc |= jmap_add(json_object_get(sj, "policy_applied"), applied);
    rc |= sums_write(sj, &f);
    /* the names: those folded before and the fresh ones (always kept: without them a later
     * part could not be told from one already folded) */
    for (size_t k = 0; !rc && k < fn->sorted.n; k++)
        rc = np_strs_append(&names, fn->sorted.v[k]);
    for (size_t k = 0; !rc && k < count; k++)
        if (!np_fold_names_has(fn, snap[k].name))
            rc = np_strs_append(&names, snap[k].name);
    rc = rc ? rc : np_hostlist_compress(&names, &list);
    np_strs_free(&names);
    /* what a later reader expands: -EINVAL for a name no hostlist holds */
    rc = rc ? rc : np_hostlist_expand(list, SIZE_MAX, &names, NULL);
    np_strs_free(&names);
    if (!rc)
        rc = json_object_set_new(fold, "names", json_string(list)) ||
             jadd(fold, "nodes", (json_int_t)fresh);
    free(list);
    if (rc)
        return rc == -EINVAL ? rc : -ENOMEM; /* -EINVAL: a name no hostlist holds */
    if (keep_worst(s, snap, count) != 0)
        return -ENOMEM;
    return np_summary_recompute(s) ? -ENOMEM : 1;
}

/* ---- the fit ---- */

/* Whether np_stored_decode takes @p text back: a summary of many alike nodes can compress past
 * the decoder's limits (NP_STORED_MAX_*) while fitting AdminComment; it is trimmed further. */
static bool decodes(const char *text)
{
    json_t *j = NULL;
    const int rc = np_stored_decode(text, &j, NULL);

    json_decref(j);
    return rc == 0;
}

/* Trim @p k over every node: whether it dropped anything. */
static bool trim_nodes(json_t *s, size_t k)
{
    const char *name;
    json_t *n;
    bool dropped = false;

    json_object_foreach(json_object_get(s, "nodes"), name, n)
    {
        for (const char *const *key = trim_steps[k].keys; *key; key++) {
            const char *dot = strchr(*key, '.');
            char parent[32];
            snprintf(parent, sizeof(parent), "%.*s", dot ? (int)(dot - *key) : 0, *key);
            dropped |= drop(dot ? json_object_get(n, parent) : n, dot ? dot + 1 : *key);
        }
        if (trim_steps[k].drop)
            dropped |= trim_steps[k].drop(n);
    }
    return dropped;
}

long np_summary_fit(json_t *s, size_t max_bytes, char **stored, struct np_err *err)
{
    json_t *applied;
    const long long job = jint(s, "job_id");
    struct np_fold_names fn;
    struct np_node_figs *snap = NULL;
    size_t next = 0;
    bool folded = false;
    long ret;

    if (!stored)
        return np_err_set(err, -EINVAL, "np_summary_fit needs somewhere to put the stored text");
    *stored = NULL;
    if ((ret = np_summary_validate(s, err)) != 0)
        return ret;
    applied = json_object();
    if (!json_object_get(s, "trimmed") && json_object_set_new(s, "trimmed", json_array()) != 0)
        ret = -ENOMEM;
    if (np_fold_names_get(s, &fn) != 0 || !applied || ret || snapshot(s, &fn, &snap, applied) != 0)
        ret = np_err_set(err, -ENOMEM, "out of memory fitting the summary");
    while (!ret) {
        char *text = NULL;
        long len = np_stored_encode(s, &text, err);
        bool dropped = false;
        int rc = 0;

        if (len < 0 || ((size_t)len <= max_bytes && decodes(text))) {
            *stored = text; /* NULL when it could not be encoded */
            ret = len;
            break;
        }
        free(text);
        while (!dropped && next < sizeof(trim_steps) / sizeof(trim_steps[0])) {
            dropped = trim_nodes(s, next);
            if (dropped && record_trim(s, trim_steps[next].what, len) != 0)
                rc = -ENOMEM;
            next++;
        }
        if (!dropped && !rc && !folded) {
            folded = true;
            if ((rc = fold_nodes(s, &fn, snap, applied)) > 0) {
                dropped = true;
                rc = record_trim(s, "nodes-folded", len);
            }
        }
        if (rc < 0)
            ret = rc == -EINVAL ? np_err_set(err, -EINVAL,
                                             "job %lld: a node name has characters a hostlist "
                                             "cannot hold (accepted: letters, digits, '.', '-', "
                                             "'_'; at most 255 before its number)",
                                             job)
                                : np_err_set(err, -ENOMEM, "out of memory fitting the summary");
        else if (!dropped)
            ret = np_err_set(err, -E2BIG,
                             "the minimal summary of job %lld (ids, totals, %s) is %ld bytes "
                             "stored; the limit given is %zu (AdminComment holds 65535, "
                             "NP_SUMMARY_STORED_MAX is %d)",
                             job,
                             json_object_get(s, "nodes_folded")
                                 ? "per-node figures as distributions, the node names as a "
                                   "hostlist"
                                 : "local share per node",
                             len, max_bytes, NP_SUMMARY_STORED_MAX);
    }
    free(snap);
    np_strs_free(&fn.sorted);
    json_decref(applied);
    return ret;
}
