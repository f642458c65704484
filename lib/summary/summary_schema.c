/* A summary checked where it enters (np_summary_validate): every object's members listed once
 * here, each of its type; an unknown member, or one of another type, is refused naming its path
 * ("nodes.n1.steps[0].cpus") and what it should be. nodes_folded is checked further for what the
 * types cannot say. Nothing is copied: the summary stays the caller's json_t. */
#include "summary_priv.h"

const char *const np_dist_names[NP_DIST_N] = {
    "local_share", "cpi",        "bandwidth_bytes_per_s", "kernel_time_share",
    "duration_s",  "step_count", "pages_moved_bytes"};

/* An object's members, "name:type" separated by spaces, "!name" required. A type is s (a string),
 * i (an integer), n (a number), b (true or false), N (an array of numbers), Z (numbers or null),
 * S (an array of strings), m (an object of numbers), B (bytes per NUMA node, or an unavailable
 * figure), {X (an object of schema X), [X (an array of them), or <T (an object of type T by
 * name). */
struct schema {
    const char *name, *members;
};

#define FIGURE(value)                                                                              \
#value ":n unit:s source:s unavailable:s seconds:n steps:i byte_seconds:n "                    \
           "weighting:s nodes:i "

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
static int fold_check(const json_t *f, struct np_err *err)
{
    const json_int_t nodes = jint(f, "nodes");
    struct np_strs sorted = {0}, late = {0};
    int rc;

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

static const struct schema schemas[] = {
    {"summary",
     "schema:s job_id:i uid:i user:s policy_requested:S policy_applied:m sensitivity:s start:s "
     "end:s nodes:<{node totals:{totals missing_nodes:S skipped:[skip trimmed:[trim "
     "nodes_folded:{fold"},
    {"node",
     "steps:[step step_count:i duration_s:n start:s end:s policy_requested:S policy_applied:m "
     "sensitivity:s local_share:{figure pages_peak_bytes:B pages_end_bytes:B cpi:{cpi "
     "bandwidth:{bandwidth migrations:{migrations pages_moved_bytes:i os_interference:{os "
     "timeline:{timeline"},
    {"step", "step:s policy:s applied:m sensitivity:s cpus:s complete:b duration_s:n local_nodes:N "
             "start:s end:s class:s class_source:s cpi:n llc_mpki:n bandwidth_bytes_per_s:n "
             "counters_unavailable:s helper_shared_cpus:s"},
    {"figure", FIGURE(value) "intervals:i"},
    {"cpi", FIGURE(mean) "p95:n intervals:i median:n"},
    {"bandwidth", FIGURE(mean_bytes_per_s) "peak_bytes_per_s:n intervals:i per_node:<{per_node"},
    {"per_node", "!mean_bytes_per_s:n !peak_bytes_per_s:n"},
    {"migrations", "in_bytes:m out_bytes:m requests:i dry_run_requests:i moving_s:n failed_pages:m "
                   "triggers:<{trigger source:s"},
    {"trigger", "requests:i dry_run:i moved_pages:i"},
    {"os", "kernel_time_share:{figure involuntary_cs_per_s:{figure interrupts_per_s:{figure "
           "softirqs_per_s:{figure other_cpu_time_s:{figure"},
    {"timeline", "t:N node_bytes:<N bandwidth_bytes_per_s:Z cpi:Z events:[event every_nth_sample:n "
                 "bandwidth_note:s cpi_note:s step:s duration_s:n"},
    {"event", "t:n label:s"},
    {"totals", "nodes:i steps:i missing_nodes:i skipped:i pages_moved_bytes:i migration_requests:i "
               "local_share:{figure kernel_time_share:{figure"},
    {"skip", "node:s step:s reason:s"},
    {"trim", "what:s stored_bytes_before:i"},
    /* nodes_folded (docs/summary-schema.md, "Folded nodes") */
    {"fold", "!nodes:i !names:s !figures:{figures !sums:{sums not_updated:s"},
    {"figures", "local_share:{dist cpi:{dist bandwidth_bytes_per_s:{dist kernel_time_share:{dist "
                "duration_s:{dist step_count:{dist pages_moved_bytes:{dist"},
    {"dist", "!count:i !min:n !min_node:s !p50:n !p90:n !max:n !max_node:s !percentiles_of:i"},
    {"sums", "!steps:i !pages_moved_bytes:i !migration_requests:i !local_share_nodes:i "
             "!local_share_seconds:n !local_share_x_seconds:n !local_share_byte_seconds:n "
             "!local_share_x_byte_seconds:n !local_share_all_bytes:b !kernel_time_share_nodes:i "
             "!kernel_time_share_seconds:n !kernel_time_share_x_seconds:n !policy_requested:S "
             "!policy_applied:m sensitivity:s start:s end:s"},
};

/* ---- checking ---- */

/* The schema named by the start of @p name (up to a space or the end). */
static const struct schema *schema_of(const char *name)
{
    const size_t len = strcspn(name, " ");

    for (size_t k = 0; k < sizeof(schemas) / sizeof(schemas[0]); k++)
        if (strlen(schemas[k].name) == len && strncmp(schemas[k].name, name, len) == 0)
            return &schemas[k];
    return &schemas[0]; /* not reached: every name is in the table */
}

/* The next member of a list at *@p p: its name (without '!') and length, whether required, and
 * its type. false at the end. */
struct member {
    const char *name, *type;
    size_t len;
    bool required;
};

static bool next_member(const char **p, struct member *m)
{
    *p += strspn(*p, " ");
    if (!**p)
        return false;
    m->required = **p == '!';
    m->name = *p + m->required;
    m->len = strcspn(m->name, ":");
    m->type = m->name + m->len + 1;
    *p = m->type + strcspn(m->type, " ");
    return true;
}

static bool find_member(const struct schema *sch, const char *key, struct member *m)
{
    const char *p = sch->members;

    while (next_member(&p, m))
        if (strlen(key) == m->len && strncmp(m->name, key, m->len) == 0)
            return true;
    return false;
}

static int expected(struct np_err *err, const char *path, const char *what)
{
    return np_err_set(err, -EINVAL, "%s: expected %s", path, what);
}

static int check_object(const struct schema *sch, const json_t *j, const char *what,
                        const char *self, struct np_err *err);

/* @p v of @p type (see struct schema) at @p path. */
static int check_value(const char *type, const json_t *v, const char *path, struct np_err *err)
{
    char at[300];
    const char *key;
    json_t *e;
    size_t i;
    int rc = 0;

    switch (*type) {
    case 's':
        return json_is_string(v) ? 0 : expected(err, path, "a string");
    case 'i':
        return json_is_integer(v) ? 0 : expected(err, path, "an integer");
    case 'n':
        return json_is_number(v) ? 0 : expected(err, path, "a number");
    case 'b':
        return json_is_boolean(v) ? 0 : expected(err, path, "true or false");
    case 'N':
    case 'Z':
    case 'S':
        if (!json_is_array(v))
            return expected(err, path,
                            *type == 'S' ? "an array of strings" : "an array of numbers");
        json_array_foreach(v, i, e)
        {
            if (*type == 'S' ? !json_is_string(e)
                             : !json_is_number(e) && !(*type == 'Z' && json_is_null(e))) {
                np_strf(at, sizeof(at), "%s[%zu]", path, i);
                return expected(err, at,
                                *type == 'S'   ? "a string"
                                : *type == 'N' ? "a number"
                                               : "a number or null");
            }
        }
        return 0;
    case 'B':
        if (json_object_get(v, "unavailable"))
            return check_object(schema_of("figure"), v, path, path, err);
        /* bytes per NUMA node */
        /* fall through */
    case 'm':
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
    case '{':
        return check_object(schema_of(type + 1), v, path, path, err);
    case '[':
        if (!json_is_array(v))
            return expected(err, path, "an array");
        json_array_foreach(v, i, e)
        {
            np_strf(at, sizeof(at), "%s[%zu]", path, i);
            if ((rc = check_object(schema_of(type + 1), e, at, at, err)) != 0)
                return rc;
        }
        return 0;
    default: /* '<' */
        if (!json_is_object(v))
            return expected(err, path, "an object");
        json_object_foreach((json_t *)v, key, e)
        {
            np_strf(at, sizeof(at), "%s.%s", path, key);
            if ((rc = check_value(type + 1, e, at, err)) != 0)
                return rc;
        }
        return 0;
    }
}

/* @p j against @p sch: @p what prefixes its members' paths ("" for the whole summary), @p self
 * names it in messages. */
static int check_object(const struct schema *sch, const json_t *j, const char *what,
                        const char *self, struct np_err *err)
{
    const char *key, *p;
    struct member m;
    json_t *v;

    if (!json_is_object(j))
        return np_err_set(err, -EINVAL, "%s: expected an object", self);
    json_object_foreach((json_t *)j, key, v)
    {
        if (!find_member(sch, key, &m)) {
            char accepted[512] = "";
            size_t o = 0;
            for (p = sch->members; next_member(&p, &m);) {
                int w = snprintf(accepted + o, sizeof(accepted) - o, "%s%.*s", o ? ", " : "",
                                 (int)m.len, m.name);
                if (w < 0 || (size_t)w >= sizeof(accepted) - o)
                    break;
                o += (size_t)w;
            }
            return np_err_set(err, -EINVAL, "%s: unknown member \"%s\" (accepted: %s)", self, key,
                              accepted);
        }
    }
    for (p = sch->members; next_member(&p, &m);) {
        char name[64];
        snprintf(name, sizeof(name), "%.*s", (int)m.len, m.name);
        if (m.required && !json_object_get(j, name))
            return np_err_set(err, -EINVAL, "%s: missing member \"%s\"", self, name);
    }
    json_object_foreach((json_t *)j, key, v)
    {
        char path[300];
        int rc;
        np_strf(path, sizeof(path), "%s%s%s", what, *what ? "." : "", key);
        if (find_member(sch, key, &m) && (rc = check_value(m.type, v, path, err)) != 0)
            return rc; /* every key was found above */
    }
    /* what the types cannot say, after the members */
    if (strcmp(sch->name, "fold") == 0)
        return fold_check(j, err);
    return strcmp(sch->name, "dist") == 0 ? dist_check(j, self, err) : 0;
}

int np_summary_validate(const json_t *json, struct np_err *err)
{
    int rc;

    if ((rc = np_summary_check(json, err)) != 0)
        return rc;
    rc = check_object(schema_of("summary"), json, "", "summary", err);
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
    return check_object(schema_of("timeline"), tl, what, what, err);
}

int np_figure_check(const json_t *fig, struct np_err *err)
{
    return check_object(schema_of("figure"), fig, "figure", "figure", err);
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
