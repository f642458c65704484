/*
 * numaplace/mempolicy.h - the kernel's memory policy calls: apply a placement decided by
 * numaplace/placement.h to the calling thread, read the thread's policy and allowed nodes.
 */
#ifndef NUMAPLACE_MEMPOLICY_H
#define NUMAPLACE_MEMPOLICY_H

#include <stdbool.h>

#include <hwloc.h>

#include "numaplace/common.h"
#include "numaplace/placement.h"

/**
 * Apply a placement to the calling thread with set_mempolicy (MPOL_DEFAULT resets). The
 * policy survives exec and is inherited by children. Nothing is substituted silently: when
 * the kernel refuses MPOL_PREFERRED_MANY (EINVAL before Linux 5.15) the result is -EINVAL with
 * @p err saying so, and the caller may place again with have_preferred_many false.
 * @return 0, or a negative errno from set_mempolicy with @p err saying which call failed
 */
NP_API int np_placement_apply(const struct np_placement *placement, struct np_err *err);

/**
 * Read the calling thread's current memory policy (get_mempolicy).
 * @param nodes caller-allocated, overwritten
 */
NP_API int np_mempolicy_get(enum np_mode *mode, hwloc_nodeset_t nodes, struct np_err *err);

/**
 * The memory nodes the calling task's cpuset allows (get_mempolicy with MPOL_F_MEMS_ALLOWED).
 * @param nodes caller-allocated, overwritten
 */
NP_API int np_mems_allowed(hwloc_nodeset_t nodes, struct np_err *err);

/**
 * The kernel's weighted-interleave weights of nodes 0 .. @p count - 1
 * (/sys/kernel/mm/mempolicy/weighted_interleave/nodeN, 1-255; 1 where a node has none).
 * @return 0, or -ENOENT when the kernel has no weighted interleave (before Linux 6.9)
 */
NP_API int np_interleave_weights(unsigned char *weights, unsigned count);

/** Whether the running kernel accepts MPOL_PREFERRED_MANY. */
NP_API bool np_kernel_has_preferred_many(void);

#endif /* NUMAPLACE_MEMPOLICY_H */
