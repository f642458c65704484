/* A summary checked where it enters (np_summary_validate): every object's members listed once
 * here, each of its type; an unknown member, or one of another type, is refused naming its path
 * ("nodes.n1.steps[0].cpus") and what it should be. nodes_folded is checked further for what the
 * types cannot say. Nothing is copied: the summary stays the caller's json_t. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/figure.h"
#include "numaplace/summary.h"
#include "summary_priv.h"

enum vtype {
    V_STR = 1,
    V_INT,
    V_NUM,
    V_BOOL,
    V_NUMS,
    V_NUMS_OR_NULL,
    V_STRS,
    V_MAP,
    V_OBJ,
    V_ARR,  /* an array of objects of @p sub */
    V_DICT, /* an object of @p elem (objects of @p sub when V_OBJ) by name */
    V_BYTES /* bytes per NUMA node (V_MAP), or an unavailable figure */
};

struct schema;

struct member {
    const char *name;
    unsigned char type, elem;
    bool required;
    const struct schema *sub;
};

struct schema {
    const struct member *m;
    unsigned n;
    /* what the types cannot say, after the members: 0 or -EINVAL with err */
    int (*check)(const json_t *obj, const char *what, struct np_err *err);
};

#define SCHEMA(table, check)                                                                       \
    {                                                                                              \
        (table), sizeof(table) / sizeof((table)[0]), (check)                                       \
    }
#define S(nm)                                                                                      \
    {                                                                                              \
        (nm), V_STR, 0, false, NULL                                                                \
    }
#define I(nm)                                                                                      \
    {                                                                                              \
        (nm), V_INT, 0, false, NULL                                                                \
    }
#define N(nm)                                                                                      \
    {                                                                                              \
        (nm), V_NUM, 0, false, NULL                                                                \
    }
#define O(nm, sch)                                                                                 \
    {                                                                                              \
        (nm), V_OBJ, 0, false, &(sch)                                                              \
    }
#define R(nm, ty)                                                                                  \
    {                                                                                              \
        (nm), (ty), 0, true, NULL                                                                  \
    }
#define FIGURE_MEMBERS(value)                                                                      \
    N(value), S("unit"), S("source"), S("unavailable"), N("seconds"), I("steps"),                  \
        N("byte_seconds"), S("weighting"), I("nodes")

/* ---- figures: {value, unit, source} or {unavailable, source}, and a summary's members ---- */

static const struct member per_node_m[] = {R("mean_bytes_per_s", V_NUM),
                                           R("peak_bytes_per_s", V_NUM)};
static const struct schema per_node = SCHEMA(per_node_m, NULL);
static const struct member plain_m[] = {FIGURE_MEMBERS("value"), I("intervals")};
static const struct member cpi_m[] = {FIGURE_MEMBERS("mean"), N("p95"), I("intervals"),
                                      N("median")};
static const struct member bandwidth_m[] = {FIGURE_MEMBERS("mean_bytes_per_s"),
                                            N("peak_bytes_per_s"),
                                            I("intervals"),
                                            {"per_node", V_DICT, V_OBJ, false, &per_node}};
static const struct schema plain = SCHEMA(plain_m, NULL), cpi = SCHEMA(cpi_m, NULL),
                           bandwidth = SCHEMA(bandwidth_m, NULL);

/* ---- a node ---- */

static const struct member step_m[] = {S("step"),
                                       S("policy"),
                                       {"applied", V_MAP, 0, false, NULL},
                                       S("sensitivity"),
                                       S("cpus"),
                                       {"complete", V_BOOL, 0, false, NULL},
                                       N("duration_s"),
                                       {"local_nodes", V_NUMS, 0, false, NULL},
                                       S("start"),
                                       S("end"),
                                       S("class"),
                                       S("class_source"),
                                       N("cpi"),
                                       N("llc_mpki"),
                                       N("bandwidth_bytes_per_s"),
                                       S("counters_unavailable"),
                                       S("helper_shared_cpus")};
static const struct schema step = SCHEMA(step_m, NULL);
static const struct member trigger_m[] = {I("requests"), I("dry_run"), I("moved_pages")};
static const struct schema trigger = SCHEMA(trigger_m, NULL);
static const struct member migr_m[] = {{"in_bytes", V_MAP, 0, false, NULL},
                                       {"out_bytes", V_MAP, 0, false, NULL},
                                       I("requests"),
                                       I("dry_run_requests"),
                                       N("moving_s"),
                                       {"failed_pages", V_MAP, 0, false, NULL},
                                       {"triggers", V_DICT, V_OBJ, false, &trigger},
                                       S("source")};
