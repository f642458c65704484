/* Samples to job reports: the arithmetic of docs/report-schema.md, and the trace replay. */
#include "numaplace/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CACHE_LINE_BYTES 64.0 /* the model: bandwidth = LLC misses x 64 B / interval */

#define SRC_PROC_STAT "proc: /proc/<pid>/stat of the job's live processes at the last sample"
#define SRC_PROC_CS   "proc: /proc/<pid>/status (every thread) of the job's live processes"
#define SRC_NUMA_MAPS "proc: /proc/<pid>/numa_maps (anonymous and file-backed, page size honoured)"
#define SRC_IRQ       "proc: /proc/interrupts and /proc/softirqs, delta over the job's CPUs"
#define SRC_OTHER_CPU "proc: /proc/stat busy time of the job's CPUs minus the job's own CPU time"
#define SRC_BALANCING                                                                              \
    "proc: /proc/<pid>/sched numa_pages_migrated and total_numa_faults (main threads) at the "     \
    "last sample"
#define SRC_CPI "perf: perf::CYCLES / perf::INSTRUCTIONS per interval, tasks and children"
#define SRC_BANDWIDTH                                                                              \
    "perf: (perf::LLC-LOAD-MISSES + perf::LLC-STORE-MISSES) x 64 B / interval, attributed to "     \
    "the node of the CPUs each task ran on"

int np_jobstats_init(struct np_jobstats *js)
{
    memset(js, 0, sizeof(*js));
    return 0;
}

void np_jobstats_fini(struct np_jobstats *js)
{
    if (!js)
        return;
    free(js->cpi);
    js->cpi = NULL;
    json_decref(js->migration_requests);
    js->migration_requests = NULL;
    js->ncpi = js->cpi_cap = 0;
    free(js->timeline);
    js->timeline = NULL;
    js->ntimeline = 0;
}

void np_jobstats_event(struct np_jobstats *js, double t, const char *label)
{
    if (js->nevents >= NP_TIMELINE_MAX_EVENTS)
        return;
    js->events[js->nevents].t = t;
    snprintf(js->events[js->nevents].label, sizeof(js->events[0].label), "%s", label);
    js->nevents++;
}

_Static_assert(NP_SAMPLE_MAX_NODES <= 64, "local_nodes is a 64-bit mask over the sample's nodes");

/* Time-weighted local share: each numa_maps reading holds until the next one. */
static void add_local_share(struct np_jobstats *js, const struct np_sample *s)
{
    uint64_t local = 0, total = 0;

    if (!js->local_nodes)
        return;
    for (int n = 0; n < NP_SAMPLE_MAX_NODES; n++) {
        total += s->node_bytes[n];
        if (js->local_nodes >> n & 1)
            local += s->node_bytes[n];
    }
    if (total == 0)
        return;
    if (js->local_share_readings) {
        js->local_share_weighted += js->local_share_last * (s->t - js->local_share_t);
        js->local_share_time += s->t - js->local_share_t;
    }
    js->local_share_last = (double)local / (double)total;
    js->local_share_t = s->t;
    js->local_share_readings++;
}

/* One point per sample until the timeline is full; then every other point goes and only every
 * stride-th later sample is kept, so the whole run stays covered in bounded memory. */
static int add_timeline_point(struct np_jobstats *js, double t, double bandwidth, double cpi)
{
    struct np_jobstats_point *p;

    if (js->timeline_stride == 0)
        js->timeline_stride = 1;
    if (++js->timeline_skipped < js->timeline_stride)
        return 0;
    js->timeline_skipped = 0;
    if (!js->timeline) {
        js->timeline = malloc(NP_TIMELINE_MAX_POINTS * sizeof(*js->timeline));
        if (!js->timeline)
            return -ENOMEM;
    }
    if (js->ntimeline == NP_TIMELINE_MAX_POINTS) {
        for (size_t i = 0; i < NP_TIMELINE_MAX_POINTS / 2; i++)
            js->timeline[i] = js->timeline[2 * i];
        js->ntimeline = NP_TIMELINE_MAX_POINTS / 2;
        js->timeline_stride *= 2;
    }
    p = &js->timeline[js->ntimeline++];
    p->t = t;
    for (int n = 0; n < NP_TIMELINE_MAX_NODES; n++)
        p->node_bytes[n] = js->page_samples ? js->pages_end[n] : 0;
    p->bandwidth = bandwidth;
    p->cpi = cpi;
    return 0;
}

static int push_cpi(struct np_jobstats *js, double cpi)
{
    if (js->ncpi == js->cpi_cap) {
        size_t cap = js->cpi_cap ? js->cpi_cap * 2 : 64;
        double *grown = realloc(js->cpi, cap * sizeof(*grown));
        if (!grown)
            return -ENOMEM;
        js->cpi = grown;
        js->cpi_cap = cap;
    }
    js->cpi[js->ncpi++] = cpi;
    return 0;
}

