/* A job summary in and out of JSON (numaplace/summary_model.h): strict decoding with
 * json_unpack_ex, encoding with the members in the order they were set. */
#include "numaplace/summary_model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/summary.h"

static const char *const sum_names[NP_SUM_NMEMBERS] = {
    "schema", "job_id", "uid",   "user",   "policy_requested", "policy_applied", "sensitivity",
    "start",  "end",    "nodes", "totals", "missing_nodes",    "skipped",        "trimmed",
};
static const char *const node_names[NP_NODE_NMEMBERS] = {
    "steps",       "step_count",       "duration_s",        "start",
    "end",         "policy_requested", "policy_applied",    "sensitivity",
    "local_share", "pages_peak_bytes", "pages_end_bytes",   "cpi",
    "bandwidth",   "migrations",       "pages_moved_bytes", "os_interference",
    "timeline",
};
static const char *const step_names[NP_STEP_NMEMBERS] = {
    "step",     "policy",     "applied",     "sensitivity", "cpus",
    "complete", "duration_s", "local_nodes", "start",       "end",
};
static const char *const migr_names[NP_MIGR_NMEMBERS] = {
    "in_bytes", "out_bytes",    "requests", "dry_run_requests",
    "moving_s", "failed_pages", "triggers", "source",
};
static const char *const trigger_names[] = {"requests", "dry_run", "moved_pages"};
static const char *const os_names[NP_OS_NMEMBERS] = {
    "kernel_time_share", "involuntary_cs_per_s", "interrupts_per_s",
    "softirqs_per_s",    "other_cpu_time_s",
};
static const char *const tl_names[NP_TL_NMEMBERS] = {
    "t",      "node_bytes",       "bandwidth_bytes_per_s", "cpi",
    "events", "every_nth_sample", "bandwidth_note",        "cpi_note",
    "step",   "duration_s",
};
static const char *const event_names[] = {"t", "label"};
static const char *const skip_names[] = {"node", "step", "reason"};
static const char *const trim_names[] = {"what", "stored_bytes_before"};
static const char *const totals_names[NP_TOT_NMEMBERS] = {
    "nodes",
    "steps",
    "missing_nodes",
    "skipped",
    "pages_moved_bytes",
    "migration_requests",
    "local_share",
    "kernel_time_share",
};

/* A member's path for messages, cut when long. */
#define PATHF(buf, ...) pathf(buf, sizeof(buf), __VA_ARGS__)

static void pathf(char *buf, size_t size, const char *fmt, ...) NP_PRINTF(3, 4);

static void pathf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- freeing ---- */

static void step_free(struct np_sum_step *st)
{
    free(st->step);
    free(st->policy);
    free(st->sensitivity);
    free(st->cpus);
    free(st->start);
    free(st->end);
    np_map_free(&st->applied);
    free(st->local_nodes);
    memset(st, 0, sizeof(*st));
}

static void migrations_free(struct np_sum_migrations *m)
{
    np_map_free(&m->in_bytes);
    np_map_free(&m->out_bytes);
    np_map_free(&m->failed_pages);
    for (size_t i = 0; i < m->ntriggers; i++)
        free(m->triggers[i].name);
    free(m->triggers);
    free(m->source);
    memset(m, 0, sizeof(*m));
}

static void bytes_free(struct np_sum_bytes *b)
{
    np_map_free(&b->map);
    np_figure_free(&b->unavailable);
    b->is_map = false;
}

static void timeline_free(struct np_sum_timeline *tl)
{
    free(tl->t.v);
    free(tl->bandwidth.v);
    free(tl->cpi.v);
    for (size_t i = 0; i < tl->nnode_bytes; i++) {
        free(tl->node_bytes[i].node);
        free(tl->node_bytes[i].bytes.v);
    }
    free(tl->node_bytes);
    for (size_t i = 0; i < tl->nevents; i++)
        free(tl->events[i].label);
    free(tl->events);
    free(tl->bandwidth_note);
    free(tl->cpi_note);
    free(tl->step);
    memset(tl, 0, sizeof(*tl));
}

