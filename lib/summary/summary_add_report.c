/* A step's report added to its node of a job summary (docs/summary-schema.md, "Building and
 * merging"): time-weighted means, statistics, pages, migrations, the longest step's timeline. */
#include "numaplace/report.h"
#include "summary_priv.h"

#define OLDER     "not in the report (written by an older numaplace)"
#define MALFORMED "malformed in the report (no number)"

/* ---- a report's figures as the summary adds them ---- */

/* A report's figure as a step adds it: its number, or why there is none. Strings borrowed. */
struct fig {
    bool ok;
    double v;
    const char *why, *source;
};

/* The figure @p o with its number at @p value_key, read leniently (a report of an older numaplace
 * lacks members; the schema is open to new ones): when @p o is no object, @p name names it as the
 * source; without a number, @p malformed says why. */
static struct fig fig_read(const json_t *o, const char *value_key, const char *name,
                           const char *malformed)
{
    const json_t *u = json_object_get(o, "unavailable"), *v = json_object_get(o, value_key);
    const char *source = jstr(o, "source");

    if (!json_is_object(o))
        return (struct fig){.why = OLDER, .source = name};
    if (json_is_string(u))
        return (struct fig){.why = json_string_value(u), .source = source};
    if (!json_is_number(v))
        return (struct fig){.why = malformed, .source = source};
    return (struct fig){.ok = true, .v = json_number_value(v), .source = source};
}

/* dst[k] = max(dst[k], src[k]) (with @p max) or src[k] + dst[k], as integers, over the numeric
 * members of @p src (others are skipped, as the summary always did); no @p dst (trimmed), none. */
static int map_fold(json_t *dst, const json_t *src, bool max)
{
    const char *key;
    json_t *v;

    if (!dst)
        return 0;
    json_object_foreach((json_t *)src, key, v)
    {
        const json_int_t have = jround(json_object_get(dst, key)), x = jround(v);
        if (json_is_number(v) && (!max || !json_object_get(dst, key) || x > have) &&
            json_object_set_new(dst, key, json_integer(max ? x : have + x)) != 0)
            return -ENOMEM;
    }
    return 0;
}

/* A figure's first step: one step, and where the figure came from when the report says. */
static int first_step(json_t *cur, const char *source)
{
    return json_object_set_new(cur, "steps", json_integer(1)) ||
           (source && json_object_set_new(cur, "source", json_string(source)));
}

/* A step without the figure: the node's keeps what it has, else says why it is unavailable. */
static int add_unavailable(json_t *parent, const char *key, const char *why, const char *source)
{
    json_t *f;

    if (json_object_get(parent, key))
        return 0;
    f = json_pack("{s:s}", "unavailable", why && *why ? why : "not measured");
    return json_object_set_new(parent, key, f) ||
           (source && json_object_set_new(f, "source", json_string(source)));
}

/* A new available figure {value_key: v, unit?} at @p key of @p parent. NULL out of memory. */
static json_t *new_figure(json_t *parent, const char *key, const char *value_key, double v,
                          const char *unit)
{
    json_t *f = json_pack("{s:f}", value_key, v);

    if (json_object_set_new(parent, key, f) != 0 ||
        (unit && json_object_set_new(f, "unit", json_string(unit)) != 0))
        return NULL;
    return f;
}

/* Fold one step's figure into the node's time-weighted mean: {value, unit, seconds, steps,
 * source[, byte_seconds]}, or {unavailable, source} while no step had it. With @p by_bytes,
 * byte_seconds sums bytes x seconds while every contributing step knew its bytes. */
