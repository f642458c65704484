/* A step's report added to its node of a job summary (docs/summary-schema.md, "Building and
 * merging"): time-weighted means, statistics, pages, migrations, the longest step's timeline. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/report.h"
#include "numaplace/report_model.h"
#include "numaplace/summary_model.h"
#include "summary_priv.h"

#define OLDER "not in the report (written by an older numaplace)"

/* ---- a report's figures as the summary adds them ---- */

/* A report's figure as a step adds it: its number, or why there is none. Strings borrowed. */
struct fig {
    bool ok;
    double v;
    const char *why, *source;
};

/* digest: the figure's number, or why it has none; @p member names it as the source when the report
 * lacks it. */
static struct fig digest(const struct np_report_figure *f, const char *member)
{
    struct fig d = {.source = f->source};

    switch (f->state) {
    case NP_REPORT_FIGURE_ABSENT:
        d.why = OLDER;
        d.source = member;
        break;
    case NP_REPORT_FIGURE_UNAVAILABLE:
        d.why = f->reason;
        break;
    case NP_REPORT_FIGURE_MALFORMED:
        d.why = "malformed in the report (no number)";
        break;
    case NP_REPORT_FIGURE_VALUE:
        d.ok = true;
        d.v = f->value;
        break;
    }
    return d;
}

/* A figure's first step: one step, and where the figure came from when the report says. */
static int first_step(struct np_figure *cur, const char *source)
{
    cur->steps = 1;
    np_keys_set(&cur->keys, NP_FIG_STEPS);
    if (source) {
        if (np_str_set(&cur->source, source) != 0)
            return -ENOMEM;
        np_keys_set(&cur->keys, NP_FIG_SOURCE);
    }
    return 0;
}

/* A step without the figure: the node's keeps what it has, else says why it is unavailable. */
static int add_unavailable(struct np_keys *pkeys, unsigned member, struct np_figure *cur,
                           const char *why, const char *source)
{
    if (np_keys_has(pkeys, member))
        return 0;
    np_keys_set(pkeys, member);
    return np_figure_set_unavailable(cur, why, source);
}

/* One more step in the node's figure. */
static void count_step(struct np_figure *cur)
{
    cur->steps = np_fig_member(cur, NP_FIG_STEPS, (double)cur->steps, 0) + 1;
    np_keys_set(&cur->keys, NP_FIG_STEPS);
}

/* Fold one step's figure into the node's time-weighted mean: {value, unit, seconds, steps,
 * source[, byte_seconds]}, or {unavailable, source} while no step had it. With @p by_bytes,
 * byte_seconds sums bytes x seconds while every contributing step knew its bytes. */
static int add_mean(struct np_keys *pkeys, unsigned member, struct np_figure *cur,
                    const struct fig *f, double w, const char *unit, bool by_bytes, double bytes)
{
    if (!f->ok)
        return add_unavailable(pkeys, member, cur, f->why, f->source);
    if (np_keys_has(pkeys, member) && np_figure_available(cur)) {
        const double cv = np_num_value(&cur->value);
        const double cw = np_fig_member(cur, NP_FIG_SECONDS, cur->seconds, MIN_WEIGHT_S);
        cur->value = np_num_real((cv * cw + f->v * w) / (cw + w));
        cur->seconds = cw + w;
        np_keys_set(&cur->keys, NP_FIG_SECONDS);
        count_step(cur);
        if (by_bytes) {
            if (np_keys_has(&cur->keys, NP_FIG_BYTE_SECONDS) && bytes > 0)
                cur->byte_seconds += bytes * w;
            else
                np_keys_del(&cur->keys, NP_FIG_BYTE_SECONDS);
        }
        return 0;
    }
    np_keys_set(pkeys, member);
    if (np_figure_set_value(cur, NP_FIGURE_PLAIN, np_num_real(f->v), unit, NULL) != 0)
        return -ENOMEM;
    cur->seconds = w;
    np_keys_set(&cur->keys, NP_FIG_SECONDS);
    if (first_step(cur, f->source) != 0)
        return -ENOMEM;
    if (by_bytes && bytes > 0) {
        cur->byte_seconds = bytes * w;
        np_keys_set(&cur->keys, NP_FIG_BYTE_SECONDS);
    }
    return 0;
}

