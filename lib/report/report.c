/* Samples to job reports: the arithmetic of docs/report-schema.md, and the trace replay. */
#include "numaplace/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

#define SRC_BANDWIDTH_MEMORY                                                                       \
    "misses: the same traffic spread over the nodes holding the step's pages (numa_maps shares "   \
    "at each interval)"

/* ---- figures: {"value", "unit", "source"} or {"unavailable", "source"} ---- */

static json_t *figure(double value, const char *unit, const char *source)
{
    return json_pack("{s:f, s:s, s:s}", "value", value, "unit", unit, "source", source);
}

static json_t *missing(const char *reason, const char *source)
{
    return json_pack("{s:s, s:s}", "unavailable", reason && reason[0] ? reason : "not measured",
                     "source", source);
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

/* The kernel multiplexed event @p e at this sample: it shared a hardware counter, and its count
 * is scaled from the time it had one (an estimate). */
static bool multiplexed(const struct np_sample *s, int e)
{
    return s->have_perf[e] && s->perf_running_ns[e] < s->perf_enabled_ns[e];
}

static json_t *cpi_figure(const struct np_step_figures *js)
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
    if (obj && (multiplexed(l, NP_PERF_CYCLES) || multiplexed(l, NP_PERF_INSTRUCTIONS)))
        json_object_set_new(obj, "multiplexed",
                            json_string("cycles or instructions were multiplexed: the CPI is "
                                        "a ratio of scaled counts (an estimate)"));
    return obj;
}

/* obj["n"] = @p v (stolen): a member per NUMA node. */
static void set_node(json_t *obj, int n, json_t *v)
{
    char key[12];

    snprintf(key, sizeof(key), "%d", n);
    json_object_set_new(obj, key, v);
}

/* The traffic by the node whose memory served it, with its source; unavailable without pages. */
static json_t *by_memory_node(const struct np_step_figures *js)
{
    json_t *nodes;

    if (js->bw_mem_intervals == 0)
        return json_pack("{s:s, s:s}", "unavailable",
                         "no numa_maps reading during an interval with LLC misses", "source",
                         "unavailable");
    nodes = json_object();
    for (int n = 0; nodes && n < NP_SAMPLE_MAX_NODES; n++)
        if (js->bw_mem_sum[n] > 0)
            set_node(
                nodes, n,
                json_pack("{s:f}", "mean_bytes_per_s", js->bw_mem_sum[n] / js->bw_mem_intervals));
    return json_pack("{s:o, s:i, s:s}", "per_node", nodes, "intervals", (int)js->bw_mem_intervals,
                     "source", SRC_BANDWIDTH_MEMORY);
}

static json_t *bandwidth_figure(const struct np_step_figures *js)
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
        if (js->bw_peak[n] > 0)
            set_node(per_node, n,
                     json_pack("{s:f, s:f}", "mean_bytes_per_s", js->bw_sum[n] / js->bw_intervals,
                               "peak_bytes_per_s", js->bw_peak[n]));
    obj = json_pack("{s:o, s:f, s:f, s:i, s:s}", "per_node", per_node, "mean_bytes_per_s",
                    js->bw_total_sum / js->bw_intervals, "peak_bytes_per_s", js->bw_total_peak,
                    "intervals", (int)js->bw_intervals, "source", SRC_BANDWIDTH);
    if (obj)
        json_object_set_new(obj, "by_memory_node", by_memory_node(js));
    return obj;
}

static json_t *perf_counts(const struct np_step_figures *js)
{
    json_t *obj = json_object();

    for (int e = 0; obj && e < NP_PERF_NEVENTS; e++) {
        const char *src = np_perf_event_name((enum np_perf_event)e);
        char source[96];
        json_t *fig;

        snprintf(source, sizeof(source), "perf: %s, tasks and children%s", src,
                 multiplexed(&js->last, e) ? ", scaled by time enabled / time running" : "");
        fig = js->last.have_perf[e]
                  ? json_pack("{s:I, s:s, s:s}", "value", (json_int_t)js->last.perf[e], "unit",
                              e == NP_PERF_TASK_CLOCK ? "ns" : "events", "source", source)
                  : missing(js->last.perf_reason[e], source);
        if (fig && js->last.have_perf[e] && multiplexed(&js->last, e))
            json_object_set_new(
                fig, "multiplexed",
                json_pack("{s:f, s:s}", "running_share",
                          (double)js->last.perf_running_ns[e] / (double)js->last.perf_enabled_ns[e],
                          "note",
                          "the kernel multiplexed this event over fewer hardware counters; the "
                          "value is scaled from the time it counted (an estimate)"));
        json_object_set_new(obj, np_perf_event_label((enum np_perf_event)e), fig);
    }
    return obj;
}