static int add_mean(json_t *parent, const char *key, const struct fig *f, double w,
                    const char *unit, bool by_bytes, double bytes)
{
    json_t *cur = json_object_get(parent, key);
    double cv;

    if (!f->ok)
        return add_unavailable(parent, key, f->why, f->source);
    if (jfig(cur, "value", &cv)) {
        const double cw = jnum(cur, "seconds", MIN_WEIGHT_S);
        int rc = json_object_set_new(cur, "value", json_real((cv * cw + f->v * w) / (cw + w))) ||
                 json_object_set_new(cur, "seconds", json_real(cw + w)) || jadd(cur, "steps", 1);
        if (by_bytes && json_object_get(cur, "byte_seconds") && bytes > 0)
            rc |= json_object_set_new(cur, "byte_seconds",
                                      json_real(jnum(cur, "byte_seconds", 0) + bytes * w));
        else if (by_bytes)
            json_object_del(cur, "byte_seconds");
        return rc;
    }
    if (!(cur = new_figure(parent, key, "value", f->v, unit)))
        return -ENOMEM;
    return json_object_set_new(cur, "seconds", json_real(w)) || first_step(cur, f->source) ||
           (by_bytes && bytes > 0 &&
            json_object_set_new(cur, "byte_seconds", json_real(bytes * w)));
}

/* Fold a figure that adds up over steps (seconds of other CPU time). */
static int add_sum(json_t *parent, const char *key, const struct fig *f, const char *unit)
{
    json_t *cur = json_object_get(parent, key);
    double cv;

    if (!f->ok)
        return add_unavailable(parent, key, f->why, f->source);
    if (jfig(cur, "value", &cv))
        return json_object_set_new(cur, "value", json_real(cv + f->v)) || jadd(cur, "steps", 1);
    cur = new_figure(parent, key, "value", f->v, unit);
    return !cur || first_step(cur, f->source);
}

/* Fold a {mean, peak, intervals} statistic (cpi, bandwidth): the mean weighted by intervals, the
 * peak the highest step's. */
static int add_stat(json_t *node, const char *key, const char *mean_key, const char *peak_key,
                    const json_t *o)
{
    struct fig f = fig_read(o, mean_key, NULL, "malformed in the report (no mean)");
    json_t *cur = json_object_get(node, key);
    double m, p, n, cm;

    if (f.ok && json_object_get(o, "unavailable")) /* one of any type */
        f = (struct fig){.why = "malformed in the report (no mean)", .source = f.source};
    if (!f.ok)
        return add_unavailable(node, key, f.why, f.source);
    m = f.v;
    p = jnum(o, peak_key, m);
    n = jnum(o, "intervals", 1);
    if (n < 1)
        n = 1;
    if (jfig(cur, mean_key, &cm)) {
        const double cn = jnum(cur, "intervals", 1), cp = jnum(cur, peak_key, cm);
        return json_object_set_new(cur, mean_key, json_real((cm * cn + m * n) / (cn + n))) ||
               json_object_set_new(cur, peak_key, json_real(p > cp ? p : cp)) ||
               json_object_set_new(cur, "intervals", json_integer((json_int_t)(cn + n))) ||
               jadd(cur, "steps", 1);
    }
    if (!(cur = new_figure(node, key, mean_key, m, NULL)))
        return -ENOMEM;
    return json_object_set_new(cur, peak_key, json_real(p)) ||
           json_object_set_new(cur, "intervals", json_integer((json_int_t)n)) ||
           first_step(cur, f.source);
}

static int add_pages(json_t *node, const json_t *pages, double w, bool latest)
{
    const json_t *unavail = json_object_get(pages, "unavailable"),
                 *end_bytes = json_object_get(pages, "end_bytes");
    const json_t *total = json_object_get(pages, "peak_total_bytes"),
                 *local = json_object_get(pages, "local_share");
    struct fig ls = {.source = json_string_value(json_object_get(pages, "source"))};
    json_t *peak = json_object_get(node, "pages_peak_bytes"),
           *end = json_object_get(node, "pages_end_bytes");
    double bytes = -1;
    int rc = 0;

    if (!json_is_object(pages) || json_is_string(unavail)) {
        ls.why = json_is_object(pages) ? json_string_value(unavail)
                                       : "the report has no pages (written by an older numaplace)";
        rc |= add_unavailable(node, "pages_peak_bytes", ls.why, ls.source);
        rc |= add_unavailable(node, "pages_end_bytes", ls.why, ls.source);
    } else {
        if (!peak || json_object_get(peak, "unavailable"))
            rc |= json_object_set_new(node, "pages_peak_bytes", peak = json_object());
        rc |= map_fold(peak, json_object_get(pages, "peak_bytes"), true);
        /* its members are numbers (check_report) */
        if (json_is_object(end_bytes) && (latest || !end || json_object_get(end, "unavailable")))
            rc |= json_object_set_new(node, "pages_end_bytes", json_deep_copy(end_bytes));
        if (json_is_number(total))
            bytes = json_number_value(total);
        if (!local) {
            ls.why = "the report has no pages.local_share (written by a numaplace that did not "
                     "measure it)";
            ls.source = "numaplace.report/1 pages.local_share";
        } else {
            ls = fig_read(local, "value", "numaplace.report/1 pages.local_share", MALFORMED);
            if (ls.ok && (ls.v < 0 || ls.v > 1 || !isfinite(ls.v))) {
                ls.ok = false;
                ls.why = "pages.local_share in the report is outside 0 to 1";
            }
        }
    }
    rc |= add_mean(node, "local_share", &ls, w, "fraction", true, bytes);
    return rc ? -ENOMEM : 0;
}