/* Fold a figure that adds up over steps (seconds of other CPU time). */
static int add_sum(struct np_keys *pkeys, unsigned member, struct np_figure *cur,
                   const struct fig *f, const char *unit)
{
    if (!f->ok)
        return add_unavailable(pkeys, member, cur, f->why, f->source);
    if (np_keys_has(pkeys, member) && np_figure_available(cur)) {
        cur->value = np_num_real(np_num_value(&cur->value) + f->v);
        count_step(cur);
        return 0;
    }
    np_keys_set(pkeys, member);
    if (np_figure_set_value(cur, NP_FIGURE_PLAIN, np_num_real(f->v), unit, NULL) != 0)
        return -ENOMEM;
    return first_step(cur, f->source);
}

/* Fold a {mean, peak, intervals} statistic (cpi, bandwidth): the mean weighted by intervals, the
 * peak the highest step's. */
static int add_stat(struct np_sum_node *node, unsigned member, struct np_figure *cur,
                    enum np_figure_kind kind, const struct np_report_figure *f)
{
    const bool present = np_keys_has(&node->keys, member);
    double m, p, n;

    if (f->state != NP_REPORT_FIGURE_VALUE || f->unavailable_member)
        return add_unavailable(&node->keys, member, cur,
                               f->state == NP_REPORT_FIGURE_ABSENT ? OLDER
                               : f->state == NP_REPORT_FIGURE_UNAVAILABLE
                                   ? f->reason
                                   : "malformed in the report (no mean)",
                               f->source);
    m = f->value;
    p = f->has_peak ? f->peak : m;
    n = f->has_intervals ? f->intervals : 1;
    if (n < 1)
        n = 1;
    if (present && np_figure_available(cur)) {
        const double cm = np_num_value(&cur->value);
        const double cn = np_fig_member(cur, NP_FIG_INTERVALS, (double)cur->intervals, 1);
        const double cp = np_fig_member(cur, NP_FIG_PEAK, cur->peak, cm);
        cur->value = np_num_real((cm * cn + m * n) / (cn + n));
        cur->peak = p > cp ? p : cp;
        np_keys_set(&cur->keys, NP_FIG_PEAK);
        cur->intervals = (json_int_t)(cn + n);
        np_keys_set(&cur->keys, NP_FIG_INTERVALS);
        count_step(cur);
        return 0;
    }
    np_keys_set(&node->keys, member);
    if (np_figure_set_value(cur, kind, np_num_real(m), NULL, NULL) != 0)
        return -ENOMEM;
    cur->peak = p;
    cur->intervals = (json_int_t)n;
    np_keys_set(&cur->keys, NP_FIG_PEAK);
    np_keys_set(&cur->keys, NP_FIG_INTERVALS);
    return first_step(cur, f->source);
}

static int set_bytes_unavailable(struct np_sum_node *node, unsigned member, struct np_sum_bytes *b,
                                 const char *why, const char *source)
{
    if (np_keys_has(&node->keys, member))
        return 0;
    np_keys_set(&node->keys, member);
    np_map_free(&b->map);
    b->is_map = false;
    return np_figure_set_unavailable(&b->unavailable, why, source);
}