static const struct schema migr = SCHEMA(migr_m, NULL);
static const struct member os_m[] = {O("kernel_time_share", plain),
                                     O("involuntary_cs_per_s", plain), O("interrupts_per_s", plain),
                                     O("softirqs_per_s", plain), O("other_cpu_time_s", plain)};
static const struct schema os = SCHEMA(os_m, NULL);
static const struct member event_m[] = {N("t"), S("label")};
static const struct schema event = SCHEMA(event_m, NULL);
static const struct member timeline_m[] = {
    {"t", V_NUMS, 0, false, NULL},
    {"node_bytes", V_DICT, V_NUMS, false, NULL},
    {"bandwidth_bytes_per_s", V_NUMS_OR_NULL, 0, false, NULL},
    {"cpi", V_NUMS_OR_NULL, 0, false, NULL},
    {"events", V_ARR, 0, false, &event},
    N("every_nth_sample"),
    S("bandwidth_note"),
    S("cpi_note"),
    S("step"),
    N("duration_s")};
static const struct schema timeline = SCHEMA(timeline_m, NULL);
static const struct member node_m[] = {{"steps", V_ARR, 0, false, &step},
                                       I("step_count"),
                                       N("duration_s"),
                                       S("start"),
                                       S("end"),
                                       {"policy_requested", V_STRS, 0, false, NULL},
                                       {"policy_applied", V_MAP, 0, false, NULL},
                                       S("sensitivity"),
                                       O("local_share", plain),
                                       {"pages_peak_bytes", V_BYTES, 0, false, NULL},
                                       {"pages_end_bytes", V_BYTES, 0, false, NULL},
                                       O("cpi", cpi),
                                       O("bandwidth", bandwidth),
                                       O("migrations", migr),
                                       I("pages_moved_bytes"),
                                       O("os_interference", os),
                                       O("timeline", timeline)};
static const struct schema node = SCHEMA(node_m, NULL);

/* ---- nodes_folded (docs/summary-schema.md, "Folded nodes") ---- */

static int dist_check(const json_t *d, const char *what, struct np_err *err)
{
    const json_int_t count = jint(d, "count"), of = jint(d, "percentiles_of");
    const double min = jnum(d, "min", 0), p50 = jnum(d, "p50", 0), p90 = jnum(d, "p90", 0),
                 max = jnum(d, "max", 0);

    if (count < 1 || of < 1 || of > count || count > NP_FOLD_MAX_NODES ||
        !(min <= p50 && p50 <= p90 && p90 <= max))
        return np_err_set(err, -EINVAL,
                          "%s: expected 1 <= percentiles_of <= count <= %d and "
                          "min <= p50 <= p90 <= max",
                          what, NP_FOLD_MAX_NODES);
    return 0;
}

static const struct member dist_m[] = {
    R("count", V_INT), R("min", V_NUM), R("min_node", V_STR), R("p50", V_NUM),
    R("p90", V_NUM),   R("max", V_NUM), R("max_node", V_STR), R("percentiles_of", V_INT)};
static const struct schema dist = SCHEMA(dist_m, dist_check);
static const struct member figures_m[NP_DIST_N] = {
    O("local_share", dist),       O("cpi", dist),        O("bandwidth_bytes_per_s", dist),
    O("kernel_time_share", dist), O("duration_s", dist), O("step_count", dist),
    O("pages_moved_bytes", dist)};
static const struct schema figures = SCHEMA(figures_m, NULL);
static const struct member sums_m[] = {R("steps", V_INT),
                                       R("pages_moved_bytes", V_INT),
                                       R("migration_requests", V_INT),
                                       R("local_share_nodes", V_INT),
                                       R("local_share_seconds", V_NUM),
                                       R("local_share_x_seconds", V_NUM),
                                       R("local_share_byte_seconds", V_NUM),
                                       R("local_share_x_byte_seconds", V_NUM),
                                       R("local_share_all_bytes", V_BOOL),
                                       R("kernel_time_share_nodes", V_INT),
                                       R("kernel_time_share_seconds", V_NUM),
                                       R("kernel_time_share_x_seconds", V_NUM),
                                       R("policy_requested", V_STRS),
                                       R("policy_applied", V_MAP),
                                       S("sensitivity"),
                                       S("start"),
                                       S("end")};