int np_jobstats_add(struct np_jobstats *js, const struct np_sample *s)
{
    const struct np_sample *p = &js->last;
    double dt, interval_cpi = -1, interval_bw = -1;

    if (js->samples && s->t < js->last.t)
        return -EINVAL;
    if (js->samples == 0)
        js->first = *s;
    dt = js->samples ? s->t - p->t : 0;
    if (js->samples && dt > 0) {
        const int cyc = NP_PERF_CYCLES, ins = NP_PERF_INSTRUCTIONS;
        if (s->have_perf[cyc] && s->have_perf[ins] && p->have_perf[cyc] && p->have_perf[ins] &&
            s->perf[ins] > p->perf[ins] && s->perf[cyc] >= p->perf[cyc]) {
            interval_cpi =
                (double)(s->perf[cyc] - p->perf[cyc]) / (double)(s->perf[ins] - p->perf[ins]);
            if (push_cpi(js, interval_cpi) < 0)
                return -ENOMEM;
        }
        if (s->have_misses_by_node && p->have_misses_by_node) {
            double total = 0;
            for (int n = 0; n < NP_SAMPLE_MAX_NODES; n++) {
                double bw = s->misses_by_node[n] >= p->misses_by_node[n]
                                ? (double)(s->misses_by_node[n] - p->misses_by_node[n]) *
                                      CACHE_LINE_BYTES / dt
                                : 0;
                js->bw_sum[n] += bw;
                js->bw_last[n] = bw;
                if (bw > js->bw_peak[n])
                    js->bw_peak[n] = bw;
                total += bw;
            }
            js->bw_total_sum += total;
            js->bw_last_total = total;
            interval_bw = total;
            if (total > js->bw_total_peak)
                js->bw_total_peak = total;
            js->bw_intervals++;
        }
    }
    if (s->have_pages) {
        uint64_t total = 0;
        if (js->page_samples == 0)
            memcpy(js->pages_start, s->node_bytes, sizeof(js->pages_start));
        memcpy(js->pages_end, s->node_bytes, sizeof(js->pages_end));
        for (int n = 0; n < NP_SAMPLE_MAX_NODES; n++) {
            if (s->node_bytes[n] > js->pages_peak[n])
                js->pages_peak[n] = s->node_bytes[n];
            total += s->node_bytes[n];
        }
        if (total > js->pages_peak_total)
            js->pages_peak_total = total;
        js->page_samples++;
        add_local_share(js, s);
    }
    if (add_timeline_point(js, s->t, interval_bw, interval_cpi) < 0)
        return -ENOMEM;
    if (s->have_proc && s->processes > 0) {
        if (js->proc_samples++ == 0)
            js->first_proc = *s;
        js->last_proc = *s;
    }
    if (s->have_proc && s->have_cs && s->processes > 0) {
        const int k = js->cs_samples++ ? 1 : 0;
        js->cs_t[k] = s->t;
        js->involuntary_cs[k] = s->involuntary_cs;
        if (k == 0) {
            js->cs_t[1] = s->t;
            js->involuntary_cs[1] = s->involuntary_cs;
        }
    }
    if (s->have_irq) {
        const int k = js->irq_samples++ ? 1 : 0;
        js->irq_t[k] = s->t;
        js->interrupts[k] = s->interrupts;
        js->softirqs[k] = s->softirqs;
        if (k == 0) {
            js->irq_t[1] = s->t;
            js->interrupts[1] = s->interrupts;
            js->softirqs[1] = s->softirqs;
        }
    }
    if (s->have_cpu_busy && s->have_proc && s->processes > 0) {
        const int k = js->busy_samples++ ? 1 : 0;
        js->busy_t[k] = s->t;
        js->busy_s[k] = s->cpus_busy_s;
        js->own_s[k] = s->utime_s + s->stime_s;
        if (k == 0) {
            js->busy_t[1] = s->t;
            js->busy_s[1] = s->cpus_busy_s;
            js->own_s[1] = js->own_s[0];
        }
    }
    if (s->have_balancing) {
        js->balancing_samples++;
        js->balancing_pages_migrated = s->balancing_pages_migrated;
        js->balancing_faults = s->balancing_faults;
    }
    if (js->samples)
        js->prev = js->last;
    js->last = *s;
    js->samples++;
    return 0;
}

/* ---- figures: {"value", "unit", "source"} or {"unavailable", "source"} ---- */

static json_t *figure(double value, const char *unit, const char *source)
{
    return json_pack("{s:f, s:s, s:s}", "value", value, "unit", unit, "source", source);
}

static json_t *count_figure(uint64_t value, const char *unit, const char *source)
{
    return json_pack("{s:I, s:s, s:s}", "value", (json_int_t)value, "unit", unit, "source", source);
}

static json_t *missing(const char *reason, const char *source)
{
    return json_pack("{s:s, s:s}", "unavailable", reason && reason[0] ? reason : "not measured",
                     "source", source);
}