static int add_pages(struct np_sum_node *node, const struct np_report *r, double w, bool latest)
{
    const struct np_report_pages *pages = &r->pages;
    struct fig ls = {0};
    double bytes = -1;
    int rc = 0;

    if (pages->state != NP_RPAGES_READ) {
        ls.why = pages->state == NP_RPAGES_UNAVAILABLE
                     ? pages->reason
                     : "the report has no pages (written by an older numaplace)";
        ls.source = pages->source;
        rc |= set_bytes_unavailable(node, NP_NODE_PAGES_PEAK_BYTES, &node->pages_peak_bytes, ls.why,
                                    ls.source);
        rc |= set_bytes_unavailable(node, NP_NODE_PAGES_END_BYTES, &node->pages_end_bytes, ls.why,
                                    ls.source);
    } else {
        struct np_sum_bytes *peak = &node->pages_peak_bytes, *end = &node->pages_end_bytes;

        if (!np_keys_has(&node->keys, NP_NODE_PAGES_PEAK_BYTES) || !peak->is_map) {
            np_figure_free(&peak->unavailable);
            np_map_free(&peak->map);
            peak->is_map = true;
            np_keys_set(&node->keys, NP_NODE_PAGES_PEAK_BYTES);
        }
        rc |= np_map_max(&peak->map, &pages->peak_bytes);
        if (pages->has_end_bytes &&
            (latest || !np_keys_has(&node->keys, NP_NODE_PAGES_END_BYTES) || !end->is_map)) {
            np_figure_free(&end->unavailable);
            np_map_free(&end->map);
            end->is_map = true;
            rc |= np_map_copy(&end->map, &pages->end_bytes);
            np_keys_set(&node->keys, NP_NODE_PAGES_END_BYTES);
        }
        bytes = pages->peak_total_bytes;
        if (!pages->has_local_share) {
            ls.why = "the report has no pages.local_share (written by a numaplace that did not "
                     "measure it)";
            ls.source = "numaplace.report/1 pages.local_share";
        } else {
            ls = digest(&pages->local_share, "numaplace.report/1 pages.local_share");
            if (ls.ok && (ls.v < 0 || ls.v > 1 || !isfinite(ls.v))) {
                ls.ok = false;
                ls.why = "pages.local_share in the report is outside 0 to 1";
            }
        }
    }
    rc |= add_mean(&node->keys, NP_NODE_LOCAL_SHARE, &node->local_share, &ls, w, "fraction", true,
                   bytes);
    return rc ? -ENOMEM : 0;
}

static int add_migrations(struct np_sum_node *node, const struct np_report *r)
{
    const struct np_report_migrations *m = &r->migrations;
    struct np_sum_migrations *nm = &node->migrations;
    int rc = 0;

    if (!m->present || !np_keys_has(&node->keys, NP_NODE_MIGRATIONS))
        return 0;
    if (np_keys_has(&nm->keys, NP_MIGR_IN_BYTES))
        rc |= np_map_add(&nm->in_bytes, &m->in_bytes);
    if (np_keys_has(&nm->keys, NP_MIGR_OUT_BYTES))
        rc |= np_map_add(&nm->out_bytes, &m->out_bytes);
    nm->moving_s = (np_keys_has(&nm->keys, NP_MIGR_MOVING_S) ? nm->moving_s : 0) + m->moving_s;
    np_keys_set(&nm->keys, NP_MIGR_MOVING_S);
    if (np_keys_has(&nm->keys, NP_MIGR_FAILED_PAGES))
        rc |= np_map_add(&nm->failed_pages, &m->failed_pages);
    for (size_t i = 0; i < m->nrequests; i++) {
        const struct np_report_request *q = &m->requests[i];
        const char *trigger = q->trigger ? q->trigger : "unknown";
        struct np_sum_trigger *t = NULL;

        nm->requests++;
        np_keys_set(&nm->keys, NP_MIGR_REQUESTS);
        if (q->dry_run) {
            nm->dry_run_requests++;
            np_keys_set(&nm->keys, NP_MIGR_DRY_RUN_REQUESTS);
        }
        if (!np_keys_has(&nm->keys, NP_MIGR_TRIGGERS))
            continue;
        for (size_t k = 0; k < nm->ntriggers && !t; k++)
            if (strcmp(nm->triggers[k].name, trigger) == 0)
                t = &nm->triggers[k];
        if (!t) {
            struct np_sum_trigger *grown =
                realloc(nm->triggers, (nm->ntriggers + 1) * sizeof(*grown));
            if (!grown)
                return -ENOMEM;
            nm->triggers = grown;
            t = &nm->triggers[nm->ntriggers];
            memset(t, 0, sizeof(*t));
            t->name = strdup(trigger);
            if (!t->name)
                return -ENOMEM;
            nm->ntriggers++;
            np_keys_set(&t->keys, NP_TRIG_REQUESTS);
            np_keys_set(&t->keys, NP_TRIG_DRY_RUN);
            np_keys_set(&t->keys, NP_TRIG_MOVED_PAGES);
        }
        t->requests++;
        np_keys_set(&t->keys, NP_TRIG_REQUESTS);
        if (q->dry_run) {
            t->dry_run++;
            np_keys_set(&t->keys, NP_TRIG_DRY_RUN);
        } else {
            t->moved_pages += q->moved_pages;
            np_keys_set(&t->keys, NP_TRIG_MOVED_PAGES);
        }
    }
    if (m->source) {
        rc |= np_str_set(&nm->source, m->source);
        np_keys_set(&nm->keys, NP_MIGR_SOURCE);
    }
    node->pages_moved_bytes = np_map_sum(&nm->in_bytes);
    np_keys_set(&node->keys, NP_NODE_PAGES_MOVED_BYTES);
    return rc ? -ENOMEM : 0;
}

