/*
 * numaplace/profile.h - a machine profile: what `numaplace characterize` measured on one node
 * type (read bandwidth and load latency for every CPU node x memory node pair, interleaved, and
 * under load), its JSON form (docs/machine-profile.md, "schema": 1) and how it scales the
 * reference machine's predicted slowdowns to this machine.
 *
 * A profile is plain data: np_profile_new allocates it, np_profile_free frees it (NULL ok).
 * Figures that could not be measured are NAN with a reason, never a made-up number.
 */
#ifndef NUMAPLACE_PROFILE_H
#define NUMAPLACE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "numaplace/common.h"
#include "numaplace/penalty.h"
#include "numaplace/topology.h"

#define NP_PROFILE_SCHEMA       1
#define NP_PROFILE_DEFAULT_PATH "/var/lib/numaplace/machine-profile.json"
/** Node numbers fit a 64-bit node set (interleave sets are stored that way). */
#define NP_PROFILE_MAX_NODES 64
/** How many loader counts one pair keeps (--loaders). */
#define NP_PROFILE_MAX_LOADS 4
#define NP_PROFILE_WHY_MAX   128

/** The reference machine's remote penalty (numaplace/penalty.h). */
#define NP_PROFILE_REFERENCE_PENALTY NP_REFERENCE_REMOTE_PENALTY

/** One pair measured with k bandwidth-heavy loader threads on the memory node. */
struct np_profile_loaded {
    unsigned loaders;
    double bandwidth_mb_s, latency_ns;
};

/** CPU on cpu_node, memory on mem_node. */
struct np_profile_pair {
    unsigned cpu_node, mem_node;
    int distance;          /**< SLIT (10 = local), 0 when the topology has none */
    double bandwidth_mb_s; /**< streaming read bandwidth, MB/s (10^6 bytes per second) */
    double latency_ns;     /**< dependent load latency, ns per load */
    /** derived: latency_ns / latency_ns of (cpu_node, cpu_node), the pair's remote penalty */
    double remote_penalty;
    /** derived: local bandwidth / bandwidth_mb_s (> 1 when remote is slower) */
    double bandwidth_ratio;
    size_t loaded_count;
    struct np_profile_loaded loaded[NP_PROFILE_MAX_LOADS];
    char loaded_unavailable[NP_PROFILE_WHY_MAX]; /**< why no loaded figure, "" when some */
};

/** One NUMA node as the profile saw it. */
struct np_profile_node {
    unsigned os_index;
    unsigned cpus;         /**< online CPUs; 0 for a CPU-less (memory-only) node */
    uint64_t memory_bytes; /**< 0 for a memory-less node */
    /** reading from this node's CPUs, memory interleaved over interleave_nodes; NAN on a
     *  CPU-less node */
    double interleaved_bandwidth_mb_s;
};

struct np_profile {
    int schema;
    char hostname[256];
    char created[32];          /**< UTC, "2026-11-24T08:30:00Z" */
    double seconds;            /**< per measurement */
    uint64_t buffer_bytes;     /**< per measuring (and loader) thread */
    uint64_t interleave_nodes; /**< bit n: node n in the interleaved buffer */
    unsigned node_count;
    struct np_profile_node nodes[NP_PROFILE_MAX_NODES];
    size_t pair_count;
    struct np_profile_pair *pairs; /**< owned, pair_count of them */
};

/** A new, empty profile (schema 1, no pairs) with room for @p pairs pairs. NULL: no memory. */
NP_API struct np_profile *np_profile_new(size_t pairs);
NP_API void np_profile_free(struct np_profile *p);

/** The pair (cpu_node, mem_node), or NULL. Borrowed. */
NP_API const struct np_profile_pair *np_profile_pair(const struct np_profile *p, unsigned cpu_node,
                                                     unsigned mem_node);

/** Fill every pair's remote_penalty and bandwidth_ratio from the measured figures (NAN when the
 *  local figure is missing). */
NP_API void np_profile_derive(struct np_profile *p);

/** The JSON text of @p p (docs/machine-profile.md). New: free() it. NULL: no memory. */
NP_API char *np_profile_encode(const struct np_profile *p);

/**
 * Read a profile from JSON text. Strict: an unknown key, a missing one, a wrong type or an
 * unknown "schema" fails with -EINVAL and @p err naming the key (and the accepted schema).
 * @param out receives a new profile on success
 */
NP_API int np_profile_decode(const char *text, struct np_profile **out, struct np_err *err);

/** np_profile_decode of the file @p path (-ENOENT etc. with @p err naming it). */
NP_API int np_profile_load(const char *path, struct np_profile **out, struct np_err *err);

/** Print the readable matrices (latency, bandwidth, penalty, interleaved, loaded) to @p out. */
NP_API void np_profile_print(FILE *out, const struct np_profile *p);

/**
 * This machine's remote penalty as the sensitivity model means it (memory on a near node of
 * another socket): the mean remote_penalty of the pairs whose memory node has CPUs, at the
 * smallest SLIT distance above local (every such pair when the profile has no distances).
 * @return NAN when no such pair has a penalty.
 */
NP_API double np_profile_near_penalty(const struct np_profile *p);

/**
 * np_penalty_scale_slowdown with this profile's remote_penalty for (cpu_node, mem_node) and
 * NP_PROFILE_REFERENCE_PENALTY. @return NAN when the pair or its ratio is missing.
 */
NP_API double np_profile_scale_for_pair(const struct np_profile *p, unsigned cpu_node,
                                        unsigned mem_node, double slowdown);

/* One whole `numaplace characterize` run: every CPU node x memory
 * node pair's read bandwidth and load latency, each CPU node's interleaved bandwidth, and each
 * pair under load, into a machine profile (numaplace/profile.h). Not thread-safe against other
 * measurements: one at a time, on an idle machine. */
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

#endif /* NUMAPLACE_PROFILE_H */