static json_t *node_bytes(const uint64_t *values)
{
    json_t *obj = json_object();

    for (int n = 0; obj && n < NP_SAMPLE_MAX_NODES; n++)
        if (values[n]) {
            char key[8];
            snprintf(key, sizeof(key), "%d", n);
            json_object_set_new(obj, key, json_integer((json_int_t)values[n]));
        }
    return obj;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static double percentile(const double *sorted, size_t n, double pct)
{
    size_t rank = (size_t)ceil(pct / 100.0 * (double)n);
    return sorted[rank ? rank - 1 : 0];
}

static json_t *cpi_figure(const struct np_jobstats *js)
{
    const struct np_sample *l = &js->last;
    double *sorted, sum = 0;
    json_t *obj;

    if (js->ncpi == 0) {
        const char *why = !l->have_perf[NP_PERF_CYCLES] ? l->perf_reason[NP_PERF_CYCLES]
                          : !l->have_perf[NP_PERF_INSTRUCTIONS]
                              ? l->perf_reason[NP_PERF_INSTRUCTIONS]
                              : "fewer than two samples with "
                                "instructions retired";
        return missing(why, SRC_CPI);
    }
    sorted = malloc(js->ncpi * sizeof(*sorted));
    if (!sorted)
        return NULL;
    memcpy(sorted, js->cpi, js->ncpi * sizeof(*sorted));
    qsort(sorted, js->ncpi, sizeof(*sorted), cmp_double);
    for (size_t i = 0; i < js->ncpi; i++)
        sum += sorted[i];
    obj = json_pack("{s:f, s:f, s:f, s:i, s:s}", "mean", sum / (double)js->ncpi, "median",
                    percentile(sorted, js->ncpi, 50), "p95", percentile(sorted, js->ncpi, 95),
                    "intervals", (int)js->ncpi, "source", SRC_CPI);
    free(sorted);
    return obj;
}

static json_t *bandwidth_figure(const struct np_jobstats *js)
{
    const struct np_sample *l = &js->last;
    json_t *per_node, *obj;

    if (js->bw_intervals == 0) {
        const char *why =
            !l->have_perf[NP_PERF_LLC_LOAD_MISSES]    ? l->perf_reason[NP_PERF_LLC_LOAD_MISSES]
            : !l->have_perf[NP_PERF_LLC_STORE_MISSES] ? l->perf_reason[NP_PERF_LLC_STORE_MISSES]
                                                      : "fewer than two samples with LLC misses";
        return missing(why, SRC_BANDWIDTH);
    }
    per_node = json_object();
    for (int n = 0; per_node && n < NP_SAMPLE_MAX_NODES; n++)
        if (js->bw_peak[n] > 0) {
            char key[8];
            snprintf(key, sizeof(key), "%d", n);
            json_object_set_new(per_node, key,
                                json_pack("{s:f, s:f}", "mean_bytes_per_s",
                                          js->bw_sum[n] / js->bw_intervals, "peak_bytes_per_s",
                                          js->bw_peak[n]));
        }
    obj = json_pack("{s:o, s:f, s:f, s:i, s:s}", "per_node", per_node, "mean_bytes_per_s",
                    js->bw_total_sum / js->bw_intervals, "peak_bytes_per_s", js->bw_total_peak,
                    "intervals", (int)js->bw_intervals, "source", SRC_BANDWIDTH);
    return obj;
}

static json_t *perf_counts(const struct np_jobstats *js)
{
    json_t *obj = json_object();

    for (int e = 0; obj && e < NP_PERF_NEVENTS; e++) {
        const char *src = np_perf_event_name((enum np_perf_event)e);
        char source[96];

        snprintf(source, sizeof(source), "perf: %s, tasks and children", src);
        json_object_set_new(
            obj, np_perf_event_label((enum np_perf_event)e),
            js->last.have_perf[e]
                ? count_figure(js->last.perf[e], e == NP_PERF_TASK_CLOCK ? "ns" : "events", source)
                : missing(js->last.perf_reason[e], source));
    }
    return obj;
}

static json_t *os_interference(const struct np_jobstats *js)
{
    const struct np_sample *l = &js->last_proc;
    const double irq_span = js->irq_t[1] - js->irq_t[0];
    const double busy_span = js->busy_t[1] - js->busy_t[0];
    json_t *obj = json_object();
    const char *proc_why = js->last.proc_reason[0] ? js->last.proc_reason : "no /proc sample";

    if (!obj)
        return NULL;
    if (js->proc_samples && l->utime_s + l->stime_s > 0)
        json_object_set_new(obj, "kernel_time_share",
                            figure(l->stime_s / (l->utime_s + l->stime_s), "fraction",
                                   "proc: stime / (utime + stime) of the job's processes"));
    else
        json_object_set_new(obj, "kernel_time_share",
                            missing(js->proc_samples ? "no CPU time used yet" : proc_why,
                                    "proc: stime / (utime + stime)"));
    if (js->cs_samples >= 2 && js->cs_t[1] > js->cs_t[0])
        json_object_set_new(obj, "involuntary_cs_per_s",
                            figure((double)(js->involuntary_cs[1] >= js->involuntary_cs[0]
                                                ? js->involuntary_cs[1] - js->involuntary_cs[0]
                                                : 0) /
                                       (js->cs_t[1] - js->cs_t[0]),
                                   "1/s", SRC_PROC_CS));
    else
        json_object_set_new(obj, "involuntary_cs_per_s",
                            missing(js->proc_samples ? "fewer than two readings of the context "
                                                       "switches (read every detail interval)"
                                                     : proc_why,
                                    SRC_PROC_CS));
    if (js->irq_samples >= 2 && irq_span > 0) {
        uint64_t irq = js->interrupts[1] - js->interrupts[0];
        uint64_t soft = js->softirqs[1] - js->softirqs[0];
        json_object_set_new(obj, "interrupts_on_cpus",
                            json_pack("{s:I, s:f, s:s}", "count", (json_int_t)irq, "per_s",
                                      (double)irq / irq_span, "source", SRC_IRQ));
        json_object_set_new(obj, "softirqs_on_cpus",
                            json_pack("{s:I, s:f, s:s}", "count", (json_int_t)soft, "per_s",
                                      (double)soft / irq_span, "source", SRC_IRQ));
    } else {
        const char *why = js->last.irq_reason[0] ? js->last.irq_reason : "fewer than two samples";
        json_object_set_new(obj, "interrupts_on_cpus", missing(why, SRC_IRQ));
        json_object_set_new(obj, "softirqs_on_cpus", missing(why, SRC_IRQ));
    }
    if (js->busy_samples >= 2 && busy_span > 0) {
        double busy = js->busy_s[1] - js->busy_s[0], own = js->own_s[1] - js->own_s[0];
        json_object_set_new(obj, "other_cpu_time_s",
                            figure(busy > own ? busy - own : 0, "s", SRC_OTHER_CPU));
    } else {
        json_object_set_new(obj, "other_cpu_time_s",
                            missing(js->last.cpu_busy_reason[0] ? js->last.cpu_busy_reason
                                                                : "fewer than two samples",
                                    SRC_OTHER_CPU));
    }
    return obj;
}

#define SRC_LOCAL_SHARE                                                                            \
    "numa_maps: bytes on the NUMA nodes of the step's CPUs / all its bytes, each reading "         \
    "weighted "                                                                                    \
    "by how long it held"

/* The share of the job's pages on its CPUs' nodes over the run, or why it is not known. */
static json_t *local_share_figure(const struct np_jobstats *js)
{
    double weighted = js->local_share_weighted, span = js->local_share_time;

    if (!js->local_nodes)
        return missing("the NUMA nodes of the step's CPUs are not known", SRC_LOCAL_SHARE);
    if (js->local_share_readings == 0)
        return missing(js->page_samples ? "the job had no pages at any reading"
                                        : (js->last.pages_reason[0] ? js->last.pages_reason
                                                                    : "numa_maps never read"),
                       SRC_LOCAL_SHARE);
    /* the last reading holds until the last sample */
    if (js->last.t > js->local_share_t) {
        weighted += js->local_share_last * (js->last.t - js->local_share_t);
        span += js->last.t - js->local_share_t;
    }
    return figure(span > 0 ? weighted / span : js->local_share_last, "fraction", SRC_LOCAL_SHARE);
}

static json_t *node_list(uint64_t mask)
{
    json_t *arr = json_array();

    for (int n = 0; arr && n < 64; n++)
        if (mask >> n & 1)
            json_array_append_new(arr, json_integer(n));
    return arr;
}

/* Why a figure is unavailable, as a note beside the timeline (@p fig is stolen). */
static void set_note(json_t *obj, const char *key, json_t *fig)
{
    const char *why = json_string_value(json_object_get(fig, "unavailable"));

    if (why)
        json_object_set_new(obj, key, json_string(why));
    json_decref(fig);
}

/* The bounded timeline: parallel arrays, null where a figure was not measured. */
static json_t *timeline_json(const struct np_jobstats *js)
{
    json_t *t = json_array(), *bw = json_array(), *cpi = json_array(), *nodes = json_object();
    json_t *events = json_array(), *obj;
    uint64_t seen = 0;

    for (size_t i = 0; i < js->ntimeline; i++)
        for (int n = 0; n < NP_TIMELINE_MAX_NODES; n++)
            if (js->timeline[i].node_bytes[n])
                seen |= 1ull << n;
    for (int n = 0; nodes && n < NP_TIMELINE_MAX_NODES; n++)
        if (seen >> n & 1) {
            char key[8];
            json_t *arr = json_array();
            snprintf(key, sizeof(key), "%d", n);
            for (size_t i = 0; arr && i < js->ntimeline; i++)
                json_array_append_new(arr, json_integer((json_int_t)js->timeline[i].node_bytes[n]));
            json_object_set_new(nodes, key, arr);
        }
    for (size_t i = 0; i < js->ntimeline; i++) {
        const struct np_jobstats_point *p = &js->timeline[i];
        json_array_append_new(t, json_real(p->t));
        json_array_append_new(bw, p->bandwidth >= 0 ? json_real(p->bandwidth) : json_null());
        json_array_append_new(cpi, p->cpi >= 0 ? json_real(p->cpi) : json_null());
    }
    for (unsigned i = 0; i < js->nevents; i++)
        json_array_append_new(
            events, json_pack("{s:f, s:s}", "t", js->events[i].t, "label", js->events[i].label));
    obj = json_pack("{s:o, s:o, s:o, s:o, s:o, s:i}", "t", t, "node_bytes", nodes,
                    "bandwidth_bytes_per_s", bw, "cpi", cpi, "events", events, "every_nth_sample",
                    (int)(js->timeline_stride ? js->timeline_stride : 1));
    if (obj) {
        set_note(obj, "bandwidth_note", bandwidth_figure(js));
        set_note(obj, "cpi_note", cpi_figure(js));
    }
    return obj;
}

static void iso_time(double epoch, char *buf, size_t size)
{
    time_t t = (time_t)epoch;
    struct tm tm;

    if (epoch <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, size, "unknown");
}

json_t *np_jobstats_latest(const struct np_jobstats *js)
{
    const struct np_sample *l = &js->last, *p = &js->prev;
    const double dt = l->t - p->t;
    json_t *obj = json_pack("{s:i, s:f, s:i}", "samples", (int)js->samples, "t", l->t, "processes",
                            (int)l->processes);

    if (!obj)
        return NULL;
    json_object_set_new(obj, "pages",
                        js->page_samples
                            ? json_pack("{s:o, s:s}", "node_bytes", node_bytes(js->pages_end),
                                        "source", SRC_NUMA_MAPS)
                            : missing(l->pages_reason, SRC_NUMA_MAPS));
    if (js->samples >= 2 && dt > 0 && l->have_proc && p->have_proc)
        json_object_set_new(obj, "cpu_use",
                            figure(((l->utime_s + l->stime_s) - (p->utime_s + p->stime_s)) / dt,
                                   "cores", SRC_PROC_STAT));
    else
        json_object_set_new(
            obj, "cpu_use",
            missing(l->have_proc ? "fewer than two samples" : l->proc_reason, SRC_PROC_STAT));
    if (js->local_nodes && js->local_share_readings)
        json_object_set_new(obj, "local_share",
                            figure(js->local_share_last, "fraction",
                                   "numa_maps: bytes on the step's CPUs' nodes, last reading"));
    if (js->ncpi)
        json_object_set_new(obj, "cpi",
                            figure(js->cpi[js->ncpi - 1], "cycles/instruction", SRC_CPI));
    else
        json_object_set_new(obj, "cpi", cpi_figure(js));
    return obj;
}

json_t *np_report_new(const struct np_job_meta *meta, const struct np_jobstats *js, bool complete)
{
    const struct np_sample *l = &js->last;
    char start[32], end[32];
    json_t *rep, *pages, *cpu, *faults, *migr;

    iso_time(meta->start_epoch, start, sizeof(start));
    iso_time(meta->end_epoch, end, sizeof(end));
    rep =
        json_pack("{s:s, s:I, s:I, s:s, s:s, s:I, s:s, s:s, s:f, s:b}", "schema", NP_REPORT_SCHEMA,
                  "job_id", (json_int_t)meta->job_id, "step_id", (json_int_t)meta->step_id, "step",
                  np_step_name(meta->step_id), "node", meta->node, "uid", (json_int_t)meta->uid,
                  "start", start, "end", end, "duration_s",
                  meta->end_epoch > meta->start_epoch ? meta->end_epoch - meta->start_epoch : 0.0,
                  "complete", complete);
    if (!rep)
        return NULL;
    json_object_set_new(rep, "policy",
                        json_pack("{s:s, s:o}", "requested",
                                  meta->policy_requested[0] ? meta->policy_requested : "unknown",
                                  "tasks", meta->tasks ? json_incref(meta->tasks) : json_array()));
    json_object_set_new(rep, "sensitivity", json_string(meta->sensitivity));
    if (meta->job_class[0])
        json_object_set_new(rep, "class", json_string(meta->job_class));
    json_object_set_new(rep, "cpus", json_string(meta->cpus));
    json_object_set_new(rep, "sampling",
                        json_pack("{s:f, s:i, s:s}", "interval_s", meta->interval_s, "count",
                                  (int)js->samples, "backends", meta->backends));
    json_object_set_new(rep, "cpi", cpi_figure(js));
    json_object_set_new(rep, "bandwidth", bandwidth_figure(js));
    if (js->proc_samples) {
        l = &js->last_proc;
        cpu = json_pack("{s:f, s:f, s:s}", "user_s", l->utime_s, "system_s", l->stime_s, "source",
                        SRC_PROC_STAT);
        faults = json_pack("{s:I, s:I, s:I, s:s}", "minor", (json_int_t)l->minflt, "major",
                           (json_int_t)l->majflt, "rss_bytes", (json_int_t)l->rss_bytes, "source",
                           SRC_PROC_STAT);
    } else {
        cpu = missing(l->proc_reason, SRC_PROC_STAT);
        faults = missing(l->proc_reason, SRC_PROC_STAT);
    }
    l = &js->last;
    json_object_set_new(rep, "cpu", cpu);
    json_object_set_new(rep, "faults", faults);
    json_object_set_new(rep, "perf_counts", perf_counts(js));
    if (js->page_samples)
        pages = json_pack("{s:o, s:o, s:o, s:I, s:i, s:s}", "start_bytes",
                          node_bytes(js->pages_start), "end_bytes", node_bytes(js->pages_end),
                          "peak_bytes", node_bytes(js->pages_peak), "peak_total_bytes",
                          (json_int_t)js->pages_peak_total, "samples", (int)js->page_samples,
                          "source", SRC_NUMA_MAPS);
    else
        pages = missing(l->pages_reason, SRC_NUMA_MAPS);
    if (js->page_samples && pages)
        json_object_set_new(pages, "local_share", local_share_figure(js));
    json_object_set_new(rep, "pages", pages);
    if (js->local_nodes)
        json_object_set_new(rep, "local_nodes", node_list(js->local_nodes));
    if (js->ntimeline)
        json_object_set_new(rep, "timeline", timeline_json(js));
    migr = json_pack(
        "{s:o, s:o, s:f, s:s}", "pages_in_bytes", node_bytes(js->pages_in), "pages_out_bytes",
        node_bytes(js->pages_out), "moving_s", js->migration_moving_s, "source",
        js->migration_enabled ? "numaplaced: pages it moved (move_pages, migrate_pages)"
        /* A trace records samples, not the helper's moves: a replay cannot say. */
        : strncmp(meta->backends, "replay", 6) == 0
            ? "unavailable: a replayed trace records no migrations"
            : "numaplaced: migration not enabled on this node");
    if (migr) {
        json_t *failed = json_object();
        for (int f = 0; failed && f < NP_MOVE_FAIL_COUNT; f++)
            json_object_set_new(failed, np_move_failure_name((enum np_move_failure)f),
                                json_integer((json_int_t)js->migration_failed[f]));
        json_object_set_new(migr, "failed_pages", failed);
        json_object_set_new(migr, "requests",
                            js->migration_requests ? json_deep_copy(js->migration_requests)
                                                   : json_array());
    }
    json_object_set_new(rep, "migrations", migr);
    json_object_set_new(rep, "os_interference", os_interference(js));
    json_object_set_new(rep, "numa_balancing",
                        js->balancing_samples
                            ? json_pack("{s:I, s:I, s:s}", "pages_migrated",
                                        (json_int_t)js->balancing_pages_migrated, "faults",
                                        (json_int_t)js->balancing_faults, "source", SRC_BALANCING)
                            : missing(js->last.balancing_reason, SRC_BALANCING));
    json_object_set_new(rep, "helper",
                        json_pack("{s:f, s:s}", "cpu_time_s", js->helper_cpu_s, "source",
                                  "numaplaced: CLOCK_THREAD_CPUTIME_ID around this job's work"));
    return rep;
}

int np_report_check(json_t *report, struct np_err *err)
{
    const char *schema = json_string_value(json_object_get(report, "schema"));

    if (!json_is_object(report))
        return np_err_set(err, -EINVAL, "a report must be a JSON object");
    if (!schema)
        return np_err_set(err, -EINVAL, "not a numaplace report (no \"schema\")");
    if (strcmp(schema, NP_REPORT_SCHEMA) != 0)
        return np_err_set(err, -EPROTO, "report schema %s; this numaplace reads %s", schema,
                          NP_REPORT_SCHEMA);
    return 0;
}

/* ---- text ---- */

static void print_figure(FILE *out, const char *label, json_t *fig, double scale, const char *unit)
{
    const char *why = json_string_value(json_object_get(fig, "unavailable"));

    if (why)
        fprintf(out, "  %-22s unavailable (%s)\n", label, why);
    else if (json_is_number(json_object_get(fig, "value")))
        fprintf(out, "  %-22s %.4g %s\n", label,
                json_number_value(json_object_get(fig, "value")) * scale, unit);
}

static void print_nodes(FILE *out, const char *label, json_t *map)
{
    const char *key;
    json_t *v;
    int n = 0;

    fprintf(out, "    %-8s", label);
    json_object_foreach(map, key, v)
    {
        fprintf(out, " node%s=%.1f MiB", key, (double)json_integer_value(v) / 1048576.0);
        n++;
    }
    fprintf(out, "%s\n", n ? "" : " none");
}

int np_report_print(FILE *out, json_t *r)
{
    json_t *cpi = json_object_get(r, "cpi"), *bw = json_object_get(r, "bandwidth");
    json_t *cpu = json_object_get(r, "cpu"), *pages = json_object_get(r, "pages");
    json_t *os = json_object_get(r, "os_interference"), *tasks, *task;
    json_t *samp = json_object_get(r, "sampling"), *perf = json_object_get(r, "perf_counts");
    const char *why, *key;
    json_t *fig;
    size_t i;

    fprintf(out, "job %lld step %s on %s (uid %lld)%s\n",
            (long long)json_integer_value(json_object_get(r, "job_id")),
            json_string_value(json_object_get(r, "step")),
            json_string_value(json_object_get(r, "node")),
            (long long)json_integer_value(json_object_get(r, "uid")),
            json_is_true(json_object_get(r, "complete")) ? ""
                                                         : "  [incomplete: the helper stopped "
                                                           "before the step ended]");
    fprintf(out, "  %-22s %s .. %s (%.1f s)\n", "time",
            json_string_value(json_object_get(r, "start")),
            json_string_value(json_object_get(r, "end")),
            json_number_value(json_object_get(r, "duration_s")));
    fprintf(out, "  %-22s %lld every %.3g s (%s)\n", "samples",
            (long long)json_integer_value(json_object_get(samp, "count")),
            json_number_value(json_object_get(samp, "interval_s")),
            json_string_value(json_object_get(samp, "backends")));
    fprintf(out, "  %-22s %s, sensitivity %s, class %s, CPUs %s\n", "policy requested",
            json_string_value(json_object_get(json_object_get(r, "policy"), "requested")),
            json_string_value(json_object_get(r, "sensitivity")),
            json_string_value(json_object_get(r, "class"))
                ? json_string_value(json_object_get(r, "class"))
                : json_string_value(json_object_get(r, "sensitivity")),
            json_string_value(json_object_get(r, "cpus")));
    tasks = json_object_get(json_object_get(r, "policy"), "tasks");
    json_array_foreach(tasks, i, task)
    {
        fprintf(out, "    task %lld pid %lld: %s (mode %s) nodes %s cpus %s\n",
                (long long)json_integer_value(json_object_get(task, "task")),
                (long long)json_integer_value(json_object_get(task, "pid")),
                json_string_value(json_object_get(task, "policy"))
                    ? json_string_value(json_object_get(task, "policy"))
                    : "not reported",
                json_string_value(json_object_get(task, "mode"))
                    ? json_string_value(json_object_get(task, "mode"))
                    : "-",
                json_string_value(json_object_get(task, "nodes")) &&
                        *json_string_value(json_object_get(task, "nodes"))
                    ? json_string_value(json_object_get(task, "nodes"))
                    : "-",
                json_string_value(json_object_get(task, "cpus"))
                    ? json_string_value(json_object_get(task, "cpus"))
                    : "-");
    }
    if ((why = json_string_value(json_object_get(cpi, "unavailable"))))
        fprintf(out, "  %-22s unavailable (%s)\n", "CPI", why);
    else
        fprintf(out, "  %-22s mean %.3f, median %.3f, p95 %.3f\n", "CPI",
                json_number_value(json_object_get(cpi, "mean")),
                json_number_value(json_object_get(cpi, "median")),
                json_number_value(json_object_get(cpi, "p95")));
    if ((why = json_string_value(json_object_get(bw, "unavailable")))) {
        fprintf(out, "  %-22s unavailable (%s)\n", "bandwidth", why);
    } else {
        fprintf(out, "  %-22s mean %.1f MB/s, peak %.1f MB/s\n", "bandwidth",
                json_number_value(json_object_get(bw, "mean_bytes_per_s")) / 1e6,
                json_number_value(json_object_get(bw, "peak_bytes_per_s")) / 1e6);
        json_object_foreach(json_object_get(bw, "per_node"), key, fig)
        {
            fprintf(out, "    node%s mean %.1f MB/s, peak %.1f MB/s\n", key,
                    json_number_value(json_object_get(fig, "mean_bytes_per_s")) / 1e6,
                    json_number_value(json_object_get(fig, "peak_bytes_per_s")) / 1e6);
        }
    }
    if ((why = json_string_value(json_object_get(cpu, "unavailable"))))
        fprintf(out, "  %-22s unavailable (%s)\n", "CPU time", why);
    else
        fprintf(out, "  %-22s user %.2f s, system %.2f s\n", "CPU time",
                json_number_value(json_object_get(cpu, "user_s")),
                json_number_value(json_object_get(cpu, "system_s")));
    json_object_foreach(perf, key, fig)
    {
        char label[40];
        snprintf(label, sizeof(label), "perf %s", key);
        print_figure(out, label, fig, 1, strcmp(key, "task_clock_ns") == 0 ? "ns" : "");
    }
    if ((why = json_string_value(json_object_get(pages, "unavailable")))) {
        fprintf(out, "  %-22s unavailable (%s)\n", "pages per node", why);
    } else {
        fprintf(out, "  %-22s (%lld readings)\n", "pages per node",
                (long long)json_integer_value(json_object_get(pages, "samples")));
        print_nodes(out, "start", json_object_get(pages, "start_bytes"));
        print_nodes(out, "end", json_object_get(pages, "end_bytes"));
        print_nodes(out, "peak", json_object_get(pages, "peak_bytes"));
    }
    fprintf(out, "  %-22s (%s)\n", "migrated",
            json_string_value(json_object_get(json_object_get(r, "migrations"), "source")));
    print_nodes(out, "in", json_object_get(json_object_get(r, "migrations"), "pages_in_bytes"));
    print_nodes(out, "out", json_object_get(json_object_get(r, "migrations"), "pages_out_bytes"));
    {
        json_t *reqs = json_object_get(json_object_get(r, "migrations"), "requests"), *q;
        size_t k;
        json_array_foreach(reqs, k, q)
        {
            fprintf(out, "    %s node %lld -> %lld: %lld pages moved (%s)\n",
                    json_string_value(json_object_get(q, "trigger")),
                    (long long)json_integer_value(json_object_get(q, "from")),
                    (long long)json_integer_value(json_object_get(q, "to")),
                    (long long)json_integer_value(json_object_get(q, "moved_pages")),
                    json_string_value(json_object_get(q, "reason")));
        }
    }
    fprintf(out, "  OS interference\n");
    print_figure(out, "  kernel time share", json_object_get(os, "kernel_time_share"), 100, "%");
    print_figure(out, "  involuntary cs", json_object_get(os, "involuntary_cs_per_s"), 1, "/s");
    fig = json_object_get(os, "interrupts_on_cpus");
    if ((why = json_string_value(json_object_get(fig, "unavailable"))))
        fprintf(out, "    %-20s unavailable (%s)\n", "interrupts, softirqs", why);
    else
        fprintf(out, "    %-20s %lld interrupts, %lld softirqs on its CPUs\n",
                "interrupts, softirqs",
                (long long)json_integer_value(json_object_get(fig, "count")),
                (long long)json_integer_value(
                    json_object_get(json_object_get(os, "softirqs_on_cpus"), "count")));
    print_figure(out, "  other CPU time", json_object_get(os, "other_cpu_time_s"), 1, "s");
    fig = json_object_get(r, "numa_balancing");
    if ((why = json_string_value(json_object_get(fig, "unavailable"))))
        fprintf(out, "  %-22s unavailable (%s)\n", "kernel NUMA balancing", why);
    else if (fig)
        fprintf(out, "  %-22s %lld pages migrated, %lld NUMA faults\n", "kernel NUMA balancing",
                (long long)json_integer_value(json_object_get(fig, "pages_migrated")),
                (long long)json_integer_value(json_object_get(fig, "faults")));
    fprintf(out, "  %-22s %.4f s CPU\n", "helper cost",
            json_number_value(json_object_get(json_object_get(r, "helper"), "cpu_time_s")));
    return ferror(out) ? -EIO : 0;
}

/* ---- trace ---- */

json_t *np_trace_job_line(const struct np_job_meta *meta)
{
    json_t *obj = json_pack(
        "{s:s, s:s, s:I, s:I, s:I, s:s, s:f, s:f, s:s, s:s, s:s, s:s}", "schema", NP_TRACE_SCHEMA,
        "event", "job", "job", (json_int_t)meta->job_id, "step", (json_int_t)meta->step_id, "uid",
        (json_int_t)meta->uid, "node", meta->node, "start", meta->start_epoch, "interval_s",
        meta->interval_s, "policy", meta->policy_requested, "sensitivity", meta->sensitivity,
        "cpus", meta->cpus, "backends", meta->backends);

    if (obj && meta->tasks)
        json_object_set(obj, "tasks", meta->tasks);
    if (obj && meta->local_nodes)
        json_object_set_new(obj, "local_nodes", node_list(meta->local_nodes));
    return obj;
}

json_t *np_trace_sample_line(uint32_t job_id, uint32_t step_id, const struct np_sample *s,
                             double helper_cpu_s)
{
    return json_pack("{s:s, s:I, s:I, s:f, s:o}", "event", "sample", "job", (json_int_t)job_id,
                     "step", (json_int_t)step_id, "helper_cpu_s", helper_cpu_s, "sample",
                     np_sample_to_json(s));
}

json_t *np_trace_end_line(uint32_t job_id, uint32_t step_id, double end_epoch)
{
    return json_pack("{s:s, s:I, s:I, s:f}", "event", "end", "job", (json_int_t)job_id, "step",
                     (json_int_t)step_id, "end", end_epoch);
}

struct replay_job {
    struct np_job_meta meta;
    struct np_jobstats stats;
    json_t *tasks;
    bool used;
};

#define REPLAY_MAX_JOBS 256

static struct replay_job *find_job(struct replay_job *jobs, json_t *line)
{
    json_int_t job = json_integer_value(json_object_get(line, "job"));
    json_int_t step = json_integer_value(json_object_get(line, "step"));

    for (int i = 0; i < REPLAY_MAX_JOBS; i++)
        if (jobs[i].used && jobs[i].meta.job_id == (uint32_t)job &&
            jobs[i].meta.step_id == (uint32_t)step)
            return &jobs[i];
    return NULL;
}

static void copy_str(char *dst, size_t size, json_t *v)
{
    snprintf(dst, size, "%s", json_string_value(v) ? json_string_value(v) : "");
}

static int emit(struct replay_job *j, bool complete, np_report_fn *fn, void *arg)
{
    json_t *rep;
    int stop;

    j->meta.tasks = j->tasks;
    rep = np_report_new(&j->meta, &j->stats, complete);
    if (!rep)
        return -ENOMEM;
    stop = fn ? fn(rep, arg) : 0;
    json_decref(rep);
    np_jobstats_fini(&j->stats);
    json_decref(j->tasks);
    memset(j, 0, sizeof(*j));
    return stop;
}

int np_trace_replay(FILE *in, const char *name, np_report_fn *fn, void *arg, struct np_err *err)
{
    struct replay_job *jobs = calloc(REPLAY_MAX_JOBS, sizeof(*jobs));
    char *line = NULL;
    size_t cap = 0;
    unsigned lineno = 0;
    int reports = 0, rc = 0;

    if (!jobs)
        return np_err_set(err, -ENOMEM, "out of memory");
    while (rc == 0 && getline(&line, &cap, in) >= 0) {
        json_error_t jerr;
        json_t *obj;
        const char *event;
        struct replay_job *j;

        lineno++;
        if (line[strspn(line, " \t\r\n")] == '\0')
            continue;
        obj = json_loads(line, 0, &jerr);
        event = json_string_value(json_object_get(obj, "event"));
        if (!obj || !event) {
            rc = np_err_set(err, -EINVAL, "%s:%u: not a trace line (%s)", name, lineno,
                            obj ? "no \"event\"" : jerr.text);
            json_decref(obj);
            break;
        }
        j = find_job(jobs, obj);
        if (strcmp(event, "job") == 0) {
            const char *schema = json_string_value(json_object_get(obj, "schema"));
            if (!schema || strcmp(schema, NP_TRACE_SCHEMA) != 0) {
                rc = np_err_set(err, -EINVAL, "%s:%u: trace schema %s; this numaplace reads %s",
                                name, lineno, schema ? schema : "missing", NP_TRACE_SCHEMA);
            } else if (!j) {
                for (int i = 0; i < REPLAY_MAX_JOBS && !j; i++)
                    if (!jobs[i].used)
                        j = &jobs[i];
                if (!j) {
                    rc = np_err_set(err, -EINVAL, "%s:%u: more than %d jobs open at once", name,
                                    lineno, REPLAY_MAX_JOBS);
                } else {
                    j->used = true;
                    np_jobstats_init(&j->stats);
                    j->meta.job_id = (uint32_t)json_integer_value(json_object_get(obj, "job"));
                    j->meta.step_id = (uint32_t)json_integer_value(json_object_get(obj, "step"));
                    j->meta.uid = (uid_t)json_integer_value(json_object_get(obj, "uid"));
                    j->meta.start_epoch = json_number_value(json_object_get(obj, "start"));
                    j->meta.interval_s = json_number_value(json_object_get(obj, "interval_s"));
                    copy_str(j->meta.node, sizeof(j->meta.node), json_object_get(obj, "node"));
                    copy_str(j->meta.policy_requested, sizeof(j->meta.policy_requested),
                             json_object_get(obj, "policy"));
                    copy_str(j->meta.sensitivity, sizeof(j->meta.sensitivity),
                             json_object_get(obj, "sensitivity"));
                    copy_str(j->meta.cpus, sizeof(j->meta.cpus), json_object_get(obj, "cpus"));
                    snprintf(j->meta.backends, sizeof(j->meta.backends), "replay of %s",
                             json_string_value(json_object_get(obj, "backends"))
                                 ? json_string_value(json_object_get(obj, "backends"))
                                 : "?");
                    j->tasks = json_incref(json_object_get(obj, "tasks"));
                    {
                        size_t k;
                        json_t *node;
                        json_array_foreach(json_object_get(obj, "local_nodes"), k, node)
                        {
                            const json_int_t n = json_integer_value(node);
                            if (n >= 0 && n < 64)
                                j->meta.local_nodes |= 1ull << n;
                        }
                        j->stats.local_nodes = j->meta.local_nodes;
                    }
                }
            }
        } else if (strcmp(event, "sample") == 0) {
            struct np_sample s;
            struct np_err serr = {0};
            if (!j) {
                rc = np_err_set(err, -EINVAL, "%s:%u: sample for a job with no \"job\" line", name,
                                lineno);
            } else if (np_sample_from_json(json_object_get(obj, "sample"), &s, &serr) < 0) {
                rc = np_err_set(err, -EINVAL, "%s:%u: %s", name, lineno, serr.msg);
            } else if (np_jobstats_add(&j->stats, &s) < 0) {
                rc = np_err_set(err, -EINVAL, "%s:%u: sample goes back in time", name, lineno);
            } else {
                j->stats.helper_cpu_s = json_number_value(json_object_get(obj, "helper_cpu_s"));
            }
        } else if (strcmp(event, "end") == 0) {
            if (!j) {
                rc = np_err_set(err, -EINVAL, "%s:%u: end of a job with no \"job\" line", name,
                                lineno);
            } else {
                j->meta.end_epoch = json_number_value(json_object_get(obj, "end"));
                rc = emit(j, true, fn, arg);
                if (rc >= 0)
                    reports++;
            }
        } else {
            rc = np_err_set(err, -EINVAL, "%s:%u: unknown event \"%s\"; accepted: job, sample, end",
                            name, lineno, event);
        }
        json_decref(obj);
    }
    for (int i = 0; i < REPLAY_MAX_JOBS; i++)
        if (jobs[i].used) {
            if (rc == 0) {
                jobs[i].meta.end_epoch = jobs[i].meta.start_epoch + jobs[i].stats.last.t;
                if (emit(&jobs[i], false, fn, arg) >= 0)
                    reports++;
            } else {
                np_jobstats_fini(&jobs[i].stats);
                json_decref(jobs[i].tasks);
            }
        }
    free(line);
    free(jobs);
    return rc < 0 ? rc : reports;
}
