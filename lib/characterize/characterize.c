/*
 * characterize.c - one whole characterization run (numaplace/characterize.h): the order of the
 * measurements, what is measurable (CPU-less nodes have no CPU rows and no loaders), progress.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "numaplace/characterize.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct run {
    const struct np_characterize_opts *opts;
    unsigned done, total;
    bool counting; /* only count the measurements */
};

static int measure(struct run *run, struct np_measure_case c, const char *what, double *out,
                   struct np_err *err)
{
    const struct np_characterize_opts *o = run->opts;

    run->done++;
    if (run->counting)
        return 0;
    if (o->progress)
        o->progress(run->done, run->total, what, o->progress_arg);
    c.buffer_bytes = o->buffer_bytes;
    c.seconds = o->seconds;
    return np_measure_run(&c, out, err);
}

/* CPUs free for loaders on @p mem while the measurer runs on @p cpu's CPUs. */
static unsigned loader_room(const struct np_profile *p, unsigned cpu, unsigned mem)
{
    unsigned cpus = p->nodes[mem].cpus;
    return cpu == mem && cpus ? cpus - 1 : cpus;
}

static int measure_pair(struct run *run, struct np_profile *p, unsigned ci, unsigned mi,
                        const struct np_topology *topo, struct np_err *err)
{
    struct np_profile_pair *pair = &p->pairs[p->pair_count];
    unsigned cpu = p->nodes[ci].os_index, mem = p->nodes[mi].os_index;
    struct np_measure_case c = {.cpu_node = cpu, .mem_nodes = UINT64_C(1) << mem};
    char what[96];
    int rc, distance = np_topology_distance(topo, cpu, mem);

    *pair = (struct np_profile_pair){
        .cpu_node = cpu, .mem_node = mem, .distance = distance > 0 ? distance : 0};
    snprintf(what, sizeof(what), "cpu %u mem %u: read bandwidth", cpu, mem);
    c.kind = NP_MEASURE_BANDWIDTH;
    if ((rc = measure(run, c, what, &pair->bandwidth_mb_s, err)) < 0)
        return rc;
    snprintf(what, sizeof(what), "cpu %u mem %u: load latency", cpu, mem);
    c.kind = NP_MEASURE_LATENCY;
    if ((rc = measure(run, c, what, &pair->latency_ns, err)) < 0)
        return rc;
    for (size_t k = 0; k < run->opts->loader_count; k++) {
        struct np_profile_loaded *l = &pair->loaded[pair->loaded_count];
        if (run->opts->loaders[k] > loader_room(p, ci, mi))
            continue;
        l->loaders = c.loaders = run->opts->loaders[k];
        c.loader_node = mem;
        snprintf(what, sizeof(what), "cpu %u mem %u: %u loaders: bandwidth", cpu, mem, c.loaders);
        c.kind = NP_MEASURE_BANDWIDTH;
        if ((rc = measure(run, c, what, &l->bandwidth_mb_s, err)) < 0)
            return rc;
        snprintf(what, sizeof(what), "cpu %u mem %u: %u loaders: latency", cpu, mem, c.loaders);
        c.kind = NP_MEASURE_LATENCY;
        if ((rc = measure(run, c, what, &l->latency_ns, err)) < 0)
            return rc;
        pair->loaded_count++;
    }
    if (!p->nodes[mi].cpus)
        snprintf(pair->loaded_unavailable, sizeof(pair->loaded_unavailable),
                 "memory node %u has no CPUs to run loaders on", mem);
    else if (pair->loaded_count < run->opts->loader_count)
        snprintf(pair->loaded_unavailable, sizeof(pair->loaded_unavailable),
                 "memory node %u has %u CPU(s) free for loaders: larger k skipped", mem,
                 loader_room(p, ci, mi));
    p->pair_count++;
    return 0;
}

static int walk(struct run *run, struct np_profile *p, const struct np_topology *topo,
                struct np_err *err)
{
    int rc;

    for (unsigned ci = 0; ci < p->node_count; ci++) {
        if (!p->nodes[ci].cpus)
            continue;
        for (unsigned mi = 0; mi < p->node_count; mi++)
            if (p->nodes[mi].memory_bytes && (rc = measure_pair(run, p, ci, mi, topo, err)) < 0)
                return rc;
        if (__builtin_popcountll(p->interleave_nodes) > 1) {
            struct np_measure_case c = {.kind = NP_MEASURE_BANDWIDTH,
                                        .cpu_node = p->nodes[ci].os_index,
                                        .mem_nodes = p->interleave_nodes};
            char what[64];
            snprintf(what, sizeof(what), "cpu %u: interleaved bandwidth", c.cpu_node);
            if ((rc = measure(run, c, what, &p->nodes[ci].interleaved_bandwidth_mb_s, err)) < 0)
                return rc;
        }
    }
    return 0;
}

static struct np_profile *skeleton(const struct np_topology *topo,
                                   const struct np_characterize_opts *opts, struct np_err *err)
{
    unsigned count = np_topology_node_count(topo);
    struct np_profile *p;
    time_t t = time(NULL);
    struct tm tm;

    if (count > NP_PROFILE_MAX_NODES) {
        np_err_set(err, -E2BIG, "%u NUMA nodes: numaplace characterize measures at most %d", count,
                   NP_PROFILE_MAX_NODES);
        return NULL;
    }
    if (!(p = np_profile_new((size_t)count * count)))
        return NULL;
    gethostname(p->hostname, sizeof(p->hostname) - 1);
    gmtime_r(&t, &tm);
    strftime(p->created, sizeof(p->created), "%Y-%m-%dT%H:%M:%SZ", &tm);
    p->seconds = opts->seconds;
    p->buffer_bytes = opts->buffer_bytes;
    p->node_count = count;
    for (unsigned i = 0; i < count; i++) {
        const struct np_numa_node *node = np_topology_node(topo, i);
        int cpus = hwloc_bitmap_weight(node->cpus);
        p->nodes[i] = (struct np_profile_node){.os_index = node->os_index,
                                               .cpus = cpus > 0 ? (unsigned)cpus : 0,
                                               .memory_bytes = node->memory_bytes,
                                               .interleaved_bandwidth_mb_s = NAN};
        if (node->memory_bytes && node->os_index < NP_PROFILE_MAX_NODES)
            p->interleave_nodes |= UINT64_C(1) << node->os_index;
    }
    return p;
}

unsigned np_characterize_count(const struct np_topology *topo,
                               const struct np_characterize_opts *opts)
{
    struct run run = {.opts = opts, .counting = true};
    struct np_profile *p = skeleton(topo, opts, NULL);

    if (p)
        walk(&run, p, topo, NULL);
    np_profile_free(p);
    return run.done;
}

int np_characterize_run(const struct np_topology *topo, const struct np_characterize_opts *opts,
                        struct np_profile **out, struct np_err *err)
{
    struct run run = {.opts = opts, .total = np_characterize_count(topo, opts)};
    struct np_profile *p = skeleton(topo, opts, err);
    int rc;

    if (!p)
        return err && err->code ? err->code : -ENOMEM;
    if ((rc = walk(&run, p, topo, err)) < 0) {
        np_profile_free(p);
        return rc;
    }
    np_profile_derive(p);
    *out = p;
    return 0;
}
