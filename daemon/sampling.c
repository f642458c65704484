/* The node at start (topology, perf, housekeeping CPUs) and the steps each interval (see
 * sampling.h). */
#include "sampling.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "numaplace/procfs.h"

#include "auto_class.h"
#include "housekeeping.h"
#include "jobs.h"
#include "report_out.h"

/* The housekeeping CPUs asked for into @p wanted (empty: none), and why. */
static const char *wanted_cpus(const struct np_daemon *d, hwloc_bitmap_t wanted)
{
    hwloc_bitmap_zero(wanted);
    if (strcmp(d->cfg.housekeeping_cpus, "auto") == 0) {
        /* What this node knows of its specialized CPUs: where Slurm confines slurmd. */
        const int found = housekeeping_slurmd_cpus(d->cfg.proc_root, wanted);

        if (found < 0)
            NPD_LOG(d, WARNING,
                    "housekeeping_cpus=auto: the slurmd processes under %s/proc run on different "
                    "or unreadable CPU lists; not pinned to any (housekeeping_cpus=LIST names "
                    "them)",
                    d->cfg.proc_root);
        /* A slurmd that may run wherever numaplaced may is not confined to specialized CPUs. */
        if (found <= 0 || hwloc_bitmap_isincluded(d->started_cpus, wanted)) {
            hwloc_bitmap_zero(wanted);
            return NULL;
        }
        return "the CPUs Slurm confines slurmd to: the node's CpuSpecList or CoreSpecCount";
    }
    if (strcmp(d->cfg.housekeeping_cpus, "none") == 0 ||
        hwloc_bitmap_list_sscanf(wanted, d->cfg.housekeeping_cpus) < 0) {
        hwloc_bitmap_zero(wanted);
        return NULL;
    }
    return hwloc_bitmap_iszero(wanted) ? NULL : "housekeeping_cpus";
}

void sampling_pin_housekeeping(struct np_daemon *d)
{
    char running[256] = "", quiet_list[256] = "", nohz_list[256] = "", isol_list[256] = "";
    hwloc_bitmap_t wanted = hwloc_bitmap_alloc(), nohz = hwloc_bitmap_alloc(),
                   isolated = hwloc_bitmap_alloc(), quiet = hwloc_bitmap_alloc(),
                   chosen = hwloc_bitmap_alloc();
    const char *why;
    int rc, pinned;

    if (!wanted || !nohz || !isolated || !quiet || !chosen || !d->started_cpus || !d->helper_cpus)
        goto out;
    if (hwloc_bitmap_iszero(d->started_cpus) && np_affinity_get(0, d->started_cpus) < 0)
        hwloc_bitmap_zero(d->started_cpus); /* once: a reload starts from it again */
    why = wanted_cpus(d, wanted);
    if (housekeeping_quiet_cpus(d->cfg.proc_root, nohz, isolated) < 0)
        NPD_LOG(d, WARNING, "cannot read the nohz_full or isolated CPU list under %s/sys",
                d->cfg.proc_root);
    hwloc_bitmap_or(quiet, nohz, isolated);
    rc = housekeeping_choose(wanted, d->started_cpus, quiet, chosen);
    if ((pinned = np_affinity_set(0, chosen)) < 0)
        NPD_LOG(d, WARNING, "cannot pin to CPUs: %s", strerror(-pinned));
    if (np_affinity_get(0, d->helper_cpus) < 0)
        hwloc_bitmap_zero(d->helper_cpus);
    hwloc_bitmap_list_snprintf(running, sizeof(running), d->helper_cpus);
    hwloc_bitmap_list_snprintf(quiet_list, sizeof(quiet_list), quiet);
    hwloc_bitmap_list_snprintf(nohz_list, sizeof(nohz_list), nohz);
    hwloc_bitmap_list_snprintf(isol_list, sizeof(isol_list), isolated);
    if (!hwloc_bitmap_iszero(quiet))
        NPD_LOG(d, INFO, "leaves out the kernel's quiet CPUs %s (nohz_full: %s; isolated: %s)",
                quiet_list, nohz_list[0] ? nohz_list : "none", isol_list[0] ? isol_list : "none");
    if (rc == 2)
        NPD_LOG(d, WARNING, "every CPU it may use is nohz_full or isolated: runs on %s", running);
    else if (why && rc == 0)
        NPD_LOG(d, INFO, "runs on housekeeping CPUs %s (%s)", running, why);
    else if (why)
        NPD_LOG(d, WARNING,
                "the housekeeping CPUs (%s) are all nohz_full or isolated: runs on CPUs %s; it "
                "may share CPUs with jobs",
                why, running);
    else
        NPD_LOG(d, INFO,
                "runs on CPUs %s: no housekeeping CPUs (housekeeping_cpus=%s%s); it may share "
                "CPUs with jobs",
                running, d->cfg.housekeeping_cpus,
                strcmp(d->cfg.housekeeping_cpus, "auto") == 0
                    ? " and slurmd is not confined to specialized CPUs here"
                    : "");
out:
    hwloc_bitmap_free(wanted);
    hwloc_bitmap_free(nohz);
    hwloc_bitmap_free(isolated);
    hwloc_bitmap_free(quiet);
    hwloc_bitmap_free(chosen);
}

