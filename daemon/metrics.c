/* numaplaced's Prometheus page (metrics_text.h): the node's, process_* and the steps' families */
#include "metrics_text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "numaplace/procfs.h"
#include "numaplace/names.h"
#include "user_names.h"

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
    /* Joined on node, it gives any per-node series by tier (a step's memory, the free memory). */
    metrics_family(t, "numaplace_node_memory_tier", "gauge",
                   "Each NUMA node's memory tier (0 the fastest; one tier: all 0) and its kind.");
    for (unsigned i = 0; d->topology && i < count; i++) {
        const struct np_numa_node *n = np_topology_node_by_os_index(d->topology, os[i]);
        if (!n)
            continue;
        snprintf(node, sizeof(node), "%u", os[i]);
        metrics_series(t, "numaplace_node_memory_tier");
        metrics_label(t, true, "node", node);
        metrics_label_code(t, false, "kind", np_memory_kind_name(n->kind));
        metrics_value_u64(t, true, n->tier);
    }
}

/* Per memory node, the traffic it served: its controllers' counts (source uncore), else its
 * steps' LLC misses x 64 B by where their pages are (source misses); absent when neither. */
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
    metrics_family(t, "numaplace_tier_moved_bytes_total", "counter",
                   "Memory numaplaced moved from one memory tier to another (0 the fastest), in "
                   "bytes; a pair appears once memory has moved between them.");
    for (int from = 0; from < NPD_MAX_TIERS; from++)
        for (int to = 0; to < NPD_MAX_TIERS; to++) {
            char from_tier[4], to_tier[4];
            if (!tot->tier_pages[from][to])
                continue;
            snprintf(from_tier, sizeof(from_tier), "%d", from);
            snprintf(to_tier, sizeof(to_tier), "%d", to);
            metrics_series(t, "numaplace_tier_moved_bytes_total");
            metrics_label(t, true, "from_tier", from_tier);
            metrics_label(t, false, "to_tier", to_tier);
            metrics_value_u64(t, true, tot->tier_pages[from][to] * page);
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

/* ---- the standard process_* families, from numaplaced's /proc files; unreadable: left out ---- */

static const char *root_of(const struct np_daemon *d)
{
    return strcmp(d->cfg.proc_root, "/") == 0 ? "" : d->cfg.proc_root;
}

/* The first "@p key N" line of @p path under the root, N in @p out. @return 0 or -1 */
static int read_keyed(const struct np_daemon *d, const char *path, const char *key,
                      unsigned long long *out)
{
    char full[2048], line[512];
    const size_t klen = strlen(key);
    FILE *f;
    int rc = -1;

    snprintf(full, sizeof(full), "%s%s", root_of(d), path);
    f = fopen(full, "re");
    if (!f)
        return -1;
    while (rc < 0 && fgets(line, sizeof(line), f))
        if (strncmp(line, key, klen) == 0 && sscanf(line + klen, " %llu", out) == 1)
            rc = 0;
    fclose(f);
    return rc;
}

static void render_process(const struct np_daemon *d, struct metrics_text *t)
{
    const double tick = (double)sysconf(_SC_CLK_TCK);
    const pid_t pid = getpid();
    struct np_proc_stat st;
    struct np_proc_status status = {0};
    unsigned long long btime, max_fds;
    char path[2048];
    long fds;
    const bool have_stat = np_proc_stat_read(root_of(d), pid, &st, NULL) == 0 && tick > 0;

    if (have_stat)
        metrics_single_f(t, "process_cpu_seconds_total", "counter",
                         "User and system CPU time numaplaced used (all its threads), in seconds.",
                         (double)(st.utime_ticks + st.stime_ticks) / tick);
    if (have_stat && read_keyed(d, "/proc/stat", "btime", &btime) == 0) {
        metrics_family(t, "process_start_time_seconds", "gauge",
                       "When numaplaced started, in seconds since the epoch.");
        metrics_series(t, "process_start_time_seconds");
        metrics_putf(t, " %.2f\n", (double)btime + (double)st.starttime_ticks / tick);
    }
    if (np_proc_status_read(root_of(d), pid, &status, NULL) == 0 && status.vm_rss_kb)
        metrics_single_u64(t, "process_resident_memory_bytes", "gauge",
                           "numaplaced's resident memory, in bytes.", status.vm_rss_kb * 1024);
    snprintf(path, sizeof(path), "%s/proc/%d/fd", root_of(d), (int)pid);
    if ((fds = fd_count_entries(path)) >= 0) /* the listing's own descriptor among them */
        metrics_single_u64(t, "process_open_fds", "gauge", "File descriptors numaplaced has open.",
                           (uint64_t)fds);
    snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
    if (read_keyed(d, path, "Max open files", &max_fds) == 0)
        metrics_single_u64(t, "process_max_fds", "gauge",
                           "numaplaced's limit of open file descriptors (its soft RLIMIT_NOFILE).",
                           max_fds);
}

/* ---- the per-step families: jobid and step label each; the user is on numaplace_step_info ---- */

/* Never looked up here: the name a thread found (user_names.h), the uid's number until then. */
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

/* The step's identity labels, opened: jobid, step. */
static void step_labels(struct metrics_text *t, const char *name, const struct np_daemon_job *j)
{
    char jobid[16];

    snprintf(jobid, sizeof(jobid), "%u", j->meta.job_id);
    metrics_series(t, name);
    metrics_label(t, true, "jobid", jobid);
    metrics_label(t, false, "step", np_step_name(j->meta.step_id));
}

/* The running steps that get series (all, none, or the first metrics_step_series) into @p shown,
 * the rest counted in @p left. @return how many are shown */
static unsigned shown_steps(const struct np_daemon *d, struct np_daemon_job **shown, unsigned *left)
{
    const struct np_metrics_config *mc = &d->cfg.metrics;
    const unsigned cap = mc->step_series_off   ? 0
                         : mc->step_series_max ? mc->step_series_max
                                               : d->registry.count;
    unsigned n = 0;

    *left = 0;
    for (unsigned i = 0; i < d->registry.count; i++) {
        struct np_daemon_job *j = registry_at(&d->registry, i);
        if (j->ended)
            continue;
        if (n < cap)
            shown[n++] = j;
        else
            (*left)++;
    }
    return n;
}

static void render_memory(struct metrics_text *t, struct np_daemon_job *const *js, unsigned shown,
                          const unsigned *os, unsigned count)
{
    char node[16];

    metrics_family(t, "numaplace_step_memory_bytes", "gauge",
                   "A running step's memory on each NUMA node, in bytes (its last numa_maps "
                   "reading).");
    for (unsigned k = 0; k < shown; k++) {
        const struct np_daemon_job *j = js[k];
        if (!j->stats.page_samples)
            continue;
        for (unsigned n = 0; n < count; n++) {
            snprintf(node, sizeof(node), "%u", os[n]);
            step_labels(t, "numaplace_step_memory_bytes", j);
            metrics_label(t, false, "node", node);
            metrics_value_u64(t, true, j->stats.pages_end[os[n]]);
        }
    }
    metrics_family(t, "numaplace_step_local_ratio", "gauge",
                   "Share (0..1) of a running step's memory on its CPUs' NUMA nodes.");
    for (unsigned k = 0; k < shown; k++) {
        const struct np_daemon_job *j = js[k];
        if (!j->stats.local_nodes || !j->stats.local_share_readings)
            continue;
        step_labels(t, "numaplace_step_local_ratio", j);
        metrics_value_f(t, true, j->stats.local_share_last);
    }
}

static void render_info(struct metrics_text *t, struct np_daemon_job *const *js, unsigned shown)
{
    metrics_family(t, "numaplace_step_info", "gauge",
                   "Always 1: a running step's user, class and requested placement policy (join "
                   "on jobid and step).");
    for (unsigned k = 0; k < shown; k++) {
        struct np_daemon_job *j = js[k];
        resolve_user(j);
        step_labels(t, "numaplace_step_info", j);
        metrics_label(t, false, "user", j->user);
        metrics_label_code(t, false, "class", np_class_name(j->job_class));
        metrics_label_code(t, false, "policy",
                           j->meta.policy_requested[0] ? j->meta.policy_requested : "unknown");
        metrics_value_u64(t, true, 1);
    }
}

/* Counters where the step's hardware counters count (why not: numaplace_counters_info). */
static void render_counters(struct metrics_text *t, struct np_daemon_job *const *js, unsigned shown)
{
    static const struct {
        const char *name, *help;
        size_t offset;
        bool traffic; /* counted with the misses, else with cycles and instructions */
    } counters[] = {
        {"numaplace_step_cycles_total", "CPU cycles of a running step's processes.",
         offsetof(struct np_step_figures, cycles_total), false},
        {"numaplace_step_instructions_total", "Instructions a running step's processes retired.",
         offsetof(struct np_step_figures, instructions_total), false},
        {"numaplace_step_memory_traffic_bytes_total",
         "A running step's memory traffic, in bytes (its LLC misses x 64 B).",
         offsetof(struct np_step_figures, traffic_bytes_total), true},
    };

    for (size_t c = 0; c < sizeof(counters) / sizeof(counters[0]); c++) {
        metrics_family(t, counters[c].name, "counter", counters[c].help);
        for (unsigned k = 0; k < shown; k++) {
            const struct np_daemon_job *j = js[k];
            const struct np_step_figures *st = &j->stats;
            if (!(counters[c].traffic ? st->bw_intervals : st->counted_intervals))
                continue;
            step_labels(t, counters[c].name, j);
            metrics_value_u64(t, true, *(const uint64_t *)((const char *)st + counters[c].offset));
        }
    }
}

static void render_steps(struct np_daemon *d, struct metrics_text *t, const unsigned *os,
                         unsigned count)
{
    struct np_daemon_job **js = malloc((d->registry.count + 1) * sizeof(struct np_daemon_job *));
    unsigned left = 0, shown = 0;

    if (!js)
        t->oom = true;
    else
        shown = shown_steps(d, js, &left);
    render_memory(t, js, shown, os, count);
    render_info(t, js, shown);
    render_counters(t, js, shown);
    free(js);
    metrics_single_u64(t, "numaplace_step_series_left_out", "gauge",
                       "Running steps without series of their own on this page "
                       "(metrics_step_series).",
                       left);
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
    render_process(d, text);
    render_steps(d, text, os, count);
    if (text->oom) {
        free(text->buf);
        memset(text, 0, sizeof(*text));
        return -ENOMEM;
    }
    return 0;
}
