/* CPU affinity in sets sized for the kernel's CPU count (see numaplace/topology.h). */
#include "numaplace/topology.h"

#include <errno.h>
#include <sched.h>

/* glibc's fixed CPU set size: enough on most machines, so one call is the usual cost. */
#define AFFINITY_FIRST_CPUS 1024u
/* Far above any kernel's CONFIG_NR_CPUS (8,192 in Debian's): stops the doubling. */
#define AFFINITY_MOST_CPUS (1u << 22)

int np_affinity_get(pid_t pid, hwloc_bitmap_t cpus)
{
    /* The kernel refuses a set smaller than its CPU count (EINVAL): double until it fits. */
    for (unsigned n = AFFINITY_FIRST_CPUS; n <= AFFINITY_MOST_CPUS; n *= 2) {
        cpu_set_t *set = CPU_ALLOC(n);
        const size_t size = CPU_ALLOC_SIZE(n);
        int rc;

        if (!set)
            return -ENOMEM;
        rc = sched_getaffinity(pid, size, set) == 0 ? 0 : -errno;
        if (rc == 0) {
            hwloc_bitmap_zero(cpus);
            for (unsigned c = 0; c < n; c++)
                if (CPU_ISSET_S(c, size, set))
                    hwloc_bitmap_set(cpus, c);
        }
        CPU_FREE(set);
        if (rc != -EINVAL)
            return rc;
    }
    return -EINVAL;
}

int np_affinity_set(pid_t pid, hwloc_const_bitmap_t cpus)
{
    const int last = hwloc_bitmap_last(cpus);
    cpu_set_t *set;
    size_t size;
    int cpu, rc;

    if (last < 0) /* empty, or infinite */
        return -EINVAL;
    set = CPU_ALLOC((unsigned)last + 1);
    if (!set)
        return -ENOMEM;
    size = CPU_ALLOC_SIZE((unsigned)last + 1);
    CPU_ZERO_S(size, set);
    hwloc_bitmap_foreach_begin(cpu, cpus)
    {
        CPU_SET_S((unsigned)cpu, size, set);
    }
    hwloc_bitmap_foreach_end();
    rc = sched_setaffinity(pid, size, set) == 0 ? 0 : -errno;
    CPU_FREE(set);
    return rc;
}