void sampling_close_meminfo(struct np_daemon *d)
{
    for (unsigned n = 0; d->meminfo_files && n < NP_MAX_NODES; n++)
        np_kept_file_close(&d->meminfo_files[n]);
    free(d->meminfo_files);
    d->meminfo_files = NULL;
}

void sampling_load_topology(struct np_daemon *d)
{
    struct np_err err = {0};
    const int maxcpu = (int)sysconf(_SC_NPROCESSORS_CONF);

    d->ncpus = maxcpu > 0 ? (unsigned)maxcpu : 1;
    if (!d->meminfo_files) /* the migration view reads them every interval (zeroed: closed) */
        d->meminfo_files = calloc(NP_MAX_NODES, sizeof(*d->meminfo_files));
    if (np_topology_load(&d->topology, NP_TOPOLOGY_LIVE, NULL, &err) < 0) {
        NPD_LOG(d, WARNING, "topology: %s; bandwidth cannot be attributed to nodes", err.msg);
        return;
    }
    free(d->cpu_node);
    d->cpu_node = malloc(d->ncpus * sizeof(int));
    if (!d->cpu_node)
        return;
    for (unsigned c = 0; c < d->ncpus; c++)
        d->cpu_node[c] = -1;
    for (unsigned i = 0; i < np_topology_node_count(d->topology); i++) {
        const struct np_numa_node *node = np_topology_node(d->topology, i);
        int cpu;
        hwloc_bitmap_foreach_begin(cpu, node->cpus)
        {
            if ((unsigned)cpu < d->ncpus)
                d->cpu_node[cpu] = (int)node->os_index;
        }
        hwloc_bitmap_foreach_end();
    }
    NPD_LOG(d, INFO, "topology: %u NUMA node(s), %u CPU(s)", np_topology_node_count(d->topology),
            d->ncpus);
}

void sampling_probe_perf(struct np_daemon *d)
{
    struct np_err err = {0};
    struct np_perf_counters *c = &d->perf_held;
    int opened;

    np_perf_close(c); /* a reload probes afresh */
    d->perf_mask = 0;
    d->hw_counters = false;
    d->hw_off_why = d->cfg.perf ? NP_PERF_WHY_LIBPFM : NP_PERF_WHY_PERF_OFF;
    if (!d->cfg.perf) {
        snprintf(d->perf_off_reason, sizeof(d->perf_off_reason),
                 "perf backend turned off (backends=proc)");
        snprintf(d->hw_off_reason, sizeof(d->hw_off_reason), "%s", d->perf_off_reason);
        NPD_LOG(d, INFO, "perf: %s", d->perf_off_reason);
        return;
    }
    if (np_perf_init(&err) < 0) {
        snprintf(d->perf_off_reason, sizeof(d->perf_off_reason), "libpfm4: %.400s", err.msg);
        snprintf(d->hw_off_reason, sizeof(d->hw_off_reason), "%s", d->perf_off_reason);
        NPD_LOG(d, WARNING, "perf: unavailable: %s", err.msg);
        return;
    }
    /* Every event on ourselves, to say at start-up what this node can count; kept open. */
    opened = np_perf_open(c, getpid(), NP_PERF_ALL_MASK, &err);
    d->hw_counters = opened > 0;
    d->hw_off_reason[0] = '\0';
    d->hw_off_why = NP_PERF_WHY_NONE;
    for (int e = 0; e < NP_PERF_NEVENTS; e++) {
        if (c->fd[e] >= 0)
            continue;
        NPD_LOG(d, INFO, "perf: %s unavailable: %s", np_perf_event_name((enum np_perf_event)e),
                c->reason[e]);
        /* CPI and bandwidth need the hardware events: the first one missing says why not. */
        if ((NP_PERF_HARDWARE_MASK & (1u << e)) && d->hw_counters) {
            d->hw_counters = false;
            snprintf(d->hw_off_reason, sizeof(d->hw_off_reason), "%.400s", c->reason[e]);
            d->hw_off_why = c->why[e];
        }
    }
    /* Keep asking for the hardware events too: their per-task failure is the reason shown. */
    d->perf_mask = opened > 0 ? NP_PERF_ALL_MASK : 0;
    if (!d->perf_mask) {
        snprintf(d->perf_off_reason, sizeof(d->perf_off_reason),
                 "no perf event opens here (%.400s)",
                 err.msg[0] ? err.msg : "see the helper's log");
        snprintf(d->hw_off_reason, sizeof(d->hw_off_reason), "%s", d->perf_off_reason);
        if (d->hw_off_why == NP_PERF_WHY_NONE) /* no event opened, none hardware said why */
            d->hw_off_why = c->why[NP_PERF_CYCLES] ? c->why[NP_PERF_CYCLES] : NP_PERF_WHY_OTHER;
    }
    NPD_LOG(d, INFO, "perf: %d of %d events count on this node", opened < 0 ? 0 : opened,
            NP_PERF_NEVENTS);
    if (np_cpu_emulated(NULL, d->emulated_cpu, sizeof(d->emulated_cpu)))
        NPD_LOG(d, INFO, "perf: the CPU is emulated (%s): its counts are the emulator's",
                d->emulated_cpu);
}

