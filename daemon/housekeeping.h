/* housekeeping.h - which CPUs numaplaced may run on: the housekeeping CPUs asked for, never the
 * CPUs the kernel keeps quiet for applications (nohz_full, isolcpus). */
#ifndef NUMAPLACED_HOUSEKEEPING_H
#define NUMAPLACED_HOUSEKEEPING_H

#include <hwloc.h>

/**
 * The kernel's quiet CPUs under @p root ("" = /): /sys/devices/system/cpu/nohz_full into
 * @p nohz and /sys/devices/system/cpu/isolated (isolcpus) into @p isolated, both zeroed first.
 * A missing or empty file, or "(null)", means none.
 * @return 0, or -EINVAL when a file holds no CPU list (the set stays empty)
 */
int housekeeping_quiet_cpus(const char *root, hwloc_bitmap_t nohz, hwloc_bitmap_t isolated);

/**
 * numaplaced's CPUs into @p out: @p wanted (the housekeeping CPUs; empty: @p started, the
 * affinity it was started with) without @p quiet. When that leaves nothing, @p started without
 * @p quiet; when even that is empty, @p started.
 * @return 0, 1 when @p wanted had to be left for @p started, 2 when no CPU outside @p quiet
 *         was left at all
 */
int housekeeping_choose(hwloc_const_bitmap_t wanted, hwloc_const_bitmap_t started,
                        hwloc_const_bitmap_t quiet, hwloc_bitmap_t out);

/**
 * The CPUs slurmd runs on, into @p out: Slurm confines slurmd (and slurmstepd) to the node's
 * specialized CPUs (CpuSpecList, CoreSpecCount) where it enforces them (task/cgroup with
 * ConstrainCores, without SlurmdOffSpec), so they are what the node itself knows of them, with
 * no call to slurmctld. Read from the Cpus_allowed_list of each process named slurmd under
 * @p root ("" = /) whose parent is not one (slurmd's own forks).
 * @return 1 with @p out set, 0 when no slurmd runs, -EINVAL when several disagree or a list is
 *         unreadable (@p out empty)
 */
int housekeeping_slurmd_cpus(const char *root, hwloc_bitmap_t out);

#endif /* NUMAPLACED_HOUSEKEEPING_H */
