/* The node at start (topology, perf, housekeeping CPUs, uncore), the steps each interval. */
#include "daemon.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>
#include <limits.h>

#include "numaplace/procfs.h"

/* ---- numaplaced's CPUs: housekeeping, never nohz_full or isolated ---- */

static int read_cpu_list(const char *root, const char *name, hwloc_bitmap_t out)
{
    char path[1200], text[4096] = "";
    FILE *f;

    hwloc_bitmap_zero(out);
    snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/%s", root ? root : "", name);
    f = fopen(path, "re");
    if (!f)
        return 0; /* an older kernel, or none configured */
    if (!fgets(text, sizeof(text), f))
        text[0] = '\0';
    fclose(f);
    text[strcspn(text, "\n")] = '\0';
    if (!text[0] || strcmp(text, "(null)") == 0) /* what some kernels print for none */
        return 0;
    if (hwloc_bitmap_list_sscanf(out, text) < 0) {
        hwloc_bitmap_zero(out);
        return -EINVAL;
    }
    return 0;
}

int housekeeping_quiet_cpus(const char *root, hwloc_bitmap_t nohz, hwloc_bitmap_t isolated)
{
    const int a = read_cpu_list(root, "nohz_full", nohz);
    const int b = read_cpu_list(root, "isolated", isolated);

    return a < 0 ? a : b;
}

int housekeeping_choose(hwloc_const_bitmap_t wanted, hwloc_const_bitmap_t started,
                        hwloc_const_bitmap_t quiet, hwloc_bitmap_t out)
{
    hwloc_bitmap_andnot(out, hwloc_bitmap_iszero(wanted) ? started : wanted, quiet);
    if (!hwloc_bitmap_iszero(out))
        return 0;
    hwloc_bitmap_andnot(out, started, quiet);
    if (!hwloc_bitmap_iszero(out))
        return 1;
    hwloc_bitmap_copy(out, started);
    return 2;
}

/* Whether /proc/<pid>/comm under @p root is "slurmd". */
static bool is_slurmd(const char *root, pid_t pid)
{
    char path[1200], comm[32] = "";
    FILE *f;

    snprintf(path, sizeof(path), "%s/proc/%ld/comm", root ? root : "", (long)pid);
    f = fopen(path, "re");
    if (!f)
        return false;
    if (!fgets(comm, sizeof(comm), f))
        comm[0] = '\0';
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    return strcmp(comm, "slurmd") == 0;
}

int housekeeping_slurmd_cpus(const char *root, hwloc_bitmap_t out)
{
    char path[1100];
    hwloc_bitmap_t one = hwloc_bitmap_alloc();
    struct dirent *e;
    DIR *dir;
    int found = 0;

    hwloc_bitmap_zero(out);
    snprintf(path, sizeof(path), "%s/proc", root ? root : "");
    dir = opendir(path);
    if (!dir || !one) {
        if (dir)
            closedir(dir);
        hwloc_bitmap_free(one);
        return 0;
    }
    while (found >= 0 && (e = readdir(dir))) {
        char *end;
        const long pid = strtol(e->d_name, &end, 10);
        struct np_proc_status st;
        const char *list;

        if (*end || pid <= 0 || !is_slurmd(root, (pid_t)pid) ||
            np_proc_status_read(root, (pid_t)pid, &st, NULL) < 0 || is_slurmd(root, st.ppid))
            continue;
        list = np_proc_status_cpus_allowed(&st);
        if (!list || hwloc_bitmap_list_sscanf(one, list) < 0 || hwloc_bitmap_iszero(one) ||
            (found && !hwloc_bitmap_isequal(one, out)))
            found = -EINVAL;
        else
            found = 1;
        hwloc_bitmap_copy(out, one);
    }
    closedir(dir);
    hwloc_bitmap_free(one);
    if (found < 0)
        hwloc_bitmap_zero(out);
    return found;
}

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
    const double cpu0 = np_clock_s(CLOCK_THREAD_CPUTIME_ID);
    const double half = cfg->interval_ms / 2.0;
    const bool large = j->stats.last.rss_bytes >= cfg->numa_maps_large_bytes;
    const bool pages_due =
        (now - j->last_pages_mono) * 1000.0 >=
        (large ? cfg->numa_maps_large_interval_ms : cfg->numa_maps_interval_ms) - half;
    const bool detail_due =
        final || (now - j->last_detail_mono) * 1000.0 >= cfg->detail_interval_ms - half;
    struct np_sample s;
    bool cpus_changed = false;
    double spent;

    if (!j->meta.helper_cpus[0])
        job_note_helper_cpus(d, j); /* the first sample: the step's CPUs are known by now */
    np_sampler_sample(&j->sampler, now, node_counters_read ? &d->counters : NULL, pages_due,
                      detail_due, &s);
    if (node_counters_read && !d->counters.irq_read && s.processes == 0) {
        /* Its processes are gone: maybe its last sample, whose interrupt figures the report has */
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
    spent = np_clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0; /* one clock read: a system call */
    j->stats.helper_cpu_s += spent;
    d->totals.sampling_cpu_s += spent;
    d->totals.samples++;
}

