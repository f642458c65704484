/*
 * numaplace/topology.h - the machine's NUMA nodes, on hwloc.
 *
 * A topology is loaded once (live machine, a site's cached hwloc XML, or a synthetic
 * description for tests) and is then read-only: every query is safe from several threads.
 * Node numbers are OS indexes (what set_mempolicy and /sys use), CPU numbers are OS
 * processor indexes (what sched_getaffinity uses). Sets are hwloc bitmaps indexed that way.
 * It is the whole machine, not narrowed to the caller's cgroup (slurmstepd runs inside the
 * step's cpuset): what a task may use comes separately, from its affinity and cpuset.mems.
 */
#ifndef NUMAPLACE_TOPOLOGY_H
#define NUMAPLACE_TOPOLOGY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <hwloc.h>

#include "numaplace/common.h"

enum np_topology_source_kind {
    /** this machine; `arg` is a filesystem root (a captured tree) or NULL/""/"/" for the real
     *  one. hwloc 2.x reads a root only from HWLOC_FSROOT and this library never changes the
     *  environment, so a caller giving a root (a single-threaded tool or test) sets
     *  HWLOC_FSROOT to it first; otherwise -EINVAL. A root that is not a Linux /sys tree fails
     *  (-ENOENT, -EIO). */
    NP_TOPOLOGY_LIVE,
    NP_TOPOLOGY_XML,       /**< `arg` is the path of an hwloc XML export (lstopo foo.xml) */
    NP_TOPOLOGY_SYNTHETIC, /**< `arg` is an hwloc synthetic description ("pack:2 numa:2 ...") */
};

struct np_topology;

/** What a node's memory is, from hwloc's subtype; one it does not type is DRAM. */
enum np_memory_kind {
    NP_MEMORY_DRAM,
    NP_MEMORY_HBM, /**< also SPM (memory the firmware set apart) and KNL's MCDRAM */
    NP_MEMORY_CXL, /**< CXL-DRAM */
    NP_MEMORY_NVM, /**< NVM and CXL-NVM */
    NP_MEMORY_GPU, /**< a GPU's memory: no policy chooses it unless it asks for it by kind */
    NP_MEMORY_KIND_COUNT
};

/** Where the tiers of a topology come from, the first one that ranks every node with memory. */
enum np_tier_source {
    NP_TIER_KERNEL,   /**< the kernel's memory_tiering/memory_tierN (live topologies) */
    NP_TIER_HWLOC,    /**< hwloc's MemoryTier info (hwloc >= 2.10) */
    NP_TIER_SUBTYPE,  /**< the kinds: hbm, dram, cxl, nvm, gpu (when not all are DRAM) */
    NP_TIER_DISTANCE, /**< the distance from the nearest node with CPUs (one tier without) */
    NP_TIER_SOURCE_COUNT
};

/** One NUMA node. Borrowed from its topology. */
struct np_numa_node {
    unsigned os_index; /**< node number as the kernel knows it */
    /** online CPUs of the node, as the kernel's nodeN/cpulist lists them; empty for a CPU-less
     *  node. A topology without /sys (XML, synthetic) gives each CPU to the narrowest node whose
     *  hwloc cpuset covers it, the lowest OS index among equals (docs/placement.md). */
    hwloc_const_cpuset_t cpus;
    uint64_t memory_bytes;           /**< local memory; 0 for a memory-less node */
    bool cpuless;                    /**< memory without CPUs (HBM, CXL, NVDIMM): opt-in only */
    const char *subtype;             /**< hwloc's memory subtype ("HBM", "NVM", ...) or NULL */
    enum np_memory_kind kind;        /**< from subtype */
    unsigned tier;                   /**< 0 = fastest; the tiers of a topology are 0..n-1 */
    enum np_tier_source tier_source; /**< where tier comes from, one for the whole topology */
};

/** "dram", "hbm", "cxl", "nvm", "gpu"; "unknown" past the end. Borrowed, static. */
NP_API const char *np_memory_kind_name(enum np_memory_kind kind);
/** "kernel", "hwloc", "subtype", "distance"; "unknown" past the end. Borrowed, static. */
NP_API const char *np_tier_source_name(enum np_tier_source source);

/**
 * Load a topology.
 * @param out   receives a new topology (free with np_topology_free) on success
 * @param kind  where to read it from
 * @param arg   see enum np_topology_source_kind
 * @param err   optional explanation on failure
 * @return 0, or -EINVAL (bad XML/synthetic text), -ENOENT (file missing), -ENOMEM, -EIO
 */
