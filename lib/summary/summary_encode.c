/* A job summary to JSON (numaplace/summary_model.h), members in the order they were set, and
 * copies through that form (freeing and dropping a member: summary_free.c). */
#include "numaplace/summary_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "summary_priv.h"

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
        if (m >= NP_STEP_NMEMBERS)
            continue; /* not a member: the model never sets one, but the index must hold */
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
        case NP_STEP_CLASS:
            v = str_or_null(st->job_class);
            break;
        case NP_STEP_CLASS_SOURCE:
            v = str_or_null(st->class_source);
            break;
        case NP_STEP_CPI:
            v = json_real(st->cpi);
            break;
        case NP_STEP_LLC_MPKI:
            v = json_real(st->llc_mpki);
            break;
        case NP_STEP_BANDWIDTH:
            v = json_real(st->bandwidth_bytes_per_s);
            break;
        case NP_STEP_COUNTERS_UNAVAILABLE:
            v = str_or_null(st->counters_unavailable);
            break;
        case NP_STEP_HELPER_SHARED_CPUS:
            v = str_or_null(st->helper_shared_cpus);
            break;
        }
        if (!put(o, np_sumk_step[m], v)) {
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
        if (k >= NP_MIGR_NMEMBERS)
            continue;
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
                    json_object_set_new(to, np_sumk_trigger[tr->keys.k[q]],
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
        if (!put(o, np_sumk_migr[k], v)) {
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
        if (k >= NP_TL_NMEMBERS)
            continue;
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
                    json_object_set_new(eo, np_sumk_event[ev->keys.k[q]],
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
        if (!put(o, np_sumk_tl[k], v)) {
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
        if (!put(o, np_sumk_os[os->keys.k[i]], np_figure_json(&os->fig[os->keys.k[i]]))) {
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
        if (k >= NP_NODE_NMEMBERS)
            continue;
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
        if (!put(o, np_sumk_node[k], v)) {
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
        if (k >= NP_TOT_NMEMBERS)
            continue;
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
        if (!put(o, np_sumk_totals[k], v)) {
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
                json_object_set_new(o, np_sumk_skip[k->keys.k[q]], str_or_null(vals[k->keys.k[q]]));
            json_array_append_new(arr, o);
        }
    else
        for (size_t i = 0; arr && i < s->ntrimmed; i++) {
            const struct np_sum_trim *t = &s->trimmed[i];
            json_t *o = json_object();
            for (unsigned q = 0; o && q < t->keys.n; q++)
                json_object_set_new(o, np_sumk_trim[t->keys.k[q]],
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
        if (k >= NP_SUM_NMEMBERS)
            continue;
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
        case NP_SUM_NODES_FOLDED:
            v = np_sum_folded_json(&s->folded);
            break;
        }
        if (!put(o, np_sumk_sum[k], v)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

/* A copy through the JSON form: the timeline is copied once per step kept, and this keeps one
 * definition of what it holds. */
int np_sum_timeline_copy(struct np_sum_timeline *dst, const struct np_sum_timeline *src)
{
    json_t *j = timeline_json(src);
    int rc;

    memset(dst, 0, sizeof(*dst));
    if (!j)
        return -ENOMEM;
    rc = np_sum_timeline_decode(j, dst, "timeline", NULL);
    json_decref(j);
    if (rc)
        np_sum_timeline_free(dst);
    return rc;
}

/* Through the JSON form: merges copy whole nodes, and this keeps one definition of a node. */
int np_sum_node_copy(struct np_sum_node *dst, const struct np_sum_node *src)
{
    json_t *j = node_json(src);
    int rc;

    memset(dst, 0, sizeof(*dst));
    if (!j)
        return -ENOMEM;
    rc = np_sum_node_decode(src->name, j, dst, NULL);
    json_decref(j);
    if (rc)
        np_sum_node_free(dst);
    return rc;
}
