/* The node's own counters, read once an interval for all its jobs: interrupts and softirqs per
 * CPU, CPU ticks and NUMA balancing (declared in numaplace/sampler.h). */
#include "numaplace/sampler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int np_node_counters_init(struct np_node_counters *nc, unsigned max_cpus)
{
    memset(nc, 0, sizeof(*nc)); /* the kept files too: a zeroed one is closed */
    nc->max_cpus = max_cpus;
    nc->interrupts = calloc(max_cpus, sizeof(uint64_t));
    nc->softirqs = calloc(max_cpus, sizeof(uint64_t));
    nc->busy_ticks = calloc(max_cpus, sizeof(uint64_t));
    nc->all_ticks = calloc(max_cpus, sizeof(uint64_t));
    if (!nc->interrupts || !nc->softirqs || !nc->busy_ticks || !nc->all_ticks) {
        np_node_counters_fini(nc);
        return -ENOMEM;
    }
    return 0;
}

void np_node_counters_fini(struct np_node_counters *nc)
{
    if (!nc)
        return;
    free(nc->interrupts);
    free(nc->softirqs);
    free(nc->busy_ticks);
    free(nc->all_ticks);
    np_kept_file_close(&nc->interrupts_file);
    np_kept_file_close(&nc->softirqs_file);
    np_kept_file_close(&nc->stat_file);
    np_kept_file_close(&nc->balancing_file);
    memset(nc, 0, sizeof(*nc));
}

void np_node_counters_read_irq(struct np_node_counters *nc, const char *root)
{
    struct np_err err = {0};

    nc->irq_read = true;
    nc->have_irq = np_proc_cpu_counters(root, "interrupts", &nc->interrupts_file, nc->interrupts,
                                        nc->max_cpus, &err) >= 0 &&
                   np_proc_cpu_counters(root, "softirqs", &nc->softirqs_file, nc->softirqs,
                                        nc->max_cpus, &err) >= 0;
    np_strf(nc->irq_reason, sizeof(nc->irq_reason), "%s", nc->have_irq ? "" : err.msg);
}

void np_node_counters_read(struct np_node_counters *nc, const char *root)
{
    np_node_counters_read_irq(nc, root);
    np_node_counters_read_cpu(nc, root);
}

void np_node_counters_skip_irq(struct np_node_counters *nc)
{
    nc->irq_read = false;
    nc->have_irq = false;
    snprintf(nc->irq_reason, sizeof(nc->irq_reason),
             "not read at this interval (read at a job's first and last sample, and at every "
             "interval while a trace is recorded)");
}

void np_node_counters_read_cpu(struct np_node_counters *nc, const char *root)
{
    struct np_err err = {0};
    const int cpus =
        np_proc_cpu_ticks(root, &nc->stat_file, nc->busy_ticks, nc->all_ticks, nc->max_cpus, &err);
    int balancing;

    nc->have_busy = cpus >= 0;
    nc->cpus_read = cpus > 0 ? (unsigned)cpus : 0;
    np_strf(nc->busy_reason, sizeof(nc->busy_reason), "%s", nc->have_busy ? "" : err.msg);
    err.msg[0] = '\0';
    balancing = np_numa_balancing_enabled(root, &nc->balancing_file, &err);
    nc->balancing = balancing == 1;
    if (nc->balancing)
        nc->balancing_reason[0] = '\0';
    else if (balancing == 0)
        snprintf(nc->balancing_reason, sizeof(nc->balancing_reason),
                 "the kernel's NUMA balancing is off (/proc/sys/kernel/numa_balancing = 0)");
    else
        snprintf(nc->balancing_reason, sizeof(nc->balancing_reason),
                 "no NUMA balancing in this kernel (%.400s)", err.msg);
}
