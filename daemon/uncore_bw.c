/* Memory nodes' traffic from their controllers (see uncore_bw.h). */
#include "uncore_bw.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/perf.h"

void uncore_bw_start(struct np_daemon *d)
{
    const char *fsroot = getenv("HWLOC_FSROOT"); /* the root the topology is read from */
    const struct np_uncore_pmu *pmu;
    struct np_err err = {0};
    char sys_root[PATH_MAX];
    uint64_t rd, wr;
    int n;

    uncore_bw_stop(d);
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
    if (d->cfg.perf == perf_before && d->uncore.nboxes > 0)
        return;
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

void uncore_bw_stop(struct np_daemon *d)
{
    np_uncore_close(&d->uncore);
}
