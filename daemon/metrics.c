/* numaplaced's Prometheus page (see metrics_text.h): the node's families here, the steps' in
 * metrics_steps.c, the process_* ones in metrics_process.c. */
#include "metrics_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "migration.h"
#include "numaplace/procfs.h"

#ifndef NUMAPLACED_VERSION
#define NUMAPLACED_VERSION "unknown"
#endif

static void node_numbers(const struct np_daemon *d, unsigned *os, unsigned *count)
{
    const unsigned n = d->topology ? np_topology_node_count(d->topology) : 1;

    *count = 0;
    for (unsigned i = 0; i < n && *count < NP_SAMPLE_MAX_NODES; i++) {
        const unsigned o = d->topology ? np_topology_node(d->topology, i)->os_index : i;
        if (o < NP_SAMPLE_MAX_NODES && o < NP_MAX_NODES)
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
        have[i] = np_node_meminfo(d->cfg.proc_root, os[i], NULL, &total[i], &free_b[i], NULL) == 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *name =
            pass ? "numaplace_node_memory_free_bytes" : "numaplace_node_memory_total_bytes";
        metrics_family(t, name, "gauge",
                       pass ? "Free memory of each NUMA node, in bytes (its meminfo MemFree)."
                            : "Memory of each NUMA node, in bytes (its meminfo MemTotal).");
        for (unsigned i = 0; i < count; i++)
            if (have[i]) {
                snprintf(node, sizeof(node), "%u", os[i]);
                metrics_series(t, name);
                metrics_label(t, true, "node", node);
                metrics_value_u64(t, true, pass ? free_b[i] : total[i]);
            }
    }
}

/* Per memory node, the traffic it served since numaplaced started: its controllers' counts where
 * they count it (source uncore), else its steps' LLC misses x 64 B spread by where their pages
 * are (source misses), which needs the hardware counters; absent when neither counts. */
static void render_node_traffic(const struct np_daemon *d, struct metrics_text *t,
                                const unsigned *os, unsigned count)
{
    char node[16];

    metrics_family(t, "numaplace_node_memory_traffic_bytes_total", "counter",
                   "Memory traffic each NUMA node served, in bytes, with its source (uncore: its "
                   "memory controllers' counters; misses: its steps' LLC misses x 64 B by where "
                   "their pages are); absent when not measured.");
    for (unsigned i = 0; i < count; i++) {
        const bool uncore = uncore_bw_counts_node(d, os[i]);
        if (!uncore && !d->hw_counters)
            continue;
        snprintf(node, sizeof(node), "%u", os[i]);
        metrics_series(t, "numaplace_node_memory_traffic_bytes_total");
        metrics_label(t, true, "node", node);
        metrics_label(t, false, "source", uncore ? "uncore" : "misses");
        metrics_value_u64(t, true,
                          uncore ? d->totals.uncore_bytes[os[i]]
                                 : (uint64_t)(d->totals.misses_bytes[os[i]] + 0.5));
    }
}

static void render_counters_info(const struct np_daemon *d, struct metrics_text *t)
{
    metrics_single_u64(t, "numaplace_counters_available", "gauge",
                       "1 when the hardware counters behind the step counters and the misses "
                       "traffic (cycles, instructions, LLC misses) count on this node, else 0.",
                       d->hw_counters ? 1 : 0);
    metrics_family(t, "numaplace_counters_info", "gauge",
                   "Always 1: why hardware counters do not count, as a code (none when they do; "
                   "the sentence is in the log and `numaplace status`).");
    metrics_series(t, "numaplace_counters_info");
    const char *why = np_perf_why_name(d->hw_counters ? NP_PERF_WHY_NONE : d->hw_off_why);
    metrics_label(t, true, "reason", why ? why : "other");
    metrics_value_u64(t, true, 1);
}

