/*
 * measure.c - the measuring kernels (numaplace/characterize.h). Every thread binds itself with
 * numa_run_on_node, so the caller's own affinity is never changed; buffers are bound with
 * numa_alloc_onnode (mbind) or interleaved with numa_alloc_interleaved_subset, and touched by
 * the thread that uses them before the clock starts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "numaplace/characterize.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <numa.h>

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
    unsigned only = 0, count = 0;

    for (unsigned n = 0; n < 64; n++)
        if (nodes & (UINT64_C(1) << n)) {
            only = n;
            count++;
        }
    if (count == 1)
        return numa_alloc_onnode(bytes, (int)only);
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
    const struct np_measure_case *c;
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
    const struct np_measure_case *c = m->c;
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
    if (c->kind == NP_MEASURE_BANDWIDTH)
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

int np_measure_run(const struct np_measure_case *c, double *result, struct np_err *err)
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