static int add_migrations(json_t *node, const json_t *m)
{
    const json_t *in = json_object_get(m, "pages_in_bytes"),
                 *out = json_object_get(m, "pages_out_bytes"), *q;
    json_t *nm = json_object_get(node, "migrations"), *triggers = json_object_get(nm, "triggers");
    json_int_t sum = 0;
    const char *key;
    size_t i;
    int rc = 0;

    if (!json_is_object(m) || json_object_get(m, "unavailable") || !nm)
        return 0;
    /* reports before the *_bytes names wrote pages_in / pages_out (also bytes) */
    rc |=
        map_fold(json_object_get(nm, "in_bytes"), in ? in : json_object_get(m, "pages_in"), false);
    rc |= map_fold(json_object_get(nm, "out_bytes"), out ? out : json_object_get(m, "pages_out"),
                   false);
    rc |= json_object_set_new(nm, "moving_s",
                              json_real(jnum(nm, "moving_s", 0) + jnum(m, "moving_s", 0)));
    rc |= map_fold(json_object_get(nm, "failed_pages"), json_object_get(m, "failed_pages"), false);
    json_array_foreach(json_object_get(m, "requests"), i, q)
    {
        const char *trigger = jstr_or(q, "trigger", "unknown");
        const bool dry_run = json_is_true(json_object_get(q, "dry_run"));
        json_t *t;

        rc |= jadd(nm, "requests", 1) || (dry_run && jadd(nm, "dry_run_requests", 1));
        if (!triggers)
            continue;
        if (!(t = json_object_get(triggers, trigger)) &&
            json_object_set_new(triggers, trigger,
                                t = json_pack("{s:i, s:i, s:i}", "requests", 0, "dry_run", 0,
                                              "moved_pages", 0)) != 0)
            return -ENOMEM;
        /* a moved_pages that is no number counts 0 */
        rc |= jadd(t, "requests", 1) ||
              (dry_run ? jadd(t, "dry_run", 1)
                       : jadd(t, "moved_pages", jround(json_object_get(q, "moved_pages"))));
    }
    if (jstr(m, "source"))
        rc |= json_object_set_new(nm, "source", json_string(jstr(m, "source")));
    json_object_foreach(json_object_get(nm, "in_bytes"), key, q)
    {
        sum += jround(q);
    }
    rc |= json_object_set_new(node, "pages_moved_bytes", json_integer(sum));
    return rc ? -ENOMEM : 0;
}

static int add_os(json_t *node, const json_t *r, double w)
{
    static const struct {
        const char *key, *report_key, *value_key, *unit;
    } os[] = {
        {"kernel_time_share", "kernel_time_share", "value", "fraction"},
        {"involuntary_cs_per_s", "involuntary_cs_per_s", "value", "1/s"},
        {"interrupts_per_s", "interrupts_on_cpus", "per_s", "1/s"},
        {"softirqs_per_s", "softirqs_on_cpus", "per_s", "1/s"},
        {"other_cpu_time_s", "other_cpu_time_s", "value", "s"},
    };
    const json_t *report_os = json_object_get(r, "os_interference");
    json_t *nos = json_object_get(node, "os_interference");
    int rc = 0;

    for (size_t k = 0; nos && k < sizeof(os) / sizeof(os[0]); k++) {
        char name[96];
        struct fig f;
        snprintf(name, sizeof(name), "numaplace.report/1 os_interference.%s", os[k].report_key);
        f = fig_read(json_object_get(report_os, os[k].report_key), os[k].value_key, name,
                     MALFORMED);
        if (k == sizeof(os) / sizeof(os[0]) - 1)
            rc |= add_sum(nos, os[k].key, &f, os[k].unit);
        else
            rc |= add_mean(nos, os[k].key, &f, w, os[k].unit, false, 0);
    }
    return rc ? -ENOMEM : 0;
}

