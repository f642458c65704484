/* A job summary's nodes and totals: an empty summary, its user, the job's expected nodes, and
 * the totals, policies, class and missing nodes recomputed from the nodes after every change
 * (docs/summary-schema.md, "Building and merging"); which nodes it holds, those listed whole and
 * those folded (the fit's fold); and two summaries of one job merged, what a later epilog adds to
 * what an earlier one stored. */
#include "summary_priv.h"

#define SRC_SUMMARY_LOCAL "summary: node local shares weighted by bytes (peak) x seconds"
#define SRC_SUMMARY_LOCAL_TIME                                                                     \
    "summary: node local shares weighted by seconds (a node's bytes were unknown)"
#define SRC_SUMMARY_KERNEL "summary: node kernel time shares weighted by seconds"

/* ---- small pieces the summary files share ---- */

int jmap_add(json_t *dst, const json_t *src)
{
    const char *key;
    json_t *v;

    json_object_foreach((json_t *)src, key, v)
    {
        if (json_object_set_new(dst, key,
                                json_integer(jround(json_object_get(dst, key)) + jround(v))) != 0)
            return -ENOMEM;
    }
    return 0;
}

int jstrs_add_sorted(json_t *arr, const char *str)
{
    size_t i;

    for (i = 0; str && i < json_array_size(arr); i++) {
        const int c = strcmp(json_string_value(json_array_get(arr, i)), str);
        if (c == 0)
            return 0;
        if (c > 0)
            break;
    }
    return !str || json_array_insert_new(arr, i, json_string(str)) == 0 ? 0 : -ENOMEM;
}

const char *np_class_of(const char *have, const char *node)
{
    return node && (!have || strcmp(node, "high") == 0 || strcmp(have, "unknown") == 0) ? node
                                                                                        : have;
}

json_t *jfind(const json_t *arr, const char *key, const char *value)
{
    json_t *e;
    size_t i;

    json_array_foreach(value ? arr : NULL, i, e)
    {
        if (jstr(e, key) && strcmp(jstr(e, key), value) == 0)
            return e;
    }
    return NULL;
}

/* Append each string of @p names that @p arr does not hold yet, once, in their order, in
 * O(n log n) (a job's node list can name tens of thousands). 0 or -ENOMEM. */
static int jstrs_append_new(json_t *arr, const json_t *names)
{
    struct np_strs have = {0};
    const char **add;
    size_t i;
    int rc;

    if (json_array_size(names) == 0)
        return 0;
    add = malloc(json_array_size(names) * sizeof(*add));
    rc = add ? 0 : -ENOMEM;
    for (i = 0; !rc && i < json_array_size(arr); i++)
        rc = np_strs_append(&have, json_string_value(json_array_get(arr, i)));
    for (i = 0; !rc && i < json_array_size(names); i++)
        add[i] = json_string_value(json_array_get(names, i));
    if (!rc && (rc = np_strs_append_new(&have, add, i)) == 0)
        for (i = json_array_size(arr); !rc && i < have.n; i++)
            rc = json_array_append_new(arr, json_string(have.v[i])) ? -ENOMEM : 0;
    free(add);
    np_strs_free(&have);
    return rc;
}

/* ---- the nodes ---- */

int np_fold_names_get(const json_t *summary, struct np_fold_names *f)
{
    const json_t *fold = json_object_get(summary, "nodes_folded");
    const char *names = jstr(fold, "names");

    memset(f, 0, sizeof(*f));
    f->folded = fold != NULL;
    return names ? np_hostlist_expand(names, SIZE_MAX, &f->sorted, NULL) : 0;
}

size_t np_fold_names_count(const json_t *summary, const struct np_fold_names *f)
{
    const json_t *nodes = json_object_get(summary, "nodes");
    size_t n = 0;
    const char *name;
    json_t *v;

    if (!f->folded)
        return json_object_size(nodes);
    json_object_foreach((json_t *)nodes, name, v)
    {
        n += !np_fold_names_has(f, name);
    }
    return n + (size_t)jint(json_object_get(summary, "nodes_folded"), "nodes");
}

size_t np_summary_node_count(const json_t *summary)
{
    struct np_fold_names f;
    size_t n;

    np_fold_names_get(summary, &f);
    n = np_fold_names_count(summary, &f);
    np_strs_free(&f.sorted);
    return n;
}

bool np_summary_node_reported(const json_t *summary, const char *name)
{
    struct np_fold_names f;
    bool in;

    if (json_object_get(json_object_get(summary, "nodes"), name))
        return true;
    np_fold_names_get(summary, &f);
    in = np_fold_names_has(&f, name);
    np_strs_free(&f.sorted);
    return in;
}

