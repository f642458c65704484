/*
 * np_place_exec POLICY COMMAND [ARG...]: place this process's memory as the plugin places a
 * task's (the live topology, its own CPU affinity and cpuset, the same np_place and
 * np_placement_apply calls), say what it got on stderr, then exec COMMAND. For the guest suites
 * that test placement on a kernel without a Slurm (test/vm/tiers_cases.sh): the line is
 *   np_place_exec: policy=POLICY chosen=POLICY mode=MODE nodes=LIST (REASON)
 */
#include <stdio.h>
#include <unistd.h>

#include "numaplace/mempolicy.h"
#include "numaplace/placement.h"

int main(int argc, char **argv)
{
    struct np_place_input in = {0};
    struct np_topology *topo = NULL;
    struct np_placement out;
    struct np_err err = {0};
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), allowed = hwloc_bitmap_alloc();
    char nodes[128] = "-";
    unsigned char weights[64];

    if (argc < 3 || np_policy_from_name(argv[1], &in.policy, &err) < 0) {
        fprintf(stderr, "usage: np_place_exec POLICY COMMAND [ARG...]%s%s\n",
                err.msg[0] ? ": " : "", err.msg);
        return 2;
    }
    if (!cpus || !allowed || np_placement_init(&out) < 0 ||
        np_topology_load(&topo, NP_TOPOLOGY_LIVE, NULL, &err) < 0 || np_affinity_get(0, cpus) < 0 ||
        np_mems_allowed(allowed, &err) < 0) {
        fprintf(stderr, "np_place_exec: %s\n", err.msg[0] ? err.msg : "cannot read the machine");
        return 1;
    }
    in.task_cpus = in.step_cpus = cpus;
    in.mems_allowed = allowed;
    in.have_preferred_many = np_kernel_has_preferred_many();
    for (unsigned i = 0; i < np_topology_node_count(topo) && i < sizeof(weights); i++)
        in.interleave_weights_count = np_topology_node(topo, i)->os_index + 1;
    in.have_weighted_interleave = np_interleave_weights(weights, in.interleave_weights_count) == 0;
    in.interleave_weights = in.have_weighted_interleave ? weights : NULL;
    if (np_place(topo, &in, &out) < 0 || np_placement_apply(&out, &err) < 0) {
        fprintf(stderr, "np_place_exec: %s\n", err.msg[0] ? err.msg : "placement failed");
        return 1;
    }
    if (!hwloc_bitmap_iszero(out.nodes))
        hwloc_bitmap_list_snprintf(nodes, sizeof(nodes), out.nodes);
    fprintf(stderr, "np_place_exec: policy=%s chosen=%s mode=%s nodes=%s (%s)\n",
            np_policy_name(out.policy), np_policy_name(out.chosen), np_mode_name(out.mode), nodes,
            out.reason);
    fflush(stderr);
    np_placement_fini(&out);
    np_topology_free(topo);
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(allowed);
    execvp(argv[2], argv + 2);
    perror("np_place_exec: exec");
    return 127;
}