void np_sum_node_free(struct np_sum_node *n)
{
    if (!n)
        return;
    free(n->name);
    for (size_t i = 0; i < n->nsteps; i++)
        step_free(&n->steps[i]);
    free(n->steps);
    free(n->start);
    free(n->end);
    free(n->sensitivity);
    np_strs_free(&n->policy_requested);
    np_map_free(&n->policy_applied);
    np_figure_free(&n->local_share);
    np_figure_free(&n->cpi);
    np_figure_free(&n->bandwidth);
    bytes_free(&n->pages_peak_bytes);
    bytes_free(&n->pages_end_bytes);
    migrations_free(&n->migrations);
    for (int k = 0; k < NP_OS_NMEMBERS; k++)
        np_figure_free(&n->os.fig[k]);
    timeline_free(&n->timeline);
    memset(n, 0, sizeof(*n));
}

void np_sum_free(struct np_sum *s)
{
    if (!s)
        return;
    free(s->schema);
    free(s->user);
    free(s->sensitivity);
    free(s->start);
    free(s->end);
    np_strs_free(&s->policy_requested);
    np_strs_free(&s->missing_nodes);
    np_map_free(&s->policy_applied);
    for (size_t i = 0; i < s->nnodes; i++)
        np_sum_node_free(&s->nodes[i]);
    free(s->nodes);
    for (size_t i = 0; i < s->nskipped; i++) {
        free(s->skipped[i].node);
        free(s->skipped[i].step);
        free(s->skipped[i].reason);
    }
    free(s->skipped);
    for (size_t i = 0; i < s->ntrimmed; i++)
        free(s->trimmed[i].what);
    free(s->trimmed);
    np_figure_free(&s->totals.local_share);
    np_figure_free(&s->totals.kernel_time_share);
    memset(s, 0, sizeof(*s));
}

/* ---- decoding ---- */

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
    json_t *applied = NULL, *local = NULL;
    json_error_t jerr;
    int complete = 0, rc;
    char path[300];

    if ((rc = np_keys_scan(j, step_names, NP_STEP_NMEMBERS, &st->keys, what, err)) != 0)
        return rc;
    if (json_unpack_ex((json_t *)j, &jerr, JSON_STRICT,
                       "{s?s, s?s, s?o, s?s, s?s, s?b, s?F, s?o, s?s, s?s}", "step", &step,
                       "policy", &policy, "applied", &applied, "sensitivity", &sens, "cpus", &cpus,
                       "complete", &complete, "duration_s", &st->duration_s, "local_nodes", &local,
                       "start", &start, "end", &end) != 0)
        return BAD(what);
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

    if ((rc = np_keys_scan(j, migr_names, NP_MIGR_NMEMBERS, &m->keys, what, err)) != 0)
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
        if ((rc = np_keys_scan(t, trigger_names, N_OF(trigger_names), &tr->keys, path, err)) != 0)
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

static int decode_timeline(const json_t *j, struct np_sum_timeline *tl, const char *what,
                           struct np_err *err)
{
    json_t *t = NULL, *nb = NULL, *bw = NULL, *cpi = NULL, *events = NULL, *every = NULL,
           *dur = NULL, *v;
    const char *bnote = NULL, *cnote = NULL, *step = NULL, *key;
    json_error_t jerr;
    char path[300];
    size_t i;
    int rc;