/* The step's sensitivity inputs from its perf totals (what the prediction needs,
 * docs/sensitivity.md), or why there are none. Nonzero on out-of-memory. */
static int step_counters(json_t *st, const json_t *r)
{
    enum { CYCLES = 0, INSTRUCTIONS, LLC_LOAD_MISSES, LLC_STORE_MISSES, NPERF };
    static const char *const names[NPERF] = {"cycles", "instructions", "llc_load_misses",
                                             "llc_store_misses"};
    const json_t *perf = json_object_get(r, "perf_counts");
    const struct fig bw =
        fig_read(json_object_get(r, "bandwidth"), "mean_bytes_per_s", NULL, MALFORMED);
    const char *emulated =
        json_string_value(json_object_get(json_object_get(r, "sampling"), "emulated_cpu"));
    struct fig p[NPERF];
    char why[NP_ERR_MSG_MAX] = "";

    for (int k = 0; k < NPERF; k++)
        p[k] = fig_read(json_object_get(perf, names[k]), "value", NULL, "malformed perf count");
    for (int k = 0; k < NPERF && !why[0]; k++)
        if (!json_is_object(json_object_get(perf, names[k])))
            snprintf(why, sizeof(why), "the report has no perf_counts.%s", names[k]);
        else if (!p[k].ok)
            snprintf(why, sizeof(why), "%s", p[k].why);
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
    if (why[0])
        return json_object_set_new(st, "counters_unavailable", json_string(why));
    return json_object_set_new(st, "cpi", json_real(p[CYCLES].v / p[INSTRUCTIONS].v)) ||
           json_object_set_new(st, "llc_mpki",
                               json_real((p[LLC_LOAD_MISSES].v + p[LLC_STORE_MISSES].v) /
                                         p[INSTRUCTIONS].v * 1000.0)) ||
           (bw.ok && json_object_set_new(st, "bandwidth_bytes_per_s", json_real(bw.v)));
}

static int step_str(json_t *st, const char *key, const char *s)
{
    return s && json_object_set_new(st, key, json_string(s));
}

static int new_step(json_t *node, const json_t *r, const char *step, const char *requested,
                    const char *sens, json_t **out)
{
    const json_t *tasks = json_object_get(json_object_get(r, "policy"), "tasks"), *t;
    const json_t *local = json_object_get(r, "local_nodes");
    const char *cpus = jstr(r, "cpus"), *start = jstr(r, "start"), *end = jstr(r, "end");
    json_t *applied = json_object(), *st;
    size_t i;
    int rc = !applied;

    json_array_foreach(tasks, i, t)
    {
        const char *p = jstr_or(t, "policy", "unknown");
        rc |= applied && jadd(applied, p, 1);
    }
    st = json_pack("{s:s, s:s, s:o, s:s, s:s, s:b, s:f}", "step", step, "policy", requested,
                   "applied", applied, "sensitivity", sens, "cpus", cpus ? cpus : "", "complete",
                   json_is_true(json_object_get(r, "complete")), "duration_s",
                   jnum(r, "duration_s", 0));
    if (!st || json_array_append_new(json_object_get(node, "steps"), st) != 0)
        return -ENOMEM;
    if (json_is_array(local)) /* its members are numbers (check_report) */
        rc |= json_object_set_new(st, "local_nodes", json_deep_copy(local));
    rc |= step_str(st, "start", np_iso_ok(start) ? start : NULL);
    rc |= step_str(st, "end", np_iso_ok(end) ? end : NULL);
    rc |= step_str(st, "class", jstr(r, "class"));
    rc |= step_str(st, "class_source", jstr(r, "class_source"));
    rc |= step_str(st, "helper_shared_cpus", jstr(json_object_get(r, "helper"), "shared_cpus"));
    rc |= step_counters(st, r);
    *out = st;
    return rc ? -ENOMEM : 0;
}