static int add_os(struct np_sum_node *node, const struct np_report *r, double w)
{
    static const struct {
        const char *member, *unit;
    } os[NP_OS_NMEMBERS] = {
        [NP_OS_KERNEL_TIME_SHARE] = {"numaplace.report/1 os_interference.kernel_time_share",
                                     "fraction"},
        [NP_OS_INVOLUNTARY_CS_PER_S] = {"numaplace.report/1 os_interference.involuntary_cs_per_s",
                                        "1/s"},
        [NP_OS_INTERRUPTS_PER_S] = {"numaplace.report/1 os_interference.interrupts_on_cpus", "1/s"},
        [NP_OS_SOFTIRQS_PER_S] = {"numaplace.report/1 os_interference.softirqs_on_cpus", "1/s"},
        [NP_OS_OTHER_CPU_TIME_S] = {"numaplace.report/1 os_interference.other_cpu_time_s", "s"},
    };
    int rc = 0;

    if (!np_keys_has(&node->keys, NP_NODE_OS_INTERFERENCE))
        return 0;
    for (int k = 0; k < NP_OS_NMEMBERS; k++) {
        const struct fig f = digest(&r->os[k], os[k].member);
        if (k == NP_OS_OTHER_CPU_TIME_S)
            rc |= add_sum(&node->os.keys, (unsigned)k, &node->os.fig[k], &f, os[k].unit);
        else
            rc |= add_mean(&node->os.keys, (unsigned)k, &node->os.fig[k], &f, w, os[k].unit, false,
                           0);
    }
    return rc ? -ENOMEM : 0;
}

/* The step's sensitivity inputs from its perf totals (what the prediction needs,
 * docs/sensitivity.md), or why there are none. false on out-of-memory. */
static bool step_counters(struct np_sum_step *st, const struct np_report *r)
{
    static const char *const names[NP_RPERF_N] = {"cycles", "instructions", "llc_load_misses",
                                                  "llc_store_misses"};
    const struct np_report_figure *p = r->perf;
    char why[NP_ERR_MSG_MAX] = "";
    bool ok = true;

    for (int k = 0; k < NP_RPERF_N && !why[0]; k++)
        if (p[k].state == NP_REPORT_FIGURE_ABSENT)
            snprintf(why, sizeof(why), "the report has no perf_counts.%s", names[k]);
        else if (p[k].state != NP_REPORT_FIGURE_VALUE)
            snprintf(why, sizeof(why), "%s", p[k].reason ? p[k].reason : "malformed perf count");
    if (!why[0] && !(p[NP_RPERF_INSTRUCTIONS].value > 0))
        snprintf(why, sizeof(why), "no instructions counted");
    /* An emulator's counts describe the emulator (docs/sensitivity.md): no prediction from them,
     * and where counts are missing anyway, the reason says both. */
    if (r->emulated_cpu) {
        const size_t used = strlen(why);
        snprintf(why + used, sizeof(why) - used,
                 "%scounted on an emulated CPU (%s), where a prediction is not meaningful",
                 used ? "; and " : "", r->emulated_cpu);
    }
    if (why[0]) {
        st->counters_unavailable = np_strdup_or_null(why, &ok);
        np_keys_set(&st->keys, NP_STEP_COUNTERS_UNAVAILABLE);
        return ok;
    }
    st->cpi = p[NP_RPERF_CYCLES].value / p[NP_RPERF_INSTRUCTIONS].value;
    st->llc_mpki = (p[NP_RPERF_LLC_LOAD_MISSES].value + p[NP_RPERF_LLC_STORE_MISSES].value) /
                   p[NP_RPERF_INSTRUCTIONS].value * 1000.0;
    np_keys_set(&st->keys, NP_STEP_CPI);
    np_keys_set(&st->keys, NP_STEP_LLC_MPKI);
    if (r->bandwidth.state == NP_REPORT_FIGURE_VALUE) {
        st->bandwidth_bytes_per_s = r->bandwidth.value;
        np_keys_set(&st->keys, NP_STEP_BANDWIDTH);
    }
    return true;
}

