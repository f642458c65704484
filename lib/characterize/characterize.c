/*
 * characterize.c - one whole characterization run (numaplace/profile.h): the order of the
 * measurements, what is measurable (CPU-less nodes have no CPU rows and no loaders), progress; and
 * the measuring kernels, on libnuma: a streaming read-bandwidth kernel and a dependent-load latency
 * kernel (a pointer chase over a randomly permuted cycle of cache lines), each run by a thread
 * bound to one node's CPUs over a buffer bound to one node (or interleaved over several),
 * optionally while k loader threads stream through buffers of their own on another node. Each run
 * lasts about `seconds`. Every thread binds itself with numa_run_on_node, so the caller's own
 * affinity is never changed; buffers are bound with numa_alloc_onnode (mbind) or interleaved with
 * numa_alloc_interleaved_subset, and touched by the thread that uses them before the clock starts.
 */
#include "numaplace/profile.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <numa.h>

enum measure_kind {
    MEASURE_BANDWIDTH, /* result in MB/s (10^6 bytes per second) */
    MEASURE_LATENCY,   /* result in ns per dependent load */
};

struct measure_case {
    enum measure_kind kind;
    unsigned cpu_node;  /* the measuring thread runs on this node's CPUs */
    uint64_t mem_nodes; /* bit n: node n; one bit binds, several interleave */
    unsigned loaders;   /* loader threads streaming on loader_node's CPUs and memory */
    unsigned loader_node;
    size_t buffer_bytes; /* per thread; the measurer's should be several times the LLC */
    double seconds;      /* how long the measurement runs (loaders start before it) */
};

#define CACHE_LINE ((size_t)64)
/* Loads between two looks at the clock: short enough for an emulated guest. */
#define CHASE_CHUNK 8192

/* Four independent sums, so the loop is bound by memory, not by one add chain. */
static uint64_t read_pass(const uint64_t *buf, size_t words)
{
    uint64_t a = 0, b = 0, c = 0, d = 0;

    for (size_t i = 0; i + 3 < words; i += 4) {
        a += buf[i];
        b += buf[i + 1];
        c += buf[i + 2];
        d += buf[i + 3];
    }
    return a ^ b ^ c ^ d;
}

static volatile uint64_t sink;

static void *alloc_on(uint64_t nodes, size_t bytes)
{
    struct bitmask *mask;
    void *buf;

    if (__builtin_popcountll(nodes) == 1)
        return numa_alloc_onnode(bytes, __builtin_ctzll(nodes));
    mask = numa_bitmask_alloc((unsigned)numa_max_possible_node() + 1);
    if (!mask)
        return NULL;
    for (unsigned n = 0; n < 64; n++)
        if (nodes & (UINT64_C(1) << n))
            numa_bitmask_setbit(mask, n);
    buf = numa_alloc_interleaved_subset(bytes, mask);
    numa_bitmask_free(mask);
    return buf;
}

/* ---- loaders ---------------------------------------------------------------------------- */

struct loader {
    pthread_t thread;
    unsigned node;
    size_t bytes;
    atomic_int *ready, *stop;
    int rc;
};

static void *loader_main(void *arg)
{
    struct loader *l = arg;
    uint64_t *buf = NULL;

    if (numa_run_on_node((int)l->node) < 0)
        l->rc = -errno;
    else if (!(buf = numa_alloc_onnode(l->bytes, (int)l->node)))
        l->rc = -ENOMEM;
    else
        memset(buf, 1, l->bytes);
    atomic_fetch_add(l->ready, 1);
    while (buf && !atomic_load(l->stop))
        sink = read_pass(buf, l->bytes / sizeof(*buf));
    if (buf)
        numa_free(buf, l->bytes);
    return NULL;
}

/* ---- the measuring thread --------------------------------------------------------------- */

struct measurer {
    const struct measure_case *c;
    double result;
    int rc;
};

static double bandwidth(const uint64_t *buf, size_t bytes, double seconds)
{
    double t0 = np_monotonic_s(), t;
    uint64_t passes = 0;

    do {
        sink = read_pass(buf, bytes / sizeof(*buf));
        passes++;
        t = np_monotonic_s() - t0;
    } while (t < seconds);
    return (double)passes * (double)bytes / t / 1e6;
}

/* A single random cycle through every cache line (Sattolo's shuffle), so each load depends on
 * the one before and no prefetcher can guess the next line. */
static int build_chase(void *buf, size_t lines)
{
    size_t *next = malloc(lines * sizeof(*next));
    uint64_t x = 0x9e3779b97f4a7c15u;

    if (!next)
        return -ENOMEM;
    for (size_t i = 0; i < lines; i++)
        next[i] = i;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j, tmp;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        j = (size_t)(x % i);
        tmp = next[i];
        next[i] = next[j];
        next[j] = tmp;
    }
    for (size_t i = 0; i < lines; i++)
        *(void **)((char *)buf + i * CACHE_LINE) = (char *)buf + next[i] * CACHE_LINE;
    free(next);
    return 0;
}

static double latency(void *buf, double seconds)
{
    void **p = buf;
    double t0 = np_monotonic_s(), t;
    uint64_t loads = 0;

    do {
        for (int i = 0; i < CHASE_CHUNK; i++)
            p = (void **)*p;
        loads += CHASE_CHUNK;
        t = np_monotonic_s() - t0;
    } while (t < seconds);
    sink = (uint64_t)(uintptr_t)p;
    return t * 1e9 / (double)loads;
}