const char **np_sorted_keys(const json_t *obj, size_t *n)
{
    const char **keys = malloc((json_object_size(obj) + 1) * sizeof(*keys)), *key;
    json_t *v;

    *n = 0;
    if (!keys)
        return NULL;
    json_object_foreach((json_t *)obj, key, v)
    {
        keys[(*n)++] = key;
    }
    qsort(keys, *n, sizeof(*keys), np_cmp_str);
    return keys;
}

bool np_summary_worst_local_share(const json_t *summary, double *share)
{
    const json_t *folded = json_object_get(
        json_object_get(json_object_get(summary, "nodes_folded"), "figures"), "local_share");
    const char *name;
    json_t *n;
    bool have = folded != NULL;

    if (have) /* the lowest of every node folded */
        *share = jnum(folded, "min", 0);
    json_object_foreach(json_object_get(summary, "nodes"), name, n)
    {
        /* any number counts, as `numaplace jobs` always read it */
        const json_t *v = json_object_get(json_object_get(n, "local_share"), "value");
        if (json_is_number(v) && (!have || json_number_value(v) < *share)) {
            *share = json_number_value(v);
            have = true;
        }
    }
    return have;
}

/* ---- totals ---- */

static double fig_or_nan(const json_t *f, const char *value_key)
{
    double v;

    return jfig(f, value_key, &v) ? v : NAN;
}

void np_node_figs_read(const char *name, const json_t *n, struct np_node_figs *nf)
{
    const json_t *k = json_object_get(json_object_get(n, "os_interference"), "kernel_time_share");

    nf->name = name;
    nf->v[NP_DIST_LOCAL_SHARE] = fig_or_nan(json_object_get(n, "local_share"), "value");
    nf->v[NP_DIST_CPI] = fig_or_nan(json_object_get(n, "cpi"), "mean");
    nf->v[NP_DIST_BANDWIDTH] = fig_or_nan(json_object_get(n, "bandwidth"), "mean_bytes_per_s");
    nf->v[NP_DIST_KERNEL_TIME_SHARE] = fig_or_nan(k, "value");
    nf->v[NP_DIST_DURATION_S] = jnum(n, "duration_s", NAN);
    nf->v[NP_DIST_STEP_COUNT] = jnum(n, "step_count", NAN);
    nf->v[NP_DIST_PAGES_MOVED_BYTES] = jnum(n, "pages_moved_bytes", NAN);
    nf->k_seconds = isnan(nf->v[NP_DIST_KERNEL_TIME_SHARE]) ? 0 : jnum(k, "seconds", MIN_WEIGHT_S);
    nf->requests = jint(json_object_get(n, "migrations"), "requests");
}

struct np_sums np_sums_read(const json_t *f)
{
    return (struct np_sums){.steps = jint(f, "steps"),
                            .moved = jint(f, "pages_moved_bytes"),
                            .requests = jint(f, "migration_requests"),
                            .ls_nodes = jint(f, "local_share_nodes"),
                            .k_nodes = jint(f, "kernel_time_share_nodes"),
                            .ls_s = jnum(f, "local_share_seconds", 0),
                            .ls_xs = jnum(f, "local_share_x_seconds", 0),
                            .ls_bs = jnum(f, "local_share_byte_seconds", 0),
                            .ls_xbs = jnum(f, "local_share_x_byte_seconds", 0),
                            .k_s = jnum(f, "kernel_time_share_seconds", 0),
                            .k_xs = jnum(f, "kernel_time_share_x_seconds", 0),
                            .all_bytes =
                                !f || json_is_true(json_object_get(f, "local_share_all_bytes")),
                            .sens = jstr(f, "sensitivity"),
                            .start = jstr(f, "start"),
                            .end = jstr(f, "end")};
}