static const struct schema sums = SCHEMA(sums_m, NULL);

static int sums_check(const json_t *s, json_int_t nodes, struct np_err *err)
{
    double ls_s = 0, ls_x = 0, ls_b = 0, ls_xb = 0, k_s = 0, k_x = 0;
    json_int_t ls_n = 0, k_n = 0;
    int all_bytes = 0;

    json_unpack((json_t *)s, "{s:I, s:F, s:F, s:F, s:F, s:b, s:I, s:F, s:F}", "local_share_nodes",
                &ls_n, "local_share_seconds", &ls_s, "local_share_x_seconds", &ls_x,
                "local_share_byte_seconds", &ls_b, "local_share_x_byte_seconds", &ls_xb,
                "local_share_all_bytes", &all_bytes, "kernel_time_share_nodes", &k_n,
                "kernel_time_share_seconds", &k_s, "kernel_time_share_x_seconds", &k_x);
    /* each x-weighted sum is a share (0 to 1) times its weight: a local share outside 0-100% */
    if (!(ls_x >= 0 && ls_x <= ls_s) || !(ls_xb >= 0 && ls_xb <= ls_b) ||
        !(k_x >= 0 && k_x <= k_s) || !isfinite(ls_s) || !isfinite(ls_b) || !isfinite(k_s))
        return np_err_set(err, -EINVAL,
                          "nodes_folded.sums: expected finite weights, each x_ sum between 0 "
                          "and its weight (shares from 0 to 1)");
    if (ls_n < 0 || ls_n > nodes || k_n < 0 || k_n > nodes || (ls_n && !(ls_s > 0)) ||
        (k_n && !(k_s > 0)) || (ls_n && all_bytes && !(ls_b > 0)))
        return np_err_set(err, -EINVAL,
                          "nodes_folded.sums: expected node counts between 0 and nodes (%lld), "
                          "with positive weights (byte seconds too when all_bytes)",
                          (long long)nodes);
    return 0;
}

/* After every member is checked, whatever their order: the names against the count, each
 * distribution against the names, the sums against the count. */
static int fold_check(const json_t *f, const char *what, struct np_err *err)
{
    const json_int_t nodes = jint(f, "nodes");
    struct np_strs sorted = {0}, late = {0};
    int rc;

    (void)what;
    if (nodes < 1 || nodes > NP_FOLD_MAX_NODES)
        return np_err_set(err, -EINVAL, "nodes_folded.nodes: %lld; expected 1 to %d",
                          (long long)nodes, NP_FOLD_MAX_NODES);
    if ((rc = np_hostlist_expand(jstr(f, "names"), (size_t)nodes, &sorted, err)) != 0)
        return rc;
    if ((json_int_t)sorted.n != nodes)
        rc = np_err_set(err, -EINVAL, "nodes_folded.names: %zu names for %lld nodes", sorted.n,
                        (long long)nodes);
    /* not_updated is a hostlist too, of folded nodes: checked here, not at a later merge */
    if (!rc && jstr(f, "not_updated"))
        rc = np_hostlist_expand(jstr(f, "not_updated"), (size_t)nodes, &late, err);
    np_strs_free(&late);
    for (unsigned d = 0; !rc && d < NP_DIST_N; d++) {
        const json_t *x = json_object_get(json_object_get(f, "figures"), np_dist_names[d]);
        if (!x)
            continue;
        if (jint(x, "count") > nodes)
            rc = np_err_set(err, -EINVAL, "nodes_folded.figures.%s: count over nodes",
                            np_dist_names[d]);
        else if (!np_strs_sorted_has(&sorted, jstr(x, "min_node")) ||
                 !np_strs_sorted_has(&sorted, jstr(x, "max_node")))
            rc = np_err_set(err, -EINVAL,
                            "nodes_folded.figures.%s: min_node and max_node must be in names",
                            np_dist_names[d]);
    }
    np_strs_free(&sorted);
    return rc ? rc : sums_check(json_object_get(f, "sums"), nodes, err);
}

