/* fwq_run: bench/fwq's rotation, what it keeps of each measurement, and its report. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "fwq_run.h"
#include "fwq_trace.h"

static const char *const config_labels[FWQ_CONFIGS] = {
    [FWQ_NONE] = "a. no daemon",
    [FWQ_SAMPLING] = "b. numaplaced, sampling at 1 Hz",
    [FWQ_MIGRATING] = "c. numaplaced, rate-limited migration",
    [FWQ_NUMA_MAPS] = "d. numaplaced, large job's numa_maps each second",
    [FWQ_NUMAD] = "e. numad -i 15 (Debian's unit)",
    [FWQ_NUMAD_1S] = "f. numad -i 1:1",
};

const char *fwq_config_label(enum fwq_config c)
{
    return (unsigned)c < FWQ_CONFIGS ? config_labels[c] : "?";
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void read_line(const char *path, const char *key, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    char line[512];

    snprintf(out, len, "unknown");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        char *v;
        if (key && strncmp(line, key, strlen(key)) != 0)
            continue;
        v = key ? strchr(line, key[strlen(key) - 1] == '=' ? '=' : ':') : line;
        v = v ? v + (key ? 1 : 0) : line;
        v += strspn(v, " \t\"");
        v[strcspn(v, "\"\n")] = '\0';
        snprintf(out, len, "%s", v[0] ? v : "(empty)");
        break;
    }
    fclose(f);
}

static int count_nodes(void)
{
    DIR *d = opendir("/sys/devices/system/node");
    struct dirent *e;
    int n = 0;

    if (!d)
        return 1;
    while ((e = readdir(d)))
        n += strncmp(e->d_name, "node", 4) == 0 && e->d_name[4] >= '0' && e->d_name[4] <= '9';
    closedir(d);
    return n ? n : 1;
}

static void print_machine(struct fwq_run *run)
{
    char model[256], os[256], mem[64], thp[128], clock[64], nohz[128], isolated[128], flags[4096];
    struct utsname u;
    double load[3] = {0};

    read_line("/proc/cpuinfo", "model name", model, sizeof(model));
    read_line("/proc/cpuinfo", "flags", flags, sizeof(flags));
    read_line("/etc/os-release", "PRETTY_NAME=", os, sizeof(os));
    read_line("/proc/meminfo", "MemTotal", mem, sizeof(mem));
    read_line("/sys/kernel/mm/transparent_hugepage/enabled", NULL, thp, sizeof(thp));
    read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", NULL, clock,
              sizeof(clock));
    read_line("/sys/devices/system/cpu/nohz_full", NULL, nohz, sizeof(nohz));
    read_line("/sys/devices/system/cpu/isolated", NULL, isolated, sizeof(isolated));
    uname(&u);
    getloadavg(load, 3);
    printf("Machine: %s, %ld CPUs online, %d NUMA node%s, MemTotal %s, kernel %s, %s%s; THP %s; "
           "clocksource %s; nohz_full %s; isolated %s.\n",
           model, sysconf(_SC_NPROCESSORS_ONLN), run->nodes, run->nodes == 1 ? "" : "s", mem,
           u.release, os, strstr(flags, "hypervisor") ? ", a virtual machine" : "", thp, clock,
           nohz, isolated);
    printf("Load average before: %.2f %.2f %.2f.\n", load[0], load[1], load[2]);
}

static int alloc_results(struct fwq_run *run)
{
    size_t per_cpu = (size_t)run->rounds * run->quanta;

    for (int c = 0; c < FWQ_CONFIGS; c++) {
        run->result[c].durations = calloc((size_t)run->ncpu * per_cpu, sizeof(uint32_t));
        run->result[c].masks = calloc((size_t)run->ncpu * per_cpu, 1);
        if (!run->result[c].durations || !run->result[c].masks)
            return -ENOMEM;
    }
    return 0;
}

/* Keep one measurement: durations and the sources that ran inside each quantum. */
static void keep(struct fwq_run *run, struct fwq_result *r, struct fwq_slot *slot,
                 struct fwq_trace *trace)
{
    size_t per_cpu = (size_t)run->rounds * run->quanta;

