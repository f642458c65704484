/*
 * numaplace/characterize.h - one whole `numaplace characterize` run: every CPU node x memory
 * node pair's read bandwidth and load latency, each CPU node's interleaved bandwidth, and each
 * pair under load, into a machine profile (numaplace/profile.h).
 *
 * Its measuring kernels (measure.c), on libnuma: a streaming read-bandwidth kernel and a
 * dependent-load latency kernel (a pointer chase over a randomly permuted cycle of cache lines),
 * each run by a thread bound to one node's CPUs over a buffer bound to one node (or interleaved
 * over several), optionally while k loader threads stream through buffers of their own on
 * another node. Each run lasts about `seconds`. Not thread-safe against other measurements: one
 * at a time, on an idle machine.
 */
#ifndef NUMAPLACE_CHARACTERIZE_H
#define NUMAPLACE_CHARACTERIZE_H

#include "numaplace/profile.h"
#include "numaplace/topology.h"

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

struct np_characterize_opts {
    double seconds;                         /**< per measurement */
    size_t buffer_bytes;                    /**< per thread */
    unsigned loaders[NP_PROFILE_MAX_LOADS]; /**< the k of the loaded runs, ascending */
    size_t loader_count;
    /** called before each measurement (done of total); may be NULL */
    void (*progress)(unsigned done, unsigned total, const char *what, void *arg);
    void *progress_arg;
};

/** How many measurements a run of @p topo with @p opts makes (for the time estimate). */
NP_API unsigned np_characterize_count(const struct np_topology *topo,
                                      const struct np_characterize_opts *opts);

/**
 * Measure the machine. @param out receives a new profile (np_profile_free).
 * @return 0, or the first failed measurement's -errno with @p err saying which.
 */
NP_API int np_characterize_run(const struct np_topology *topo,
                               const struct np_characterize_opts *opts, struct np_profile **out,
                               struct np_err *err);

#endif /* NUMAPLACE_CHARACTERIZE_H */
