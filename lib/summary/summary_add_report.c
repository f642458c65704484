/* A step's report added to its node of a job summary (docs/summary-schema.md, "Building and
 * merging"): time-weighted means, statistics, pages, migrations, the longest step's timeline. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/report.h"
#include "numaplace/summary_model.h"
#include "summary_priv.h"

#define OLDER "not in the report (written by an older numaplace)"

/* ---- a report's figures as the summary adds them ---- */

/* A figure as the report holds it, read leniently (a report of an older numaplace lacks members;
 * the schema is open to new ones): absent when it is no object, unavailable with the report's
 * reason, malformed without a number. Strings borrowed from the report. */
enum rstate { R_ABSENT = 0, R_UNAVAILABLE, R_MALFORMED, R_VALUE };
struct rfig {
    double v, peak, n;
    const char *reason, *source;
    enum rstate state;
    bool flagged; /* an "unavailable" member, of any type */
    bool has_peak, has_n;
};

/* The figure @p o with its number at @p value_key (and a statistic's peak and intervals). */
static struct rfig rfig(const json_t *o, const char *value_key, const char *peak_key)
{
    const json_t *u = json_object_get(o, "unavailable"), *v = json_object_get(o, value_key);
    struct rfig f = {.flagged = u != NULL,
                     .source = json_string_value(json_object_get(o, "source"))};

    if (!json_is_object(o))
        return (struct rfig){0};
    if (json_is_string(u)) {
        f.state = R_UNAVAILABLE;
        f.reason = json_string_value(u);
    } else {
        f.state = json_is_number(v) ? R_VALUE : R_MALFORMED;
        f.v = json_number_value(v);
    }
    if (peak_key) {
        const json_t *peak = json_object_get(o, peak_key), *n = json_object_get(o, "intervals");
        f.has_peak = json_is_number(peak);
        f.peak = json_number_value(peak);
        f.has_n = json_is_number(n);
        f.n = json_number_value(n);
    }
    return f;
}

/* A member of @p o when @p o is an object (NULL otherwise). */
static const json_t *member(const json_t *o, const char *key)
{
    return json_is_object(o) ? json_object_get(o, key) : NULL;
}

/* A report's figure as a step adds it: its number, or why there is none. Strings borrowed. */
struct fig {
    bool ok;
    double v;
    const char *why, *source;
};

/* digest: the figure's number, or why it has none; @p name names it as the source when the
 * report lacks it. */
static struct fig digest(const struct rfig *f, const char *name)
{
    struct fig d = {.source = f->source};

    switch (f->state) {
    case R_ABSENT:
        d.why = OLDER;
        d.source = name;
        break;
    case R_UNAVAILABLE:
        d.why = f->reason;
        break;
    case R_MALFORMED:
        d.why = "malformed in the report (no number)";
        break;
    case R_VALUE:
        d.ok = true;
        d.v = f->v;
        break;
    }
    return d;
}

/* dst[k] op= the numeric members of @p obj (others are skipped, as the summary always did). */
static int map_fold(struct np_map *dst, const json_t *obj,
                    int (*op)(struct np_map *, const struct np_map *))
{
    struct np_map src = {0};
    const char *key;
    json_t *v;
    int rc = 0;

    json_object_foreach((json_t *)obj, key, v)
    {
        struct np_num n;
        if (np_num_decode(v, false, &n, key, NULL) == 0 && (rc = np_map_set(&src, key, n)) != 0)
            break;
    }
    rc = rc ? rc : op(dst, &src);
    np_map_free(&src);
    return rc;
}

static int map_copy(struct np_map *dst, const struct np_map *src)
{
    np_map_free(dst);
    return np_map_copy(dst, src);
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
                    enum np_figure_kind kind, const struct rfig *f)
{
    const bool present = np_keys_has(&node->keys, member);
    double m, p, n;

