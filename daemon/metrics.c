/* numaplaced's Prometheus page (see metrics.h). */
#include "metrics.h"
#include "user_names.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon.h"
#include "migration.h"
#include "numaplace/procfs.h"
#include "numaplace/step.h"
#include "registry.h"

static void grow(struct metrics_text *t, size_t more)
{
    size_t cap = t->cap ? t->cap : 4096;
    char *buf;

    if (t->oom || t->len + more + 1 <= t->cap)
        return;
    while (cap < t->len + more + 1)
        cap *= 2;
    buf = realloc(t->buf, cap);
    if (!buf) {
        t->oom = true;
        return;
    }
    t->buf = buf;
    t->cap = cap;
}

static void put(struct metrics_text *t, const char *s, size_t n)
{
    grow(t, n);
    if (t->oom)
        return;
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

static void putf(struct metrics_text *t, const char *fmt, ...) NP_PRINTF(2, 3);
static void putf(struct metrics_text *t, const char *fmt, ...)
{
    va_list ap, again;
    int n;

    va_start(ap, fmt);
    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n >= 0)
        grow(t, (size_t)n);
    if (n >= 0 && !t->oom) {
        vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, again);
        t->len += (size_t)n;
    }
    va_end(again);
}

/* Length of the valid UTF-8 sequence at @p s (1 to 4), or 0. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n;
    unsigned min;

    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0)
        n = 2, min = 0x80;
    else if ((s[0] & 0xf0) == 0xe0)
        n = 3, min = 0x800;
    else if ((s[0] & 0xf8) == 0xf0)
        n = 4, min = 0x10000;
    else
        return 0;
    unsigned cp = s[0] & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    return cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : n;
}

void metrics_append_label_value(struct metrics_text *t, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        const size_t n = utf8_len(p);
        if (*p == '\\' || *p == '"')
            put(t, *p == '\\' ? "\\\\" : "\\\"", 2);
        else if (*p == '\n')
            put(t, "\\n", 2);
        else if (n == 0 || *p < 0x20 || *p == 0x7f)
            put(t, "?", 1);
        else {
            put(t, (const char *)p, n);
            p += n;
            continue;
        }
        p++;
    }
}

/* HELP and TYPE of one family (its samples must follow at once: one group per family). */
static void family(struct metrics_text *t, const char *name, const char *type, const char *help)
{
    putf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{k1="v1",...} opened; labels appended with label(); closed by value_*(). */
static void series(struct metrics_text *t, const char *name)
{
    put(t, name, strlen(name));
}

static void label(struct metrics_text *t, bool first, const char *key, const char *value)
{
    putf(t, "%s%s=\"", first ? "{" : ",", key);
    metrics_append_label_value(t, value);
    put(t, "\"", 1);
}

static void value_u64(struct metrics_text *t, bool labelled, uint64_t v)
{
    putf(t, "%s %" PRIu64 "\n", labelled ? "}" : "", v);
}

static void value_f(struct metrics_text *t, bool labelled, double v)
{
    if (isnan(v))
        putf(t, "%s NaN\n", labelled ? "}" : "");
    else if (isinf(v))
        putf(t, "%s %sInf\n", labelled ? "}" : "", v > 0 ? "+" : "-");
    else
        putf(t, "%s %.10g\n", labelled ? "}" : "", v);
}

/* The step's identity labels, opened: jobid, step, user. */
static void step_labels(struct metrics_text *t, const char *name, const struct np_daemon_job *j)
{
    char jobid[16];

    snprintf(jobid, sizeof(jobid), "%u", j->meta.job_id);
    series(t, name);
    label(t, true, "jobid", jobid);
    label(t, false, "step", np_step_name(j->meta.step_id));
    label(t, false, "user", j->user);
}

static void node_numbers(const struct np_daemon *d, unsigned *os, unsigned *count)
{
    const unsigned n = d->topology ? np_topology_node_count(d->topology) : 1;

    *count = 0;
    for (unsigned i = 0; i < n && *count < NP_SAMPLE_MAX_NODES; i++) {
        const unsigned o = d->topology ? np_topology_node(d->topology, i)->os_index : i;
        if (o < NP_SAMPLE_MAX_NODES)
            os[(*count)++] = o;
    }
}

static void render_node_memory(const struct np_daemon *d, struct metrics_text *t,
                               const unsigned *os, unsigned count)
{
    uint64_t total[NP_SAMPLE_MAX_NODES], free_b[NP_SAMPLE_MAX_NODES];
    bool have[NP_SAMPLE_MAX_NODES];
    char node[16];

    for (unsigned i = 0; i < count; i++)
        have[i] = np_node_meminfo(d->cfg.proc_root, os[i], &total[i], &free_b[i], NULL) == 0;
    family(t, "numaplace_node_memory_total_bytes", "gauge",
           "Memory of each NUMA node (its meminfo MemTotal).");
    for (unsigned i = 0; i < count; i++)
        if (have[i]) {
            snprintf(node, sizeof(node), "%u", os[i]);
            series(t, "numaplace_node_memory_total_bytes");
            label(t, true, "node", node);
            value_u64(t, true, total[i]);
        }
    family(t, "numaplace_node_memory_free_bytes", "gauge",
           "Free memory of each NUMA node (its meminfo MemFree).");
    for (unsigned i = 0; i < count; i++)
        if (have[i]) {
            snprintf(node, sizeof(node), "%u", os[i]);
            series(t, "numaplace_node_memory_free_bytes");
            label(t, true, "node", node);
            value_u64(t, true, free_b[i]);
        }
}

/* Per memory node: the traffic it serves (its controllers' counters, or each job's bandwidth spread
 * over the nodes that hold its pages: the figures `numaplace status` shows), with its source; a
 * node whose figure is a proxy or unavailable has no series (a proxy is a rank, not bytes/s). */
static void render_node_bandwidth(const struct np_daemon *d, struct metrics_text *t)
{
    json_t *traffic = migration_node_traffic_json(d), *entry;
    size_t i;
    char node[16];

    if (!traffic)
        t->oom = true;
    family(t, "numaplace_node_bandwidth_bytes_per_second", "gauge",
           "Memory traffic each NUMA node serves over the last interval (its memory controllers' "
           "counters, or its jobs' bandwidth by their pages there), with its source; absent when "
           "not measured.");
    json_array_foreach(traffic, i, entry)
    {
        json_int_t n;
        const char *source;
        double bytes_per_s;
        if (json_unpack(entry, "{s:I, s:s, s:F}", "node", &n, "source", &source, "bytes_per_s",
                        &bytes_per_s) < 0)
            continue; /* proxy or unavailable */
        snprintf(node, sizeof(node), "%lld", (long long)n);
        series(t, "numaplace_node_bandwidth_bytes_per_second");
        label(t, true, "node", node);
        label(t, false, "source", source);
        value_f(t, true, bytes_per_s);
    }
    json_decref(traffic);
}

static double process_cpu_s(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) < 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void render_helper(const struct np_daemon *d, struct metrics_text *t)
{
    const struct np_daemon_totals *tot = &d->totals;

    family(t, "numaplace_counters_available", "gauge",
           "1 when the hardware counters behind CPI and bandwidth (cycles, instructions, LLC "
           "misses) count on this node, else 0.");
    series(t, "numaplace_counters_available");
    value_u64(t, false, d->hw_counters ? 1 : 0);
    family(t, "numaplace_counters_info", "gauge",
           "Why hardware counters are unavailable (reason empty when available).");
    series(t, "numaplace_counters_info");
    label(t, true, "reason", d->hw_counters ? "" : d->hw_off_reason);
    value_u64(t, true, 1);
    family(t, "numaplace_pages_moved_total", "counter",
           "Base pages numaplaced moved, by trigger and migration order.");
    for (int tr = 0; tr < NP_TRIGGER_COUNT; tr++)
        for (int o = 0; o < NPD_MAX_ORDERS && np_order_at((size_t)o); o++) {
            series(t, "numaplace_pages_moved_total");
            label(t, true, "trigger", np_trigger_name((enum np_trigger_kind)tr));
            label(t, false, "order", np_order_at((size_t)o)->name);
            value_u64(t, true, tot->pages_moved[tr][o]);
        }
    family(t, "numaplace_migration_requests_total", "counter",
           "Migration requests finished, by trigger and outcome.");
    for (int tr = 0; tr < NP_TRIGGER_COUNT; tr++)
        for (int o = 0; o < NP_OUTCOME_COUNT; o++) {
            series(t, "numaplace_migration_requests_total");
            label(t, true, "trigger", np_trigger_name((enum np_trigger_kind)tr));
            label(t, false, "outcome", np_request_outcome_name((enum np_request_outcome)o));
            value_u64(t, true, tot->requests[tr][o]);
        }
    family(t, "numaplace_failed_pages_total", "counter",
           "Base pages that would not move, by cause.");
    for (int f = 0; f < NP_MOVE_FAIL_COUNT; f++) {
        series(t, "numaplace_failed_pages_total");
        label(t, true, "cause", np_move_failure_name((enum np_move_failure)f));
        value_u64(t, true, tot->failed_pages[f]);
    }
    family(t, "numaplace_helper_cpu_seconds_total", "counter",
           "CPU time numaplaced used (all its threads).");
    series(t, "numaplace_helper_cpu_seconds_total");
    value_f(t, false, process_cpu_s());
    family(t, "numaplace_sampling_seconds_total", "counter",
           "CPU time numaplaced spent sampling steps and the node.");
    series(t, "numaplace_sampling_seconds_total");
    value_f(t, false, tot->sampling_cpu_s);
    family(t, "numaplace_samples_total", "counter", "Step samples taken.");
    series(t, "numaplace_samples_total");
    value_u64(t, false, tot->samples);
    family(t, "numaplace_steps", "gauge", "Job steps tracked now.");
    series(t, "numaplace_steps");
    value_u64(t, false, d->registry.count);
    family(t, "numaplace_scrape_render_seconds", "gauge", "Time the previous page took to render.");
    series(t, "numaplace_scrape_render_seconds");
    value_f(t, false, d->metrics_render_s);
}

/* Never looked up here: the name a thread found since the step registered (user_names.h), its
 * uid's number until then. */
static void resolve_user(struct np_daemon_job *j)
{
    if (j->user_known)
        return;
    j->user_known = user_name_get(j->meta.uid, j->user, sizeof(j->user));
    if (j->user_known)
        return;
    snprintf(j->user, sizeof(j->user), "%u", (unsigned)j->meta.uid);
    user_name_want(j->meta.uid); /* asked already at registration, unless restored from disk */
}

static void render_steps(struct np_daemon *d, struct metrics_text *t, const unsigned *os,
                         unsigned count)
{
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    const struct np_registry *r = &d->registry;
    char node[16];

    for (unsigned i = 0; i < r->count; i++)
        resolve_user(registry_at(r, i));
    family(t, "numaplace_step_pages", "gauge",
           "Base pages of a running step on each NUMA node (last numa_maps reading).");
    for (unsigned i = 0; i < r->count; i++) {
        const struct np_daemon_job *j = registry_at(r, i);
        if (j->ended || !j->stats.page_samples)
            continue;
        for (unsigned n = 0; n < count; n++) {
            snprintf(node, sizeof(node), "%u", os[n]);
            step_labels(t, "numaplace_step_pages", j);
            label(t, false, "node", node);
            value_u64(t, true, j->stats.pages_end[os[n]] / page);
        }
    }
    family(t, "numaplace_step_local_ratio", "gauge",
           "Share (0..1) of a running step's pages on its CPUs' NUMA nodes.");
    for (unsigned i = 0; i < r->count; i++) {
        const struct np_daemon_job *j = registry_at(r, i);
        if (j->ended || !j->stats.local_nodes || !j->stats.local_share_readings)
            continue;
        step_labels(t, "numaplace_step_local_ratio", j);
        value_f(t, true, j->stats.local_share_last);
    }
    family(t, "numaplace_step_info", "gauge", "A running step's class and placement policy.");
    for (unsigned i = 0; i < r->count; i++) {
        const struct np_daemon_job *j = registry_at(r, i);
        if (j->ended)
            continue;
        step_labels(t, "numaplace_step_info", j);
        label(t, false, "class", np_class_name(j->job_class));
        label(t, false, "policy",
              j->meta.policy_requested[0] ? j->meta.policy_requested : "unknown");
        value_u64(t, true, 1);
    }
    family(t, "numaplace_step_cycles_per_instruction", "gauge",
           "A running step's cycles per instruction over the last interval, where measured.");
    for (unsigned i = 0; i < r->count; i++) {
        const struct np_daemon_job *j = registry_at(r, i);
        if (j->ended || !j->stats.ncpi)
            continue;
        step_labels(t, "numaplace_step_cycles_per_instruction", j);
        value_f(t, true, j->stats.cpi[j->stats.ncpi - 1]);
    }
    family(t, "numaplace_step_bandwidth_bytes_per_second", "gauge",
           "A running step's memory bandwidth (LLC misses x 64 B) over the last interval, where "
           "measured.");
    for (unsigned i = 0; i < r->count; i++) {
        const struct np_daemon_job *j = registry_at(r, i);
        if (j->ended || !j->stats.bw_intervals)
            continue;
        step_labels(t, "numaplace_step_bandwidth_bytes_per_second", j);
        value_f(t, true, j->stats.bw_last_total);
    }
}

int metrics_render(struct np_daemon *d, struct metrics_text *text)
{
    unsigned os[NP_SAMPLE_MAX_NODES], count;

    memset(text, 0, sizeof(*text));
    node_numbers(d, os, &count);
    render_node_memory(d, text, os, count);
    render_node_bandwidth(d, text);
    render_helper(d, text);
    render_steps(d, text, os, count);
    if (text->oom) {
        free(text->buf);
        memset(text, 0, sizeof(*text));
        return -ENOMEM;
    }
    return 0;
}
