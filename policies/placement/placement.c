/* From a task's CPUs and a requested policy to a memory policy (see numaplace/placement.h): a
 * decision only; lib/mempolicy applies it. */
#include "numaplace/placement.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int np_placement_init(struct np_placement *placement)
{
    memset(placement, 0, sizeof(*placement));
    placement->nodes = hwloc_bitmap_alloc();
    return placement->nodes ? 0 : -ENOMEM;
}

void np_placement_fini(struct np_placement *placement)
{
    if (!placement)
        return;
    hwloc_bitmap_free(placement->nodes);
    placement->nodes = NULL;
}

static void list(char *buf, size_t len, hwloc_const_bitmap_t set)
{
    if (hwloc_bitmap_iszero(set))
        snprintf(buf, len, "none");
    else
        hwloc_bitmap_list_snprintf(buf, len, set);
}

/* The node holding most of @p cpus (lowest index on ties). */
static unsigned busiest_node(const struct np_topology *topo, hwloc_const_bitmap_t nodes,
                             hwloc_const_cpuset_t cpus)
{
    hwloc_bitmap_t both = hwloc_bitmap_alloc();
    unsigned best = (unsigned)hwloc_bitmap_first(nodes);
    int best_count = -1, n;

    if (!both)
        return best; /* out of memory: the lowest node is still a valid answer */
    hwloc_bitmap_foreach_begin(n, nodes)
    {
        const struct np_numa_node *node = np_topology_node_by_os_index(topo, (unsigned)n);
        int count;
        hwloc_bitmap_and(both, node->cpus, cpus);
        count = hwloc_bitmap_weight(both);
        if (count > best_count) {
            best_count = count;
            best = (unsigned)n;
        }
    }
    hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(both);
    return best;
}

static uint64_t node_mask(hwloc_const_bitmap_t set)
{
    uint64_t mask = 0;
    int n;

    hwloc_bitmap_foreach_begin(n, set)
    {
        if (n < NP_AUTO_MAX_NODES)
            mask |= UINT64_C(1) << n;
    }
    hwloc_bitmap_foreach_end();
    return mask;
}

/* auto: choose from the input's facts and the task's shape, then place the choice. */
static int place_auto(const struct np_topology *topo, const struct np_place_input *in,
                      struct np_placement *out)
{
    struct np_auto_input facts = {0};
    struct np_place_input chosen = *in;
    struct np_auto_choice choice;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    char placed[sizeof(out->reason)];
    int rc;

    if (!nodes)
        return -ENOMEM;
    if (in->auto_input)
        facts = *in->auto_input;
    if (in->task_cpus)
        np_topology_cpus_to_nodes(topo, in->task_cpus, nodes);
    facts.task_nodes = node_mask(nodes);
    np_topology_memory_nodes(topo, in->include_cpuless, nodes);
    if (in->mems_allowed)
        hwloc_bitmap_and(nodes, nodes, in->mems_allowed);
    facts.allowed_nodes = node_mask(nodes);
    hwloc_bitmap_free(nodes);
    np_auto_choose(&facts, &choice);
    chosen.policy = choice.policy;
    chosen.auto_input = NULL;
    rc = np_place(topo, &chosen, out);
    if (rc < 0)
        return rc;
    out->policy = NP_POLICY_AUTO;
    out->auto_choice = choice;
    snprintf(placed, sizeof(placed), "%s", out->reason);
    snprintf(out->reason, sizeof(out->reason), "%.255s; %.250s", choice.reason, placed);
    return 0;
}

/* Faster than the task's own nodes (of best tier @p tier): typed HBM, or in a faster tier. */
static bool is_fast(const struct np_numa_node *node, unsigned tier)
{
    return node->kind == NP_MEMORY_HBM || node->tier < tier;
}

/* Memory without CPUs in another tier than the step's own nodes (CXL, HBM beside DDR). */
static bool is_other_tier(const struct np_numa_node *node, unsigned tier)
{
    return node->cpuless && node->tier != tier;
}

/* For each of @p local, the nodes that @p pick, with memory (not a GPU's) and @p allowed, at the
 * smallest distance from it, into @p out; pick is given the best tier of @p local. */