static void *measurer_main(void *arg)
{
    struct measurer *m = arg;
    const struct measure_case *c = m->c;
    void *buf;

    if (numa_run_on_node((int)c->cpu_node) < 0) {
        m->rc = -errno;
        return NULL;
    }
    buf = alloc_on(c->mem_nodes, c->buffer_bytes);
    if (!buf) {
        m->rc = -ENOMEM;
        return NULL;
    }
    memset(buf, 1, c->buffer_bytes);
    if (c->kind == MEASURE_BANDWIDTH)
        m->result = bandwidth(buf, c->buffer_bytes, c->seconds);
    else if ((m->rc = build_chase(buf, c->buffer_bytes / CACHE_LINE)) == 0)
        m->result = latency(buf, c->seconds);
    numa_free(buf, c->buffer_bytes);
    return NULL;
}

static int stop_loaders(struct loader *loaders, unsigned started, atomic_int *stop)
{
    int rc = 0;

    atomic_store(stop, 1);
    for (unsigned i = 0; i < started; i++) {
        pthread_join(loaders[i].thread, NULL);
        if (loaders[i].rc < 0)
            rc = loaders[i].rc;
    }
    return rc;
}

/* Run one measurement. @return 0 with @p result set, -ENOSYS (no NUMA support), -EINVAL (bad
 * case, named in @p err), -ENOMEM, or -errno of a failed bind or thread. */
static int measure_run(const struct measure_case *c, double *result, struct np_err *err)
{
    struct measurer m = {.c = c};
    struct loader *loaders = NULL;
    atomic_int ready = 0, stop = 0;
    unsigned started = 0;
    pthread_t thread;
    int rc;

    if (numa_available() < 0)
        return np_err_set(err, -ENOSYS, "this kernel has no NUMA support (numa_available)");
    if (!c->mem_nodes || c->buffer_bytes < 64 * CACHE_LINE || !(c->seconds > 0) ||
        c->seconds > 60 || c->loaders > 1024)
        return np_err_set(err, -EINVAL,
                          "measurement: needs a memory node, a buffer of at least 4 KiB, "
                          "0 < seconds <= 60 and at most 1024 loaders");
    if (c->loaders && !(loaders = calloc(c->loaders, sizeof(*loaders))))
        return -ENOMEM;
    for (; started < c->loaders; started++) {
        loaders[started] = (struct loader){
            .node = c->loader_node, .bytes = c->buffer_bytes, .ready = &ready, .stop = &stop};
        if ((rc = pthread_create(&loaders[started].thread, NULL, loader_main, &loaders[started]))) {
            stop_loaders(loaders, started, &stop);
            free(loaders);
            return np_err_set(err, -rc, "loader thread: %s", strerror(rc));
        }
    }
    while (atomic_load(&ready) < (int)started)
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    rc = pthread_create(&thread, NULL, measurer_main, &m);
    if (rc == 0)
        pthread_join(thread, NULL);
    else
        m.rc = -rc;
    rc = stop_loaders(loaders, started, &stop);
    free(loaders);
    if (m.rc < 0 || rc < 0)
        return np_err_set(err, m.rc < 0 ? m.rc : rc,
                          "measurement on CPU node %u: %s (binding, memory or thread)", c->cpu_node,
                          strerror(-(m.rc < 0 ? m.rc : rc)));
    *result = m.result;
    return 0;
}

struct run {
    const struct np_characterize_opts *opts;
    unsigned done, total;
    bool counting; /* only count the measurements */
};

static int measure(struct run *run, struct measure_case c, const char *what, double *out,
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
    return measure_run(&c, out, err);
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
    struct measure_case c = {.cpu_node = cpu, .mem_nodes = UINT64_C(1) << mem};
    char what[96];
    int rc, distance = np_topology_distance(topo, cpu, mem);

    *pair = (struct np_profile_pair){
        .cpu_node = cpu, .mem_node = mem, .distance = distance > 0 ? distance : 0};
    snprintf(what, sizeof(what), "cpu %u mem %u: read bandwidth", cpu, mem);
    c.kind = MEASURE_BANDWIDTH;
    if ((rc = measure(run, c, what, &pair->bandwidth_mb_s, err)) < 0)
        return rc;
    snprintf(what, sizeof(what), "cpu %u mem %u: load latency", cpu, mem);
    c.kind = MEASURE_LATENCY;
    if ((rc = measure(run, c, what, &pair->latency_ns, err)) < 0)
        return rc;
    for (size_t k = 0; k < run->opts->loader_count; k++) {
        struct np_profile_loaded *l = &pair->loaded[pair->loaded_count];
        if (run->opts->loaders[k] > loader_room(p, ci, mi))
            continue;
        l->loaders = c.loaders = run->opts->loaders[k];
        c.loader_node = mem;
        snprintf(what, sizeof(what), "cpu %u mem %u: %u loaders: bandwidth", cpu, mem, c.loaders);
        c.kind = MEASURE_BANDWIDTH;
        if ((rc = measure(run, c, what, &l->bandwidth_mb_s, err)) < 0)
            return rc;
        snprintf(what, sizeof(what), "cpu %u mem %u: %u loaders: latency", cpu, mem, c.loaders);
        c.kind = MEASURE_LATENCY;
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
            struct measure_case c = {.kind = MEASURE_BANDWIDTH,
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