/* One report (already checked) into its node. */
static int add_step(json_t *node, const json_t *r, const char *step)
{
    const char *requested = jstr_or(json_object_get(r, "policy"), "requested", "unknown");
    const char *sens = jstr_or(r, "sensitivity", "unknown"), *start = jstr(r, "start");
    const char *end = jstr(r, "end"), *nstart = jstr(node, "start"), *nend = jstr(node, "end");
    const double dur = jnum(r, "duration_s", 0), w = dur > MIN_WEIGHT_S ? dur : MIN_WEIGHT_S;
    const bool latest = np_iso_ok(end) && (!np_iso_ok(nend) || strcmp(end, nend) >= 0);
    const json_t *tl = json_object_get(r, "timeline"), *ntl = json_object_get(node, "timeline");
    json_t *st = NULL, *pols;
    int rc;

    if ((rc = new_step(node, r, step, requested, sens, &st)) != 0)
        return rc;
    rc |= jadd(node, "step_count", 1);
    rc |= json_object_set_new(node, "duration_s", json_real(jnum(node, "duration_s", 0) + dur));
    pols = json_object_get(node, "policy_requested");
    rc |= !pols && json_object_set_new(node, "policy_requested", pols = json_array());
    rc |= jstrs_add_sorted(pols, requested);
    if (json_object_get(node, "policy_applied"))
        rc |= jmap_add(json_object_get(node, "policy_applied"), json_object_get(st, "applied"));
    if (np_class_of(jstr(node, "sensitivity"), sens) == sens)
        rc |= json_object_set_new(node, "sensitivity", json_string(sens));
    if (np_iso_ok(start) && (!np_iso_ok(nstart) || strcmp(start, nstart) < 0))
        rc |= json_object_set_new(node, "start", json_string(start));
    if (latest)
        rc |= json_object_set_new(node, "end", json_string(end));
    rc |= add_pages(node, json_object_get(r, "pages"), w, latest);
    rc |= add_stat(node, "cpi", "mean", "p95", json_object_get(r, "cpi"));
    rc |= add_stat(node, "bandwidth", "mean_bytes_per_s", "peak_bytes_per_s",
                   json_object_get(r, "bandwidth"));
    rc |= add_migrations(node, json_object_get(r, "migrations"));
    rc |= add_os(node, r, w);
    if (rc)
        return -ENOMEM;

    /* the longest step's timeline, for the plot */
    if (json_is_object(tl) && (!ntl || dur > jnum(ntl, "duration_s", -1))) {
        json_t *copy = json_deep_copy(tl);
        if (!copy || json_object_set_new(copy, "step", json_string(step)) ||
            json_object_set_new(copy, "duration_s", json_real(dur)) ||
            json_object_set_new(node, "timeline", copy))
            return -ENOMEM;
    }
    return 0;
}

static json_t *node_new(json_t *s, const char *name)
{
    json_t *n = json_pack("{s:[], s:i, s:f, s:[], s:{}, s:{s:{}, s:{}, s:i, s:i, s:f, s:{}, s:{}}, "
                          "s:i, s:{}}",
                          "steps", "step_count", 0, "duration_s", 0.0, "policy_requested",
                          "policy_applied", "migrations", "in_bytes", "out_bytes", "requests", 0,
                          "dry_run_requests", 0, "moving_s", 0.0, "failed_pages", "triggers",
                          "pages_moved_bytes", 0, "os_interference");

    return json_object_set_new(json_object_get(s, "nodes"), name, n) == 0 ? n : NULL;
}

/* What the summary reads strictly of a report: local_nodes and pages.end_bytes (kept whole) hold
 * numbers only, and the timeline is one. @return 0, -EINVAL */