NP_API int np_topology_load(struct np_topology **out, enum np_topology_source_kind kind,
                            const char *arg, struct np_err *err);

/** Free a topology. Accepts NULL. */
NP_API void np_topology_free(struct np_topology *topo);

/** The underlying hwloc topology. Borrowed; do not modify or destroy it. */
NP_API hwloc_topology_t np_topology_hwloc(const struct np_topology *topo);

/** Number of NUMA nodes (with or without CPUs or memory). */
NP_API unsigned np_topology_node_count(const struct np_topology *topo);

/** The @p i-th node in OS-index order (0 <= i < count), or NULL. Borrowed. */
NP_API const struct np_numa_node *np_topology_node(const struct np_topology *topo, unsigned i);

/** The node with OS index @p os_index, or NULL. Borrowed. */
NP_API const struct np_numa_node *np_topology_node_by_os_index(const struct np_topology *topo,
                                                               unsigned os_index);

/**
 * ACPI SLIT-style distance from node @p from to node @p to (10 = local), as hwloc reports the
 * relative latency matrix; -ENOENT when the topology has no distance information, -EINVAL for
 * an unknown node.
 */
NP_API int np_topology_distance(const struct np_topology *topo, unsigned from, unsigned to);

/** The unloaded latency from node @p cpu_os's CPUs to node @p mem_os over their own node's, from
 *  hwloc's memory attributes (the firmware's HMAT, live on Linux 5.2+, or an XML's); 0 when hwloc
 *  lacks either figure (HMAT lists only a node's nearest initiators). */
NP_API double np_topology_latency_ratio(const struct np_topology *topo, unsigned cpu_os,
                                        unsigned mem_os);

/** Node @p os's bandwidth in MB/s (10^6 bytes/s; hwloc keeps MiB/s) from its best initiator, as
 *  hwloc's memory attributes hold it; 0 when unknown. */
NP_API double np_topology_bandwidth_mbps(const struct np_topology *topo, unsigned os);

/**
 * The CPU affinity of thread @p pid (0: the caller) into @p cpus, read with a set sized for the
 * kernel's CPU count however large (a fixed-size CPU set holds 1,024 and the kernel refuses it on a
 * machine with more). Needs no topology.
 * @return 0, or -errno of sched_getaffinity (-ESRCH: no such thread), -ENOMEM
 */
NP_API int np_affinity_get(pid_t pid, hwloc_bitmap_t cpus);

/**
 * Bind thread @p pid (0: the caller) to @p cpus, any CPU number.
 * @return 0, -EINVAL for an empty or infinite set, or -errno of sched_setaffinity
 */
NP_API int np_affinity_set(pid_t pid, hwloc_const_bitmap_t cpus);

/** The set of all online CPUs. Borrowed. */
NP_API hwloc_const_cpuset_t np_topology_cpus(const struct np_topology *topo);

/**
 * The NUMA nodes local to the CPUs in @p cpus: those whose cpus hold one of them (CPU-less nodes
 * are never local to a CPU, GPU memory never chosen).
 * @param nodes  caller-allocated bitmap, overwritten with OS node indexes
 * @return the number of nodes (0 when @p cpus holds no known CPU), or a negative errno
 */
NP_API int np_topology_cpus_to_nodes(const struct np_topology *topo, hwloc_const_cpuset_t cpus,
                                     hwloc_nodeset_t nodes);

/**
 * Nodes that have memory. With @p include_cpuless false, CPU-less memory nodes are left out
 * (the default for every policy: HBM/CXL memory is opt-in). GPU memory is never among them.
 * @param nodes caller-allocated bitmap, overwritten
 * @return the number of nodes
 */
NP_API int np_topology_memory_nodes(const struct np_topology *topo, bool include_cpuless,
                                    hwloc_nodeset_t nodes);

/**
 * Map Slurm's abstract core numbers (as in S_STEP_ALLOC_CORES: "0-3,8") to OS CPUs: core k is
 * the k-th core in hwloc's logical order, all of its hardware threads included.
 * @param cpus  caller-allocated bitmap, overwritten
 * @return 0, -EINVAL (malformed list, named in @p err), -ERANGE (core beyond the machine)
 */
NP_API int np_topology_cores_to_cpus(const struct np_topology *topo, const char *core_list,
                                     hwloc_cpuset_t cpus, struct np_err *err);

#endif /* NUMAPLACE_TOPOLOGY_H */