void sampling_count_node_traffic(struct np_daemon *d, const struct np_daemon_job *j, uint64_t bytes)
{
    uint64_t total = 0;

    for (int n = 0; n < NP_SAMPLE_MAX_NODES; n++)
        total += j->stats.pages_end[n];
    if (!bytes || !total)
        return;
    for (int n = 0; n < NP_SAMPLE_MAX_NODES && n < NP_MAX_NODES; n++)
        d->totals.misses_bytes[n] +=
            (double)bytes * ((double)j->stats.pages_end[n] / (double)total);
}

void sampling_sample_job(struct np_daemon *d, struct np_daemon_job *j, double now,
                         bool node_counters_read, bool final)
{
    uint64_t traffic_before;
    const struct np_helper_config *cfg = &d->cfg;
    const double cpu0 = np_daemon_thread_cpu_s();
    const double half = cfg->interval_ms / 2.0;
    const bool large = j->stats.last.rss_bytes >= cfg->numa_maps_large_bytes;
    const bool pages_due =
        (now - j->last_pages_mono) * 1000.0 >=
        (large ? cfg->numa_maps_large_interval_ms : cfg->numa_maps_interval_ms) - half;
    const bool detail_due =
        final || (now - j->last_detail_mono) * 1000.0 >= cfg->detail_interval_ms - half;
    struct np_sample s;
    bool cpus_changed = false;

    if (!j->meta.helper_cpus[0])
        job_note_helper_cpus(d, j); /* the first sample: the step's CPUs are known by now */
    np_sampler_sample(&j->sampler, now, node_counters_read ? &d->counters : NULL, pages_due,
                      detail_due, &s);
    if (node_counters_read && !d->counters.irq_read && s.processes == 0) {
        /* Its processes are gone: this may be its last sample, which its report's interrupt
         * figures are taken from. */
        np_node_counters_read_irq(&d->counters, d->cfg.proc_root);
        np_sampler_node_figures(&j->sampler, &d->counters, &s);
    }
    if (s.have_pages)
        j->last_pages_mono = now;
    if (detail_due) {
        const uint64_t before = j->meta.local_nodes;
        j->last_detail_mono = now;
        cpus_changed = job_follow_effective_cpus(d, j);
        if (cpus_changed && before != j->meta.local_nodes)
            NPD_LOG(d, INFO, "job %u.%s: its tasks may run on CPUs %s (registered %s)",
                    j->meta.job_id, np_step_name(j->meta.step_id), j->meta.effective_cpus,
                    j->meta.cpus[0] ? j->meta.cpus : "none");
    }
    traffic_before = j->stats.traffic_bytes_total;
    if (np_step_figures_add(&j->stats, &s) < 0)
        NPD_LOG(d, ERROR, "job %u: out of memory", j->meta.job_id);
    sampling_count_node_traffic(d, j, j->stats.traffic_bytes_total - traffic_before);
    auto_class_consider(d, j, &s);
    if (d->trace) {
        json_t *line;
        if (!j->traced) {
            j->meta.tasks = j->tasks;
            trace_line(d, np_trace_job_line(&j->meta));
            j->traced = true;
            cpus_changed = false; /* the job line says them */
        }
        line = np_trace_sample_line(j->meta.job_id, j->meta.step_id, &s, j->stats.helper_cpu_s);
        if (cpus_changed) /* after the job line: the replay follows from this sample on */
            np_trace_sample_cpus(line, &j->meta);
        trace_line(d, line);
    }
    {
        const double spent = np_daemon_thread_cpu_s() - cpu0; /* one clock read: a system call */
        j->stats.helper_cpu_s += spent;
        d->totals.sampling_cpu_s += spent;
    }
    d->totals.samples++;
}