/* @p count interrupts on the job's CPUs over @p span seconds. */
static json_t *on_cpus(uint64_t count, double span)
{
    return json_pack("{s:I, s:f, s:s}", "count", (json_int_t)count, "per_s", (double)count / span,
                     "source", SRC_IRQ);
}

static json_t *os_interference(const struct np_step_figures *js)
{
    const struct np_sample *l = &js->last_proc;
    const double cpu_s = l->utime_s + l->stime_s, irq_span = js->irq_t[1] - js->irq_t[0];
    const double busy = js->busy_s[1] - js->busy_s[0], own = js->own_s[1] - js->own_s[0];
    const uint64_t cs = js->involuntary_cs[1] >= js->involuntary_cs[0]
                            ? js->involuntary_cs[1] - js->involuntary_cs[0]
                            : 0;
    const bool irq = js->irq_samples >= 2 && irq_span > 0;
    const char *proc_why = js->last.proc_reason[0] ? js->last.proc_reason : "no /proc sample";
    const char *irq_why = js->last.irq_reason[0] ? js->last.irq_reason : "fewer than two samples";

    return json_pack(
        "{s:o*, s:o*, s:o*, s:o*, s:o*}", "kernel_time_share",
        js->proc_samples && cpu_s > 0
            ? figure(l->stime_s / cpu_s, "fraction",
                     "proc: stime / (utime + stime) of the job's processes")
            : missing(js->proc_samples ? "no CPU time used yet" : proc_why,
                      "proc: stime / (utime + stime)"),
        "involuntary_cs_per_s",
        js->cs_samples >= 2 && js->cs_t[1] > js->cs_t[0]
            ? figure((double)cs / (js->cs_t[1] - js->cs_t[0]), "1/s", SRC_PROC_CS)
            : missing(js->proc_samples ? "fewer than two readings of the context switches (read "
                                         "every detail interval)"
                                       : proc_why,
                      SRC_PROC_CS),
        "interrupts_on_cpus",
        irq ? on_cpus(js->interrupts[1] - js->interrupts[0], irq_span) : missing(irq_why, SRC_IRQ),
        "softirqs_on_cpus",
        irq ? on_cpus(js->softirqs[1] - js->softirqs[0], irq_span) : missing(irq_why, SRC_IRQ),
        "other_cpu_time_s",
        js->busy_samples >= 2 && js->busy_t[1] - js->busy_t[0] > 0
            ? figure(busy > own ? busy - own : 0, "s", SRC_OTHER_CPU)
            : missing(js->last.cpu_busy_reason[0] ? js->last.cpu_busy_reason
                                                  : "fewer than two samples",
                      SRC_OTHER_CPU));
}

#define SRC_LOCAL_SHARE                                                                            \
    "numa_maps: bytes on the NUMA nodes of the step's CPUs / all its bytes, each reading "         \
    "weighted by how long it held"

/* The share of the job's pages on its CPUs' nodes over the run, or why it is not known. */
static json_t *local_share_figure(const struct np_step_figures *js)
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

/* Why a figure is unavailable, as a note beside the timeline (@p fig is stolen). */
static void set_note(json_t *obj, const char *key, json_t *fig)
{
    const char *why = json_string_value(json_object_get(fig, "unavailable"));

    if (why)
        json_object_set_new(obj, key, json_string(why));
    json_decref(fig);
}

