/* A job summary from JSON (numaplace/summary_model.h): strict decoding with json_unpack_ex,
 * every member named in the message when it is not what the schema says. */
#include "numaplace/summary_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "summary_priv.h"

/* A member's path for messages, cut when long. */
#define PATHF(buf, ...) np_strf(buf, sizeof(buf), __VA_ARGS__)

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- decoding ---- */

int np_sum_check(const json_t *summary, struct np_err *err)
{
    const char *schema = json_string_value(json_object_get(summary, "schema"));

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

/* Copy @p src into *dst when the member is there; false on out-of-memory. */
static bool dup_into(char **dst, const char *src)
{
    bool ok = true;

    *dst = np_strdup_or_null(src, &ok);
    return ok;
}

#define OOM(what) np_err_set(err, -ENOMEM, "%s: out of memory", what)
#define BAD(what) np_err_set(err, -EINVAL, "%s: %s", what, jerr.text)

static int decode_nums(const json_t *arr, bool nullable, struct np_nums *out, const char *what,
                       struct np_err *err)
{
    size_t i;
    json_t *v;

    if (!json_is_array(arr))
        return np_err_set(err, -EINVAL, "%s: expected an array of numbers", what);
    out->v = calloc(json_array_size(arr) + 1, sizeof(*out->v));
    if (!out->v)
        return OOM(what);
    json_array_foreach((json_t *)arr, i, v)
    {
        char path[300];
        int rc;
        PATHF(path, "%s[%zu]", what, i);
        if ((rc = np_num_decode(v, nullable, &out->v[i], path, err)) != 0)
            return rc;
        out->n++;
    }
    return 0;
}

static int decode_step(const json_t *j, struct np_sum_step *st, const char *what,
                       struct np_err *err)
{
    const char *step = NULL, *policy = NULL, *sens = NULL, *cpus = NULL, *start = NULL, *end = NULL;
    const char *cls = NULL, *cls_source = NULL, *why = NULL, *shared = NULL;
    json_t *applied = NULL, *local = NULL;
    json_error_t jerr;
    int complete = 0, rc;
    char path[300];

    if ((rc = np_keys_scan(j, np_sumk_step, NP_STEP_NMEMBERS, &st->keys, what, err)) != 0)
        return rc;
    if (json_unpack_ex(
            (json_t *)j, &jerr, JSON_STRICT,
            "{s?s, s?s, s?o, s?s, s?s, s?b, s?F, s?o, s?s, s?s, s?s, s?s, s?F, s?F, s?F, "
            "s?s, s?s}",
            "step", &step, "policy", &policy, "applied", &applied, "sensitivity", &sens, "cpus",
            &cpus, "complete", &complete, "duration_s", &st->duration_s, "local_nodes", &local,
            "start", &start, "end", &end, "class", &cls, "class_source", &cls_source, "cpi",
            &st->cpi, "llc_mpki", &st->llc_mpki, "bandwidth_bytes_per_s",
            &st->bandwidth_bytes_per_s, "counters_unavailable", &why, "helper_shared_cpus",
            &shared) != 0)
        return BAD(what);
    if (!dup_into(&st->job_class, cls) || !dup_into(&st->class_source, cls_source) ||
        !dup_into(&st->counters_unavailable, why) || !dup_into(&st->helper_shared_cpus, shared))
        return OOM(what);
    st->complete = complete;
    if (!dup_into(&st->step, step) || !dup_into(&st->policy, policy) ||
        !dup_into(&st->sensitivity, sens) || !dup_into(&st->cpus, cpus) ||
        !dup_into(&st->start, start) || !dup_into(&st->end, end))
        return OOM(what);
    PATHF(path, "%s.applied", what);
    if (applied && (rc = np_map_decode(applied, &st->applied, path, err)) != 0)
        return rc;
    if (local) {
        struct np_nums nums = {0};
        PATHF(path, "%s.local_nodes", what);
        rc = decode_nums(local, false, &nums, path, err);
        st->local_nodes = nums.v;
        st->nlocal_nodes = nums.n;
        if (rc)
            return rc;
    }
    return 0;
}

static int decode_migrations(const json_t *j, struct np_sum_migrations *m, const char *what,
                             struct np_err *err)
{
    json_t *in = NULL, *out = NULL, *failed = NULL, *triggers = NULL, *t;
    const char *source = NULL, *key;
    json_error_t jerr;
    char path[300];
    int rc;

    if ((rc = np_keys_scan(j, np_sumk_migr, NP_MIGR_NMEMBERS, &m->keys, what, err)) != 0)
        return rc;
    if (json_unpack_ex((json_t *)j, &jerr, JSON_STRICT, "{s?o, s?o, s?I, s?I, s?F, s?o, s?o, s?s}",
                       "in_bytes", &in, "out_bytes", &out, "requests", &m->requests,
                       "dry_run_requests", &m->dry_run_requests, "moving_s", &m->moving_s,
                       "failed_pages", &failed, "triggers", &triggers, "source", &source) != 0)
        return BAD(what);
    if (!dup_into(&m->source, source))
        return OOM(what);
    PATHF(path, "%s.in_bytes", what);
    if (in && (rc = np_map_decode(in, &m->in_bytes, path, err)) != 0)
        return rc;
    PATHF(path, "%s.out_bytes", what);
    if (out && (rc = np_map_decode(out, &m->out_bytes, path, err)) != 0)
        return rc;
    PATHF(path, "%s.failed_pages", what);
    if (failed && (rc = np_map_decode(failed, &m->failed_pages, path, err)) != 0)
        return rc;
    if (!triggers)
        return 0;
    PATHF(path, "%s.triggers", what);
    if (!json_is_object(triggers))
        return np_err_set(err, -EINVAL, "%s: expected an object", path);
    m->triggers = calloc(json_object_size(triggers) + 1, sizeof(*m->triggers));
    if (!m->triggers)
        return OOM(what);
    json_object_foreach(triggers, key, t)
    {
        struct np_sum_trigger *tr = &m->triggers[m->ntriggers];
        PATHF(path, "%s.triggers.%s", what, key);
        if ((rc = np_keys_scan(t, np_sumk_trigger, N_OF(np_sumk_trigger), &tr->keys, path, err)) !=
            0)
            return rc;
        if (json_unpack_ex(t, &jerr, JSON_STRICT, "{s?I, s?I, s?I}", "requests", &tr->requests,
                           "dry_run", &tr->dry_run, "moved_pages", &tr->moved_pages) != 0)
            return BAD(path);
        if (!dup_into(&tr->name, key))
            return OOM(what);
        m->ntriggers++;
    }
    return 0;
}

static int decode_bytes(const json_t *j, struct np_sum_bytes *b, const char *what,
                        struct np_err *err)
{
    /* bytes per NUMA node, or the unavailable form (a figure without a number) */
    if (json_object_get(j, "unavailable"))
        return np_figure_decode(j, NP_FIGURE_PLAIN, &b->unavailable, what, err);
    b->is_map = true;
    return np_map_decode(j, &b->map, what, err);
}

int np_sum_timeline_decode(const json_t *j, struct np_sum_timeline *tl, const char *what,
                           struct np_err *err)
{
    json_t *t = NULL, *nb = NULL, *bw = NULL, *cpi = NULL, *events = NULL, *every = NULL,
           *dur = NULL;
    const char *bnote = NULL, *cnote = NULL, *step = NULL;
    json_error_t jerr;
    char path[300];
    int rc;

    if ((rc = np_keys_scan(j, np_sumk_tl, NP_TL_NMEMBERS, &tl->keys, what, err)) != 0)
        return rc;
    if (json_unpack_ex((json_t *)j, &jerr, JSON_STRICT,
                       "{s?o, s?o, s?o, s?o, s?o, s?o, s?s, s?s, s?s, s?o}", "t", &t, "node_bytes",
                       &nb, "bandwidth_bytes_per_s", &bw, "cpi", &cpi, "events", &events,
                       "every_nth_sample", &every, "bandwidth_note", &bnote, "cpi_note", &cnote,
                       "step", &step, "duration_s", &dur) != 0)
        return BAD(what);
    if (!dup_into(&tl->bandwidth_note, bnote) || !dup_into(&tl->cpi_note, cnote) ||
        !dup_into(&tl->step, step))
        return OOM(what);
    PATHF(path, "%s.t", what);
    if (t && (rc = decode_nums(t, false, &tl->t, path, err)) != 0)
        return rc;
    PATHF(path, "%s.bandwidth_bytes_per_s", what);
    if (bw && (rc = decode_nums(bw, true, &tl->bandwidth, path, err)) != 0)
        return rc;
    PATHF(path, "%s.cpi", what);
    if (cpi && (rc = decode_nums(cpi, true, &tl->cpi, path, err)) != 0)
        return rc;
    PATHF(path, "%s.every_nth_sample", what);
    if (every && (rc = np_num_decode(every, false, &tl->every_nth_sample, path, err)) != 0)
        return rc;
    PATHF(path, "%s.duration_s", what);
    if (dur && (rc = np_num_decode(dur, false, &tl->duration_s, path, err)) != 0)
        return rc;
    if (nb) {
        const char *key;
        json_t *v;
        if (!json_is_object(nb))
            return np_err_set(err, -EINVAL, "%s.node_bytes: expected an object", what);
        tl->node_bytes = calloc(json_object_size(nb) + 1, sizeof(*tl->node_bytes));
        if (!tl->node_bytes)
            return OOM(what);
        json_object_foreach(nb, key, v)
        {
            struct np_sum_series *s = &tl->node_bytes[tl->nnode_bytes];
            PATHF(path, "%s.node_bytes.%s", what, key);
            if (!dup_into(&s->node, key))
                return OOM(what);
            tl->nnode_bytes++;
            if ((rc = decode_nums(v, false, &s->bytes, path, err)) != 0)
                return rc;
        }
    }
    if (events) {
        json_t *e;
        if (!json_is_array(events))
            return np_err_set(err, -EINVAL, "%s.events: expected an array", what);
        tl->events = calloc(json_array_size(events) + 1, sizeof(*tl->events));
        if (!tl->events)
            return OOM(what);
        size_t i;
        json_array_foreach(events, i, e)
        {
            struct np_sum_event *ev = &tl->events[i];
            json_t *et = NULL;
            const char *label = NULL;
            PATHF(path, "%s.events[%zu]", what, i);
            if ((rc = np_keys_scan(e, np_sumk_event, 2, &ev->keys, path, err)) != 0)
                return rc;
            if (json_unpack_ex(e, &jerr, JSON_STRICT, "{s?o, s?s}", "t", &et, "label", &label))
                return BAD(path);
            if (et && (rc = np_num_decode(et, false, &ev->t, path, err)) != 0)
                return rc;
            if (!dup_into(&ev->label, label))
                return OOM(what);
            tl->nevents++;
        }
    }
    return 0;
}

static int decode_os(const json_t *j, struct np_sum_os *os, const char *what, struct np_err *err)
{
    int rc = np_keys_scan(j, np_sumk_os, NP_OS_NMEMBERS, &os->keys, what, err);

    for (int k = 0; !rc && k < NP_OS_NMEMBERS; k++) {
        char path[300];
        const json_t *f = json_object_get(j, np_sumk_os[k]);
        PATHF(path, "%s.%s", what, np_sumk_os[k]);
        if (f)
            rc = np_figure_decode(f, NP_FIGURE_PLAIN, &os->fig[k], path, err);
    }
    return rc;
}

int np_sum_node_decode(const char *name, const json_t *j, struct np_sum_node *n, struct np_err *err)
{
    const char *start = NULL, *end = NULL, *sens = NULL;
    json_t *steps = NULL, *preq = NULL, *papp = NULL, *ls = NULL, *peak = NULL, *endb = NULL,
           *cpi = NULL, *bw = NULL, *migr = NULL, *os = NULL, *tl = NULL;
    json_error_t jerr;
    char what[300], path[340];
    int rc;

    PATHF(what, "nodes.%s", name);
    if (!dup_into(&n->name, name))
        return OOM(what);
    if ((rc = np_keys_scan(j, np_sumk_node, NP_NODE_NMEMBERS, &n->keys, what, err)) != 0)
        return rc;
    if (json_unpack_ex(
            (json_t *)j, &jerr, JSON_STRICT,
            "{s?o, s?I, s?F, s?s, s?s, s?o, s?o, s?s, s?o, s?o, s?o, s?o, s?o, s?o, s?I, "
            "s?o, s?o}",
            "steps", &steps, "step_count", &n->step_count, "duration_s", &n->duration_s, "start",
            &start, "end", &end, "policy_requested", &preq, "policy_applied", &papp, "sensitivity",
            &sens, "local_share", &ls, "pages_peak_bytes", &peak, "pages_end_bytes", &endb, "cpi",
            &cpi, "bandwidth", &bw, "migrations", &migr, "pages_moved_bytes", &n->pages_moved_bytes,
            "os_interference", &os, "timeline", &tl) != 0)
        return BAD(what);
    if (!dup_into(&n->start, start) || !dup_into(&n->end, end) || !dup_into(&n->sensitivity, sens))
        return OOM(what);
#define SUB(member) PATHF(path, "%s.%s", what, member)
    if (steps) {
        if (!json_is_array(steps))
            return np_err_set(err, -EINVAL, "%s.steps: expected an array", what);
        n->steps = calloc(json_array_size(steps) + 1, sizeof(*n->steps));
        if (!n->steps)
            return OOM(what);
        size_t i;
        json_t *e;
        json_array_foreach(steps, i, e)
        {
            PATHF(path, "%s.steps[%zu]", what, i);
            n->nsteps++;
            if ((rc = decode_step(e, &n->steps[i], path, err)) != 0)
                return rc;
        }
    }
    if (preq) {
        SUB("policy_requested");
        if ((rc = np_strs_decode(preq, &n->policy_requested, path, err)) != 0)
            return rc;
    }
    if (papp) {
        SUB("policy_applied");
        if ((rc = np_map_decode(papp, &n->policy_applied, path, err)) != 0)
            return rc;
    }
    if (ls) {
        SUB("local_share");
        if ((rc = np_figure_decode(ls, NP_FIGURE_PLAIN, &n->local_share, path, err)) != 0)
            return rc;
    }
    if (cpi) {
        SUB("cpi");
        if ((rc = np_figure_decode(cpi, NP_FIGURE_CPI, &n->cpi, path, err)) != 0)
            return rc;
    }
    if (bw) {
        SUB("bandwidth");
        if ((rc = np_figure_decode(bw, NP_FIGURE_BANDWIDTH, &n->bandwidth, path, err)) != 0)
            return rc;
    }
    if (peak) {
        SUB("pages_peak_bytes");
        if ((rc = decode_bytes(peak, &n->pages_peak_bytes, path, err)) != 0)
            return rc;
    }
    if (endb) {
        SUB("pages_end_bytes");
        if ((rc = decode_bytes(endb, &n->pages_end_bytes, path, err)) != 0)
            return rc;
    }
    if (migr) {
        SUB("migrations");
        if ((rc = decode_migrations(migr, &n->migrations, path, err)) != 0)
            return rc;
    }
    if (os) {
        SUB("os_interference");
        if ((rc = decode_os(os, &n->os, path, err)) != 0)
            return rc;
    }
    if (tl) {
        SUB("timeline");
        if ((rc = np_sum_timeline_decode(tl, &n->timeline, path, err)) != 0)
            return rc;
    }
#undef SUB
    return 0;
}

static int decode_lists(const json_t *skipped, const json_t *trimmed, struct np_sum *s,
                        struct np_err *err)
{
    json_error_t jerr;
    json_t *e;
    size_t i;
    int rc;
    char path[64];

    if (skipped) {
        if (!json_is_array(skipped))
            return np_err_set(err, -EINVAL, "skipped: expected an array");
        s->skipped = calloc(json_array_size(skipped) + 1, sizeof(*s->skipped));
        if (!s->skipped)
            return OOM("skipped");
        json_array_foreach(skipped, i, e)
        {
            struct np_sum_skip *k = &s->skipped[i];
            const char *node = NULL, *step = NULL, *reason = NULL;
            PATHF(path, "skipped[%zu]", i);
            if ((rc = np_keys_scan(e, np_sumk_skip, 3, &k->keys, path, err)) != 0)
                return rc;
            if (json_unpack_ex(e, &jerr, JSON_STRICT, "{s?s, s?s, s?s}", "node", &node, "step",
                               &step, "reason", &reason) != 0)
                return BAD(path);
            s->nskipped++;
            if (!dup_into(&k->node, node) || !dup_into(&k->step, step) ||
                !dup_into(&k->reason, reason))
                return OOM(path);
        }
    }
    if (trimmed) {
        if (!json_is_array(trimmed))
            return np_err_set(err, -EINVAL, "trimmed: expected an array");
        s->trimmed = calloc(json_array_size(trimmed) + 1, sizeof(*s->trimmed));
        if (!s->trimmed)
            return OOM("trimmed");
        json_array_foreach(trimmed, i, e)
        {
            struct np_sum_trim *t = &s->trimmed[i];
            const char *what = NULL;
            PATHF(path, "trimmed[%zu]", i);
            if ((rc = np_keys_scan(e, np_sumk_trim, 2, &t->keys, path, err)) != 0)
                return rc;
            if (json_unpack_ex(e, &jerr, JSON_STRICT, "{s?s, s?I}", "what", &what,
                               "stored_bytes_before", &t->stored_bytes_before) != 0)
                return BAD(path);
            s->ntrimmed++;
            if (!dup_into(&t->what, what))
                return OOM(path);
        }
    }
    return 0;
}

static int decode_totals(const json_t *j, struct np_sum_totals *t, struct np_err *err)
{
    json_t *ls = NULL, *k = NULL;
    json_error_t jerr;
    int rc;

    if ((rc = np_keys_scan(j, np_sumk_totals, NP_TOT_NMEMBERS, &t->keys, "totals", err)) != 0)
        return rc;
    if (json_unpack_ex((json_t *)j, &jerr, JSON_STRICT, "{s?I, s?I, s?I, s?I, s?I, s?I, s?o, s?o}",
                       "nodes", &t->nodes, "steps", &t->steps, "missing_nodes", &t->missing_nodes,
                       "skipped", &t->skipped, "pages_moved_bytes", &t->pages_moved_bytes,
                       "migration_requests", &t->migration_requests, "local_share", &ls,
                       "kernel_time_share", &k) != 0)
        return BAD("totals");
    if (ls && (rc = np_figure_decode(ls, NP_FIGURE_PLAIN, &t->local_share, "totals.local_share",
                                     err)) != 0)
        return rc;
    if (k && (rc = np_figure_decode(k, NP_FIGURE_PLAIN, &t->kernel_time_share,
                                    "totals.kernel_time_share", err)) != 0)
        return rc;
    return 0;
}

static int decode(const json_t *j, struct np_sum *s, struct np_err *err)
{
    const char *schema = NULL, *user = NULL, *sens = NULL, *start = NULL, *end = NULL, *key;
    json_t *preq = NULL, *papp = NULL, *nodes = NULL, *totals = NULL, *missing = NULL,
           *skipped = NULL, *trimmed = NULL, *folded = NULL, *v;
    json_error_t jerr;
    int rc;

    if ((rc = np_keys_scan(j, np_sumk_sum, NP_SUM_NMEMBERS, &s->keys, "summary", err)) != 0)
        return rc;
    if (json_unpack_ex((json_t *)j, &jerr, JSON_STRICT,
                       "{s:s, s:I, s?I, s?s, s?o, s?o, s?s, s?s, s?s, s:o, s?o, s?o, s?o, s?o, "
                       "s?o}",
                       "schema", &schema, "job_id", &s->job_id, "uid", &s->uid, "user", &user,
                       "policy_requested", &preq, "policy_applied", &papp, "sensitivity", &sens,
                       "start", &start, "end", &end, "nodes", &nodes, "totals", &totals,
                       "missing_nodes", &missing, "skipped", &skipped, "trimmed", &trimmed,
                       "nodes_folded", &folded) != 0)
        return BAD("summary");
    if (folded && (rc = np_sum_folded_decode(folded, &s->folded, err)) != 0)
        return rc;
    if (!dup_into(&s->schema, schema) || !dup_into(&s->user, user) ||
        !dup_into(&s->sensitivity, sens) || !dup_into(&s->start, start) || !dup_into(&s->end, end))
        return OOM("summary");
    if (preq && (rc = np_strs_decode(preq, &s->policy_requested, "policy_requested", err)) != 0)
        return rc;
    if (papp && (rc = np_map_decode(papp, &s->policy_applied, "policy_applied", err)) != 0)
        return rc;
    if (missing && (rc = np_strs_decode(missing, &s->missing_nodes, "missing_nodes", err)) != 0)
        return rc;
    if (totals && (rc = decode_totals(totals, &s->totals, err)) != 0)
        return rc;
    if ((rc = decode_lists(skipped, trimmed, s, err)) != 0)
        return rc;
    s->nodes = calloc(json_object_size(nodes) + 1, sizeof(*s->nodes));
    if (!s->nodes)
        return OOM("nodes");
    s->nodes_cap = json_object_size(nodes) + 1;
    json_object_foreach(nodes, key, v)
    {
        s->nnodes++;
        if ((rc = np_sum_node_decode(key, v, &s->nodes[s->nnodes - 1], err)) != 0)
            return rc;
    }
    return 0;
}

int np_sum_decode(const json_t *json, struct np_sum *s, struct np_err *err)
{
    int rc;

    memset(s, 0, sizeof(*s));
    if ((rc = np_sum_check(json, err)) != 0)
        return rc;
    rc = decode(json, s, err);
    if (rc) {
        char msg[NP_ERR_MSG_MAX];
        /* name the summary: the message reaches users of `numaplace report` and the epilog's log */
        snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
        np_err_set(err, rc, "summary of job %lld: %s", (long long)s->job_id, msg);
        np_sum_free(s);
    }
    return rc;
}
