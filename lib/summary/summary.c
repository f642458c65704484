/* One job's reports merged into a summary, its advice, text, stored form and plot (see
 * numaplace/summary.h and docs/summary-schema.md). */
#include "numaplace/summary.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/codec.h"
#include "numaplace/plot.h"
#include "numaplace/report.h"

/* A step shorter than this weighs as much as this in time-weighted means (an incomplete step
 * reports duration 0 but still says something about its node). */
#define MIN_WEIGHT_S 1.0

/* Advice names at most this many nodes per rule, then "and N more". */
#define ADVICE_NAMED_NODES 4

#define SRC_SUMMARY_LOCAL "summary: node local shares weighted by bytes (peak) x seconds"
#define SRC_SUMMARY_LOCAL_TIME                                                                     \
    "summary: node local shares weighted by seconds (a node's bytes were unknown)"
#define SRC_SUMMARY_KERNEL "summary: node kernel time shares weighted by seconds"

/* jansson iterates only non-const objects; the functions below never change what they iterate
 * through this. */
#define MUT(x) ((json_t *)(x))

/* ---- small helpers ---- */

static const char *sget(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static double nget(const json_t *o, const char *key, double dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

static json_int_t iget(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_integer(v))
        return json_integer_value(v);
    return json_is_real(v) ? (json_int_t)llround(json_real_value(v)) : 0;
}

static void set_int(json_t *o, const char *key, json_int_t v)
{
    json_object_set_new(o, key, json_integer(v));
}

static void set_real(json_t *o, const char *key, double v)
{
    json_object_set_new(o, key, json_real(v));
}

/* An ISO 8601 UTC time as reports write it ("2024-05-01T10:00:00Z"), comparable as a string. */
static bool iso_ok(const char *s)
{
    return s && strlen(s) == 20 && isdigit((unsigned char)s[0]) && s[19] == 'Z';
}

/* A summary figure's value at @p key, when the figure is available. */
static bool fig_value(const json_t *fig, const char *key, double *v)
{
    const json_t *x = json_object_get(fig, key);

    if (!json_is_object(fig) || json_object_get(fig, "unavailable") || !json_is_number(x))
        return false;
    *v = json_number_value(x);
    return true;
}

static json_t *unavailable(const char *why, const char *source)
{
    json_t *o = json_pack("{s:s}", "unavailable", why && *why ? why : "not measured");

    if (o && source)
        json_object_set_new(o, "source", json_string(source));
    return o;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of @p obj in name order (borrowed from it). New array (free()), NULL on OOM. */
static const char **sorted_keys(const json_t *obj, size_t *n)
{
    const size_t size = json_object_size(obj);
    const char **keys = malloc((size ? size : 1) * sizeof(*keys));
    const char *key;
    json_t *v;
    size_t i = 0;

    *n = 0;
    if (!keys)
        return NULL;
    json_object_foreach(MUT(obj), key, v)
    {
        if (i < size)
            keys[i++] = key;
    }
    qsort(keys, i, sizeof(*keys), cmp_str);
    *n = i;
    return keys;
}

static bool str_array_has(const json_t *arr, const char *s)
{
    size_t i;
    json_t *v;

    json_array_foreach(MUT(arr), i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
            return true;
    }
    return false;
}

/* Add @p s to the sorted string set @p arr. */
static void str_set_add(json_t *arr, const char *s)
{
    size_t i;

    if (!json_is_array(arr) || !s || str_array_has(arr, s))
        return;
    for (i = 0; i < json_array_size(arr); i++)
        if (strcmp(json_string_value(json_array_get(arr, i)), s) > 0)
            break;
    json_array_insert_new(arr, i, json_string(s));
}

/* dst[k] += src[k] for the numeric members of src (bytes per NUMA node, counts per cause). */
static void map_add(json_t *dst, const json_t *src)
{
    const char *key;
    json_t *v;

    if (!json_is_object(dst))
        return;
    json_object_foreach(MUT(src), key, v)
    {
        if (json_is_number(v))
            set_int(dst, key, iget(dst, key) + iget(src, key));
    }
}

/* dst[k] = max(dst[k], src[k]). */
static void map_max(json_t *dst, const json_t *src)
{
    const char *key;
    json_t *v;

    if (!json_is_object(dst))
        return;
    json_object_foreach(MUT(src), key, v)
    {
        if (json_is_number(v) && (!json_object_get(dst, key) || iget(src, key) > iget(dst, key)))
            set_int(dst, key, iget(src, key));
    }
}

static json_int_t map_sum(const json_t *m)
{
    const char *key;
    json_t *v;
    json_int_t sum = 0;

    json_object_foreach(MUT(m), key, v)
    {
        if (json_is_number(v))
            sum += iget(m, key);
    }
    return sum;
}

/* The array member @p key of @p o, created when absent. Borrowed. */
static json_t *ensure_array(json_t *o, const char *key)
{
    json_t *a = json_object_get(o, key);

    if (!json_is_array(a)) {
        a = json_array();
        if (json_object_set_new(o, key, a) != 0)
            return NULL;
    }
    return a;
}

static bool skipped_has(const json_t *skipped, const char *node)
{
    size_t i;
    json_t *e;

    json_array_foreach(MUT(skipped), i, e)
    {
        const char *n = sget(e, "node");
        if (n && strcmp(n, node) == 0)
            return true;
    }
    return false;
}

static void human_bytes(double bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    unsigned u = 0;

    while (fabs(bytes) >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f B", bytes);
    else
        snprintf(buf, len, "%.1f %s", bytes, units[u]);
}

/* ---- reading a report's figures ---- */

/* A report figure: its number, or why there is none. Strings borrowed from the report. */
struct fig {
    bool ok;
    double v;
    const char *why;
    const char *source;
};

/* The member @p key of @p parent: a figure whose number is at @p value_key. @p member names it as
 * the source when the report lacks it. */
static struct fig read_fig(const json_t *parent, const char *key, const char *value_key,
                           const char *member)
{
    const json_t *o = json_object_get(parent, key);
    struct fig f = {.source = sget(o, "source")};

    if (!json_is_object(o)) {
        f.why = "not in the report (written by an older numaplace)";
        f.source = member;
        return f;
    }
    if ((f.why = sget(o, "unavailable")))
        return f;
    if (!json_is_number(json_object_get(o, value_key))) {
        f.why = "malformed in the report (no number)";
        return f;
    }
    f.ok = true;
    f.v = json_number_value(json_object_get(o, value_key));
    return f;
}

/* Fold one step's figure into the node's time-weighted mean at parent[key]: {value, unit,
 * source, seconds, steps[, byte_seconds]}, or {unavailable, source} while no step had it. With
 * @p by_bytes, byte_seconds sums bytes x seconds while every contributing step knew its bytes. */
static void fold_mean(json_t *parent, const char *key, const struct fig *f, double w,
                      const char *unit, bool by_bytes, double bytes)
{
    json_t *cur = json_object_get(parent, key);
    double cv;

    if (!f->ok) {
        if (!cur)
            json_object_set_new(parent, key, unavailable(f->why, f->source));
        return;
    }
    if (fig_value(cur, "value", &cv)) {
        const double cw = nget(cur, "seconds", MIN_WEIGHT_S);
        set_real(cur, "value", (cv * cw + f->v * w) / (cw + w));
        set_real(cur, "seconds", cw + w);
        set_int(cur, "steps", iget(cur, "steps") + 1);
        if (by_bytes) {
            if (json_object_get(cur, "byte_seconds") && bytes > 0)
                set_real(cur, "byte_seconds", nget(cur, "byte_seconds", 0) + bytes * w);
            else
                json_object_del(cur, "byte_seconds");
        }
        return;
    }
    cur = json_pack("{s:f, s:s, s:f, s:i}", "value", f->v, "unit", unit, "seconds", w, "steps", 1);
    if (!cur)
        return;
    if (f->source)
        json_object_set_new(cur, "source", json_string(f->source));
    if (by_bytes && bytes > 0)
        set_real(cur, "byte_seconds", bytes * w);
    json_object_set_new(parent, key, cur);
}

/* Fold a figure that adds up over steps (seconds of other CPU time). */
static void fold_sum(json_t *parent, const char *key, const struct fig *f, const char *unit)
{
    json_t *cur = json_object_get(parent, key);
    double cv;

    if (!f->ok) {
        if (!cur)
            json_object_set_new(parent, key, unavailable(f->why, f->source));
        return;
    }
    if (fig_value(cur, "value", &cv)) {
        set_real(cur, "value", cv + f->v);
        set_int(cur, "steps", iget(cur, "steps") + 1);
        return;
    }
    cur = json_pack("{s:f, s:s, s:i}", "value", f->v, "unit", unit, "steps", 1);
    if (cur && f->source)
        json_object_set_new(cur, "source", json_string(f->source));
    json_object_set_new(parent, key, cur);
}

/* Fold the report's {mean_key, peak_key, intervals} statistic (cpi, bandwidth): the mean weighted
 * by intervals, the peak the highest step's. */
static void fold_stat(json_t *parent, const char *key, const json_t *report, const char *mean_key,
                      const char *peak_key)
{
    const json_t *o = json_object_get(report, key);
    json_t *cur = json_object_get(parent, key);
    double m, p, n, cm;

    if (!json_is_object(o) || json_object_get(o, "unavailable") ||
        !json_is_number(json_object_get(o, mean_key))) {
        if (!cur)
            json_object_set_new(
                parent, key,
                unavailable(!json_is_object(o) ? "not in the report (written by an older numaplace)"
                            : sget(o, "unavailable") ? sget(o, "unavailable")
                                                     : "malformed in the report (no mean)",
                            sget(o, "source")));
        return;
    }
    m = nget(o, mean_key, 0);
    p = nget(o, peak_key, m);
    n = nget(o, "intervals", 1);
    if (n < 1)
        n = 1;
    if (fig_value(cur, mean_key, &cm)) {
        const double cn = nget(cur, "intervals", 1), cp = nget(cur, peak_key, cm);
        set_real(cur, mean_key, (cm * cn + m * n) / (cn + n));
        set_real(cur, peak_key, p > cp ? p : cp);
        set_int(cur, "intervals", (json_int_t)(cn + n));
        set_int(cur, "steps", iget(cur, "steps") + 1);
        return;
    }
    cur = json_pack("{s:f, s:f, s:I, s:i}", mean_key, m, peak_key, p, "intervals", (json_int_t)n,
                    "steps", 1);
    if (cur && sget(o, "source"))
        json_object_set_new(cur, "source", json_string(sget(o, "source")));
    json_object_set_new(parent, key, cur);
}

/* {policy: tasks} of a report's policy.tasks[]. New reference. */
static json_t *applied_counts(const json_t *tasks)
{
    json_t *counts = json_object(), *t;
    size_t i;

    json_array_foreach(MUT(tasks), i, t)
    {
        const char *p = sget(t, "policy");
        if (!p)
            p = "unknown";
        set_int(counts, p, iget(counts, p) + 1);
    }
    return counts;
}

static json_t *node_new(void)
{
    return json_pack("{s:[], s:i, s:f, s:[], s:{}, s:{s:{}, s:{}, s:i, s:i, s:f, s:{}, s:{}}, s:i, "
                     "s:{}}",
                     "steps", "step_count", 0, "duration_s", 0.0, "policy_requested",
                     "policy_applied", "migrations", "in_bytes", "out_bytes", "requests", 0,
                     "dry_run_requests", 0, "moving_s", 0.0, "failed_pages", "triggers",
                     "pages_moved_bytes", 0, "os_interference");
}

static void fold_pages(json_t *node, const json_t *report, double w, bool latest)
{
    const json_t *pages = json_object_get(report, "pages");
    struct fig ls = {0};
    double bytes = -1;

    if (!json_is_object(pages) || sget(pages, "unavailable")) {
        ls.why = json_is_object(pages) ? sget(pages, "unavailable")
                                       : "the report has no pages (written by an older numaplace)";
        ls.source = sget(pages, "source");
        if (!json_object_get(node, "pages_peak_bytes"))
            json_object_set_new(node, "pages_peak_bytes", unavailable(ls.why, ls.source));
        if (!json_object_get(node, "pages_end_bytes"))
            json_object_set_new(node, "pages_end_bytes", unavailable(ls.why, ls.source));
    } else {
        json_t *peak = json_object_get(node, "pages_peak_bytes");
        const json_t *end = json_object_get(pages, "end_bytes");

        if (!json_is_object(peak) || json_object_get(peak, "unavailable")) {
            peak = json_object();
            json_object_set_new(node, "pages_peak_bytes", peak);
        }
        map_max(peak, json_object_get(pages, "peak_bytes"));
        if (json_is_object(end) &&
            (latest || !json_object_get(node, "pages_end_bytes") ||
             json_object_get(json_object_get(node, "pages_end_bytes"), "unavailable")))
            json_object_set_new(node, "pages_end_bytes", json_deep_copy(end));
        bytes = nget(pages, "peak_total_bytes", -1);
        if (!json_object_get(pages, "local_share")) {
            ls.why = "the report has no pages.local_share (written by a numaplace that did not "
                     "measure it)";
            ls.source = "numaplace.report/1 pages.local_share";
        } else {
            ls = read_fig(pages, "local_share", "value", "numaplace.report/1 pages.local_share");
            if (ls.ok && (ls.v < 0 || ls.v > 1 || !isfinite(ls.v))) {
                ls.ok = false;
                ls.why = "pages.local_share in the report is outside 0 to 1";
            }
        }
    }
    fold_mean(node, "local_share", &ls, w, "fraction", true, bytes);
}

static void fold_migrations(json_t *node, const json_t *report)
{
    const json_t *m = json_object_get(report, "migrations"), *in, *out, *q;
    json_t *nm = json_object_get(node, "migrations"), *triggers = json_object_get(nm, "triggers");
    size_t i;

    if (!json_is_object(m) || json_object_get(m, "unavailable") || !json_is_object(nm))
        return;
    /* reports before the *_bytes names used pages_in / pages_out (also bytes) */
    in = json_object_get(m, "pages_in_bytes") ? json_object_get(m, "pages_in_bytes")
                                              : json_object_get(m, "pages_in");
    out = json_object_get(m, "pages_out_bytes") ? json_object_get(m, "pages_out_bytes")
                                                : json_object_get(m, "pages_out");
    map_add(json_object_get(nm, "in_bytes"), in);
    map_add(json_object_get(nm, "out_bytes"), out);
    set_real(nm, "moving_s", nget(nm, "moving_s", 0) + nget(m, "moving_s", 0));
    map_add(json_object_get(nm, "failed_pages"), json_object_get(m, "failed_pages"));
    json_array_foreach(MUT(json_object_get(m, "requests")), i, q)
    {
        const bool dry = json_is_true(json_object_get(q, "dry_run"));
        const char *trigger = sget(q, "trigger") ? sget(q, "trigger") : "unknown";
        json_t *t = json_object_get(triggers, trigger);

        set_int(nm, "requests", iget(nm, "requests") + 1);
        if (dry)
            set_int(nm, "dry_run_requests", iget(nm, "dry_run_requests") + 1);
        if (!t && json_is_object(triggers)) {
            t = json_pack("{s:i, s:i, s:i}", "requests", 0, "dry_run", 0, "moved_pages", 0);
            json_object_set_new(triggers, trigger, t);
        }
        if (t) {
            set_int(t, "requests", iget(t, "requests") + 1);
            if (dry)
                set_int(t, "dry_run", iget(t, "dry_run") + 1);
            else
                set_int(t, "moved_pages", iget(t, "moved_pages") + iget(q, "moved_pages"));
        }
    }
    if (sget(m, "source"))
        json_object_set_new(nm, "source", json_string(sget(m, "source")));
    set_int(node, "pages_moved_bytes", map_sum(json_object_get(nm, "in_bytes")));
}

static void fold_os(json_t *node, const json_t *report, double w)
{
    const json_t *os = json_object_get(report, "os_interference");
    json_t *nos = json_object_get(node, "os_interference");
    struct fig f;

    f = read_fig(os, "kernel_time_share", "value",
                 "numaplace.report/1 os_interference.kernel_time_share");
    fold_mean(nos, "kernel_time_share", &f, w, "fraction", false, 0);
    f = read_fig(os, "involuntary_cs_per_s", "value",
                 "numaplace.report/1 os_interference.involuntary_cs_per_s");
    fold_mean(nos, "involuntary_cs_per_s", &f, w, "1/s", false, 0);
    f = read_fig(os, "interrupts_on_cpus", "per_s",
                 "numaplace.report/1 os_interference.interrupts_on_cpus");
    fold_mean(nos, "interrupts_per_s", &f, w, "1/s", false, 0);
    f = read_fig(os, "softirqs_on_cpus", "per_s",
                 "numaplace.report/1 os_interference.softirqs_on_cpus");
    fold_mean(nos, "softirqs_per_s", &f, w, "1/s", false, 0);
    f = read_fig(os, "other_cpu_time_s", "value",
                 "numaplace.report/1 os_interference.other_cpu_time_s");
    fold_sum(nos, "other_cpu_time_s", &f, "s");
}

/* One report (already checked) into its node. */
static int add_step(json_t *node, const json_t *report, const char *step)
{
    const json_t *policy = json_object_get(report, "policy"), *tl;
    const char *requested = sget(policy, "requested") ? sget(policy, "requested") : "unknown";
    const char *sens = sget(report, "sensitivity") ? sget(report, "sensitivity") : "unknown";
    const char *cur_sens = sget(node, "sensitivity");
    const char *start = sget(report, "start"), *end = sget(report, "end");
    const char *nstart = sget(node, "start"), *nend = sget(node, "end");
    const double dur = nget(report, "duration_s", 0), w = dur > MIN_WEIGHT_S ? dur : MIN_WEIGHT_S;
    const bool latest = iso_ok(end) && (!iso_ok(nend) || strcmp(end, nend) >= 0);
    json_t *entry, *cur_tl;

    entry = json_pack("{s:s, s:s, s:o, s:s, s:s, s:b, s:f}", "step", step, "policy", requested,
                      "applied", applied_counts(json_object_get(policy, "tasks")), "sensitivity",
                      sens, "cpus", sget(report, "cpus") ? sget(report, "cpus") : "", "complete",
                      json_is_true(json_object_get(report, "complete")), "duration_s", dur);
    if (!entry)
        return -ENOMEM;
    if (json_is_array(json_object_get(report, "local_nodes")))
        json_object_set_new(entry, "local_nodes",
                            json_deep_copy(json_object_get(report, "local_nodes")));
    if (iso_ok(start))
        json_object_set_new(entry, "start", json_string(start));
    if (iso_ok(end))
        json_object_set_new(entry, "end", json_string(end));
    if (json_array_append_new(ensure_array(node, "steps"), entry) != 0)
        return -ENOMEM;

    set_int(node, "step_count", iget(node, "step_count") + 1);
    set_real(node, "duration_s", nget(node, "duration_s", 0) + dur);
    str_set_add(ensure_array(node, "policy_requested"), requested);
    map_add(json_object_get(node, "policy_applied"), json_object_get(entry, "applied"));
    if (!cur_sens || strcmp(sens, "high") == 0 || strcmp(cur_sens, "unknown") == 0)
        json_object_set_new(node, "sensitivity", json_string(sens));
    if (iso_ok(start) && (!iso_ok(nstart) || strcmp(start, nstart) < 0))
        json_object_set_new(node, "start", json_string(start));
    if (latest)
        json_object_set_new(node, "end", json_string(end));

    fold_pages(node, report, w, latest);
    fold_stat(node, "cpi", report, "mean", "p95");
    fold_stat(node, "bandwidth", report, "mean_bytes_per_s", "peak_bytes_per_s");
    fold_migrations(node, report);
    fold_os(node, report, w);

    /* the longest step's timeline, for the plot */
    tl = json_object_get(report, "timeline");
    cur_tl = json_object_get(node, "timeline");
    if (json_is_object(tl) && (!cur_tl || dur > nget(cur_tl, "duration_s", -1))) {
        json_t *copy = json_deep_copy(tl);
        if (!copy)
            return -ENOMEM;
        json_object_set_new(copy, "step", json_string(step));
        set_real(copy, "duration_s", dur);
        json_object_set_new(node, "timeline", copy);
    }
    return 0;
}

/* ---- totals ---- */

static void recompute(json_t *s)
{
    json_t *nodes = json_object_get(s, "nodes"), *node, *missing, *kept, *v, *totals;
    json_t *policies = json_array(), *applied = json_object();
    const char *key, *start = NULL, *end = NULL, *sens = NULL;
    json_int_t steps = 0, moved = 0, requests = 0;
    double ls_sum = 0, ls_w = 0, ls_bsum = 0, ls_bw = 0, k_sum = 0, k_w = 0, x;
    int ls_nodes = 0, k_nodes = 0;
    bool all_bytes = true;
    char ls_why[NP_ERR_MSG_MAX] = "", k_why[NP_ERR_MSG_MAX] = "";
    size_t i;

    json_object_foreach(nodes, key, node)
    {
        const json_t *ls = json_object_get(node, "local_share");
        const json_t *k =
            json_object_get(json_object_get(node, "os_interference"), "kernel_time_share");
        const char *ns = sget(node, "sensitivity"), *nstart = sget(node, "start");
        const char *nend = sget(node, "end");

        steps += iget(node, "step_count");
        moved += iget(node, "pages_moved_bytes");
        requests += iget(json_object_get(node, "migrations"), "requests");
        json_array_foreach(json_object_get(node, "policy_requested"), i, v)
        {
            str_set_add(policies, json_string_value(v));
        }
        map_add(applied, json_object_get(node, "policy_applied"));
        if (ns && (!sens || strcmp(ns, "high") == 0 || strcmp(sens, "unknown") == 0))
            sens = ns;
        if (iso_ok(nstart) && (!start || strcmp(nstart, start) < 0))
            start = nstart;
        if (iso_ok(nend) && (!end || strcmp(nend, end) > 0))
            end = nend;
        if (fig_value(ls, "value", &x)) {
            const double w = nget(ls, "seconds", MIN_WEIGHT_S), bs = nget(ls, "byte_seconds", -1);
            ls_sum += x * w;
            ls_w += w;
            if (bs > 0) {
                ls_bsum += x * bs;
                ls_bw += bs;
            } else {
                all_bytes = false;
            }
            ls_nodes++;
        } else if (!ls_why[0] && sget(ls, "unavailable")) {
            snprintf(ls_why, sizeof(ls_why), "no node measured it (%s: %s)", key,
                     sget(ls, "unavailable"));
        }
        if (fig_value(k, "value", &x)) {
            const double w = nget(k, "seconds", MIN_WEIGHT_S);
            k_sum += x * w;
            k_w += w;
            k_nodes++;
        } else if (!k_why[0] && sget(k, "unavailable")) {
            snprintf(k_why, sizeof(k_why), "no node measured it (%s: %s)", key,
                     sget(k, "unavailable"));
        }
    }

    /* a node that reported (even a skipped report) is not missing */
    missing = ensure_array(s, "missing_nodes");
    kept = json_array();
    json_array_foreach(missing, i, v)
    {
        const char *name = json_string_value(v);
        if (name && !json_object_get(nodes, name) &&
            !skipped_has(json_object_get(s, "skipped"), name) && !str_array_has(kept, name))
            json_array_append(kept, v);
    }
    json_object_set_new(s, "missing_nodes", kept);

    json_object_set_new(s, "policy_requested", policies);
    json_object_set_new(s, "policy_applied", applied);
    if (sens)
        json_object_set_new(s, "sensitivity", json_string(sens));
    else
        json_object_del(s, "sensitivity");
    if (start)
        json_object_set_new(s, "start", json_string(start));
    if (end)
        json_object_set_new(s, "end", json_string(end));

    totals =
        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "nodes", (json_int_t)json_object_size(nodes),
                  "steps", steps, "missing_nodes", (json_int_t)json_array_size(kept), "skipped",
                  (json_int_t)json_array_size(json_object_get(s, "skipped")), "pages_moved_bytes",
                  moved, "migration_requests", requests);
    if (!totals)
        return;
    if (ls_nodes)
        json_object_set_new(totals, "local_share",
                            json_pack("{s:f, s:s, s:s, s:i, s:s}", "value",
                                      all_bytes ? ls_bsum / ls_bw : ls_sum / ls_w, "unit",
                                      "fraction", "weighting", all_bytes ? "bytes x time" : "time",
                                      "nodes", ls_nodes, "source",
                                      all_bytes ? SRC_SUMMARY_LOCAL : SRC_SUMMARY_LOCAL_TIME));
    else
        json_object_set_new(totals, "local_share",
                            unavailable(ls_why[0] ? ls_why : "no node reported it", "summary"));
    if (k_nodes)
        json_object_set_new(totals, "kernel_time_share",
                            json_pack("{s:f, s:s, s:i, s:s}", "value", k_sum / k_w, "unit",
                                      "fraction", "nodes", k_nodes, "source", SRC_SUMMARY_KERNEL));
    else
        json_object_set_new(totals, "kernel_time_share",
                            unavailable(k_why[0] ? k_why : "no node reported it", "summary"));
    json_object_set_new(s, "totals", totals);
}

/* ---- building ---- */

json_t *np_summary_new(uint32_t job_id)
{
    json_t *s = json_pack("{s:s, s:I, s:[], s:{}, s:{}, s:[], s:[], s:[]}", "schema",
                          NP_SUMMARY_SCHEMA, "job_id", (json_int_t)job_id, "policy_requested",
                          "policy_applied", "nodes", "missing_nodes", "skipped", "trimmed");

    if (s)
        recompute(s);
    return s;
}

int np_summary_check(const json_t *summary, struct np_err *err)
{
    const char *schema = sget(summary, "schema");

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

int np_summary_set_user(json_t *summary, const char *user, struct np_err *err)
{
    int rc = np_summary_check(summary, err);

    if (rc)
        return rc;
    if (!user || !*user)
        return np_err_set(err, -EINVAL, "empty user name: expected the job's user, e.g. alice");
    if (json_object_set_new(summary, "user", json_string(user)) != 0)
        return np_err_set(err, -ENOMEM, "out of memory naming the user");
    return 0;
}

int np_summary_add_report(json_t *summary, json_t *report, struct np_err *err)
{
    struct np_err rerr = {0};
    const json_int_t job = iget(summary, "job_id");
    const json_t *jid = json_object_get(report, "job_id"), *uid = json_object_get(report, "uid");
    const char *node, *step;
    json_t *n, *e;
    size_t i;
    int rc = np_summary_check(summary, err);

    if (rc)
        return rc;
    if (!json_is_object(report))
        return np_err_set(err, -EINVAL, "a report must be a JSON object");
    node = sget(report, "node");
    step = sget(report, "step");
    if (json_is_integer(jid) && json_integer_value(jid) != job)
        return np_err_set(err, -EINVAL,
                          "the report of node %s step %s is of job %lld, not of job %lld",
                          node ? node : "?", step ? step : "?", (long long)json_integer_value(jid),
                          (long long)job);
    rc = np_report_check(report, &rerr);
    if (rc == -EPROTO) {
        json_t *skipped = ensure_array(summary, "skipped");
        if (!skipped ||
            json_array_append_new(
                skipped, json_pack("{s:s, s:s, s:s}", "node", node ? node : "unknown", "step",
                                   step ? step : "unknown", "reason", rerr.msg)) != 0)
            return np_err_set(err, -ENOMEM, "out of memory recording a skipped report");
        recompute(summary);
        np_err_set(err, 0, "skipped the report of node %s step %s: %s", node ? node : "unknown",
                   step ? step : "unknown", rerr.msg);
        return 0;
    }
    if (rc)
        return np_err_set(err, rc, "%s", rerr.msg);
    if (!json_is_integer(jid))
        return np_err_set(err, -EINVAL, "the report has no integer \"job_id\"");
    if (!node || !*node)
        return np_err_set(err, -EINVAL, "the report of job %lld has no \"node\"", (long long)job);
    if (!step || !*step)
        return np_err_set(err, -EINVAL, "the report of job %lld on %s has no \"step\"",
                          (long long)job, node);
    if (json_is_integer(uid)) {
        const json_t *have = json_object_get(summary, "uid");
        if (json_is_integer(have) && json_integer_value(have) != json_integer_value(uid))
            return np_err_set(err, -EINVAL,
                              "the report of node %s step %s has uid %lld; job %lld is uid %lld",
                              node, step, (long long)json_integer_value(uid), (long long)job,
                              (long long)json_integer_value(have));
        if (!have)
            set_int(summary, "uid", json_integer_value(uid));
    }
    n = json_object_get(json_object_get(summary, "nodes"), node);
    json_array_foreach(json_object_get(n, "steps"), i, e)
    {
        if (sget(e, "step") && strcmp(sget(e, "step"), step) == 0)
            return np_err_set(err, -EEXIST, "step %s of node %s is in the summary already", step,
                              node);
    }
    if (!n) {
        n = node_new();
        if (!n || json_object_set_new(json_object_get(summary, "nodes"), node, n) != 0)
            return np_err_set(err, -ENOMEM, "out of memory adding node %s", node);
    }
    rc = add_step(n, report, step);
    recompute(summary);
    if (rc)
        return np_err_set(err, rc, "out of memory adding step %s of node %s", step, node);
    return 0;
}

static bool node_char_ok(char c)
{
    return isalnum((unsigned char)c) || c == '.' || c == '-' || c == '_';
}

int np_summary_expect_nodes(json_t *summary, const char *hostlist, struct np_err *err)
{
    static const char *const seps = ", \t\r\n";
    json_t *missing;
    const char *p;
    int rc = np_summary_check(summary, err), count = 0;

    if (rc)
        return rc;
    /* check every name before changing anything */
    for (p = hostlist ? hostlist : ""; *p;) {
        size_t len = strcspn(p, seps);
        for (size_t k = 0; k < len; k++)
            if (!node_char_ok(p[k]))
                return np_err_set(err, -EINVAL,
                                  "node name '%.*s' has '%c': accepted are letters, digits, '.', "
                                  "'-' and '_', separated by commas (expand Slurm hostlists such "
                                  "as node[1-4] with `scontrol show hostnames`)",
                                  (int)len, p, p[k]);
        if (len >= 256)
            return np_err_set(err, -EINVAL, "node name '%.32s...' is longer than 255 characters",
                              p);
        count += len > 0;
        p += len;
        p += strspn(p, seps);
    }
    if (count == 0)
        return np_err_set(err, -EINVAL,
                          "empty node list: expected the job's nodes separated by commas, e.g. "
                          "node1,node2 (`scontrol show hostnames` expands Slurm hostlists)");
    missing = ensure_array(summary, "missing_nodes");
    if (!missing)
        return np_err_set(err, -ENOMEM, "out of memory listing the expected nodes");
    for (p = hostlist; *p;) {
        size_t len = strcspn(p, seps);
        if (len) {
            char name[256];
            memcpy(name, p, len);
            name[len] = '\0';
            if (!str_array_has(missing, name) &&
                json_array_append_new(missing, json_string(name)) != 0)
                return np_err_set(err, -ENOMEM, "out of memory listing the expected nodes");
        }
        p += len;
        p += strspn(p, seps);
    }
    recompute(summary); /* drops the nodes that reported */
    return 0;
}

int np_summary_merge(json_t *into, json_t *other, struct np_err *err)
{
    json_t *onodes, *inodes, *oskipped, *skipped, *e, *v, *trimmed;
    const json_t *iuid, *ouid;
    const char *key;
    size_t i;
    int rc = np_summary_check(into, err);

    if (rc)
        return rc;
    if ((rc = np_summary_check(other, err)) != 0)
        return rc;
    if (into == other) {
        recompute(into);
        return 0;
    }
    if (iget(into, "job_id") != iget(other, "job_id"))
        return np_err_set(err, -EINVAL,
                          "cannot merge the summary of job %lld into that of job %lld",
                          (long long)iget(other, "job_id"), (long long)iget(into, "job_id"));
    iuid = json_object_get(into, "uid");
    ouid = json_object_get(other, "uid");
    if (json_is_integer(iuid) && json_is_integer(ouid) &&
        json_integer_value(iuid) != json_integer_value(ouid))
        return np_err_set(err, -EINVAL,
                          "cannot merge summaries of job %lld with uids %lld and %lld",
                          (long long)iget(into, "job_id"), (long long)json_integer_value(iuid),
                          (long long)json_integer_value(ouid));
    if (!json_is_integer(iuid) && json_is_integer(ouid))
        set_int(into, "uid", json_integer_value(ouid));
    if (!sget(into, "user") && sget(other, "user"))
        json_object_set_new(into, "user", json_string(sget(other, "user")));

    onodes = json_object_get(other, "nodes");
    inodes = json_object_get(into, "nodes");
    oskipped = json_object_get(other, "skipped");
    /* skipped: other's word on its nodes wins */
    skipped = json_array();
    if (!skipped)
        return np_err_set(err, -ENOMEM, "out of memory merging summaries");
    json_array_foreach(json_object_get(into, "skipped"), i, e)
    {
        const char *n = sget(e, "node");
        if (!n || (!json_object_get(onodes, n) && !skipped_has(oskipped, n)))
            json_array_append(skipped, e);
    }
    json_array_foreach(oskipped, i, e)
    {
        json_array_append_new(skipped, json_deep_copy(e));
    }
    json_object_set_new(into, "skipped", skipped);
    json_object_foreach(onodes, key, v)
    {
        json_t *copy = json_deep_copy(v);
        if (!copy || json_object_set_new(inodes, key, copy) != 0)
            return np_err_set(err, -ENOMEM, "out of memory merging node %s", key);
    }
    json_array_foreach(json_object_get(other, "missing_nodes"), i, v)
    {
        json_t *missing = ensure_array(into, "missing_nodes");
        if (json_is_string(v) && !str_array_has(missing, json_string_value(v)))
            json_array_append_new(missing, json_string(json_string_value(v)));
    }
    trimmed = ensure_array(into, "trimmed");
    json_array_foreach(json_object_get(other, "trimmed"), i, e)
    {
        size_t k;
        json_t *t;
        bool have = false;
        json_array_foreach(trimmed, k, t)
        {
            if (sget(t, "what") && sget(e, "what") && strcmp(sget(t, "what"), sget(e, "what")) == 0)
                have = true;
        }
        if (!have)
            json_array_append_new(trimmed, json_deep_copy(e));
    }
    recompute(into);
    return 0;
}

/* ---- advice ---- */

/* The nodes a rule names: the first ADVICE_NAMED_NODES with their figures, then a count. */
struct hits {
    char text[768];
    int n;
};

static void hit(struct hits *h, const char *fmt, ...) NP_PRINTF(2, 3);

static void hit(struct hits *h, const char *fmt, ...)
{
    va_list ap;
    size_t len = strlen(h->text);

    if (h->n++ >= ADVICE_NAMED_NODES)
        return;
    if (h->n > 1 && len + 2 < sizeof(h->text)) {
        memcpy(h->text + len, ", ", 3);
        len += 2;
    }
    va_start(ap, fmt);
    vsnprintf(h->text + len, sizeof(h->text) - len, fmt, ap);
    va_end(ap);
}

/* "node1 (..), node2 (..) and 3 more nodes". Static storage in @p h. */
static const char *hits_text(struct hits *h)
{
    size_t len = strlen(h->text);

    if (h->n > ADVICE_NAMED_NODES)
        snprintf(h->text + len, sizeof(h->text) - len, " and %d more node%s",
                 h->n - ADVICE_NAMED_NODES, h->n - ADVICE_NAMED_NODES == 1 ? "" : "s");
    return h->text;
}

static void advise(json_t *advice, const char *rule, const char *fmt, ...) NP_PRINTF(3, 4);

static void advise(json_t *advice, const char *rule, const char *fmt, ...)
{
    char text[2048];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    json_array_append_new(advice, json_pack("{s:s, s:s}", "rule", rule, "text", text));
}

/* Every requested policy on the node is local or local-strict. */
static bool local_policy(const json_t *node)
{
    const json_t *pols = json_object_get(node, "policy_requested");
    size_t i;
    json_t *p;

    if (json_array_size(pols) == 0)
        return false;
    json_array_foreach(MUT(pols), i, p)
    {
        const char *s = json_string_value(p);
        if (!s || (strcmp(s, "local") != 0 && strcmp(s, "local-strict") != 0))
            return false;
    }
    return true;
}

/* NUMA nodes holding at least NP_ADVICE_SPREAD_SHARE of the node's peak pages. */
static int spread_nodes(const json_t *node)
{
    const json_t *peak = json_object_get(node, "pages_peak_bytes");
    const double total = (double)map_sum(peak);
    const char *key;
    json_t *v;
    int n = 0;

    if (!json_is_object(peak) || json_object_get(peak, "unavailable") || total <= 0)
        return 0;
    json_object_foreach(MUT(peak), key, v)
    {
        if (json_is_number(v) && json_number_value(v) >= NP_ADVICE_SPREAD_SHARE * total)
            n++;
    }
    return n;
}

static const char *policies_text(const json_t *node, char *buf, size_t len)
{
    const json_t *pols = json_object_get(node, "policy_requested");
    size_t i, o = 0;
    json_t *p;

    buf[0] = '\0';
    json_array_foreach(MUT(pols), i, p)
    {
        int n = snprintf(buf + o, len - o, "%s%s", i ? "," : "", json_string_value(p));
        if (n < 0 || (size_t)n >= len - o)
            break;
        o += (size_t)n;
    }
    return buf[0] ? buf : "unknown";
}

json_t *np_summary_advice(const json_t *summary)
{
    struct hits remote = {0}, high = {0}, interleave = {0}, good = {0}, noise = {0}, counters = {0};
    struct hits moved_on = {0};
    json_t *advice, *nodes = json_object_get(summary, "nodes"), *triggers;
    const char **keys;
    size_t n = 0;
    json_int_t moved = 0;
    char buf[256];

    if (np_summary_check(summary, NULL) != 0)
        return NULL;
    advice = json_array();
    triggers = json_object();
    keys = sorted_keys(nodes, &n);
    if (!advice || !triggers || !keys) {
        json_decref(advice);
        json_decref(triggers);
        free(keys);
        return NULL;
    }
    for (size_t k = 0; k < n; k++) {
        const char *name = keys[k];
        const json_t *node = json_object_get(nodes, name);
        const json_t *os = json_object_get(node, "os_interference");
        const json_t *cpi = json_object_get(node, "cpi"), *bw = json_object_get(node, "bandwidth");
        const char *sens = sget(node, "sensitivity");
        double share, bwm, ks = -1, cs = -1, irq = -1;
        const bool have_share = fig_value(json_object_get(node, "local_share"), "value", &share);
        const json_int_t node_moved = iget(node, "pages_moved_bytes");

        if (have_share && share < NP_ADVICE_REMOTE_SHARE)
            hit(&remote, "%s (%.0f%% local, policy %s)", name, share * 100,
                policies_text(node, buf, sizeof(buf)));
        if (have_share && sens && strcmp(sens, "high") == 0 && share < NP_ADVICE_HIGH_LOCAL_SHARE)
            hit(&high, "%s (%.0f%% local)", name, share * 100);
        if (fig_value(bw, "mean_bytes_per_s", &bwm) && bwm >= NP_ADVICE_BANDWIDTH_BYTES_PER_S &&
            local_policy(node) && spread_nodes(node) >= 2)
            hit(&interleave, "%s (%.1f GB/s mean, memory on %d NUMA nodes)", name, bwm / 1e9,
                spread_nodes(node));
        if (have_share && local_policy(node) && share >= NP_ADVICE_LOCAL_GOOD_SHARE)
            hit(&good, "%s (%.0f%% local)", name, share * 100);

        fig_value(json_object_get(os, "kernel_time_share"), "value", &ks);
        fig_value(json_object_get(os, "involuntary_cs_per_s"), "value", &cs);
        fig_value(json_object_get(os, "interrupts_per_s"), "value", &irq);
        if (ks >= NP_ADVICE_KERNEL_SHARE || cs >= NP_ADVICE_INVOLUNTARY_CS_PER_S ||
            irq >= NP_ADVICE_INTERRUPTS_PER_S) {
            char what[192];
            int o = 0;
            what[0] = '\0';
            if (ks >= NP_ADVICE_KERNEL_SHARE)
                o += snprintf(what + o, sizeof(what) - (size_t)o, "kernel %.0f%% of CPU time",
                              ks * 100);
            if (cs >= NP_ADVICE_INVOLUNTARY_CS_PER_S && o < (int)sizeof(what))
                o += snprintf(what + o, sizeof(what) - (size_t)o,
                              "%s%.0f involuntary context switches/s", o ? ", " : "", cs);
            if (irq >= NP_ADVICE_INTERRUPTS_PER_S && o < (int)sizeof(what))
                snprintf(what + o, sizeof(what) - (size_t)o, "%s%.0f interrupts/s on its CPUs",
                         o ? ", " : "", irq);
            hit(&noise, "%s: %s", name, what);
        }

        {
            const char *cw = sget(cpi, "unavailable"), *bwhy = sget(bw, "unavailable");
            if (cw && bwhy)
                hit(&counters, "%s (CPI and bandwidth: %s)", name, cw);
            else if (cw)
                hit(&counters, "%s (CPI: %s)", name, cw);
            else if (bwhy)
                hit(&counters, "%s (bandwidth: %s)", name, bwhy);
        }

        if (node_moved > 0) {
            char human[32];
            const char *tkey;
            json_t *t;
            moved += node_moved;
            human_bytes((double)node_moved, human, sizeof(human));
            hit(&moved_on, "%s: %s", name, human);
            json_object_foreach(json_object_get(json_object_get(node, "migrations"), "triggers"),
                                tkey, t)
            {
                /* the requests that moved pages, not the dry runs */
                const json_int_t real = iget(t, "requests") - iget(t, "dry_run");
                if (real > 0)
                    set_int(triggers, tkey, iget(triggers, tkey) + real);
            }
        }
    }
    free(keys);

    if (remote.n)
        advise(advice, "remote-memory", "Most memory was remote for most of the run on %s.",
               hits_text(&remote));
    if (high.n)
        advise(advice, "high-but-remote",
               "The job is classed high (sensitive to placement) yet its memory was not kept "
               "local on %s; check the step's --numa-policy and the node's free memory.",
               hits_text(&high));
    if (interleave.n)
        advise(advice, "interleave-may-help",
               "Memory bandwidth was high and memory spread over several NUMA nodes under a local "
               "policy on %s; --numa-policy=interleave may help a bandwidth-bound job by using "
               "more memory controllers.",
               hits_text(&interleave));
    if (good.n)
        advise(advice, "local-is-good",
               "Local placement worked: memory stayed next to the job's CPUs on %s.",
               hits_text(&good));
    if (noise.n)
        advise(advice, "os-noise",
               "The job lost a measurable share to kernel work or interrupts on its CPUs (%s); "
               "core specialization (CpuSpecList) may help.",
               hits_text(&noise));
    if (counters.n)
        advise(advice, "no-counters",
               "Hardware counters were unavailable on %s, so the job's sensitivity to placement "
               "could not be judged.",
               hits_text(&counters));
    if (moved > 0) {
        char human[32], trig[256] = "";
        const char *tkey;
        json_t *t;
        size_t o = 0;
        human_bytes((double)moved, human, sizeof(human));
        json_object_foreach(triggers, tkey, t)
        {
            int w =
                snprintf(trig + o, sizeof(trig) - o, "%s%s (%lld request%s)", o ? ", " : "", tkey,
                         (long long)json_integer_value(t), json_integer_value(t) == 1 ? "" : "s");
            if (w < 0 || (size_t)w >= sizeof(trig) - o)
                break;
            o += (size_t)w;
        }
        advise(advice, "migrated",
               "numaplace moved %s of the job's pages between NUMA nodes (%s), triggered by %s.",
               human, hits_text(&moved_on), trig[0] ? trig : "triggers not recorded");
    }
    json_decref(triggers);
    if (json_array_size(advice) == 0)
        advise(advice, "none", "nothing stood out");
    return advice;
}

/* ---- text ---- */

static void print_fig(FILE *out, const char *label, const json_t *fig, double scale,
                      const char *fmt_unit)
{
    double v;

    if (fig_value(fig, "value", &v)) {
        fprintf(out, "%s ", label);
        fprintf(out, "%.3g%s", v * scale, fmt_unit);
    } else if (sget(fig, "unavailable")) {
        fprintf(out, "%s unavailable (%s)", label, sget(fig, "unavailable"));
    } else {
        fprintf(out, "%s not kept", label);
    }
}

/* "<sep><label> 0: 1.0 GiB, 1: 64.0 MiB" of a bytes-per-NUMA-node map (or its unavailable why). */
static void print_map(FILE *out, const char *sep, const char *label, const json_t *map)
{
    const char **keys;
    size_t n = 0;
    char human[32];

    if (!json_is_object(map))
        return;
    if (sget(map, "unavailable")) {
        fprintf(out, "%s%s unavailable (%s)", sep, label, sget(map, "unavailable"));
        return;
    }
    keys = sorted_keys(map, &n);
    if (!keys)
        return;
    fprintf(out, "%s%s", sep, label);
    for (size_t k = 0; k < n; k++) {
        human_bytes((double)iget(map, keys[k]), human, sizeof(human));
        fprintf(out, "%s%s: %s", k ? ", " : " ", keys[k], human);
    }
    if (n == 0)
        fprintf(out, " none");
    free(keys);
}

static void print_node(FILE *out, const char *name, int width, const json_t *node)
{
    const json_t *ls = json_object_get(node, "local_share"),
                 *steps = json_object_get(node, "steps");
    const json_t *cpi = json_object_get(node, "cpi"), *bw = json_object_get(node, "bandwidth");
    const json_t *m = json_object_get(node, "migrations");
    const json_t *os = json_object_get(node, "os_interference"), *e;
    double v;
    size_t i;
    char human[32];

    if (fig_value(ls, "value", &v)) {
        char bar[NP_SUMMARY_BAR_WIDTH + 1];
        const int fill = (int)lround(v * NP_SUMMARY_BAR_WIDTH);
        for (int b = 0; b < NP_SUMMARY_BAR_WIDTH; b++)
            bar[b] = b < fill ? '#' : '-';
        bar[NP_SUMMARY_BAR_WIDTH] = '\0';
        fprintf(out, "%-*s  local memory [%s] %3.0f%%", width, name, bar, v * 100);
        if (iget(ls, "steps") && iget(ls, "steps") < iget(node, "step_count"))
            fprintf(out, " (%lld of %lld steps)", (long long)iget(ls, "steps"),
                    (long long)iget(node, "step_count"));
        fputc('\n', out);
    } else {
        fprintf(out, "%-*s  local memory unavailable (%s)\n", width, name,
                sget(ls, "unavailable") ? sget(ls, "unavailable") : "not kept");
    }
    fprintf(out, "    steps (%lld, %.0f s)", (long long)iget(node, "step_count"),
            nget(node, "duration_s", 0));
    json_array_foreach(MUT(steps), i, e)
    {
        char applied[128] = "";
        const char *key;
        json_t *c;
        size_t o = 0;
        json_object_foreach(json_object_get(e, "applied"), key, c)
        {
            int w = snprintf(applied + o, sizeof(applied) - o, "%s%s x%lld", o ? ", " : "", key,
                             (long long)json_integer_value(c));
            if (w < 0 || (size_t)w >= sizeof(applied) - o)
                break;
            o += (size_t)w;
        }
        fprintf(out, "%s %s (requested %s, applied %s, %.0f s%s)", i ? ";" : ":",
                sget(e, "step") ? sget(e, "step") : "?",
                sget(e, "policy") ? sget(e, "policy") : "?", applied[0] ? applied : "no tasks",
                nget(e, "duration_s", 0),
                json_is_false(json_object_get(e, "complete")) ? ", incomplete" : "");
    }
    fputc('\n', out);
    if (fig_value(cpi, "mean", &v))
        fprintf(out, "    CPI: mean %.2f, p95 %.2f (%lld intervals)\n", v, nget(cpi, "p95", v),
                (long long)iget(cpi, "intervals"));
    else if (cpi)
        fprintf(out, "    CPI: unavailable (%s)\n",
                sget(cpi, "unavailable") ? sget(cpi, "unavailable") : "malformed");
    if (fig_value(bw, "mean_bytes_per_s", &v)) {
        const double p = nget(bw, "peak_bytes_per_s", v);
        fprintf(out, "    bandwidth: mean %.2f GB/s, peak %.2f GB/s\n", v / 1e9, p / 1e9);
    } else if (bw) {
        fprintf(out, "    bandwidth: unavailable (%s)\n",
                sget(bw, "unavailable") ? sget(bw, "unavailable") : "malformed");
    }
    if (json_object_get(node, "pages_peak_bytes") || json_object_get(node, "pages_end_bytes")) {
        fprintf(out, "    memory per NUMA node");
        print_map(out, ": ", "peak", json_object_get(node, "pages_peak_bytes"));
        print_map(out, "; ", "end", json_object_get(node, "pages_end_bytes"));
        fputc('\n', out);
    }
    human_bytes((double)iget(node, "pages_moved_bytes"), human, sizeof(human));
    fprintf(out, "    migrations: %s moved", human);
    if (m) {
        const char *key;
        json_t *c;
        fprintf(out, " in %lld request%s", (long long)iget(m, "requests"),
                iget(m, "requests") == 1 ? "" : "s");
        if (iget(m, "dry_run_requests"))
            fprintf(out, " (%lld dry run)", (long long)iget(m, "dry_run_requests"));
        fprintf(out, ", %.2f s moving", nget(m, "moving_s", 0));
        json_object_foreach(json_object_get(m, "failed_pages"), key, c)
        {
            if (json_integer_value(c) > 0)
                fprintf(out, ", %lld pages failed (%s)", (long long)json_integer_value(c), key);
        }
        print_map(out, "; ", "into", json_object_get(m, "in_bytes"));
        print_map(out, "; ", "out of", json_object_get(m, "out_bytes"));
        if (sget(m, "source"))
            fprintf(out, " [%s]", sget(m, "source"));
    }
    fputc('\n', out);
    if (json_is_object(os)) {
        fprintf(out, "    OS interference: ");
        print_fig(out, "kernel time share", json_object_get(os, "kernel_time_share"), 100, "%");
        if (json_object_size(os) > 1) {
            fprintf(out, "; ");
            print_fig(out, "involuntary switches", json_object_get(os, "involuntary_cs_per_s"), 1,
                      "/s");
            fprintf(out, "; ");
            print_fig(out, "interrupts", json_object_get(os, "interrupts_per_s"), 1, "/s");
            fprintf(out, "; ");
            print_fig(out, "softirqs", json_object_get(os, "softirqs_per_s"), 1, "/s");
            fprintf(out, "; ");
            print_fig(out, "other CPU time", json_object_get(os, "other_cpu_time_s"), 1, " s");
        }
        fputc('\n', out);
    }
}

static void print_strings(FILE *out, const json_t *arr)
{
    size_t i;
    json_t *v;

    json_array_foreach(MUT(arr), i, v)
    {
        fprintf(out, "%s%s", i ? ", " : "", json_string_value(v) ? json_string_value(v) : "?");
    }
}

int np_summary_print(FILE *out, const json_t *summary)
{
    const json_t *nodes = json_object_get(summary, "nodes"), *totals, *e;
    const char **keys;
    size_t n = 0, i;
    int width = 4;
    json_t *advice;
    double x;
    char human[32];

    if (!out || np_summary_check(summary, NULL) != 0)
        return -EINVAL;
    totals = json_object_get(summary, "totals");
    keys = sorted_keys(nodes, &n);
    advice = np_summary_advice(summary);
    if (!keys || !advice) {
        free(keys);
        json_decref(advice);
        return -ENOMEM;
    }
    fprintf(out, "Job ID: %lld\n", (long long)iget(summary, "job_id"));
    if (sget(summary, "user"))
        fprintf(out, "User: %s", sget(summary, "user"));
    else
        fprintf(out, "User: unknown");
    if (json_is_integer(json_object_get(summary, "uid")))
        fprintf(out, " (uid %lld)", (long long)iget(summary, "uid"));
    fputc('\n', out);
    fprintf(out, "Nodes: %zu reported (", n);
    for (size_t k = 0; k < n; k++)
        fprintf(out, "%s%s", k ? ", " : "", keys[k]);
    fprintf(out, ")");
    if (json_array_size(json_object_get(summary, "missing_nodes")))
        fprintf(out, ", %zu missing", json_array_size(json_object_get(summary, "missing_nodes")));
    fprintf(out, "; %lld steps\n", (long long)iget(totals, "steps"));
    if (sget(summary, "start") || sget(summary, "end"))
        fprintf(out, "Run: %s to %s\n", sget(summary, "start") ? sget(summary, "start") : "?",
                sget(summary, "end") ? sget(summary, "end") : "?");
    fprintf(out, "Policy requested: ");
    print_strings(out, json_object_get(summary, "policy_requested"));
    fprintf(out, "\nPolicy applied per task: ");
    {
        const json_t *applied = json_object_get(summary, "policy_applied");
        size_t np = 0;
        const char **pols = sorted_keys(applied, &np);
        for (size_t k = 0; pols && k < np; k++)
            fprintf(out, "%s%s x%lld", k ? ", " : "", pols[k], (long long)iget(applied, pols[k]));
        if (np == 0)
            fprintf(out, "not known");
        free(pols);
    }
    fprintf(out, "\nSensitivity class: %s\n",
            sget(summary, "sensitivity") ? sget(summary, "sensitivity") : "unknown");
    e = json_object_get(totals, "local_share");
    if (fig_value(e, "value", &x))
        fprintf(out, "Local memory (job): %.0f%% (weighted by %s over %lld node%s)\n", x * 100,
                sget(e, "weighting") ? sget(e, "weighting") : "time", (long long)iget(e, "nodes"),
                iget(e, "nodes") == 1 ? "" : "s");
    else
        fprintf(out, "Local memory (job): unavailable (%s)\n",
                sget(e, "unavailable") ? sget(e, "unavailable") : "not kept");
    human_bytes((double)iget(totals, "pages_moved_bytes"), human, sizeof(human));
    fprintf(out, "Pages moved: %s in %lld migration request%s\n", human,
            (long long)iget(totals, "migration_requests"),
            iget(totals, "migration_requests") == 1 ? "" : "s");
    e = json_object_get(totals, "kernel_time_share");
    if (fig_value(e, "value", &x))
        fprintf(out, "Kernel time share: %.1f%%\n", x * 100);
    else
        fprintf(out, "Kernel time share: unavailable (%s)\n",
                sget(e, "unavailable") ? sget(e, "unavailable") : "not kept");

    for (size_t k = 0; k < n; k++)
        if ((int)strlen(keys[k]) > width)
            width = (int)strlen(keys[k]);
    if (n)
        fputc('\n', out);
    for (size_t k = 0; k < n; k++)
        print_node(out, keys[k], width, json_object_get(nodes, keys[k]));
    free(keys);

    fprintf(out, "\nAdvice:\n");
    json_array_foreach(advice, i, e)
    {
        fprintf(out, "  [%s] %s\n", sget(e, "rule"), sget(e, "text"));
    }
    json_decref(advice);
    if (json_array_size(json_object_get(summary, "missing_nodes"))) {
        fprintf(out, "Missing (no report from these nodes): ");
        print_strings(out, json_object_get(summary, "missing_nodes"));
        fputc('\n', out);
    }
    json_array_foreach(json_object_get(summary, "skipped"), i, e)
    {
        fprintf(out, "Skipped: node %s step %s: %s\n", sget(e, "node") ? sget(e, "node") : "?",
                sget(e, "step") ? sget(e, "step") : "?",
                sget(e, "reason") ? sget(e, "reason") : "?");
    }
    if (json_array_size(json_object_get(summary, "trimmed"))) {
        fprintf(out, "Trimmed to fit AdminComment: ");
        json_array_foreach(json_object_get(summary, "trimmed"), i, e)
        {
            fprintf(out, "%s%s", i ? ", " : "", sget(e, "what") ? sget(e, "what") : "?");
        }
        fputc('\n', out);
    }
    return ferror(out) ? -EIO : 0;
}

/* ---- stored form ---- */

/* Each drop returns whether it removed anything. */
static bool drop_member(json_t *s, const char *member)
{
    json_t *node;
    const char *key;
    bool dropped = false;

    json_object_foreach(json_object_get(s, "nodes"), key, node)
    {
        dropped |= json_object_del(node, member) == 0;
    }
    return dropped;
}

static bool drop_timelines(json_t *s)
{
    return drop_member(s, "timeline");
}

static bool drop_steps(json_t *s)
{
    return drop_member(s, "steps");
}

static bool drop_numa_pages(json_t *s)
{
    json_t *node;
    const char *key;
    bool dropped = false;

    dropped |= drop_member(s, "pages_peak_bytes");
    dropped |= drop_member(s, "pages_end_bytes");
    json_object_foreach(json_object_get(s, "nodes"), key, node)
    {
        json_t *m = json_object_get(node, "migrations");
        dropped |= json_object_del(m, "in_bytes") == 0;
        dropped |= json_object_del(m, "out_bytes") == 0;
    }
    return dropped;
}

static bool drop_os_details(json_t *s)
{
    json_t *node, *v;
    const char *key, *okey;
    void *tmp;
    bool dropped = false;

    json_object_foreach(json_object_get(s, "nodes"), key, node)
    {
        json_t *os = json_object_get(node, "os_interference");
        json_object_foreach_safe(os, tmp, okey, v)
        {
            if (strcmp(okey, "kernel_time_share") != 0)
                dropped |= json_object_del(os, okey) == 0;
        }
    }
    return dropped;
}

static bool drop_sources_in(json_t *j)
{
    bool dropped = false;
    json_t *v;

    if (json_is_object(j)) {
        const char *key;
        if (json_is_string(json_object_get(j, "source")))
            dropped |= json_object_del(j, "source") == 0;
        json_object_foreach(j, key, v)
        {
            dropped |= drop_sources_in(v);
        }
    } else if (json_is_array(j)) {
        size_t i;
        json_array_foreach(j, i, v)
        {
            dropped |= drop_sources_in(v);
        }
    }
    return dropped;
}

static bool drop_sources(json_t *s)
{
    return drop_sources_in(json_object_get(s, "nodes"));
}

static bool drop_node_details(json_t *s)
{
    static const char *const keep[] = {"local_share",       "step_count", "duration_s",
                                       "pages_moved_bytes", "start",      "end",
                                       "policy_requested",  "sensitivity"};
    json_t *node, *v;
    const char *key, *nkey;
    void *tmp;
    bool dropped = false;

    json_object_foreach(json_object_get(s, "nodes"), key, node)
    {
        json_object_foreach_safe(node, tmp, nkey, v)
        {
            bool kept = false;
            for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
                kept |= strcmp(nkey, keep[k]) == 0;
            if (!kept)
                dropped |= json_object_del(node, nkey) == 0;
        }
    }
    return dropped;
}

static const struct {
    const char *what;
    bool (*drop)(json_t *s);
} trim_steps[] = {
    {"timeline", drop_timelines},
    {"steps", drop_steps},
    {"numa-node-pages", drop_numa_pages},
    {"os-interference-details", drop_os_details},
    {"sources", drop_sources},
    {"node-details", drop_node_details},
};

static void record_trim(json_t *s, const char *what, long before)
{
    json_t *trimmed = ensure_array(s, "trimmed"), *t;
    size_t i;

    json_array_foreach(trimmed, i, t)
    {
        if (sget(t, "what") && strcmp(sget(t, "what"), what) == 0) {
            set_int(t, "stored_bytes_before", before);
            return;
        }
    }
    json_array_append_new(
        trimmed, json_pack("{s:s, s:I}", "what", what, "stored_bytes_before", (json_int_t)before));
}

long np_summary_fit(json_t *summary, size_t max_bytes, char **stored, struct np_err *err)
{
    size_t next = 0;
    int rc;

    if (!stored)
        return np_err_set(err, -EINVAL, "np_summary_fit needs somewhere to put the stored text");
    *stored = NULL;
    if ((rc = np_summary_check(summary, err)) != 0)
        return rc;
    if (!ensure_array(summary, "trimmed"))
        return np_err_set(err, -ENOMEM, "out of memory fitting the summary");
    for (;;) {
        char *text = NULL;
        long len = np_stored_encode(summary, &text, err);
        bool dropped = false;

        if (len < 0)
            return len;
        if ((size_t)len <= max_bytes) {
            *stored = text;
            return len;
        }
        free(text);
        while (!dropped && next < sizeof(trim_steps) / sizeof(trim_steps[0])) {
            dropped = trim_steps[next].drop(summary);
            if (dropped)
                record_trim(summary, trim_steps[next].what, len);
            next++;
        }
        if (!dropped)
            return np_err_set(err, -E2BIG,
                              "the minimal summary of job %lld (ids, totals, local share per "
                              "node) is %ld bytes stored; the limit given is %zu (AdminComment "
                              "holds 65535, NP_SUMMARY_STORED_MAX is %d)",
                              (long long)iget(summary, "job_id"), len, max_bytes,
                              NP_SUMMARY_STORED_MAX);
    }
}

/* ---- plot ---- */

static bool trimmed_has(const json_t *s, const char *what)
{
    size_t i;
    json_t *t;

    json_array_foreach(json_object_get(s, "trimmed"), i, t)
    {
        if (sget(t, "what") && strcmp(sget(t, "what"), what) == 0)
            return true;
    }
    return false;
}

/* The series @p arr's point i: a number, or none (null, absent). */
static bool point(const json_t *arr, size_t i, double *v)
{
    const json_t *x = json_array_get(arr, i);

    if (!json_is_number(x))
        return false;
    *v = json_number_value(x);
    return true;
}

static int build_points(const json_t *tl, const char *name, struct np_timeline_point *pts,
                        size_t npoints, unsigned *nnodes, struct np_err *err)
{
    const json_t *t = json_object_get(tl, "t"), *nb = json_object_get(tl, "node_bytes");
    const json_t *bw = json_object_get(tl, "bandwidth_bytes_per_s"),
                 *cpi = json_object_get(tl, "cpi");
    const char *key;
    json_t *series;

    *nnodes = 0;
    json_object_foreach(MUT(nb), key, series)
    {
        char *end;
        long n = strtol(key, &end, 10);
        if (!*key || *end || n < 0 || n >= NP_PLOT_MAX_NODES)
            return np_err_set(err, -EINVAL,
                              "%s's timeline has node_bytes for NUMA node '%s': accepted are 0 to "
                              "%d",
                              name, key, NP_PLOT_MAX_NODES - 1);
        if (!json_is_array(series) || json_array_size(series) != npoints)
            return np_err_set(err, -EINVAL, "%s's timeline node_bytes.%s has %zu points; t has %zu",
                              name, key, json_array_size(series), npoints);
        if ((unsigned)n + 1 > *nnodes)
            *nnodes = (unsigned)n + 1;
    }
    if (*nnodes == 0)
        return np_err_set(err, -ENODATA,
                          "the report has no timeline: %s's timeline has no memory per NUMA node",
                          name);
    for (size_t i = 0; i < npoints; i++) {
        double v;
        if (!point(t, i, &pts[i].t))
            return np_err_set(err, -EINVAL, "%s's timeline t[%zu] is not a number", name, i);
        json_object_foreach(MUT(nb), key, series)
        {
            if (point(series, i, &v) && v > 0)
                pts[i].bytes_on_node[strtol(key, NULL, 10)] = (uint64_t)v;
        }
        pts[i].bandwidth_ok = point(bw, i, &pts[i].bandwidth);
        pts[i].cpi_ok = point(cpi, i, &pts[i].cpi);
    }
    return 0;
}

int np_summary_plot(const json_t *summary, const char *node, const char *path, struct np_err *err)
{
    const json_t *nodes = json_object_get(summary, "nodes"), *n, *tl, *events, *ev;
    struct np_timeline_point *pts = NULL;
    struct np_timeline_event *evs = NULL;
    struct np_timeline timeline = {0};
    size_t npoints, nevents = 0, i;
    char title[160];
    int rc = np_summary_check(summary, err);

    if (rc)
        return rc;
    if (!node) {
        size_t count = 0;
        const char **keys = sorted_keys(nodes, &count);
        if (!keys)
            return np_err_set(err, -ENOMEM, "out of memory");
        node = count ? keys[0] : NULL;
        free(keys);
        if (!node)
            return np_err_set(err, -ENODATA,
                              "the report has no timeline: the summary of job %lld has no node "
                              "reports",
                              (long long)iget(summary, "job_id"));
    }
    n = json_object_get(nodes, node);
    if (!n) {
        char list[256] = "";
        size_t count = 0, o = 0;
        const char **keys = sorted_keys(nodes, &count);
        for (size_t k = 0; keys && k < count; k++) {
            int w = snprintf(list + o, sizeof(list) - o, "%s%s", k ? ", " : "", keys[k]);
            if (w < 0 || (size_t)w >= sizeof(list) - o)
                break;
            o += (size_t)w;
        }
        free(keys);
        return np_err_set(err, -ENOENT, "no node '%s' in the summary of job %lld: it has %s", node,
                          (long long)iget(summary, "job_id"), list[0] ? list : "no nodes");
    }
    tl = json_object_get(n, "timeline");
    if (!json_is_object(tl))
        return np_err_set(err, -ENODATA, "the report has no timeline: %s",
                          trimmed_has(summary, "timeline")
                              ? "timelines were trimmed to fit the summary into AdminComment"
                              : "the node's reports were written without one (an older numaplace)");
    npoints = json_array_size(json_object_get(tl, "t"));
    if (npoints == 0)
        return np_err_set(err, -ENODATA, "the report has no timeline: %s's timeline has no points",
                          node);
    pts = calloc(npoints, sizeof(*pts));
    if (!pts)
        return np_err_set(err, -ENOMEM, "out of memory plotting %zu points", npoints);
    rc = build_points(tl, node, pts, npoints, &timeline.nnodes, err);
    if (rc)
        goto out;
    events = json_object_get(tl, "events");
    if (json_array_size(events)) {
        evs = calloc(json_array_size(events), sizeof(*evs));
        if (!evs) {
            rc = np_err_set(err, -ENOMEM, "out of memory plotting events");
            goto out;
        }
        json_array_foreach(MUT(events), i, ev)
        {
            if (!json_is_number(json_object_get(ev, "t")))
                continue;
            evs[nevents].t = nget(ev, "t", 0);
            snprintf(evs[nevents].label, sizeof(evs[nevents].label), "%s",
                     sget(ev, "label") ? sget(ev, "label") : "migration");
            nevents++;
        }
    }
    snprintf(title, sizeof(title), "job %lld on %s, step %s", (long long)iget(summary, "job_id"),
             node, sget(tl, "step") ? sget(tl, "step") : "?");
    timeline.title = title;
    timeline.points = pts;
    timeline.npoints = npoints;
    timeline.events = evs;
    timeline.nevents = nevents;
    timeline.bandwidth_note = sget(tl, "bandwidth_note");
    timeline.cpi_note = sget(tl, "cpi_note");
    rc = np_plot_timeline(&timeline, path, err);
out:
    free(pts);
    free(evs);
    return rc;
}