static void render_migration(const struct np_daemon *d, struct metrics_text *t)
{
    const struct np_daemon_totals *tot = &d->totals;
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE); /* the base page the kernel moves */

    metrics_family(t, "numaplace_moved_bytes_total", "counter",
                   "Memory numaplaced moved, in bytes, by trigger and migration order.");
    for (int tr = 0; tr < NP_TRIGGER_COUNT; tr++)
        for (int o = 0; o < NPD_MAX_ORDERS && np_order_at((size_t)o); o++) {
            metrics_series(t, "numaplace_moved_bytes_total");
            metrics_label_code(t, true, "trigger", np_trigger_name((enum np_trigger_kind)tr));
            metrics_label_code(t, false, "order", np_order_at((size_t)o)->name);
            metrics_value_u64(t, true, tot->pages_moved[tr][o] * page);
        }
    metrics_family(t, "numaplace_migration_requests_total", "counter",
                   "Migration requests finished, by trigger and outcome.");
    for (int tr = 0; tr < NP_TRIGGER_COUNT; tr++)
        for (int o = 0; o < NP_OUTCOME_COUNT; o++) {
            metrics_series(t, "numaplace_migration_requests_total");
            metrics_label_code(t, true, "trigger", np_trigger_name((enum np_trigger_kind)tr));
            metrics_label_code(t, false, "outcome",
                               np_request_outcome_name((enum np_request_outcome)o));
            metrics_value_u64(t, true, tot->requests[tr][o]);
        }
    metrics_family(t, "numaplace_move_failed_bytes_total", "counter",
                   "Memory that would not move, in bytes, by cause.");
    for (int f = 0; f < NP_MOVE_FAIL_COUNT; f++) {
        metrics_series(t, "numaplace_move_failed_bytes_total");
        metrics_label_code(t, true, "cause", np_move_failure_name((enum np_move_failure)f));
        metrics_value_u64(t, true, tot->failed_pages[f] * page);
    }
}

static void render_helper(const struct np_daemon *d, struct metrics_text *t)
{
    const struct np_daemon_totals *tot = &d->totals;

    metrics_family(t, "numaplace_build_info", "gauge", "Always 1: numaplaced's version.");
    metrics_series(t, "numaplace_build_info");
    metrics_label(t, true, "version", NUMAPLACED_VERSION);
    metrics_value_u64(t, true, 1);
    metrics_single_f(t, "numaplace_sampling_seconds_total", "counter",
                     "CPU time numaplaced spent sampling steps and the node, in seconds.",
                     tot->sampling_cpu_s);
    metrics_single_u64(t, "numaplace_samples_total", "counter", "Step samples taken.",
                       tot->samples);
    metrics_single_u64(t, "numaplace_steps", "gauge", "Job steps tracked now.", d->registry.count);
    metrics_single_f(t, "numaplace_scrape_render_seconds", "gauge",
                     "Time the previous page took to render, in seconds.", d->metrics_render_s);
    metrics_single_u64(t, "numaplace_reports_in_memory", "gauge",
                       "Step reports held in memory now, while the spool refuses them.",
                       d->report_hold.count);
    metrics_single_u64(
        t, "numaplace_reports_held_total", "counter",
        "Step reports the spool refused and numaplaced held in memory to write later.",
        tot->reports_held);
    metrics_single_u64(
        t, "numaplace_reports_lost_total", "counter",
        "Step reports lost: refused by the spool with the hold full, out of memory, or still "
        "held at a stop that could not save them in the registry.",
        tot->reports_lost);
    metrics_single_u64(
        t, "numaplace_spool_write_failures_total", "counter",
        "Writes of a report to the spool that failed (each retry of a held one too).",
        tot->spool_write_failures);
    metrics_single_u64(t, "numaplace_connections_refused_total", "counter",
                       "Connections to numaplaced's socket refused (its share of the slots taken).",
                       tot->connections_refused);
    metrics_single_u64(t, "numaplace_scrapes_refused_total", "counter",
                       "Peers of the metrics endpoint refused (not allowed, or their share taken).",
                       tot->scrapes_refused);
}

int metrics_render(struct np_daemon *d, struct metrics_text *text)
{
    unsigned os[NP_SAMPLE_MAX_NODES], count;

    memset(text, 0, sizeof(*text));
    node_numbers(d, os, &count);
    render_node_memory(d, text, os, count);
    render_node_traffic(d, text, os, count);
    render_counters_info(d, text);
    render_migration(d, text);
    render_helper(d, text);
    metrics_render_process(d, text);
    metrics_render_steps(d, text, os, count);
    if (text->oom) {
        free(text->buf);
        memset(text, 0, sizeof(*text));
        return -ENOMEM;
    }
    return 0;
}