static int new_step(struct np_sum_node *node, const struct np_report *r, const char *step,
                    const char *requested, const char *sens)
{
    struct np_sum_step *st = np_array_append(&node->steps, &node->nsteps, sizeof(*st));
    bool ok = true;

    if (!st)
        return -ENOMEM;
    st->step = np_strdup_or_null(step, &ok);
    st->policy = np_strdup_or_null(requested, &ok);
    for (size_t i = 0; ok && i < r->ntasks; i++) {
        const char *p = r->tasks[i].policy ? r->tasks[i].policy : "unknown";
        const struct np_map_entry *have = np_map_get(&st->applied, p);
        ok = np_map_set(&st->applied, p, np_num_int((have ? have->v.i : 0) + 1)) == 0;
    }
    st->sensitivity = np_strdup_or_null(sens, &ok);
    st->cpus = np_strdup_or_null(r->cpus ? r->cpus : "", &ok);
    st->complete = r->complete;
    st->duration_s = r->duration_s;
    for (unsigned k = NP_STEP_STEP; k <= NP_STEP_DURATION_S; k++)
        np_keys_set(&st->keys, k);
    if (r->has_local_nodes) {
        st->local_nodes = calloc(r->local_nodes.n + 1, sizeof(*st->local_nodes));
        ok = ok && st->local_nodes;
        if (st->local_nodes) {
            memcpy(st->local_nodes, r->local_nodes.v, r->local_nodes.n * sizeof(*st->local_nodes));
            st->nlocal_nodes = r->local_nodes.n;
        }
        np_keys_set(&st->keys, NP_STEP_LOCAL_NODES);
    }
    if (np_iso_ok(r->start)) {
        st->start = np_strdup_or_null(r->start, &ok);
        np_keys_set(&st->keys, NP_STEP_START);
    }
    if (np_iso_ok(r->end)) {
        st->end = np_strdup_or_null(r->end, &ok);
        np_keys_set(&st->keys, NP_STEP_END);
    }
    if (r->job_class) {
        st->job_class = np_strdup_or_null(r->job_class, &ok);
        np_keys_set(&st->keys, NP_STEP_CLASS);
    }
    if (r->class_source) {
        st->class_source = np_strdup_or_null(r->class_source, &ok);
        np_keys_set(&st->keys, NP_STEP_CLASS_SOURCE);
    }
    if (r->helper_shared_cpus) {
        st->helper_shared_cpus = np_strdup_or_null(r->helper_shared_cpus, &ok);
        np_keys_set(&st->keys, NP_STEP_HELPER_SHARED_CPUS);
    }
    ok = ok && step_counters(st, r);
    np_keys_set(&node->keys, NP_NODE_STEPS);
    return ok ? 0 : -ENOMEM;
}