    if (f->state != R_VALUE || f->flagged)
        return add_unavailable(&node->keys, member, cur,
                               f->state == R_ABSENT        ? OLDER
                               : f->state == R_UNAVAILABLE ? f->reason
                                                           : "malformed in the report (no mean)",
                               f->source);
    m = f->v;
    p = f->has_peak ? f->peak : m;
    n = f->has_n ? f->n : 1;
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

static int add_pages(struct np_sum_node *node, const json_t *pages, double w, bool latest)
{
    const json_t *unavail = member(pages, "unavailable"), *end_bytes = member(pages, "end_bytes");
    const json_t *total = member(pages, "peak_total_bytes"), *local = member(pages, "local_share");
    struct fig ls = {.source = json_string_value(member(pages, "source"))};
    double bytes = -1;
    int rc = 0;

    if (!json_is_object(pages) || json_is_string(unavail)) {
        ls.why = json_is_object(pages) ? json_string_value(unavail)
                                       : "the report has no pages (written by an older numaplace)";
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
        rc |= map_fold(&peak->map, member(pages, "peak_bytes"), np_map_max);
        if (json_is_object(end_bytes) &&
            (latest || !np_keys_has(&node->keys, NP_NODE_PAGES_END_BYTES) || !end->is_map)) {
            np_figure_free(&end->unavailable);
            end->is_map = true;
            rc |= map_fold(&end->map, end_bytes, map_copy);
            np_keys_set(&node->keys, NP_NODE_PAGES_END_BYTES);
        }
        if (json_is_number(total))
            bytes = json_number_value(total);
        if (!local) {
            ls.why = "the report has no pages.local_share (written by a numaplace that did not "
                     "measure it)";
            ls.source = "numaplace.report/1 pages.local_share";
        } else {
            const struct rfig f = rfig(local, "value", NULL);
            ls = digest(&f, "numaplace.report/1 pages.local_share");
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

static int add_migrations(struct np_sum_node *node, const json_t *m)
{
    const json_t *in = member(m, "pages_in_bytes"), *out = member(m, "pages_out_bytes");
    const json_t *moving = member(m, "moving_s"), *requests = member(m, "requests"), *q;
    const char *source = json_string_value(member(m, "source"));
    struct np_sum_migrations *nm = &node->migrations;
    size_t i;
    int rc = 0;

    if (!json_is_object(m) || json_object_get(m, "unavailable") ||
        !np_keys_has(&node->keys, NP_NODE_MIGRATIONS))
        return 0;
    /* reports before the *_bytes names wrote pages_in / pages_out (also bytes) */
    if (np_keys_has(&nm->keys, NP_MIGR_IN_BYTES))
        rc |= map_fold(&nm->in_bytes, in ? in : json_object_get(m, "pages_in"), np_map_add);
    if (np_keys_has(&nm->keys, NP_MIGR_OUT_BYTES))
        rc |= map_fold(&nm->out_bytes, out ? out : json_object_get(m, "pages_out"), np_map_add);
    nm->moving_s = (np_keys_has(&nm->keys, NP_MIGR_MOVING_S) ? nm->moving_s : 0) +
                   (json_is_number(moving) ? json_number_value(moving) : 0);
    np_keys_set(&nm->keys, NP_MIGR_MOVING_S);
    if (np_keys_has(&nm->keys, NP_MIGR_FAILED_PAGES))
        rc |= map_fold(&nm->failed_pages, json_object_get(m, "failed_pages"), np_map_add);
    json_array_foreach((json_t *)requests, i, q)
    {
        const char *trigger = json_string_value(member(q, "trigger"));
        const bool dry_run = json_is_true(member(q, "dry_run"));
        struct np_num moved = {0}; /* a moved_pages that is no number counts 0 */
        struct np_sum_trigger *t = NULL;

        np_num_decode(member(q, "moved_pages"), false, &moved, "moved_pages", NULL);
        trigger = trigger ? trigger : "unknown";
        nm->requests++;
        np_keys_set(&nm->keys, NP_MIGR_REQUESTS);
        if (dry_run) {
            nm->dry_run_requests++;
            np_keys_set(&nm->keys, NP_MIGR_DRY_RUN_REQUESTS);
        }
        if (!np_keys_has(&nm->keys, NP_MIGR_TRIGGERS))
            continue;
        for (size_t k = 0; k < nm->ntriggers && !t; k++)
            if (strcmp(nm->triggers[k].name, trigger) == 0)
                t = &nm->triggers[k];
        if (!t) {
            t = np_array_append(&nm->triggers, &nm->ntriggers, sizeof(*t));
            if (!t || !(t->name = strdup(trigger)))
                return -ENOMEM;
            np_keys_set(&t->keys, NP_TRIG_REQUESTS);
            np_keys_set(&t->keys, NP_TRIG_DRY_RUN);
            np_keys_set(&t->keys, NP_TRIG_MOVED_PAGES);
        }
        t->requests++;
        np_keys_set(&t->keys, NP_TRIG_REQUESTS);
        if (dry_run) {
            t->dry_run++;
            np_keys_set(&t->keys, NP_TRIG_DRY_RUN);
        } else {
            t->moved_pages += np_num_int_value(&moved);
            np_keys_set(&t->keys, NP_TRIG_MOVED_PAGES);
        }
    }
    if (source) {
        rc |= np_str_set(&nm->source, source);
        np_keys_set(&nm->keys, NP_MIGR_SOURCE);
    }
    node->pages_moved_bytes = np_map_sum(&nm->in_bytes);
    np_keys_set(&node->keys, NP_NODE_PAGES_MOVED_BYTES);
    return rc ? -ENOMEM : 0;
}
static int add_os(struct np_sum_node *node, const json_t *r, double w)
{
    static const struct {
        const char *key, *value_key, *unit;
    } os[NP_OS_NMEMBERS] = {
        [NP_OS_KERNEL_TIME_SHARE] = {"kernel_time_share", "value", "fraction"},
        [NP_OS_INVOLUNTARY_CS_PER_S] = {"involuntary_cs_per_s", "value", "1/s"},
        [NP_OS_INTERRUPTS_PER_S] = {"interrupts_on_cpus", "per_s", "1/s"},
        [NP_OS_SOFTIRQS_PER_S] = {"softirqs_on_cpus", "per_s", "1/s"},
        [NP_OS_OTHER_CPU_TIME_S] = {"other_cpu_time_s", "value", "s"},
    };
    const json_t *report_os = json_object_get(r, "os_interference");
    int rc = 0;

    if (!np_keys_has(&node->keys, NP_NODE_OS_INTERFERENCE))
        return 0;
    for (int k = 0; k < NP_OS_NMEMBERS; k++) {
        const struct rfig rf = rfig(member(report_os, os[k].key), os[k].value_key, NULL);
        char name[96];
        struct fig f;
        snprintf(name, sizeof(name), "numaplace.report/1 os_interference.%s", os[k].key);
        f = digest(&rf, name);
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
static bool step_counters(struct np_sum_step *st, const json_t *r)
{
    enum { CYCLES = 0, INSTRUCTIONS, LLC_LOAD_MISSES, LLC_STORE_MISSES, NPERF };
    static const char *const names[NPERF] = {"cycles", "instructions", "llc_load_misses",
                                             "llc_store_misses"};
    const json_t *perf = json_object_get(r, "perf_counts");
    const struct rfig bw = rfig(json_object_get(r, "bandwidth"), "mean_bytes_per_s", NULL);
    const char *emulated =
        json_string_value(member(json_object_get(r, "sampling"), "emulated_cpu"));
    struct rfig p[NPERF];
    char why[NP_ERR_MSG_MAX] = "";
    bool ok = true;

    for (int k = 0; k < NPERF; k++)
        p[k] = rfig(member(perf, names[k]), "value", NULL);
    for (int k = 0; k < NPERF && !why[0]; k++)
        if (p[k].state == R_ABSENT)
            snprintf(why, sizeof(why), "the report has no perf_counts.%s", names[k]);
        else if (p[k].state != R_VALUE)
            snprintf(why, sizeof(why), "%s", p[k].reason ? p[k].reason : "malformed perf count");
    if (!why[0] && !(p[INSTRUCTIONS].v > 0))
        snprintf(why, sizeof(why), "no instructions counted");
    /* An emulator's counts describe the emulator (docs/sensitivity.md): no prediction from them,
     * and where counts are missing anyway, the reason says both. */
    if (emulated) {
        const size_t used = strlen(why);
        snprintf(why + used, sizeof(why) - used,
                 "%scounted on an emulated CPU (%s), where a prediction is not meaningful",
                 used ? "; and " : "", emulated);
    }
    if (why[0]) {
        st->counters_unavailable = np_strdup_or_null(why, &ok);
        np_keys_set(&st->keys, NP_STEP_COUNTERS_UNAVAILABLE);
        return ok;
    }
    st->cpi = p[CYCLES].v / p[INSTRUCTIONS].v;
    st->llc_mpki = (p[LLC_LOAD_MISSES].v + p[LLC_STORE_MISSES].v) / p[INSTRUCTIONS].v * 1000.0;
    np_keys_set(&st->keys, NP_STEP_CPI);
    np_keys_set(&st->keys, NP_STEP_LLC_MPKI);
    if (bw.state == R_VALUE) {
        st->bandwidth_bytes_per_s = bw.v;
        np_keys_set(&st->keys, NP_STEP_BANDWIDTH);
    }
    return true;
}

/* The string at @p key of @p o, NULL when there is none. Borrowed. */
static const char *str_at(const json_t *o, const char *key)
{
    return json_string_value(member(o, key));
}

static double duration_of(const json_t *r)
{
    const json_t *d = json_object_get(r, "duration_s");

    return json_is_number(d) ? json_number_value(d) : 0;
}

/* A copy of the string at @p key as the step's member @p id, when the report has one. */
static void step_str(struct np_sum_step *st, unsigned id, char **dst, const char *s, bool *ok)
{
    if (!s)
        return;
    *dst = np_strdup_or_null(s, ok);
    np_keys_set(&st->keys, id);
}

static int new_step(struct np_sum_node *node, const json_t *r, const char *step,
                    const char *requested, const char *sens)
{
    struct np_sum_step *st = np_array_append(&node->steps, &node->nsteps, sizeof(*st));
    const json_t *tasks = member(json_object_get(r, "policy"), "tasks"), *t;
    const json_t *local = json_object_get(r, "local_nodes");
    const char *cpus = str_at(r, "cpus"), *start = str_at(r, "start"), *end = str_at(r, "end");
    bool ok = true;
    size_t i;

    if (!st)
        return -ENOMEM;
    st->step = np_strdup_or_null(step, &ok);
    st->policy = np_strdup_or_null(requested, &ok);
    json_array_foreach((json_t *)tasks, i, t)
    {
        const char *p = str_at(t, "policy") ? str_at(t, "policy") : "unknown";
        const struct np_map_entry *have = np_map_get(&st->applied, p);
        ok = ok && np_map_set(&st->applied, p, np_num_int((have ? have->v.i : 0) + 1)) == 0;
    }
    st->sensitivity = np_strdup_or_null(sens, &ok);
    st->cpus = np_strdup_or_null(cpus ? cpus : "", &ok);
    st->complete = json_is_true(json_object_get(r, "complete"));
    st->duration_s = duration_of(r);
    for (unsigned k = NP_STEP_STEP; k <= NP_STEP_DURATION_S; k++)
        np_keys_set(&st->keys, k);
    if (json_is_array(local)) { /* its members are numbers (check_report) */
        st->local_nodes = calloc(json_array_size(local) + 1, sizeof(*st->local_nodes));
        ok = ok && st->local_nodes;
        for (i = 0; st->local_nodes && i < json_array_size(local); i++)
            np_num_decode(json_array_get(local, i), false, &st->local_nodes[st->nlocal_nodes++],
                          "local_nodes", NULL);
        np_keys_set(&st->keys, NP_STEP_LOCAL_NODES);
    }
    step_str(st, NP_STEP_START, &st->start, np_iso_ok(start) ? start : NULL, &ok);
    step_str(st, NP_STEP_END, &st->end, np_iso_ok(end) ? end : NULL, &ok);
    step_str(st, NP_STEP_CLASS, &st->job_class, str_at(r, "class"), &ok);
    step_str(st, NP_STEP_CLASS_SOURCE, &st->class_source, str_at(r, "class_source"), &ok);
    step_str(st, NP_STEP_HELPER_SHARED_CPUS, &st->helper_shared_cpus,
             str_at(json_object_get(r, "helper"), "shared_cpus"), &ok);
    ok = ok && step_counters(st, r);
    np_keys_set(&node->keys, NP_NODE_STEPS);
    return ok ? 0 : -ENOMEM;
}

/* One report (already checked; its timeline decoded into @p tl, taken when kept) into its node. */
static int add_step(struct np_sum_node *node, const json_t *r, const char *step,
                    struct np_sum_timeline *tl)
{
    const char *requested = str_at(json_object_get(r, "policy"), "requested");
    const char *sens = str_at(r, "sensitivity"), *start = str_at(r, "start");
    const char *end = str_at(r, "end");
    const char *cur_sens = np_keys_has(&node->keys, NP_NODE_SENSITIVITY) ? node->sensitivity : NULL;
    const char *nstart = np_keys_has(&node->keys, NP_NODE_START) ? node->start : NULL;
    const char *nend = np_keys_has(&node->keys, NP_NODE_END) ? node->end : NULL;
    const double dur = duration_of(r), w = dur > MIN_WEIGHT_S ? dur : MIN_WEIGHT_S;
    const bool latest = np_iso_ok(end) && (!np_iso_ok(nend) || strcmp(end, nend) >= 0);
    int rc;

    requested = requested ? requested : "unknown";
    sens = sens ? sens : "unknown";
    if ((rc = new_step(node, r, step, requested, sens)) != 0)
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
    if (np_iso_ok(start) && (!np_iso_ok(nstart) || strcmp(start, nstart) < 0)) {
        rc |= np_str_set(&node->start, start);
        np_keys_set(&node->keys, NP_NODE_START);
    }
    if (latest) {
        rc |= np_str_set(&node->end, end);
        np_keys_set(&node->keys, NP_NODE_END);
    }
    {
        const struct rfig cpi = rfig(json_object_get(r, "cpi"), "mean", "p95");
        const struct rfig bw =
            rfig(json_object_get(r, "bandwidth"), "mean_bytes_per_s", "peak_bytes_per_s");
        rc |= add_pages(node, json_object_get(r, "pages"), w, latest);
        rc |= add_stat(node, NP_NODE_CPI, &node->cpi, NP_FIGURE_CPI, &cpi);
        rc |= add_stat(node, NP_NODE_BANDWIDTH, &node->bandwidth, NP_FIGURE_BANDWIDTH, &bw);
    }
    rc |= add_migrations(node, json_object_get(r, "migrations"));
    rc |= add_os(node, r, w);
    if (rc)
        return -ENOMEM;

    /* the longest step's timeline, for the plot */
    if (json_is_object(json_object_get(r, "timeline")) &&
        (!np_keys_has(&node->keys, NP_NODE_TIMELINE) ||
         dur > (np_keys_has(&node->timeline.keys, NP_TL_DURATION_S)
                    ? np_num_value(&node->timeline.duration_s)
                    : -1))) {
        if (np_str_set(&tl->step, step) != 0)
            return -ENOMEM;
        np_keys_set(&tl->keys, NP_TL_STEP);
        tl->duration_s = np_num_real(dur);
        np_keys_set(&tl->keys, NP_TL_DURATION_S);
        np_sum_timeline_free(&node->timeline);
        node->timeline = *tl;
        memset(tl, 0, sizeof(*tl));
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

/* What the summary reads strictly of a report: local_nodes and pages.end_bytes (kept whole) hold
 * numbers only, and the timeline is one (decoded into @p tl). @return 0, -EINVAL / -ENOMEM */
static int check_report(const json_t *r, struct np_sum_timeline *tl, struct np_err *err)
{
    const json_t *local = json_object_get(r, "local_nodes"), *pages = json_object_get(r, "pages");
    const json_t *end = member(pages, "end_bytes"), *v;
    struct np_num n;
    size_t i;
    int rc;

    json_array_foreach((json_t *)local, i, v)
    {
        if ((rc = np_num_decode(v, false, &n, "the report's local_nodes", err)) != 0)
            return rc;
    }
    if (json_is_object(end) && !json_is_string(member(pages, "unavailable"))) {
        struct np_map m;
        if ((rc = np_map_decode(end, &m, "the report's pages.end_bytes", err)) != 0)
            return rc;
        np_map_free(&m);
    }
    if (json_is_object(json_object_get(r, "timeline")))
        return np_sum_timeline_decode(json_object_get(r, "timeline"), tl, "the report's timeline",
                                      err);
    return 0;
}

int np_sum_add_report(struct np_sum *s, const json_t *report, struct np_err *err)
{
    const json_t *job = json_object_get(report, "job_id"), *uid = json_object_get(report, "uid");
    const char *node = str_at(report, "node"), *step = str_at(report, "step");
    struct np_sum_timeline tl = {0};
    struct np_err rerr = {0};
    struct np_sum_node *n;
    int rc;

    if (!json_is_object(report))
        return np_err_set(err, -EINVAL, "a report must be a JSON object");
    if (json_is_integer(job) && json_integer_value(job) != s->job_id)
        return np_err_set(err, -EINVAL,
                          "the report of node %s step %s is of job %lld, not of job %lld",
                          node ? node : "?", step ? step : "?", (long long)json_integer_value(job),
                          (long long)s->job_id);
    rc = np_report_check((json_t *)report, &rerr);
    if (rc == -EPROTO) {
        if (add_skipped(s, node ? node : "unknown", step ? step : "unknown", rerr.msg) != 0)
            return np_err_set(err, -ENOMEM, "out of memory recording a skipped report");
        np_sum_recompute(s);
        np_err_set(err, 0, "skipped the report of node %s step %s: %s", node ? node : "unknown",
                   step ? step : "unknown", rerr.msg);
        return 0;
    }
    if (rc)
        return np_err_set(err, rc, "%s", rerr.msg);
    if (!json_is_integer(job))
        return np_err_set(err, -EINVAL, "the report has no integer \"job_id\"");
    if (!node || !*node)
        return np_err_set(err, -EINVAL, "the report of job %lld has no \"node\"",
                          (long long)s->job_id);
    if (!step || !*step)
        return np_err_set(err, -EINVAL, "the report of job %lld on %s has no \"step\"",
                          (long long)s->job_id, node);
    if ((rc = check_report(report, &tl, err)) != 0)
        goto out;
    if (json_is_integer(uid)) {
        if (np_keys_has(&s->keys, NP_SUM_UID) && s->uid != json_integer_value(uid)) {
            rc = np_err_set(err, -EINVAL,
                            "the report of node %s step %s has uid %lld; job %lld is uid %lld",
                            node, step, (long long)json_integer_value(uid), (long long)s->job_id,
                            (long long)s->uid);
            goto out;
        }
        if (!np_keys_has(&s->keys, NP_SUM_UID)) {
            s->uid = json_integer_value(uid);
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
    rc = add_step(n, report, step, &tl);
    np_sum_recompute(s);
    if (rc)
        rc = np_err_set(err, rc, "out of memory adding step %s of node %s", step, node);
out:
    np_sum_timeline_free(&tl);
    return rc;
}