static const struct member fold_m[] = {R("nodes", V_INT),
                                       R("names", V_STR),
                                       {"figures", V_OBJ, 0, true, &figures},
                                       {"sums", V_OBJ, 0, true, &sums},
                                       S("not_updated")};
static const struct schema fold = SCHEMA(fold_m, fold_check);

/* ---- the summary ---- */

static const struct member skip_m[] = {S("node"), S("step"), S("reason")};
static const struct schema skip = SCHEMA(skip_m, NULL);
static const struct member trim_m[] = {S("what"), I("stored_bytes_before")};
static const struct schema trim = SCHEMA(trim_m, NULL);
static const struct member totals_m[] = {I("nodes"),
                                         I("steps"),
                                         I("missing_nodes"),
                                         I("skipped"),
                                         I("pages_moved_bytes"),
                                         I("migration_requests"),
                                         O("local_share", plain),
                                         O("kernel_time_share", plain)};
static const struct schema totals = SCHEMA(totals_m, NULL);
static const struct member summary_m[] = {S("schema"),
                                          I("job_id"),
                                          I("uid"),
                                          S("user"),
                                          {"policy_requested", V_STRS, 0, false, NULL},
                                          {"policy_applied", V_MAP, 0, false, NULL},
                                          S("sensitivity"),
                                          S("start"),
                                          S("end"),
                                          {"nodes", V_DICT, V_OBJ, false, &node},
                                          O("totals", totals),
                                          {"missing_nodes", V_STRS, 0, false, NULL},
                                          {"skipped", V_ARR, 0, false, &skip},
                                          {"trimmed", V_ARR, 0, false, &trim},
                                          O("nodes_folded", fold)};
static const struct schema summary_schema = SCHEMA(summary_m, NULL);

/* ---- checking ---- */

static int expected(struct np_err *err, const char *path, const char *what)
{
    return np_err_set(err, -EINVAL, "%s: expected %s", path, what);
}

static int check_object(const struct schema *sch, const json_t *j, const char *what,
                        const char *self, struct np_err *err);

/* Member value @p v of type @p type (elements of V_ARR, V_DICT: @p elem) at @p path. */
static int check_value(unsigned type, unsigned elem, const struct schema *sub, const json_t *v,
                       const char *path, struct np_err *err)
{
    char at[300];
    const char *key;
    json_t *e;
    size_t i;
    int rc = 0;

    switch (type) {
    case V_STR:
        return json_is_string(v) ? 0 : expected(err, path, "a string");
    case V_INT:
        return json_is_integer(v) ? 0 : expected(err, path, "an integer");
    case V_NUM:
        return json_is_number(v) ? 0 : expected(err, path, "a number");
    case V_BOOL:
        return json_is_boolean(v) ? 0 : expected(err, path, "true or false");
    case V_NUMS:
    case V_NUMS_OR_NULL:
        if (!json_is_array(v))
            return expected(err, path, "an array of numbers");
        json_array_foreach(v, i, e)
        {
            if (!json_is_number(e) && !(type == V_NUMS_OR_NULL && json_is_null(e))) {
                np_strf(at, sizeof(at), "%s[%zu]", path, i);
                return expected(err, at, type == V_NUMS ? "a number" : "a number or null");
            }
        }
        return 0;
    case V_STRS:
        if (!json_is_array(v))
            return expected(err, path, "an array of strings");
        json_array_foreach(v, i, e)
        {
            if (!json_is_string(e))
                return np_err_set(err, -EINVAL, "%s[%zu]: expected a string", path, i);
        }
        return 0;
    case V_BYTES:
        if (json_object_get(v, "unavailable"))
            return check_object(&plain, v, path, path, err);
        /* bytes per NUMA node */
        /* fall through */
    case V_MAP:
        if (!json_is_object(v))
            return expected(err, path, "an object of numbers");
        json_object_foreach((json_t *)v, key, e)
        {
            if (!json_is_number(e)) {
                snprintf(at, 256, "%s.%s", path, key); /* cut where the maps always cut */
                return expected(err, at, "a number");
            }
        }
        return 0;
    case V_OBJ:
        return check_object(sub, v, path, path, err);
    case V_ARR:
        if (!json_is_array(v))
            return expected(err, path, "an array");
        json_array_foreach(v, i, e)
        {
            np_strf(at, sizeof(at), "%s[%zu]", path, i);
            if ((rc = check_object(sub, e, at, at, err)) != 0)
                return rc;
        }
        return 0;
    case V_DICT:
        if (!json_is_object(v))
            return expected(err, path, "an object");
        json_object_foreach((json_t *)v, key, e)
        {
            np_strf(at, sizeof(at), "%s.%s", path, key);
            if ((rc = check_value(elem, 0, sub, e, at, err)) != 0)
                return rc;
        }
        return 0;
    }
    return expected(err, path, "a member this numaplace knows");
}