/* One report (already checked) into its node. */
static int add_step(struct np_sum_node *node, const struct np_report *r, const char *step)
{
    const char *requested = r->policy_requested ? r->policy_requested : "unknown";
    const char *sens = r->sensitivity ? r->sensitivity : "unknown";
    const char *cur_sens = np_keys_has(&node->keys, NP_NODE_SENSITIVITY) ? node->sensitivity : NULL;
    const char *nstart = np_keys_has(&node->keys, NP_NODE_START) ? node->start : NULL;
    const char *nend = np_keys_has(&node->keys, NP_NODE_END) ? node->end : NULL;
    const double dur = r->duration_s, w = dur > MIN_WEIGHT_S ? dur : MIN_WEIGHT_S;
    const bool latest = np_iso_ok(r->end) && (!np_iso_ok(nend) || strcmp(r->end, nend) >= 0);
    int rc = new_step(node, r, step, requested, sens);

    if (rc)
        return rc;
    node->step_count = (np_keys_has(&node->keys, NP_NODE_STEP_COUNT) ? node->step_count : 0) + 1;
    np_keys_set(&node->keys, NP_NODE_STEP_COUNT);
    node->duration_s = (np_keys_has(&node->keys, NP_NODE_DURATION_S) ? node->duration_s : 0) + dur;
    np_keys_set(&node->keys, NP_NODE_DURATION_S);
    rc |= np_strs_add_sorted(&node->policy_requested, requested);
    np_keys_set(&node->keys, NP_NODE_POLICY_REQUESTED);
    if (np_keys_has(&node->keys, NP_NODE_POLICY_APPLIED))
        rc |= np_map_add(&node->policy_applied, &node->steps[node->nsteps - 1].applied);
    if (!cur_sens || strcmp(sens, "high") == 0 || strcmp(cur_sens, "unknown") == 0) {
        rc |= np_str_set(&node->sensitivity, sens);
        np_keys_set(&node->keys, NP_NODE_SENSITIVITY);
    }
    if (np_iso_ok(r->start) && (!np_iso_ok(nstart) || strcmp(r->start, nstart) < 0)) {
        rc |= np_str_set(&node->start, r->start);
        np_keys_set(&node->keys, NP_NODE_START);
    }
    if (latest) {
        rc |= np_str_set(&node->end, r->end);
        np_keys_set(&node->keys, NP_NODE_END);
    }
    rc |= add_pages(node, r, w, latest);
    rc |= add_stat(node, NP_NODE_CPI, &node->cpi, NP_FIGURE_CPI, &r->cpi);
    rc |= add_stat(node, NP_NODE_BANDWIDTH, &node->bandwidth, NP_FIGURE_BANDWIDTH, &r->bandwidth);
    rc |= add_migrations(node, r);
    rc |= add_os(node, r, w);
    if (rc)
        return -ENOMEM;

    /* the longest step's timeline, for the plot */
    if (r->has_timeline && (!np_keys_has(&node->keys, NP_NODE_TIMELINE) ||
                            dur > (np_keys_has(&node->timeline.keys, NP_TL_DURATION_S)
                                       ? np_num_value(&node->timeline.duration_s)
                                       : -1))) {
        struct np_sum_timeline copy;
        if (np_sum_timeline_copy(&copy, &r->timeline) != 0 || np_str_set(&copy.step, step) != 0)
            return -ENOMEM;
        np_keys_set(&copy.keys, NP_TL_STEP);
        copy.duration_s = np_num_real(dur);
        np_keys_set(&copy.keys, NP_TL_DURATION_S);
        np_sum_timeline_free(&node->timeline);
        node->timeline = copy;
        np_keys_set(&node->keys, NP_NODE_TIMELINE);
    }
    return 0;
}

static int node_new(struct np_sum *s, const char *name, struct np_sum_node **out)
{
    static const unsigned keys[] = {NP_NODE_STEPS,
                                    NP_NODE_STEP_COUNT,
                                    NP_NODE_DURATION_S,
                                    NP_NODE_POLICY_REQUESTED,
                                    NP_NODE_POLICY_APPLIED,
                                    NP_NODE_MIGRATIONS,
                                    NP_NODE_PAGES_MOVED_BYTES,
                                    NP_NODE_OS_INTERFERENCE};
    static const unsigned migr_keys[] = {
        NP_MIGR_IN_BYTES, NP_MIGR_OUT_BYTES,    NP_MIGR_REQUESTS, NP_MIGR_DRY_RUN_REQUESTS,
        NP_MIGR_MOVING_S, NP_MIGR_FAILED_PAGES, NP_MIGR_TRIGGERS};
    struct np_sum_node *n = np_sum_node_append(s);

    if (!n)
        return -ENOMEM;
    n->name = strdup(name);
    if (!n->name) {
        s->nnodes--;
        return -ENOMEM;
    }
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        np_keys_set(&n->keys, keys[k]);
    for (size_t k = 0; k < sizeof(migr_keys) / sizeof(migr_keys[0]); k++)
        np_keys_set(&n->migrations.keys, migr_keys[k]);
    *out = n;
    return 0;
}