static void nearest_nodes(const struct np_topology *topo, hwloc_const_nodeset_t local,
                          hwloc_const_nodeset_t allowed,
                          bool (*pick)(const struct np_numa_node *, unsigned), hwloc_nodeset_t out)
{
    const unsigned count = np_topology_node_count(topo);
    unsigned tier = UINT32_MAX;
    int l;

    hwloc_bitmap_zero(out);
    hwloc_bitmap_foreach_begin(l, local)
    {
        const unsigned t = np_topology_node_by_os_index(topo, (unsigned)l)->tier;
        tier = t < tier ? t : tier;
    }
    hwloc_bitmap_foreach_end();
    hwloc_bitmap_foreach_begin(l, local)
    {
        int best = INT32_MAX;
        for (int pass = 0; pass < 2; pass++)
            for (unsigned i = 0; i < count; i++) {
                const struct np_numa_node *node = np_topology_node(topo, i);
                /* No distances (-ENOENT): every such node is as near as the others. */
                const int d = np_topology_distance(topo, (unsigned)l, node->os_index);
                if (!node->memory_bytes || node->kind == NP_MEMORY_GPU || !pick(node, tier) ||
                    (allowed && !hwloc_bitmap_isset(allowed, node->os_index)))
                    continue;
                if (pass == 0 && d < best)
                    best = d;
                else if (pass == 1 && d == best)
                    hwloc_bitmap_set(out, node->os_index);
            }
    }
    hwloc_bitmap_foreach_end();
}

/* "0:3 2:1": the kernel's weight for each of @p nodes, or why there are none. */
static void weights_text(const struct np_place_input *in, hwloc_const_nodeset_t nodes, char *buf,
                         size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "the kernel's weights");
    int n;

    if (!in->interleave_weights) {
        snprintf(buf, len, "weights unknown");
        return;
    }
    hwloc_bitmap_foreach_begin(n, nodes)
    {
        if (used < len)
            used += (size_t)snprintf(
                buf + used, len - used, " %d:%u", n,
                (unsigned)n < in->interleave_weights_count ? in->interleave_weights[n] : 1u);
    }
    hwloc_bitmap_foreach_end();
}

/* fast-tier, fast-tier-strict: the nearest fast nodes, or local (local-strict) without them. */
static int place_fast_tier(const struct np_topology *topo, const struct np_place_input *in,
                           struct np_placement *out)
{
    const bool strict = in->policy == NP_POLICY_FAST_TIER_STRICT;
    const char *name = np_policy_name(in->policy);
    struct np_place_input local = *in;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    char cpus[96], from[96], fast[96];
    int from_count;

    if (!nodes)
        return -ENOMEM;
    local.policy = strict ? NP_POLICY_LOCAL_STRICT : NP_POLICY_LOCAL;
    if (in->task_cpus)
        np_topology_cpus_to_nodes(topo, in->task_cpus, nodes);
    list(from, sizeof(from), nodes);
    from_count = hwloc_bitmap_weight(nodes);
    nearest_nodes(topo, nodes, in->mems_allowed, is_fast, out->nodes);
    if (!hwloc_bitmap_iszero(out->nodes) && !strict && !in->have_preferred_many &&
        hwloc_bitmap_weight(out->nodes) > 1) {
        /* One node only: the fast node nearest the node that holds most of the CPUs. */
        hwloc_bitmap_only(nodes, busiest_node(topo, nodes, in->task_cpus));
        nearest_nodes(topo, nodes, in->mems_allowed, is_fast, out->nodes);
        hwloc_bitmap_only(out->nodes, (unsigned)hwloc_bitmap_first(out->nodes));
    }
    hwloc_bitmap_free(nodes);
    if (in->fast_tier_refused || hwloc_bitmap_iszero(out->nodes)) {
        char placed[sizeof(out->reason)];
        const int rc = np_place(topo, &local, out);
        if (rc < 0)
            return rc;
        snprintf(placed, sizeof(placed), "%s", out->reason);
        snprintf(out->reason, sizeof(out->reason), "%s: %s: %s instead; %.300s", name,
                 in->fast_tier_refused
                     ? "the site keeps the fast tier for high jobs (fast_tier=high)"
                     : "no faster memory than the task's node(s) it may use",
                 np_policy_name(local.policy), placed);
        out->policy = in->policy;
        return 0;
    }
    list(cpus, sizeof(cpus), in->task_cpus);
    list(fast, sizeof(fast), out->nodes);
    out->mode = strict                                ? NP_MODE_BIND
                : hwloc_bitmap_weight(out->nodes) > 1 ? NP_MODE_PREFERRED_MANY
                                                      : NP_MODE_PREFERRED;
    snprintf(out->reason, sizeof(out->reason),
             "%s: %s node%s %s, the fast memory nearest node%s %s of CPUs %s%s", name,
             strict ? "bound to" : "preferred", hwloc_bitmap_weight(out->nodes) > 1 ? "s" : "",
             fast, from_count > 1 ? "s" : "", from, cpus,
             strict ? "" : "; other nodes when it is full");
    return 0;
}

