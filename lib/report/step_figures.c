/* One job's samples accumulated into figures (np_step_figures, numaplace/report.h): CPI per
 * interval, bandwidth, pages, the local share and the bounded timeline the report is written from.
 */
#include "numaplace/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <unistd.h>

#define CACHE_LINE_BYTES 64.0 /* the model: bandwidth = LLC misses x 64 B / interval */

int np_step_figures_init(struct np_step_figures *js)
{
    memset(js, 0, sizeof(*js));
    return 0;
}

void np_step_figures_fini(struct np_step_figures *js)
{
    if (!js)
        return;
    free(js->cpi);
    json_decref(js->migration_requests);
    free(js->timeline);
    np_step_figures_init(js);
}

void np_step_figures_event(struct np_step_figures *js, double t, const char *label)
{
    if (js->nevents >= NP_TIMELINE_MAX_EVENTS)
        return;
    js->events[js->nevents].t = t;
    snprintf(js->events[js->nevents].label, sizeof(js->events[0].label), "%s", label);
    js->nevents++;
}

_Static_assert(NP_SAMPLE_MAX_NODES <= 64, "local_nodes is a 64-bit mask over the sample's nodes");

/* Time-weighted local share: each numa_maps reading holds until the next one. */
static void add_local_share(struct np_step_figures *js, const struct np_sample *s)
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
static int add_timeline_point(struct np_step_figures *js, double t, double bandwidth, double cpi)
{
    struct np_step_figures_point *p;

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

static int push_cpi(struct np_step_figures *js, double cpi)
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

/* The interval's traffic by the node whose memory served it: the misses are counted on the
 * CPUs' node, the pages say where the memory is (as np_node_traffic does for the daemon). */
static void spread_over_memory_nodes(struct np_step_figures *js, double bw)
{
    uint64_t total = 0;

    for (int n = 0; n < NP_SAMPLE_MAX_NODES; n++)
        total += js->pages_end[n];
    if (total == 0)
        return;
    for (int n = 0; n < NP_SAMPLE_MAX_NODES; n++)
        js->bw_mem_sum[n] += bw * ((double)js->pages_end[n] / (double)total);
    js->bw_mem_intervals++;
}

int np_step_figures_add(struct np_step_figures *js, const struct np_sample *s)
{
    const struct np_sample *p = &js->last;
    double dt, interval_cpi = -1, interval_bw = -1;

    if (js->samples && s->t < js->last.t)
        return -EINVAL;
    dt = js->samples ? s->t - p->t : 0;
    if (js->samples && dt > 0) {
        const int cyc = NP_PERF_CYCLES, ins = NP_PERF_INSTRUCTIONS;
        const bool counted =
            s->have_perf[cyc] && s->have_perf[ins] && p->have_perf[cyc] && p->have_perf[ins];
        if (counted && s->perf[ins] > p->perf[ins] && s->perf[cyc] >= p->perf[cyc]) {
            interval_cpi =
                (double)(s->perf[cyc] - p->perf[cyc]) / (double)(s->perf[ins] - p->perf[ins]);
            if (push_cpi(js, interval_cpi) < 0)
                return -ENOMEM;
        }
        /* A sum over the live tasks drops when one goes: such an interval adds nothing. */
        if (counted) {
            js->cycles_total += s->perf[cyc] > p->perf[cyc] ? s->perf[cyc] - p->perf[cyc] : 0;
            js->instructions_total += s->perf[ins] > p->perf[ins] ? s->perf[ins] - p->perf[ins] : 0;
            js->counted_intervals++;
        }
        if (s->have_misses_by_node && p->have_misses_by_node) {
            double total = 0;
            for (int n = 0; n < NP_SAMPLE_MAX_NODES; n++) {
                const uint64_t misses = s->misses_by_node[n] >= p->misses_by_node[n]
                                            ? s->misses_by_node[n] - p->misses_by_node[n]
                                            : 0;
                double bw = (double)misses * CACHE_LINE_BYTES / dt;
                js->traffic_bytes_total += misses * (uint64_t)CACHE_LINE_BYTES;
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
    if (interval_bw >= 0 && js->page_samples)
        spread_over_memory_nodes(js, interval_bw);
    if (add_timeline_point(js, s->t, interval_bw, interval_cpi) < 0)
        return -ENOMEM;
    if (s->processes_cut) {
        js->cut_samples++;
        snprintf(js->cut_reason, sizeof(js->cut_reason), "%s", s->proc_reason);
    }
    if (s->have_proc && s->processes > 0) {
        js->proc_samples++;
        js->last_proc = *s;
    }
    /* The first reading of each counter stays in [0]; the latest goes to [1]. */
    if (s->have_proc && s->have_cs && s->processes > 0)
        for (int k = js->cs_samples++ ? 1 : 0; k < 2; k++) {
            js->cs_t[k] = s->t;
            js->involuntary_cs[k] = s->involuntary_cs;
        }
    if (s->have_irq)
        for (int k = js->irq_samples++ ? 1 : 0; k < 2; k++) {
            js->irq_t[k] = s->t;
            js->interrupts[k] = s->interrupts;
            js->softirqs[k] = s->softirqs;
        }
    if (s->have_cpu_busy && s->have_proc && s->processes > 0)
        for (int k = js->busy_samples++ ? 1 : 0; k < 2; k++) {
            js->busy_t[k] = s->t;
            js->busy_s[k] = s->cpus_busy_s;
            js->own_s[k] = s->utime_s + s->stime_s;
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

/* Migrations booked into a job's figures (numaplace/report.h): the daemon hands over the
 * engine's result, the report's migrations block and timeline events come out. */
int np_step_figures_book_migration(struct np_step_figures *js, const struct np_request_result *r,
                                   const struct np_job_outcome *o, double t)
{
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    const struct np_request *req = &r->request;
    json_t *entry;

    if (req->src >= NP_SAMPLE_MAX_NODES || req->dst >= NP_SAMPLE_MAX_NODES)
        return -EINVAL;
    if (!r->dry_run && o->moved.pages_moved) {
        char label[48];
        snprintf(label, sizeof(label), "%u->%u %" PRIu64 " MiB", req->src, req->dst,
                 o->moved.pages_moved * page >> 20);
        np_step_figures_event(js, t, label);
    }
    if (!r->dry_run) {
        js->pages_out[req->src] += o->moved.pages_moved * page;
        js->pages_in[req->dst] += o->moved.pages_moved * page;
        js->migration_moving_s += o->moved.ns_moving / 1e9;
        for (int f = 0; f < NP_MOVE_FAIL_COUNT; f++)
            js->migration_failed[f] += o->moved.pages_failed[f];
    }
    if (!js->migration_requests)
        js->migration_requests = json_array();
    entry =
        json_pack("{s:s, s:i, s:i, s:s, s:s, s:I, s:I, s:b, s:b, s:b}", "trigger",
                  np_trigger_name(req->trigger), "from", (int)req->src, "to", (int)req->dst,
                  "order", r->order ? r->order : "?", "reason", req->reason, "planned_pages",
                  (json_int_t)o->planned, "moved_pages", (json_int_t)o->moved.pages_moved,
                  "dry_run", r->dry_run, "used_proxy", r->used_proxy, "stopped", o->moved.stopped);
    if (entry && r->src_tier != r->dst_tier) /* a demotion or promotion: the tiers it crossed */
        json_object_update_new(entry, json_pack("{s:i, s:i}", "from_tier", (int)r->src_tier,
                                                "to_tier", (int)r->dst_tier));
    if (!js->migration_requests) {
        json_decref(entry);
        return -ENOMEM;
    }
    /* json_array_append_new takes the entry even when it fails */
    return entry && json_array_append_new(js->migration_requests, entry) == 0 ? 0 : -ENOMEM;
}