static int add_skipped(struct np_sum *s, const char *node, const char *step, const char *reason)
{
    struct np_sum_skip *k = np_array_append(&s->skipped, &s->nskipped, sizeof(*k));
    bool ok = true;

    if (!k)
        return -ENOMEM;
    k->node = np_strdup_or_null(node, &ok);
    k->step = np_strdup_or_null(step, &ok);
    k->reason = np_strdup_or_null(reason, &ok);
    np_keys_set(&k->keys, NP_SKIP_NODE);
    np_keys_set(&k->keys, NP_SKIP_STEP);
    np_keys_set(&k->keys, NP_SKIP_REASON);
    np_keys_set(&s->keys, NP_SUM_SKIPPED);
    return ok ? 0 : -ENOMEM;
}

int np_sum_add_report(struct np_sum *s, const json_t *report, struct np_err *err)
{
    struct np_err rerr = {0};
    struct np_report r;
    const char *node, *step;
    struct np_sum_node *n;
    int rc;

    if (!json_is_object(report))
        return np_err_set(err, -EINVAL, "a report must be a JSON object");
    if ((rc = np_report_model_decode(report, false, &r, err)) != 0)
        return rc;
    node = r.node;
    step = r.step;
    if (r.has_job_id && r.job_id != s->job_id) {
        rc = np_err_set(
            err, -EINVAL, "the report of node %s step %s is of job %lld, not of job %lld",
            node ? node : "?", step ? step : "?", (long long)r.job_id, (long long)s->job_id);
        goto out;
    }
    rc = np_report_check((json_t *)report, &rerr);
    if (rc == -EPROTO) {
        if (add_skipped(s, node ? node : "unknown", step ? step : "unknown", rerr.msg) != 0) {
            rc = np_err_set(err, -ENOMEM, "out of memory recording a skipped report");
            goto out;
        }
        np_sum_recompute(s);
        np_err_set(err, 0, "skipped the report of node %s step %s: %s", node ? node : "unknown",
                   step ? step : "unknown", rerr.msg);
        rc = 0;
        goto out;
    }
    if (rc) {
        rc = np_err_set(err, rc, "%s", rerr.msg);
        goto out;
    }
    if (!r.has_job_id)
        rc = np_err_set(err, -EINVAL, "the report has no integer \"job_id\"");
    else if (!node || !*node)
        rc = np_err_set(err, -EINVAL, "the report of job %lld has no \"node\"",
                        (long long)s->job_id);
    else if (!step || !*step)
        rc = np_err_set(err, -EINVAL, "the report of job %lld on %s has no \"step\"",
                        (long long)s->job_id, node);
    if (rc)
        goto out;
    np_report_model_free(&r);
    if ((rc = np_report_model_decode(report, true, &r, err)) != 0)
        return rc;
    node = r.node;
    step = r.step;
    if (r.has_uid) {
        if (np_keys_has(&s->keys, NP_SUM_UID) && s->uid != r.uid) {
            rc = np_err_set(err, -EINVAL,
                            "the report of node %s step %s has uid %lld; job %lld is uid %lld",
                            node, step, (long long)r.uid, (long long)s->job_id, (long long)s->uid);
            goto out;
        }
        if (!np_keys_has(&s->keys, NP_SUM_UID)) {
            s->uid = r.uid;
            np_keys_set(&s->keys, NP_SUM_UID);
        }
    }
    n = (struct np_sum_node *)np_sum_node_get(s, node);
    for (size_t i = 0; n && i < n->nsteps; i++)
        if (n->steps[i].step && strcmp(n->steps[i].step, step) == 0) {
            rc = np_err_set(err, -EEXIST, "step %s of node %s is in the summary already", step,
                            node);
            goto out;
        }
    if (!n && node_new(s, node, &n) != 0) {
        rc = np_err_set(err, -ENOMEM, "out of memory adding node %s", node);
        goto out;
    }
    rc = add_step(n, &r, step);
    np_sum_recompute(s);
    if (rc)
        rc = np_err_set(err, rc, "out of memory adding step %s of node %s", step, node);
out:
    np_report_model_free(&r);
    return rc;
}