int np_place(const struct np_topology *topo, const struct np_place_input *in,
             struct np_placement *out)
{
    hwloc_bitmap_t wanted, allowed;
    char cpus_text[96], wanted_text[96], allowed_text[96], nodes_text[96], weights[160];
    const char *name;

    if (!topo || !in || !out || !out->nodes)
        return -EINVAL;
    out->policy = in->policy;
    out->chosen = in->policy;
    out->mode = NP_MODE_DEFAULT;
    hwloc_bitmap_zero(out->nodes);
    out->reason[0] = '\0';
    memset(&out->auto_choice, 0, sizeof(out->auto_choice));
    if (in->policy == NP_POLICY_AUTO)
        return place_auto(topo, in, out);
    if (in->policy == NP_POLICY_FAST_TIER || in->policy == NP_POLICY_FAST_TIER_STRICT)
        return place_fast_tier(topo, in, out);
    name = np_policy_name(in->policy);
    if (in->policy == NP_POLICY_NONE) {
        snprintf(out->reason, sizeof(out->reason),
                 "none: kernel default and Slurm's --mem-bind left alone");
        return 0;
    }
    if ((unsigned)in->policy >= NP_POLICY_COUNT)
        return -EINVAL;
    wanted = hwloc_bitmap_alloc();
    allowed = hwloc_bitmap_alloc();
    if (!wanted || !allowed) {
        hwloc_bitmap_free(wanted);
        hwloc_bitmap_free(allowed);
        return -ENOMEM;
    }
    list(cpus_text, sizeof(cpus_text), in->task_cpus ? in->task_cpus : wanted);

    switch (in->policy) {
    case NP_POLICY_LOCAL:
    case NP_POLICY_LOCAL_STRICT:
        if (in->task_cpus)
            np_topology_cpus_to_nodes(topo, in->task_cpus, wanted);
        break;
    case NP_POLICY_INTERLEAVE:
        np_topology_cpus_to_nodes(topo, in->step_cpus ? in->step_cpus : in->task_cpus, wanted);
        break;
    case NP_POLICY_INTERLEAVE_ALL:
        np_topology_memory_nodes(topo, in->include_cpuless, wanted);
        break;
    case NP_POLICY_WEIGHTED_INTERLEAVE:
        np_topology_cpus_to_nodes(topo, in->step_cpus ? in->step_cpus : in->task_cpus, wanted);
        nearest_nodes(topo, wanted, in->mems_allowed, is_other_tier, allowed);
        hwloc_bitmap_or(wanted, wanted, allowed);
        break;
    case NP_POLICY_NONE:
    case NP_POLICY_AUTO:
    case NP_POLICY_FAST_TIER:
    case NP_POLICY_FAST_TIER_STRICT:
        break;
    }
    /* Nodes without memory cannot take pages. */
    for (unsigned i = 0; i < np_topology_node_count(topo); i++) {
        const struct np_numa_node *node = np_topology_node(topo, i);
        if (node->memory_bytes == 0)
            hwloc_bitmap_clr(wanted, node->os_index);
    }
    list(wanted_text, sizeof(wanted_text), wanted);
    if (hwloc_bitmap_iszero(wanted)) {
        snprintf(out->reason, sizeof(out->reason),
                 "%s: no memory node matches CPUs %s: left the kernel default", name, cpus_text);
        goto done;
    }
    if (in->mems_allowed)
        hwloc_bitmap_copy(allowed, in->mems_allowed);
    else
        hwloc_bitmap_fill(allowed);
    list(allowed_text, sizeof(allowed_text), allowed);
    hwloc_bitmap_and(out->nodes, wanted, allowed);
    if (hwloc_bitmap_iszero(out->nodes)) {
        snprintf(out->reason, sizeof(out->reason),
                 "%s wants node%s %s but the cpuset allows %s: left the kernel default", name,
                 hwloc_bitmap_weight(wanted) > 1 ? "s" : "", wanted_text, allowed_text);
        goto done;
    }
    list(nodes_text, sizeof(nodes_text), out->nodes);