    if ((rc = np_keys_scan(j, tl_names, NP_TL_NMEMBERS, &tl->keys, what, err)) != 0)
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
        json_array_foreach(events, i, e)
        {
            struct np_sum_event *ev = &tl->events[i];
            json_t *et = NULL;
            const char *label = NULL;
            PATHF(path, "%s.events[%zu]", what, i);
            if ((rc = np_keys_scan(e, event_names, 2, &ev->keys, path, err)) != 0)
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
    int rc = np_keys_scan(j, os_names, NP_OS_NMEMBERS, &os->keys, what, err);

    for (int k = 0; !rc && k < NP_OS_NMEMBERS; k++) {
        char path[300];
        const json_t *f = json_object_get(j, os_names[k]);
        PATHF(path, "%s.%s", what, os_names[k]);
        if (f)
            rc = np_figure_decode(f, NP_FIGURE_PLAIN, &os->fig[k], path, err);
    }
    return rc;
}

static int decode_node(const char *name, const json_t *j, struct np_sum_node *n, struct np_err *err)
{
    const char *start = NULL, *end = NULL, *sens = NULL;
    json_t *steps = NULL, *preq = NULL, *papp = NULL, *ls = NULL, *peak = NULL, *endb = NULL,
           *cpi = NULL, *bw = NULL, *migr = NULL, *os = NULL, *tl = NULL, *e;
    json_error_t jerr;
    char what[300], path[340];
    size_t i;
    int rc;

    PATHF(what, "nodes.%s", name);
    if (!dup_into(&n->name, name))
        return OOM(what);
    if ((rc = np_keys_scan(j, node_names, NP_NODE_NMEMBERS, &n->keys, what, err)) != 0)
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
        if ((rc = decode_timeline(tl, &n->timeline, path, err)) != 0)
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
            if ((rc = np_keys_scan(e, skip_names, 3, &k->keys, path, err)) != 0)
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
            if ((rc = np_keys_scan(e, trim_names, 2, &t->keys, path, err)) != 0)
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

    if ((rc = np_keys_scan(j, totals_names, NP_TOT_NMEMBERS, &t->keys, "totals", err)) != 0)
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
           *skipped = NULL, *trimmed = NULL, *v;
    json_error_t jerr;
    int rc;

    if ((rc = np_keys_scan(j, sum_names, NP_SUM_NMEMBERS, &s->keys, "summary", err)) != 0)
        return rc;
    if (json_unpack_ex((json_t *)j, &jerr, JSON_STRICT,
                       "{s:s, s:I, s?I, s?s, s?o, s?o, s?s, s?s, s?s, s:o, s?o, s?o, s?o, s?o}",
                       "schema", &schema, "job_id", &s->job_id, "uid", &s->uid, "user", &user,
                       "policy_requested", &preq, "policy_applied", &papp, "sensitivity", &sens,
                       "start", &start, "end", &end, "nodes", &nodes, "totals", &totals,
                       "missing_nodes", &missing, "skipped", &skipped, "trimmed", &trimmed) != 0)
        return BAD("summary");
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
    json_object_foreach(nodes, key, v)
    {
        s->nnodes++;
        if ((rc = decode_node(key, v, &s->nodes[s->nnodes - 1], err)) != 0)
            return rc;
    }
    return 0;
}

int np_sum_decode(const json_t *json, struct np_sum *s, struct np_err *err)
{
    int rc;

    memset(s, 0, sizeof(*s));
    if ((rc = np_summary_check(json, err)) != 0)
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

/* ---- encoding ---- */

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *nums_json(const struct np_nums *ns)
{
    json_t *arr = json_array();

    for (size_t i = 0; arr && i < ns->n; i++)
        json_array_append_new(arr, np_num_json(&ns->v[i]));
    return arr;
}

/* obj[name] = v (stolen); false when either is NULL (out of memory). */
static bool put(json_t *obj, const char *name, json_t *v)
{
    return obj && v && json_object_set_new(obj, name, v) == 0;
}

static json_t *step_json(const struct np_sum_step *st)
{
    json_t *o = json_object();

    for (unsigned i = 0; o && i < st->keys.n; i++) {
        const unsigned m = st->keys.k[i];
        json_t *v = NULL;
        switch (m) {
        case NP_STEP_STEP:
            v = str_or_null(st->step);
            break;
        case NP_STEP_POLICY:
            v = str_or_null(st->policy);
            break;
        case NP_STEP_APPLIED:
            v = np_map_json(&st->applied);
            break;
        case NP_STEP_SENSITIVITY:
            v = str_or_null(st->sensitivity);
            break;
        case NP_STEP_CPUS:
            v = str_or_null(st->cpus);
            break;
        case NP_STEP_COMPLETE:
            v = json_boolean(st->complete);
            break;
        case NP_STEP_DURATION_S:
            v = json_real(st->duration_s);
            break;
        case NP_STEP_LOCAL_NODES: {
            const struct np_nums ns = {st->local_nodes, st->nlocal_nodes};
            v = nums_json(&ns);
            break;
        }
        case NP_STEP_START:
            v = str_or_null(st->start);
            break;
        case NP_STEP_END:
            v = str_or_null(st->end);
            break;
        }
        if (!put(o, step_names[m], v)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static json_t *migrations_json(const struct np_sum_migrations *m)
{
    json_t *o = json_object();

    for (unsigned i = 0; o && i < m->keys.n; i++) {
        const unsigned k = m->keys.k[i];
        json_t *v = NULL;
        switch (k) {
        case NP_MIGR_IN_BYTES:
            v = np_map_json(&m->in_bytes);
            break;
        case NP_MIGR_OUT_BYTES:
            v = np_map_json(&m->out_bytes);
            break;
        case NP_MIGR_REQUESTS:
            v = json_integer(m->requests);
            break;
        case NP_MIGR_DRY_RUN_REQUESTS:
            v = json_integer(m->dry_run_requests);
            break;
        case NP_MIGR_MOVING_S:
            v = json_real(m->moving_s);
            break;
        case NP_MIGR_FAILED_PAGES:
            v = np_map_json(&m->failed_pages);
            break;
        case NP_MIGR_TRIGGERS:
            v = json_object();
            for (size_t t = 0; v && t < m->ntriggers; t++) {
                const struct np_sum_trigger *tr = &m->triggers[t];
                const json_int_t vals[] = {tr->requests, tr->dry_run, tr->moved_pages};
                json_t *to = json_object();
                for (unsigned q = 0; to && q < tr->keys.n; q++)
                    json_object_set_new(to, trigger_names[tr->keys.k[q]],
                                        json_integer(vals[tr->keys.k[q]]));
                if (!put(v, tr->name, to)) {
                    json_decref(v);
                    v = NULL;
                }
            }
            break;
        case NP_MIGR_SOURCE:
            v = str_or_null(m->source);
            break;
        }
        if (!put(o, migr_names[k], v)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static json_t *bytes_json(const struct np_sum_bytes *b)
{
    return b->is_map ? np_map_json(&b->map) : np_figure_json(&b->unavailable);
}

static json_t *timeline_json(const struct np_sum_timeline *tl)
{
    json_t *o = json_object();

    for (unsigned i = 0; o && i < tl->keys.n; i++) {
        const unsigned k = tl->keys.k[i];
        json_t *v = NULL;
        switch (k) {
        case NP_TL_T:
            v = nums_json(&tl->t);
            break;
        case NP_TL_NODE_BYTES:
            v = json_object();
            for (size_t n = 0; v && n < tl->nnode_bytes; n++)
                if (!put(v, tl->node_bytes[n].node, nums_json(&tl->node_bytes[n].bytes))) {
                    json_decref(v);
                    v = NULL;
                }
            break;
        case NP_TL_BANDWIDTH:
            v = nums_json(&tl->bandwidth);
            break;
        case NP_TL_CPI:
            v = nums_json(&tl->cpi);
            break;
        case NP_TL_EVENTS:
            v = json_array();
            for (size_t e = 0; v && e < tl->nevents; e++) {
                const struct np_sum_event *ev = &tl->events[e];
                json_t *eo = json_object();
                for (unsigned q = 0; eo && q < ev->keys.n; q++)
                    json_object_set_new(eo, event_names[ev->keys.k[q]],
                                        ev->keys.k[q] == 0 ? np_num_json(&ev->t)
                                                           : str_or_null(ev->label));
                json_array_append_new(v, eo);
            }
            break;
        case NP_TL_EVERY_NTH_SAMPLE:
            v = np_num_json(&tl->every_nth_sample);
            break;
        case NP_TL_BANDWIDTH_NOTE:
            v = str_or_null(tl->bandwidth_note);
            break;
        case NP_TL_CPI_NOTE:
            v = str_or_null(tl->cpi_note);
            break;
        case NP_TL_STEP:
            v = str_or_null(tl->step);
            break;
        case NP_TL_DURATION_S:
            v = np_num_json(&tl->duration_s);
            break;
        }
        if (!put(o, tl_names[k], v)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static json_t *os_json(const struct np_sum_os *os)
{
    json_t *o = json_object();

    for (unsigned i = 0; o && i < os->keys.n; i++)
        if (!put(o, os_names[os->keys.k[i]], np_figure_json(&os->fig[os->keys.k[i]]))) {
            json_decref(o);
            return NULL;
        }
    return o;
}

static json_t *node_json(const struct np_sum_node *n)
{
    json_t *o = json_object();

    for (unsigned i = 0; o && i < n->keys.n; i++) {
        const unsigned k = n->keys.k[i];
        json_t *v = NULL;
        switch (k) {
        case NP_NODE_STEPS:
            v = json_array();
            for (size_t s = 0; v && s < n->nsteps; s++)
                if (json_array_append_new(v, step_json(&n->steps[s])) != 0) {
                    json_decref(v);
                    v = NULL;
                }
            break;
        case NP_NODE_STEP_COUNT:
            v = json_integer(n->step_count);
            break;
        case NP_NODE_DURATION_S:
            v = json_real(n->duration_s);
            break;
        case NP_NODE_START:
            v = str_or_null(n->start);
            break;
        case NP_NODE_END:
            v = str_or_null(n->end);
            break;
        case NP_NODE_POLICY_REQUESTED:
            v = np_strs_json(&n->policy_requested);
            break;
        case NP_NODE_POLICY_APPLIED:
            v = np_map_json(&n->policy_applied);
            break;
        case NP_NODE_SENSITIVITY:
            v = str_or_null(n->sensitivity);
            break;
        case NP_NODE_LOCAL_SHARE:
            v = np_figure_json(&n->local_share);
            break;
        case NP_NODE_PAGES_PEAK_BYTES:
            v = bytes_json(&n->pages_peak_bytes);
            break;
        case NP_NODE_PAGES_END_BYTES:
            v = bytes_json(&n->pages_end_bytes);
            break;
        case NP_NODE_CPI:
            v = np_figure_json(&n->cpi);
            break;
        case NP_NODE_BANDWIDTH:
            v = np_figure_json(&n->bandwidth);
            break;
        case NP_NODE_MIGRATIONS:
            v = migrations_json(&n->migrations);
            break;
        case NP_NODE_PAGES_MOVED_BYTES:
            v = json_integer(n->pages_moved_bytes);
            break;
        case NP_NODE_OS_INTERFERENCE:
            v = os_json(&n->os);
            break;
        case NP_NODE_TIMELINE:
            v = timeline_json(&n->timeline);
            break;
        }
        if (!put(o, node_names[k], v)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static json_t *totals_json(const struct np_sum_totals *t)
{
    json_t *o = json_object();

    for (unsigned i = 0; o && i < t->keys.n; i++) {
        const unsigned k = t->keys.k[i];
        json_t *v = NULL;
        switch (k) {
        case NP_TOT_NODES:
            v = json_integer(t->nodes);
            break;
        case NP_TOT_STEPS:
            v = json_integer(t->steps);
            break;
        case NP_TOT_MISSING_NODES:
            v = json_integer(t->missing_nodes);
            break;
        case NP_TOT_SKIPPED:
            v = json_integer(t->skipped);
            break;
        case NP_TOT_PAGES_MOVED_BYTES:
            v = json_integer(t->pages_moved_bytes);
            break;
        case NP_TOT_MIGRATION_REQUESTS:
            v = json_integer(t->migration_requests);
            break;
        case NP_TOT_LOCAL_SHARE:
            v = np_figure_json(&t->local_share);
            break;
        case NP_TOT_KERNEL_TIME_SHARE:
            v = np_figure_json(&t->kernel_time_share);
            break;
        }
        if (!put(o, totals_names[k], v)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static json_t *list_json(const struct np_sum *s, unsigned which)
{
    json_t *arr = json_array();

    if (which == NP_SUM_SKIPPED)
        for (size_t i = 0; arr && i < s->nskipped; i++) {
            const struct np_sum_skip *k = &s->skipped[i];
            const char *vals[] = {k->node, k->step, k->reason};
            json_t *o = json_object();
            for (unsigned q = 0; o && q < k->keys.n; q++)
                json_object_set_new(o, skip_names[k->keys.k[q]], str_or_null(vals[k->keys.k[q]]));
            json_array_append_new(arr, o);
        }
    else
        for (size_t i = 0; arr && i < s->ntrimmed; i++) {
            const struct np_sum_trim *t = &s->trimmed[i];
            json_t *o = json_object();
            for (unsigned q = 0; o && q < t->keys.n; q++)
                json_object_set_new(o, trim_names[t->keys.k[q]],
                                    t->keys.k[q] == NP_TRIM_WHAT
                                        ? str_or_null(t->what)
                                        : json_integer(t->stored_bytes_before));
            json_array_append_new(arr, o);
        }
    return arr;
}

json_t *np_sum_encode(const struct np_sum *s)
{
    json_t *o = json_object();

    for (unsigned i = 0; o && i < s->keys.n; i++) {
        const unsigned k = s->keys.k[i];
        json_t *v = NULL;
        switch (k) {
        case NP_SUM_SCHEMA:
            v = str_or_null(s->schema);
            break;
        case NP_SUM_JOB_ID:
            v = json_integer(s->job_id);
            break;
        case NP_SUM_UID:
            v = json_integer(s->uid);
            break;
        case NP_SUM_USER:
            v = str_or_null(s->user);
            break;
        case NP_SUM_POLICY_REQUESTED:
            v = np_strs_json(&s->policy_requested);
            break;
        case NP_SUM_POLICY_APPLIED:
            v = np_map_json(&s->policy_applied);
            break;
        case NP_SUM_SENSITIVITY:
            v = str_or_null(s->sensitivity);
            break;
        case NP_SUM_START:
            v = str_or_null(s->start);
            break;
        case NP_SUM_END:
            v = str_or_null(s->end);
            break;
        case NP_SUM_NODES:
            v = json_object();
            for (size_t n = 0; v && n < s->nnodes; n++)
                if (!put(v, s->nodes[n].name, node_json(&s->nodes[n]))) {
                    json_decref(v);
                    v = NULL;
                }
            break;
        case NP_SUM_TOTALS:
            v = totals_json(&s->totals);
            break;
        case NP_SUM_MISSING_NODES:
            v = np_strs_json(&s->missing_nodes);
            break;
        case NP_SUM_SKIPPED:
        case NP_SUM_TRIMMED:
            v = list_json(s, k);
            break;
        }
        if (!put(o, sum_names[k], v)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

/* ---- small readers ---- */

const struct np_sum_node *np_sum_node_get(const struct np_sum *s, const char *name)
{
    for (size_t i = 0; name && i < s->nnodes; i++)
        if (strcmp(s->nodes[i].name, name) == 0)
            return &s->nodes[i];
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char **np_sum_sorted_nodes(const struct np_sum *s, size_t *n)
{
    const char **names = malloc((s->nnodes ? s->nnodes : 1) * sizeof(*names));

    *n = 0;
    if (!names)
        return NULL;
    for (size_t i = 0; i < s->nnodes; i++)
        names[i] = s->nodes[i].name;
    qsort(names, s->nnodes, sizeof(*names), cmp_str);
    *n = s->nnodes;
    return names;
}

bool np_sum_worst_local_share(const struct np_sum *s, double *share)
{
    bool have = false;

    for (size_t i = 0; i < s->nnodes; i++) {
        const struct np_figure *f = &s->nodes[i].local_share;
        /* any number counts, as `numaplace jobs` always read it */
        if (np_keys_has(&s->nodes[i].keys, NP_NODE_LOCAL_SHARE) &&
            np_keys_has(&f->keys, NP_FIG_VALUE) && (!have || np_num_value(&f->value) < *share)) {
            *share = np_num_value(&f->value);
            have = true;
        }
    }
    return have;
}