/* @p j against @p sch: @p what prefixes its members' paths ("" for the whole summary), @p self
 * names it in messages. */
static int check_object(const struct schema *sch, const json_t *j, const char *what,
                        const char *self, struct np_err *err)
{
    const char *key;
    json_t *v;
    int rc;

    if (!json_is_object(j))
        return np_err_set(err, -EINVAL, "%s: expected an object", self);
    json_object_foreach((json_t *)j, key, v)
    {
        unsigned id = 0;
        while (id < sch->n && strcmp(sch->m[id].name, key) != 0)
            id++;
        if (id == sch->n) {
            char accepted[512] = "";
            size_t o = 0;
            for (unsigned k = 0; k < sch->n; k++) {
                int w = snprintf(accepted + o, sizeof(accepted) - o, "%s%s", o ? ", " : "",
                                 sch->m[k].name);
                if (w < 0 || (size_t)w >= sizeof(accepted) - o)
                    break;
                o += (size_t)w;
            }
            return np_err_set(err, -EINVAL, "%s: unknown member \"%s\" (accepted: %s)", self, key,
                              accepted);
        }
    }
    for (unsigned id = 0; id < sch->n; id++)
        if (sch->m[id].required && !json_object_get(j, sch->m[id].name))
            return np_err_set(err, -EINVAL, "%s: missing member \"%s\"", self, sch->m[id].name);
    json_object_foreach((json_t *)j, key, v)
    {
        const struct member *m = sch->m;
        char path[300];
        while (strcmp(m->name, key) != 0)
            m++;
        if (*what)
            np_strf(path, sizeof(path), "%s.%s", what, key);
        else
            np_strf(path, sizeof(path), "%s", key);
        if ((rc = check_value(m->type, m->elem, m->sub, v, path, err)) != 0)
            return rc;
    }
    return sch->check ? sch->check(j, self, err) : 0;
}

int np_summary_validate(const json_t *json, struct np_err *err)
{
    int rc;

    if ((rc = np_summary_check(json, err)) != 0)
        return rc;
    rc = check_object(&summary_schema, json, "", "summary", err);
    if (rc) {
        char msg[NP_ERR_MSG_MAX];
        /* name the summary: the message reaches users of `numaplace report` and the epilog's log */
        snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
        np_err_set(err, rc, "summary of job %lld: %s", (long long)jint(json, "job_id"), msg);
    }
    return rc;
}

int np_timeline_check(const json_t *tl, const char *what, struct np_err *err)
{
    return check_object(&timeline, tl, what, what, err);
}

int np_figure_check(const json_t *fig, struct np_err *err)
{
    return check_object(&plain, fig, "figure", "figure", err);
}

int np_summary_check(const json_t *summary, struct np_err *err)
{
    const char *schema = jstr(summary, "schema");

    if (!json_is_object(summary))
        return np_err_set(err, -EINVAL, "a summary must be a JSON object");
    if (!schema)
        return np_err_set(err, -EINVAL, "not a numaplace summary (no \"schema\")");
    if (strncmp(schema, "numaplace.summary/", strlen("numaplace.summary/")) != 0)
        return np_err_set(err, -EINVAL, "not a numaplace summary (schema %s; expected %s)", schema,
                          NP_SUMMARY_SCHEMA);
    if (strcmp(schema, NP_SUMMARY_SCHEMA) != 0)
        return np_err_set(err, -EPROTO, "summary schema %s; this numaplace reads %s", schema,
                          NP_SUMMARY_SCHEMA);
    if (!json_is_integer(json_object_get(summary, "job_id")) ||
        !json_is_object(json_object_get(summary, "nodes")))
        return np_err_set(err, -EINVAL,
                          "malformed summary: it needs an integer \"job_id\" and a \"nodes\" "
                          "object");
    return 0;
}