    switch (in->policy) {
    case NP_POLICY_LOCAL:
        if (hwloc_bitmap_weight(out->nodes) == 1) {
            out->mode = NP_MODE_PREFERRED;
            snprintf(out->reason, sizeof(out->reason), "local: preferred node %s (CPUs %s)",
                     nodes_text, cpus_text);
        } else if (in->have_preferred_many) {
            out->mode = NP_MODE_PREFERRED_MANY;
            snprintf(out->reason, sizeof(out->reason),
                     "local: preferred nodes %s (CPUs %s span them)", nodes_text, cpus_text);
        } else {
            const unsigned node = busiest_node(topo, out->nodes, in->task_cpus);
            hwloc_bitmap_only(out->nodes, node);
            out->mode = NP_MODE_PREFERRED;
            snprintf(out->reason, sizeof(out->reason),
                     "local: preferred node %u, which holds most of CPUs %s (this kernel has no "
                     "MPOL_PREFERRED_MANY for %s)",
                     node, cpus_text, nodes_text);
        }
        break;
    case NP_POLICY_LOCAL_STRICT:
        out->mode = NP_MODE_BIND;
        snprintf(out->reason, sizeof(out->reason), "local-strict: bound to node%s %s (CPUs %s)",
                 hwloc_bitmap_weight(out->nodes) > 1 ? "s" : "", nodes_text, cpus_text);
        break;
    case NP_POLICY_INTERLEAVE:
        out->mode = NP_MODE_INTERLEAVE;
        snprintf(out->reason, sizeof(out->reason), "interleave over node%s %s (%s%s CPUs%s)",
                 hwloc_bitmap_weight(out->nodes) > 1 ? "s" : "", nodes_text,
                 hwloc_bitmap_weight(out->nodes) > 1 ? "the nodes of the " : "a single node: the ",
                 in->step_cpus ? "step's" : "task's (step unknown)",
                 hwloc_bitmap_weight(out->nodes) > 1 ? "" : " are all on it");
        break;
    case NP_POLICY_WEIGHTED_INTERLEAVE:
        out->mode = in->have_weighted_interleave ? NP_MODE_WEIGHTED_INTERLEAVE : NP_MODE_INTERLEAVE;
        weights_text(in, out->nodes, weights, sizeof(weights));
        snprintf(out->reason, sizeof(out->reason),
                 "weighted-interleave over node%s %s (the step's nodes and the nearest memory of "
                 "another tier), %s",
                 hwloc_bitmap_weight(out->nodes) > 1 ? "s" : "", nodes_text,
                 in->have_weighted_interleave
                     ? weights
                     : "this kernel has no weighted interleave (Linux 6.9+): plain interleave");
        break;
    case NP_POLICY_INTERLEAVE_ALL:
        out->mode = NP_MODE_INTERLEAVE;
        snprintf(out->reason, sizeof(out->reason),
                 "interleave-all over node%s %s (every memory node the job may use%s)",
                 hwloc_bitmap_weight(out->nodes) > 1 ? "s" : "", nodes_text,
                 in->include_cpuless ? ", CPU-less ones included" : "");
        break;
    case NP_POLICY_NONE:
    case NP_POLICY_AUTO:
    case NP_POLICY_FAST_TIER:
    case NP_POLICY_FAST_TIER_STRICT:
        break;
    }
done:
    hwloc_bitmap_free(wanted);
    hwloc_bitmap_free(allowed);
    return 0;
}