/* ---- memory nodes' traffic from their controllers ---- */

void uncore_bw_start(struct np_daemon *d)
{
    const char *fsroot = getenv("HWLOC_FSROOT"); /* the root the topology is read from */
    const struct np_uncore_pmu *pmu;
    struct np_err err = {0};
    char sys_root[PATH_MAX];
    uint64_t rd, wr;
    int n;

    np_uncore_close(&d->uncore); /* a reload opens them afresh */
    if (!d->cfg.perf) {
        snprintf(d->uncore.why, sizeof(d->uncore.why), "unavailable: perf backend turned off");
        return;
    }
    pmu = np_uncore_detect(d->uncore.why, sizeof(d->uncore.why));
    if (pmu && np_uncore_encode(pmu, &rd, &wr, &err) < 0) {
        snprintf(d->uncore.why, sizeof(d->uncore.why), "unavailable: %.240s", err.msg);
        pmu = NULL;
    }
    if (!pmu) {
        NPD_LOG(d, INFO, "memory controllers: %s; node traffic is estimated from jobs' figures",
                d->uncore.why);
        return;
    }
    snprintf(sys_root, sizeof(sys_root), "%s/sys", fsroot && *fsroot ? fsroot : "");
    n = np_uncore_open(&d->uncore, sys_root, rd, wr, &err);
    if (n < 0)
        NPD_LOG(d, WARNING, "memory controllers (%s): %s; node traffic is estimated",
                pmu->generation, d->uncore.why);
    else
        NPD_LOG(d, INFO, "memory controllers (%s): %d counted; node traffic from them",
                pmu->generation, n);
}

void uncore_bw_reload(struct np_daemon *d, bool perf_before)
{
    if (d->cfg.perf != perf_before || d->uncore.nboxes == 0)
        uncore_bw_start(d);
}

/* The node whose traffic box @p b counts, or -1. With sub-NUMA clustering the socket's traffic
 * goes to the node of the CPU the kernel counts it on: the controllers are the socket's. */
static int node_of_box(const struct np_daemon *d, const struct np_uncore_box *b)
{
    const int node = d->cpu_node && b->cpu < d->ncpus ? d->cpu_node[b->cpu] : -1;

    return node < NP_MAX_NODES ? node : -1;
}

bool uncore_bw_counts_node(const struct np_daemon *d, unsigned node)
{
    for (size_t i = 0; i < d->uncore.nboxes; i++)
        if (node_of_box(d, &d->uncore.boxes[i]) == (int)node)
            return true;
    return false;
}

void uncore_bw_tick(struct np_daemon *d)
{
    int rc;

    if (d->uncore.nboxes == 0)
        return;
    rc = np_uncore_sample(&d->uncore, np_monotonic_s());
    for (size_t i = 0; rc > 0 && i < d->uncore.nboxes; i++) {
        const int node = node_of_box(d, &d->uncore.boxes[i]);
        if (node >= 0)
            d->totals.uncore_bytes[node] += d->uncore.boxes[i].interval_bytes;
    }
    if (rc < 0) {
        snprintf(d->uncore.why, sizeof(d->uncore.why), "unavailable: reading the counters: %s",
                 strerror(-rc));
        NPD_LOG(d, WARNING, "memory controllers: %s; node traffic is estimated from now on",
                d->uncore.why);
        np_uncore_close(&d->uncore);
    }
}

void uncore_bw_apply(const struct np_daemon *d, struct np_node_view *view)
{
    double sum[NP_MAX_NODES] = {0};
    bool counted[NP_MAX_NODES] = {false};

    for (size_t i = 0; i < d->uncore.nboxes; i++) {
        const struct np_uncore_box *b = &d->uncore.boxes[i];
        const int node = node_of_box(d, b);

        if (b->bytes_per_s < 0 || node < 0)
            continue;
        sum[node] += b->bytes_per_s;
        counted[node] = true;
    }
    for (unsigned n = 0; n < view->nnodes && n < NP_MAX_NODES; n++)
        if (counted[n]) {
            view->node_bandwidth[n] = sum[n];
            view->node_bandwidth_source[n] = NP_BW_SOURCE_UNCORE;
            view->node_bandwidth_available = true;
        }
}
