/*
 * numaplace/measure.h - the measuring kernels of `numaplace characterize`, on libnuma: a
 * streaming read-bandwidth kernel and a dependent-load latency kernel (a pointer chase over a
 * randomly permuted cycle of cache lines), each run by a thread bound to one node's CPUs over a
 * buffer bound to one node (or interleaved over several), optionally while k loader threads
 * stream through buffers of their own on another node. Each run lasts about `seconds`.
 * Not thread-safe against other measurements: one at a time, on an idle machine.
 */
#ifndef NUMAPLACE_MEASURE_H
#define NUMAPLACE_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "numaplace/common.h"

enum np_measure_kind {
    NP_MEASURE_BANDWIDTH, /**< result in MB/s (10^6 bytes per second) */
    NP_MEASURE_LATENCY,   /**< result in ns per dependent load */
};

struct np_measure_case {
    enum np_measure_kind kind;
    unsigned cpu_node;  /**< the measuring thread runs on this node's CPUs */
    uint64_t mem_nodes; /**< bit n: node n; one bit binds, several interleave */
    unsigned loaders;   /**< loader threads streaming on loader_node's CPUs and memory */
    unsigned loader_node;
    size_t buffer_bytes; /**< per thread; the measurer's should be several times the LLC */
    double seconds;      /**< how long the measurement runs (loaders start before it) */
};

/**
 * Run one measurement. @return 0 with @p result set, -ENOSYS (no NUMA support), -EINVAL (bad
 * case, named in @p err), -ENOMEM, or -errno of a failed bind or thread.
 */
NP_API int np_measure_run(const struct np_measure_case *c, double *result, struct np_err *err);

#endif /* NUMAPLACE_MEASURE_H */