    for (int i = 0; i < run->ncpu; i++) {
        uint32_t *dur = r->durations + (size_t)i * per_cpu + r->slots * run->quanta;
        uint8_t *mask = r->masks + (size_t)i * per_cpu + r->slots * run->quanta;
        const uint64_t *st = slot->stamps[i];

        if (!st)
            continue;
        for (size_t q = 0; q < run->quanta; q++) {
            uint64_t d = st[q + 1] - st[q];
            dur[q] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
        }
        if (i < trace->ncpu && fwq_trace_drain(trace, i) == 0) {
            r->switches += trace->nev[i];
            fwq_attribute(st, run->quanta, trace->ev[i], trace->nev[i], slot->tids[i],
                          slot->daemon_tids, slot->ndaemon_tids, r->ns_by_source, mask);
        }
    }
    r->lost_switches += trace->lost;
    r->slots++;
}

static void measure_one(struct fwq_run *run, enum fwq_config c, struct fwq_slot *slot,
                        struct fwq_trace *trace)
{
    struct fwq_result *r = &run->result[c];
    struct fwq_daemon d;

    fwq_daemon_start(run, c, &d);
    slot->ndaemon_tids = 0;
    if (!d.why[0]) {
        uint64_t cpu0, t0, t1;
        fwq_daemon_go(run, c, &d);
        if (d.pid)
            fwq_daemon_tids(d.pid, slot);
        cpu0 = d.pid ? fwq_cpu_ns(d.pid) : 0;
        fwq_trace_clear(trace);
        fwq_trace_enable(trace, 1);
        t0 = now_ns();
        fwq_measure(run, slot, trace);
        t1 = now_ns();
        fwq_trace_enable(trace, 0);
        if (d.pid) {
            r->daemon_cpu_ns += fwq_cpu_ns(d.pid) - cpu0;
            fwq_daemon_tids(d.pid, slot);
        }
        r->window_ns += t1 - t0;
    }
    if (d.why[0] && !r->why[0])
        snprintf(r->why, sizeof(r->why), "%s", d.why);
    r->migrations_done += fwq_daemon_stop(run, c, &d);
    if (!d.why[0])
        keep(run, r, slot, trace);
    fprintf(stderr, "fwq: %s: %s\n", fwq_config_label(c), d.why[0] ? d.why : "measured");
}

static uint32_t fastest_on(const struct fwq_run *run, int cpu)
{
    size_t per_cpu = (size_t)run->rounds * run->quanta;
    uint32_t best = UINT32_MAX;

    for (int c = 0; c < FWQ_CONFIGS; c++) {
        const struct fwq_result *r = &run->result[c];
        const uint32_t *dur = r->durations + (size_t)cpu * per_cpu;
        for (size_t q = 0; q < r->slots * run->quanta; q++)
            if (dur[q] < best)
                best = dur[q];
    }
    return best;
}

static enum fwq_source daemon_source(enum fwq_config c)
{
    return c == FWQ_NUMAD || c == FWQ_NUMAD_1S ? FWQ_SRC_NUMAD : FWQ_SRC_NUMAPLACED;
}

