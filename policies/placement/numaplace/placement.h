/*
 * numaplace/placement.h - from a task's CPUs and a requested policy to a memory policy. A decision
 * only: numaplace/mempolicy.h applies it, so it is tested on topologies we do not have.
 */
#ifndef NUMAPLACE_PLACEMENT_H
#define NUMAPLACE_PLACEMENT_H

#include <stdbool.h>

#include <hwloc.h>

#include "numaplace/auto.h"
#include "numaplace/common.h"
#include "numaplace/names.h"
#include "numaplace/topology.h"

/** Inputs of a placement decision. All sets are borrowed. */
struct np_place_input {
    enum np_policy policy;
    hwloc_const_cpuset_t task_cpus;     /**< the task's real affinity (after Slurm's binding) */
    hwloc_const_cpuset_t step_cpus;     /**< the step's CPUs on this host; NULL = task_cpus */
    hwloc_const_nodeset_t mems_allowed; /**< cpuset.mems of the task; NULL = every node */
    bool include_cpuless;               /**< CPU-less nodes in interleave-all (site opt-in) */
    bool have_preferred_many;           /**< the kernel supports MPOL_PREFERRED_MANY */
    bool fast_tier_refused; /**< the site keeps the fast tier from this job: fast-tier is local */
    bool have_weighted_interleave; /**< the kernel has MPOL_WEIGHTED_INTERLEAVE (Linux 6.9) */
    /** the kernel's weighted-interleave weight of each node by OS index (for the reason: the
     *  kernel applies its own), NULL = unknown; beyond the count, 1 */
    const unsigned char *interleave_weights;
    unsigned interleave_weights_count;
    /** policy auto: what np_auto_choose is given (task_nodes and allowed_nodes are filled here
     *  from the CPUs and mems_allowed); NULL = nothing known but the shape */
    const struct np_auto_input *auto_input;
};

/** The decision. Initialise with np_placement_init, release with np_placement_fini. */
struct np_placement {
    enum np_policy policy; /**< what was asked */
    enum np_policy chosen; /**< what was placed: auto's choice, else policy */
    /** policy auto: np_auto_choose's answer, its facts and line; zero otherwise */
    struct np_auto_choice auto_choice;
    enum np_mode mode;     /**< what to apply; DEFAULT when nothing is to be done */
    hwloc_nodeset_t nodes; /**< owned; empty for DEFAULT */
    char reason[512];      /**< one line saying why, for logs and verbose output */
};

/** @return 0 or -ENOMEM. */
NP_API int np_placement_init(struct np_placement *placement);
/** Free what the placement owns. Accepts NULL. */
NP_API void np_placement_fini(struct np_placement *placement);

/**
 * Decide the memory policy. Never fails for lack of a sensible answer: when the nodes the
 * policy wants and the allowed nodes do not meet, the result is NP_MODE_DEFAULT with the
 * reason saying so. CPU-less memory nodes are never local to a CPU, so local, local-strict and
 * interleave (the nodes of the CPUs) never use them; include_cpuless adds them to
 * interleave-all only. Nodes without memory, or of GPU memory, are never chosen. Policy auto is
 * first resolved by np_auto_choose; the reason then starts with its line. fast-tier and its
 * strict form take, for each node of the task's CPUs, the nearest allowed nodes of faster memory
 * (typed HBM, or in a faster tier than the task's nodes); with none (or fast_tier_refused) they
 * are local and local-strict, the reason saying why.
 * @return 0, or -EINVAL (NULL arguments), -ENOMEM
 */
NP_API int np_place(const struct np_topology *topo, const struct np_place_input *input,
                    struct np_placement *out);

#endif /* NUMAPLACE_PLACEMENT_H */