int np_sums_add(struct np_sums *f, const json_t *n, const struct np_node_figs *nf, json_t *policies,
                json_t *applied)
{
    const json_t *ls = json_object_get(n, "local_share"), *p;
    const double x = nf->v[NP_DIST_LOCAL_SHARE], k = nf->v[NP_DIST_KERNEL_TIME_SHARE];
    const char *start = jstr(n, "start"), *end = jstr(n, "end");
    size_t i;
    int rc = 0;

    f->steps += jint(n, "step_count");
    f->moved += jint(n, "pages_moved_bytes");
    f->requests += nf->requests;
    if (!isnan(x)) {
        const double w = jnum(ls, "seconds", MIN_WEIGHT_S), bs = jnum(ls, "byte_seconds", -1);
        f->ls_s += w;
        f->ls_xs += x * w;
        if (bs > 0) {
            f->ls_bs += bs;
            f->ls_xbs += x * bs;
        } else {
            f->all_bytes = false;
        }
        f->ls_nodes++;
    }
    if (!isnan(k)) {
        f->k_s += nf->k_seconds;
        f->k_xs += k * nf->k_seconds;
        f->k_nodes++;
    }
    json_array_foreach(json_object_get(n, "policy_requested"), i, p)
    {
        rc |= jstrs_add_sorted(policies, json_string_value(p));
    }
    rc |= applied && jmap_add(applied, json_object_get(n, "policy_applied"));
    f->sens = np_class_of(f->sens, jstr(n, "sensitivity"));
    if (np_iso_ok(start) && (!f->start || strcmp(start, f->start) < 0))
        f->start = start;
    if (np_iso_ok(end) && (!f->end || strcmp(end, f->end) > 0))
        f->end = end;
    return rc ? -ENOMEM : 0;
}

/* The expected nodes that neither reported nor were skipped, each once. */
static json_t *still_missing(const json_t *s, const struct np_fold_names *fn)
{
    const json_t *missing = json_object_get(s, "missing_nodes");
    json_t *still = json_array(), *kept = json_array(), *v;
    size_t i;

    json_array_foreach(missing, i, v)
    {
        const char *name = json_string_value(v);
        if (still && !json_object_get(json_object_get(s, "nodes"), name) &&
            !np_fold_names_has(fn, name) && !jfind(json_object_get(s, "skipped"), "node", name) &&
            json_array_append(still, v) != 0)
            json_decref(still), still = NULL;
    }
    if (!still || !kept || jstrs_append_new(kept, still) != 0)
        json_decref(kept), kept = NULL;
    json_decref(still);
    return kept;
}

int np_summary_recompute(json_t *s)
{
    const json_t *fs = json_object_get(json_object_get(s, "nodes_folded"), "sums"), *n;
    json_t *policies = json_deep_copy(json_object_get(fs, "policy_requested")),
           *applied = json_object();
    /* the folded nodes' share first: the nodes kept whole are in it already */
    struct np_sums f = np_sums_read(fs);
    char ls_why[NP_ERR_MSG_MAX] = "", k_why[NP_ERR_MSG_MAX] = "";
    struct np_fold_names fn;
    const char *name;
    int rc = np_fold_names_get(s, &fn);

    f.start = np_iso_ok(f.start) ? f.start : NULL;
    f.end = np_iso_ok(f.end) ? f.end : NULL;
    if (!policies)
        policies = json_array();
    rc |= !policies || !applied || jmap_add(applied, json_object_get(fs, "policy_applied"));
    json_object_foreach(json_object_get(s, "nodes"), name, n)
    {
        const char *lwhy = jwhy(n, "local_share"),
                   *kwhy = jwhy(json_object_get(n, "os_interference"), "kernel_time_share");
        struct np_node_figs nf;
        if (np_fold_names_has(&fn, name))
            continue; /* kept whole, counted in the fold */
        np_node_figs_read(name, n, &nf);
        rc |= np_sums_add(&f, n, &nf, policies, applied);
        if (isnan(nf.v[NP_DIST_LOCAL_SHARE]) && !ls_why[0] && lwhy)
            snprintf(ls_why, sizeof(ls_why), "no node measured it (%s: %s)", name, lwhy);
        if (isnan(nf.v[NP_DIST_KERNEL_TIME_SHARE]) && !k_why[0] && kwhy)
            snprintf(k_why, sizeof(k_why), "no node measured it (%s: %s)", name, kwhy);
    }

    /* a node that reported (even a skipped report) is not missing */
    rc |= json_object_set_new(s, "missing_nodes", still_missing(s, &fn));
    rc |= json_object_set_new(s, "policy_requested", policies);
    rc |= json_object_set_new(s, "policy_applied", applied);
    /* sens, start and end point into the nodes or the fold: copied before what they replace goes */
    if (f.sens)
        rc |= json_object_set_new(s, "sensitivity", json_string(f.sens));
    else
        json_object_del(s, "sensitivity");
    if (f.start)
        rc |= json_object_set_new(s, "start", json_string(f.start));
    if (f.end)
        rc |= json_object_set_new(s, "end", json_string(f.end));
    rc |= json_object_set_new(
        s, "totals",
        json_pack(
            "{s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "nodes",
            (json_int_t)np_fold_names_count(s, &fn), "steps", f.steps, "missing_nodes",
            (json_int_t)json_array_size(json_object_get(s, "missing_nodes")), "skipped",
            (json_int_t)json_array_size(json_object_get(s, "skipped")), "pages_moved_bytes",
            f.moved, "migration_requests", f.requests, "local_share",
            f.ls_nodes
                ? json_pack("{s:f, s:s, s:s, s:I, s:s}", "value",
                            f.all_bytes ? f.ls_xbs / f.ls_bs : f.ls_xs / f.ls_s, "unit", "fraction",
                            "weighting", f.all_bytes ? "bytes x time" : "time", "nodes", f.ls_nodes,
                            "source", f.all_bytes ? SRC_SUMMARY_LOCAL : SRC_SUMMARY_LOCAL_TIME)
                : json_pack("{s:s, s:s}", "unavailable", ls_why[0] ? ls_why : "no node reported it",
                            "source", "summary"),
            "kernel_time_share",
            f.k_nodes ? json_pack("{s:f, s:s, s:I, s:s}", "value", f.k_xs / f.k_s, "unit",
                                  "fraction", "nodes", f.k_nodes, "source", SRC_SUMMARY_KERNEL)
                      : json_pack("{s:s, s:s}", "unavailable",
                                  k_why[0] ? k_why : "no node reported it", "source", "summary")));
    np_strs_free(&fn.sorted);
    return rc ? -ENOMEM : 0;
}