static void report(struct fwq_run *run)
{
    size_t per_cpu = (size_t)run->rounds * run->quanta, n_all = per_cpu * (size_t)run->ncpu;
    uint32_t *flat = malloc(n_all * sizeof(uint32_t)), *scratch = malloc(n_all * sizeof(uint32_t));
    uint32_t fastest[FWQ_MAX_CPUS] = {0};
    struct fwq_detour_stats st[FWQ_CONFIGS];
    size_t daemon_quanta[FWQ_CONFIGS] = {0}, daemon_over[FWQ_CONFIGS] = {0};
    double mean[FWQ_CONFIGS] = {0}, mean_own[FWQ_CONFIGS] = {0}, sum_ns[FWQ_CONFIGS] = {0};

    if (!flat || !scratch) {
        free(flat);
        free(scratch);
        return;
    }
    for (int i = 0; i < run->ncpu; i++)
        fastest[i] = fastest_on(run, i);
    for (int c = 0; c < FWQ_CONFIGS; c++) {
        const struct fwq_result *r = &run->result[c];
        size_t n = 0;
        uint8_t bit = (uint8_t)(1u << daemon_source((enum fwq_config)c));
        /* detours measured from each CPU's own fastest quantum */
        for (int i = 0; i < run->ncpu; i++)
            for (size_t q = 0; q < r->slots * run->quanta; q++) {
                size_t at = (size_t)i * per_cpu + q;
                flat[n++] = fwq_rebase(r->durations[at], fastest[i], fastest[0]);
                if (r->masks[at] & bit) {
                    daemon_quanta[c]++;
                    daemon_over[c] += r->durations[at] - fastest[i] > fwq_threshold_ns[0];
                }
            }
        fwq_detour_stats(flat, n, fastest[0], scratch, &st[c]);
        if (n) { /* the ratio is of the raw quanta, not of the detours */
            uint64_t sum = 0;
            for (int i = 0; i < run->ncpu; i++)
                for (size_t q = 0; q < r->slots * run->quanta; q++)
                    sum += r->durations[(size_t)i * per_cpu + q];
            mean[c] = (double)sum / (double)n;
            sum_ns[c] = (double)sum;
            /* without the time other users' processes ran in the quanta (a shared machine) */
            mean_own[c] = (double)(sum - r->ns_by_source[FWQ_SRC_OTHER]) / (double)n;
        }
    }
    printf("\nFastest quantum per CPU (ns):");
    for (int i = 0; i < run->ncpu; i++)
        printf(" CPU %d %u;", run->cpus[i], fastest[i]);
    printf("\n\n| configuration | ratio of total time to a | the same, other processes' run time "
           "taken out | detour p50 / p99 / p99.9 / max (us) "
           "| quanta > 10 us / > 100 us / > 1 ms (per million) | daemon CPU, %% of one core |\n"
           "|---|---|---|---|---|---|\n");
    for (int c = 0; c < FWQ_CONFIGS; c++) {
        const struct fwq_result *r = &run->result[c];
        const struct fwq_detour_stats *s = &st[c];
        if (r->why[0] && !r->slots) {
            printf("| %s | unavailable: %s | | | | |\n", config_labels[c], r->why);
            continue;
        }
        printf("| %s | ", config_labels[c]);
        if (mean[FWQ_NONE] > 0)
            printf("%.4f | ", mean[c] / mean[FWQ_NONE]);
        else
            printf("unavailable: a was not measured | ");
        if (mean_own[FWQ_NONE] > 0 && !run->trace_why[0])
            printf("%.4f", mean_own[c] / mean_own[FWQ_NONE]);
        else
            printf("unavailable: %s", run->trace_why[0] ? "no sched_switch record" : "no a");
        printf(" | %.2f / %.2f / %.2f / %.1f | %.0f / %.0f / %.1f | ", s->p50_ns / 1e3,
               s->p99_ns / 1e3, s->p999_ns / 1e3, s->max_ns / 1e3,
               (double)s->over[0] * 1e6 / (double)s->quanta,
               (double)s->over[1] * 1e6 / (double)s->quanta,
               (double)s->over[2] * 1e6 / (double)s->quanta);
        if (c == FWQ_NONE)
            printf("- |\n");
        else
            printf("%.4f (%s) |\n", (double)r->daemon_cpu_ns / (double)r->window_ns * 100.0,
                   c >= FWQ_NUMAD ? "numad" : "numaplaced");
    }
    printf("\nWhere the detour time went (sched_switch on each job CPU: %% of the configuration's "
           "total detour time; \"in place\" is what no switch explains: interrupts, softirqs, "
           "the tick, the hypervisor):\n\n");
    if (run->trace_why[0]) {
        printf("unavailable: %s\n", run->trace_why);
    } else {
        printf("| configuration | detour ms per s per CPU |");
        for (int s = 0; s < FWQ_SRC_COUNT; s++)
            printf(" %s |", fwq_source_name((enum fwq_source)s));
        printf(" in place | quanta with a daemon run (> 10 us) | the daemon's time in the quanta, "
               "%% of FWQ time | switches (lost) |\n|---|---|");
        for (int s = 0; s <= FWQ_SRC_COUNT + 3; s++)
            printf("---|");
        printf("\n");
        for (int c = 0; c < FWQ_CONFIGS; c++) {
            const struct fwq_result *r = &run->result[c];
            double total = (double)st[c].detour_total_ns, switched = 0;
            if (!r->slots) {
                printf("| %s | unavailable: %s |\n", config_labels[c], r->why);
                continue;
            }
            printf("| %s | %.3f |", config_labels[c],
                   total / 1e6 / ((double)r->window_ns / 1e9) / run->ncpu);
            for (int s = 0; s < FWQ_SRC_COUNT; s++) {
                switched += (double)r->ns_by_source[s];
                printf(" %.1f |", total > 0 ? (double)r->ns_by_source[s] / total * 100 : 0.0);
            }
            printf(" %.1f | ", total > switched ? (total - switched) / total * 100 : 0.0);
            if (c == FWQ_NONE)
                printf("- | - |");
            else
                printf("%zu (%zu) | %.4f |", daemon_quanta[c], daemon_over[c],
                       sum_ns[c] > 0 ? (double)r->ns_by_source[daemon_source((enum fwq_config)c)] /
                                           sum_ns[c] * 100
                                     : 0.0);
            printf(" %llu (%llu) |\n", (unsigned long long)r->switches,
                   (unsigned long long)r->lost_switches);
        }
    }
    free(flat);
    free(scratch);
}