/* The bounded timeline: parallel arrays, null where a figure was not measured. */
static json_t *timeline_json(const struct np_step_figures *js)
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
            json_t *arr = json_array();
            for (size_t i = 0; arr && i < js->ntimeline; i++)
                json_array_append_new(arr, json_integer((json_int_t)js->timeline[i].node_bytes[n]));
            set_node(nodes, n, arr);
        }
    for (size_t i = 0; i < js->ntimeline; i++) {
        const struct np_step_figures_point *p = &js->timeline[i];
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

json_t *np_step_figures_latest(const struct np_step_figures *js)
{
    const struct np_sample *l = &js->last, *p = &js->prev;
    const double dt = l->t - p->t;

    return json_pack(
        "{s:i, s:f, s:i, s:o, s:o, s:o*, s:o}", "samples", (int)js->samples, "t", l->t, "processes",
        (int)l->processes, "pages",
        js->page_samples ? json_pack("{s:o, s:s}", "node_bytes", np_node_map_json(js->pages_end),
                                     "source", SRC_NUMA_MAPS)
                         : missing(l->pages_reason, SRC_NUMA_MAPS),
        "cpu_use",
        js->samples >= 2 && dt > 0 && l->have_proc && p->have_proc
            ? figure(((l->utime_s + l->stime_s) - (p->utime_s + p->stime_s)) / dt, "cores",
                     SRC_PROC_STAT)
            : missing(l->have_proc ? "fewer than two samples" : l->proc_reason, SRC_PROC_STAT),
        "local_share",
        js->local_nodes && js->local_share_readings
            ? figure(js->local_share_last, "fraction",
                     "numa_maps: bytes on the step's CPUs' nodes, last reading")
            : NULL,
        "cpi",
        js->ncpi ? figure(js->cpi[js->ncpi - 1], "cycles/instruction", SRC_CPI) : cpi_figure(js));
}

/* The pages numaplaced moved for the step, and what it could not move, by cause. */
static json_t *migrations_json(const struct np_job_meta *meta, const struct np_step_figures *js)
{
    json_t *failed = json_object();

    for (int f = 0; failed && f < NP_MOVE_FAIL_COUNT; f++)
        json_object_set_new(failed, np_move_failure_name((enum np_move_failure)f),
                            json_integer((json_int_t)js->migration_failed[f]));
    return json_pack(
        "{s:o, s:o, s:f, s:s, s:o, s:o}", "pages_in_bytes", np_node_map_json(js->pages_in),
        "pages_out_bytes", np_node_map_json(js->pages_out), "moving_s", js->migration_moving_s,
        "source",
        js->migration_enabled ? "numaplaced: pages it moved (move_pages, migrate_pages)"
        /* A trace records samples, not numaplaced's moves: a replay cannot say. */
        : strncmp(meta->backends, "replay", 6) == 0
            ? "unavailable: a replayed trace records no migrations"
            : "numaplaced: migration not enabled on this node",
        "failed_pages", failed, "requests",
        js->migration_requests ? json_deep_copy(js->migration_requests) : json_array());
}

json_t *np_bytes_by_tier(const uint64_t *bytes, const unsigned *node_tier)
{
    json_t *by_tier;
    bool tiered = false;

    for (unsigned n = 0; n < NP_SAMPLE_MAX_NODES; n++)
        tiered |= node_tier[n] != 0;
    if (!tiered || !(by_tier = json_object()))
        return NULL;
    for (unsigned n = 0; n < NP_SAMPLE_MAX_NODES; n++) {
        char key[12];
        if (!bytes[n])
            continue;
        snprintf(key, sizeof(key), "%u", node_tier[n]);
        json_object_set_new(
            by_tier, key,
            json_integer(json_integer_value(json_object_get(by_tier, key)) + (json_int_t)bytes[n]));
    }
    return by_tier;
}

/* pages.by_tier: the last reading's bytes by memory tier, on a node of more than one tier. */
static void add_pages_by_tier(json_t *report, const struct np_job_meta *meta,
                              const struct np_step_figures *js)
{
    json_t *pages = json_object_get(report, "pages"), *by_tier;

    if (json_object_get(pages, "end_bytes") &&
        (by_tier = np_bytes_by_tier(js->pages_end, meta->node_tier)))
        json_object_set_new(pages, "by_tier", by_tier);
}

json_t *np_report_new(const struct np_job_meta *meta, const struct np_step_figures *js,
                      bool complete)
{
    const struct np_sample *l = &js->last, *lp = &js->last_proc;
    const bool proc = js->proc_samples > 0;
    /* Where numaplaced's own noise can land on this step: its CPUs that are the step's. */
    const bool helper_cpus = meta->helper_cpus[0];
    char start[32], end[32];
    json_t *cpi = cpi_figure(js), *report;

    iso_time(meta->start_epoch, start, sizeof(start));
    iso_time(meta->end_epoch, end, sizeof(end));
    if (meta->emulated_cpu[0] && json_object_get(cpi, "mean"))
        json_object_set_new(cpi, "note",
                            json_string("counted on an emulated CPU: the emulator's definition of "
                                        "a cycle, not a measurement of a machine; a sensitivity "
                                        "prediction from it is not meaningful"));
    report = json_pack(
        "{s:s, s:I, s:I, s:s, s:s, s:I, s:s, s:s, s:f, s:b, s:{s:s, s:o}, s:s, s:s*, s:s*, s:o*, "
        "s:s, s:s*, s:o*, s:{s:f, s:i, s:s, s:s*, s:s*}, s:o*, s:o, s:o, s:o, s:o, s:o, s:o, "
        "s:o*, s:o*, s:o, s:o, s:o, s:{s:f, s:s, s:s*, s:s*}}",
        "schema", NP_REPORT_SCHEMA, "job_id", (json_int_t)meta->job_id, "step_id",
        (json_int_t)meta->step_id, "step", np_step_name(meta->step_id), "node", meta->node, "uid",
        (json_int_t)meta->uid, "start", start, "end", end, "duration_s",
        meta->end_epoch > meta->start_epoch ? meta->end_epoch - meta->start_epoch : 0.0, "complete",
        complete, "policy", "requested",
        meta->policy_requested[0] ? meta->policy_requested : "unknown", "tasks",
        meta->tasks ? json_incref(meta->tasks) : json_array(), "sensitivity", meta->sensitivity,
        "class", meta->job_class[0] ? meta->job_class : NULL, "class_source",
        meta->class_source[0] ? meta->class_source : NULL, "class_prediction",
        meta->prediction.known ? np_class_prediction_json(&meta->prediction) : NULL, "cpus",
        meta->cpus, "effective_cpus", meta->effective_cpus[0] ? meta->effective_cpus : NULL,
        "registered_nodes",
        meta->registered_nodes ? np_node_list_json(meta->registered_nodes) : NULL, "sampling",
        "interval_s", meta->interval_s, "count", (int)js->samples, "backends", meta->backends,
        /* only on an emulated CPU: its counts are the emulator's */
        "emulated_cpu", meta->emulated_cpu[0] ? meta->emulated_cpu : NULL,
        /* only when a step lost its perf counters, or never had them */
        "backends_reason", meta->backends_reason[0] ? meta->backends_reason : NULL,
        /* only when a limit cut the walk: reports of steps seen whole stay as they were */
        "processes_cut",
        js->cut_samples
            ? json_pack("{s:i, s:s}", "samples", (int)js->cut_samples, "reason", js->cut_reason)
            : NULL,
        "cpi", cpi, "bandwidth", bandwidth_figure(js), "cpu",
        proc ? json_pack("{s:f, s:f, s:s}", "user_s", lp->utime_s, "system_s", lp->stime_s,
                         "source", SRC_PROC_STAT)
             : missing(l->proc_reason, SRC_PROC_STAT),
        "faults",
        proc ? json_pack("{s:I, s:I, s:I, s:s}", "minor", (json_int_t)lp->minflt, "major",
                         (json_int_t)lp->majflt, "rss_bytes", (json_int_t)lp->rss_bytes, "source",
                         SRC_PROC_STAT)
             : missing(l->proc_reason, SRC_PROC_STAT),
        "perf_counts", perf_counts(js), "pages",
        js->page_samples
            ? json_pack("{s:o, s:o, s:o, s:I, s:i, s:s, s:o}", "start_bytes",
                        np_node_map_json(js->pages_start), "end_bytes",
                        np_node_map_json(js->pages_end), "peak_bytes",
                        np_node_map_json(js->pages_peak), "peak_total_bytes",
                        (json_int_t)js->pages_peak_total, "samples", (int)js->page_samples,
                        "source", SRC_NUMA_MAPS, "local_share", local_share_figure(js))
            : missing(l->pages_reason, SRC_NUMA_MAPS),
        "local_nodes", js->local_nodes ? np_node_list_json(js->local_nodes) : NULL, "timeline",
        js->ntimeline ? timeline_json(js) : NULL, "migrations", migrations_json(meta, js),
        "os_interference", os_interference(js), "numa_balancing",
        js->balancing_samples ? json_pack("{s:I, s:I, s:s}", "pages_migrated",
                                          (json_int_t)js->balancing_pages_migrated, "faults",
                                          (json_int_t)js->balancing_faults, "source", SRC_BALANCING)
                              : missing(js->last.balancing_reason, SRC_BALANCING),
        "helper", "cpu_time_s", js->helper_cpu_s, "source",
        "numaplaced: CLOCK_THREAD_CPUTIME_ID around this job's work", "cpus",
        helper_cpus ? meta->helper_cpus : NULL, "shared_cpus",
        helper_cpus ? meta->shared_cpus : NULL);
    if (report)
        add_pages_by_tier(report, meta, js);
    return report;
}

int np_report_check(json_t *report, struct np_err *err)
{
    const char *schema = json_string_value(json_object_get(report, "schema"));

    if (!json_is_object(report))
        return np_err_set(err, -EINVAL, "a report must be a JSON object");
    if (!schema)
        return np_err_set(err, -EINVAL, "not a numaplace report (no \"schema\")");
    /* the major version, or one of its minor versions (/1.N: optional members added) */
    const size_t major = strlen(NP_REPORT_SCHEMA_MAJOR);
    if (strncmp(schema, NP_REPORT_SCHEMA_MAJOR, major) != 0 ||
        (schema[major] && (schema[major] != '.' || !schema[major + 1] ||
                           strspn(schema + major + 1, "0123456789") != strlen(schema + major + 1))))
        return np_err_set(err, -EPROTO, "report schema %s; this numaplace reads %s", schema,
                          NP_REPORT_SCHEMA_MAJOR);
    return 0;
}

json_t *np_class_prediction_json(const struct np_class_prediction *p)
{
    return json_pack("{s:f, s:f, s:f, s:b}", "slowdown", p->slowdown, "llc_mpki", p->llc_mpki,
                     "cpi", p->cpi, "sensitive", p->sensitive);
}

int np_class_prediction_from_json(const json_t *j, struct np_class_prediction *p)
{
    int sensitive = 0;

    memset(p, 0, sizeof(*p));
    if (!j)
        return 0;
    if (json_unpack_ex((json_t *)j, NULL, JSON_STRICT, "{s:F, s:F, s:F, s:b}", "slowdown",
                       &p->slowdown, "llc_mpki", &p->llc_mpki, "cpi", &p->cpi, "sensitive",
                       &sensitive) != 0) {
        memset(p, 0, sizeof(*p));
        return -EINVAL;
    }
    p->sensitive = sensitive;
    p->known = true;
    return 0;
}

void np_class_prediction_text(const struct np_class_prediction *p, char *buf, size_t len)
{
    snprintf(buf, len, "auto: predicted %.2fx with remote memory (LLC MPKI %.2f, CPI %.2f): %s",
             p->slowdown, p->llc_mpki, p->cpi, p->sensitive ? "sensitive" : "not sensitive");
}

/* The trace (numaplace.trace/1): its lines, and the replay that rebuilds reports through
 * np_step_figures and np_report_new, as numaplaced does. */
/* ---- trace ---- */

json_t *np_trace_job_line(const struct np_job_meta *meta)
{
    const bool helper_cpus = meta->helper_cpus[0];

    return json_pack("{s:s, s:s, s:I, s:I, s:I, s:s, s:f, s:f, s:s, s:s, s:s, s:s, s:O*, s:o*, "
                     "s:o*, s:s*, s:s*, "
                     "s:s*}",
                     "schema", NP_TRACE_SCHEMA, "event", "job", "job", (json_int_t)meta->job_id,
                     "step", (json_int_t)meta->step_id, "uid", (json_int_t)meta->uid, "node",
                     meta->node, "start", meta->start_epoch, "interval_s", meta->interval_s,
                     "policy", meta->policy_requested, "sensitivity", meta->sensitivity, "cpus",
                     meta->cpus, "backends", meta->backends, "tasks", meta->tasks, "local_nodes",
                     meta->local_nodes ? np_node_list_json(meta->local_nodes) : NULL,
                     "registered_nodes",
                     meta->registered_nodes ? np_node_list_json(meta->registered_nodes) : NULL,
                     "effective_cpus", meta->effective_cpus[0] ? meta->effective_cpus : NULL,
                     "helper_cpus", helper_cpus ? meta->helper_cpus : NULL, "shared_cpus",
                     helper_cpus ? meta->shared_cpus : NULL);
}

json_t *np_trace_sample_line(uint32_t job_id, uint32_t step_id, const struct np_sample *s,
                             double helper_cpu_s)
{
    return json_pack("{s:s, s:I, s:I, s:f, s:o}", "event", "sample", "job", (json_int_t)job_id,
                     "step", (json_int_t)step_id, "helper_cpu_s", helper_cpu_s, "sample",
                     np_sample_to_json(s));
}

void np_trace_sample_cpus(json_t *line, const struct np_job_meta *meta)
{
    if (!line)
        return;
    json_object_set_new(line, "effective_cpus", json_string(meta->effective_cpus));
    json_object_set_new(line, "local_nodes", np_node_list_json(meta->local_nodes));
}

json_t *np_trace_end_line(uint32_t job_id, uint32_t step_id, double end_epoch)
{
    return json_pack("{s:s, s:I, s:I, s:f}", "event", "end", "job", (json_int_t)job_id, "step",
                     (json_int_t)step_id, "end", end_epoch);
}

struct replay_job {
    struct np_job_meta meta;
    struct np_step_figures stats;
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

/* String @p key of @p line into @p dst ("" when it is none). */
static void copy_str(char *dst, size_t size, const json_t *line, const char *key)
{
    const char *v = json_string_value(json_object_get(line, key));

    snprintf(dst, size, "%s", v ? v : "");
}

/* [n, ...] as a node mask (bits past 63 and non-numbers left out). */
static uint64_t node_mask(json_t *list)
{
    uint64_t mask = 0;
    size_t k;
    json_t *node;

    json_array_foreach(list, k, node)
    {
        const json_int_t n = json_integer_value(node);
        if (n >= 0 && n < 64)
            mask |= 1ull << n;
    }
    return mask;
}

/* The effective CPUs and their nodes of a job or sample line, when it has them (older traces
 * do not: local_nodes are then the registered CPUs' nodes). */
static void apply_cpus(struct replay_job *j, json_t *line)
{
    if (json_is_string(json_object_get(line, "effective_cpus")))
        copy_str(j->meta.effective_cpus, sizeof(j->meta.effective_cpus), line, "effective_cpus");
    if (json_is_array(json_object_get(line, "local_nodes")))
        j->meta.local_nodes = j->stats.local_nodes =
            node_mask(json_object_get(line, "local_nodes"));
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
    np_step_figures_fini(&j->stats);
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
                    np_step_figures_init(&j->stats);
                    j->meta.job_id = (uint32_t)json_integer_value(json_object_get(obj, "job"));
                    j->meta.step_id = (uint32_t)json_integer_value(json_object_get(obj, "step"));
                    j->meta.uid = (uid_t)json_integer_value(json_object_get(obj, "uid"));
                    j->meta.start_epoch = json_number_value(json_object_get(obj, "start"));
                    j->meta.interval_s = json_number_value(json_object_get(obj, "interval_s"));
                    copy_str(j->meta.node, sizeof(j->meta.node), obj, "node");
                    copy_str(j->meta.policy_requested, sizeof(j->meta.policy_requested), obj,
                             "policy");
                    copy_str(j->meta.sensitivity, sizeof(j->meta.sensitivity), obj, "sensitivity");
                    copy_str(j->meta.cpus, sizeof(j->meta.cpus), obj, "cpus");
                    copy_str(j->meta.helper_cpus, sizeof(j->meta.helper_cpus), obj, "helper_cpus");
                    copy_str(j->meta.shared_cpus, sizeof(j->meta.shared_cpus), obj, "shared_cpus");
                    snprintf(j->meta.backends, sizeof(j->meta.backends), "replay of %s",
                             json_string_value(json_object_get(obj, "backends"))
                                 ? json_string_value(json_object_get(obj, "backends"))
                                 : "?");
                    j->tasks = json_incref(json_object_get(obj, "tasks"));
                    j->meta.registered_nodes = node_mask(json_object_get(obj, "registered_nodes"));
                    apply_cpus(j, obj);
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
            } else {
                apply_cpus(j, obj); /* before the sample, as numaplaced does */
                if (np_step_figures_add(&j->stats, &s) < 0)
                    rc = np_err_set(err, -EINVAL, "%s:%u: sample goes back in time", name, lineno);
                else
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
                np_step_figures_fini(&jobs[i].stats);
                json_decref(jobs[i].tasks);
            }
        }
    free(line);
    free(jobs);
    return rc < 0 ? rc : reports;
}
