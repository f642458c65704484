/*
 * numaplace/characterize.h - one whole `numaplace characterize` run: every CPU node x memory
 * node pair's read bandwidth and load latency, each CPU node's interleaved bandwidth, and each
 * pair under load, into a machine profile (numaplace/profile.h).
 */
#ifndef NUMAPLACE_CHARACTERIZE_H
#define NUMAPLACE_CHARACTERIZE_H

#include "numaplace/profile.h"
#include "numaplace/topology.h"

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