/* ---- building ---- */

json_t *np_summary_new(uint32_t job_id)
{
    json_t *s = json_pack("{s:s, s:I, s:[], s:{}, s:{}, s:[], s:[], s:[]}", "schema",
                          NP_SUMMARY_SCHEMA, "job_id", (json_int_t)job_id, "policy_requested",
                          "policy_applied", "nodes", "missing_nodes", "skipped", "trimmed");

    if (s && np_summary_recompute(s) != 0)
        json_decref(s), s = NULL;
    return s;
}

int np_summary_set_user(json_t *summary, const char *user, struct np_err *err)
{
    const int rc = np_summary_check(summary, err);

    if (rc)
        return rc;
    if (!user || !*user)
        return np_err_set(err, -EINVAL, "empty user name: expected the job's user, e.g. alice");
    if (json_object_set_new(summary, "user", json_string(user)) != 0)
        return np_err_set(err, -ENOMEM, "out of memory naming the user");
    return 0;
}

int np_summary_expect_nodes(json_t *s, const char *hostlist, struct np_err *err)
{
    static const char *const seps = ", \t\r\n";
    json_t *names;
    const char *p;
    int count = 0, rc;

    if ((rc = np_summary_check(s, err)) != 0)
        return rc;
    names = json_array();
    /* check every name before changing anything */
    for (p = hostlist ? hostlist : ""; *p;) {
        size_t len = strcspn(p, seps);
        for (size_t k = 0; k < len; k++)
            if (!np_node_char_ok(p[k])) {
                json_decref(names);
                return np_err_set(err, -EINVAL,
                                  "node name '%.*s' has '%c': accepted are letters, digits, '.', "
                                  "'-' and '_', separated by commas (expand Slurm hostlists such "
                                  "as node[1-4] with `scontrol show hostnames`)",
                                  (int)len, p, p[k]);
            }
        if (len >= 256) {
            json_decref(names);
            return np_err_set(err, -EINVAL, "node name '%.32s...' is longer than 255 characters",
                              p);
        }
        if (len && json_array_append_new(names, json_stringn(p, len)) != 0)
            rc = -ENOMEM;
        count += len > 0;
        p += len;
        p += strspn(p, seps);
    }
    if (count == 0) {
        json_decref(names);
        return np_err_set(err, -EINVAL,
                          "empty node list: expected the job's nodes separated by commas, e.g. "
                          "node1,node2 (`scontrol show hostnames` expands Slurm hostlists)");
    }
    if (!json_is_array(json_object_get(s, "missing_nodes")))
        rc |= json_object_set_new(s, "missing_nodes", json_array());
    rc = rc || !names ? -ENOMEM : jstrs_append_new(json_object_get(s, "missing_nodes"), names);
    json_decref(names);
    if (rc < 0)
        return np_err_set(err, -ENOMEM, "out of memory listing the expected nodes");
    np_summary_recompute(s); /* drops the nodes that reported */
    return 0;
}

/* ---- merging ---- */

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