int fwq_run(struct fwq_run *run)
{
    struct fwq_slot slot = {0};
    struct fwq_trace trace;
    FILE *f;
    double load[3] = {0};
    int rc = 0;

    run->nodes = count_nodes();
    printf("## OS noise on the job's CPUs (bench/fwq)\n\n");
    print_machine(run);
    f = fopen("/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs", "r");
    if (f) {
        if (!fgets(run->thp_scan_sleep, sizeof(run->thp_scan_sleep), f))
            run->thp_scan_sleep[0] = '\0';
        fclose(f);
    }
    for (int i = 0; i < run->ncpu; i++)
        if (!(slot.stamps[i] = calloc(run->quanta + 1, sizeof(uint64_t))))
            rc = -1;
    if (rc < 0 || alloc_results(run) < 0 || fwq_jobs_start(run) < 0) {
        fprintf(stderr, "fwq: out of memory or fork failed\n");
        fwq_jobs_stop(run);
        rc = -1;
        goto out;
    }
    if (fwq_trace_open(&trace, run->cpus, run->ncpu, 2048, run->trace_why, sizeof(run->trace_why)) <
        0)
        trace.ncpu = 0;
    printf("Job CPUs: %d (", run->ncpu);
    for (int i = 0; i < run->ncpu; i++)
        printf("%s%d", i ? "," : "", run->cpus[i]);
    printf("); daemons %s. Quantum: %.0f us (%llu iterations), %zu quanta per CPU per "
           "measurement, %u rounds of %d configurations. Job: %d processes of %ld MiB each (job "
           "1); large job: %ld MiB in %ld mappings (job 2, registered in c and d).\n",
           run->nhelper_cpus ? "pinned to --helper-cpus" : "share the job's CPUs (not pinned)",
           run->quantum_us, (unsigned long long)run->iters, run->quanta, run->rounds, FWQ_CONFIGS,
           run->procs, run->mib, run->large_mib, run->large_maps);
    if (trace.ncpu)
        printf("Context switches: sched:sched_switch, its id and format read from %s.\n",
               trace.tracefs);
    if (run->nodes == 1)
        printf("One NUMA node: numad's loop reads the node figures each interval and scans "
               "processes only with two nodes or more, so e and f show that cost alone.\n");
    fflush(stdout);
    for (unsigned round = 0; round < run->rounds; round++)
        for (unsigned pos = 0; pos < FWQ_CONFIGS; pos++)
            measure_one(run, (enum fwq_config)fwq_rotation_config(round, pos, FWQ_CONFIGS), &slot,
                        &trace);
    fwq_trace_close(&trace);
    fwq_jobs_stop(run);
    report(run);
    getloadavg(load, 3);
    printf("\nLoad average after: %.2f %.2f %.2f.", load[0], load[1], load[2]);
    if (run->result[FWQ_MIGRATING].slots)
        printf(" Migrations answered within their measurement: %d of %zu.",
               run->result[FWQ_MIGRATING].migrations_done, run->result[FWQ_MIGRATING].slots);
    printf("\n");
out:
    for (int i = 0; i < FWQ_MAX_CPUS; i++)
        free(slot.stamps[i]);
    for (int c = 0; c < FWQ_CONFIGS; c++) {
        free(run->result[c].durations);
        free(run->result[c].masks);
    }
    return rc;
}
