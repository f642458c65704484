/* Memory performance as hwloc's memory attributes hold it: the firmware's HMAT on Linux 5.2+
 * (each node's access0 initiators), or an XML's <memattr> (see numaplace/topology.h). */
#include "numaplace/topology.h"

#include <stdlib.h>

#include <hwloc/memattrs.h>

/* @p attr of node @p target as seen from node @p cpu_os's CPUs: the value of the first initiator
 * whose CPUs are on that node; 0 when hwloc has none. */
static hwloc_uint64_t from_node(const struct np_topology *topo, hwloc_memattr_id_t attr,
                                unsigned cpu_os, unsigned target_os)
{
    hwloc_topology_t t = np_topology_hwloc(topo);
    hwloc_obj_t target = hwloc_get_numanode_obj_by_os_index(t, target_os);
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    struct hwloc_location *where = NULL;
    hwloc_uint64_t *values = NULL, found = 0;
    unsigned nr = 0;

    if (!target || !nodes ||
        hwloc_memattr_get_initiators(t, attr, target, 0, &nr, NULL, NULL) < 0 || nr == 0 ||
        !(where = calloc(nr, sizeof(*where))) || !(values = calloc(nr, sizeof(*values))) ||
        hwloc_memattr_get_initiators(t, attr, target, 0, &nr, where, values) < 0)
        nr = 0;
    for (unsigned i = 0; i < nr && !found; i++)
        if (where[i].type == HWLOC_LOCATION_TYPE_CPUSET &&
            np_topology_cpus_to_nodes(topo, where[i].location.cpuset, nodes) > 0 &&
            hwloc_bitmap_isset(nodes, cpu_os))
            found = values[i];
    hwloc_bitmap_free(nodes);
    free(where);
    free(values);
    return found;
}

double np_topology_latency_ratio(const struct np_topology *topo, unsigned cpu_os, unsigned mem_os)
{
    const hwloc_uint64_t own = from_node(topo, HWLOC_MEMATTR_ID_LATENCY, cpu_os, cpu_os);
    const hwloc_uint64_t there = from_node(topo, HWLOC_MEMATTR_ID_LATENCY, cpu_os, mem_os);

    return own && there ? (double)there / (double)own : 0;
}

double np_topology_bandwidth_mbps(const struct np_topology *topo, unsigned os)
{
    hwloc_topology_t t = np_topology_hwloc(topo);
    hwloc_obj_t node = hwloc_get_numanode_obj_by_os_index(t, os);
    struct hwloc_location best;
    hwloc_uint64_t value = 0;

    if (!node ||
        hwloc_memattr_get_best_initiator(t, HWLOC_MEMATTR_ID_BANDWIDTH, node, 0, &best, &value) < 0)
        return 0;
    return (double)value * 1.048576; /* hwloc's MiB/s */
}