static int check_report(const json_t *r, struct np_err *err)
{
    const json_t *local = json_object_get(r, "local_nodes"), *pages = json_object_get(r, "pages");
    const json_t *end = json_object_get(pages, "end_bytes"), *v;
    size_t i;

    json_array_foreach(local, i, v)
    {
        if (!json_is_number(v))
            return np_err_set(err, -EINVAL, "the report's local_nodes: expected a number");
    }
    if (json_is_object(end) && !json_is_string(json_object_get(pages, "unavailable"))) {
        const char *key;
        json_object_foreach((json_t *)end, key, v)
        {
            if (!json_is_number(v)) /* the key cut where the maps always cut: 255 in all */
                return np_err_set(err, -EINVAL,
                                  "the report's pages.end_bytes.%.226s: expected a number", key);
        }
    }
    if (json_is_object(json_object_get(r, "timeline")))
        return np_timeline_check(json_object_get(r, "timeline"), "the report's timeline", err);
    return 0;
}

int np_summary_add_report(json_t *s, json_t *report, struct np_err *err)
{
    const json_t *job = json_object_get(report, "job_id"), *uid = json_object_get(report, "uid");
    const char *node = jstr(report, "node"), *step = jstr(report, "step");
    const json_int_t job_id = jint(s, "job_id");
    struct np_err rerr = {0};
    json_t *n;
    int rc = np_summary_check(s, err);

    if (rc)
        return rc;
    if (!json_is_object(report))
        return np_err_set(err, -EINVAL, "a report must be a JSON object");
    if (json_is_integer(job) && json_integer_value(job) != job_id)
        return np_err_set(err, -EINVAL,
                          "the report of node %s step %s is of job %lld, not of job %lld",
                          node ? node : "?", step ? step : "?", (long long)json_integer_value(job),
                          (long long)job_id);
    rc = np_report_check(report, &rerr);
    if (rc == -EPROTO) {
        json_t *skipped = json_object_get(s, "skipped");
        node = node ? node : "unknown";
        step = step ? step : "unknown";
        if ((!skipped && json_object_set_new(s, "skipped", skipped = json_array()) != 0) ||
            json_array_append_new(skipped, json_pack("{s:s, s:s, s:s}", "node", node, "step", step,
                                                     "reason", rerr.msg)) != 0)
            return np_err_set(err, -ENOMEM, "out of memory recording a skipped report");
        np_summary_recompute(s);
        np_err_set(err, 0, "skipped the report of node %s step %s: %s", node, step, rerr.msg);
        return 0;
    }
    if (rc)
        return np_err_set(err, rc, "%s", rerr.msg);
    if (!json_is_integer(job))
        return np_err_set(err, -EINVAL, "the report has no integer \"job_id\"");
    if (!node || !*node)
        return np_err_set(err, -EINVAL, "the report of job %lld has no \"node\"",
                          (long long)job_id);
    if (!step || !*step)
        return np_err_set(err, -EINVAL, "the report of job %lld on %s has no \"step\"",
                          (long long)job_id, node);
    if ((rc = check_report(report, err)) != 0)
        return rc;
    if (json_is_integer(uid)) {
        if (json_object_get(s, "uid") && jint(s, "uid") != json_integer_value(uid))
            return np_err_set(err, -EINVAL,
                              "the report of node %s step %s has uid %lld; job %lld is uid %lld",
                              node, step, (long long)json_integer_value(uid), (long long)job_id,
                              (long long)jint(s, "uid"));
        if (!json_object_get(s, "uid") &&
            json_object_set_new(s, "uid", json_integer(json_integer_value(uid))) != 0)
            return np_err_set(err, -ENOMEM, "out of memory adding a report");
    }
    n = json_object_get(json_object_get(s, "nodes"), node);
    if (jfind(json_object_get(n, "steps"), "step", step))
        return np_err_set(err, -EEXIST, "step %s of node %s is in the summary already", step, node);
    if (n && !json_is_array(json_object_get(n, "steps")))
        return np_err_set(err, -EINVAL,
                          "node %s's steps were trimmed to fit AdminComment: no step "
                          "can be added to it",
                          node);
    if (!n && !(n = node_new(s, node)))
        return np_err_set(err, -ENOMEM, "out of memory adding node %s", node);
    rc = add_step(n, report, step);
    rc |= np_summary_recompute(s);
    if (rc)
        rc = np_err_set(err, -ENOMEM, "out of memory adding step %s of node %s", step, node);
    return rc;
}
