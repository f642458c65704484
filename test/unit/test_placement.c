/* Placement decisions over the fixture machines, every policy and variant, plus a real apply. */
#include <errno.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/placement.h"
#include "numaplace/mempolicy.h"

static const struct {
    const char *fixture; /* topology/NAME.xml, or "root:NAME": test/fixtures/roots/NAME read live */
    enum np_policy policy;
    const char *task, *step, *allowed; /* lists; NULL step/allowed = not given */
    bool include_cpuless, preferred_many;
    enum np_mode mode;
    const char *nodes, *reason;
} cases[] = {
    /* local: one node, SMT siblings, spanning two nodes with and without PREFERRED_MANY */
    {"sandman", NP_POLICY_LOCAL, "0-1", NULL, NULL, false, true, NP_MODE_PREFERRED, "0",
     "local: preferred node 0 (CPUs 0-1)"},
    {"sandman", NP_POLICY_LOCAL, "33", NULL, NULL, false, true, NP_MODE_PREFERRED, "2",
     "preferred node 2"},
    {"sandman", NP_POLICY_LOCAL, "14-17", NULL, NULL, false, true, NP_MODE_PREFERRED_MANY, "0-1",
     "preferred nodes 0-1 (CPUs 14-17 span them)"},
    {"sandman", NP_POLICY_LOCAL, "15-19", NULL, NULL, false, false, NP_MODE_PREFERRED, "1",
     "preferred node 1, which holds most of CPUs 15-19 (this kernel has no MPOL_PREFERRED_MANY"},
    {"sandman", NP_POLICY_LOCAL, "14-17", NULL, NULL, false, false, NP_MODE_PREFERRED, "0",
     "holds most"}, /* a tie goes to the lower node */
    /* local-strict binds */
    {"sandman", NP_POLICY_LOCAL_STRICT, "32-33", NULL, NULL, false, true, NP_MODE_BIND, "2",
     "local-strict: bound to node 2"},
    {"sandman", NP_POLICY_LOCAL_STRICT, "15-16", NULL, NULL, false, true, NP_MODE_BIND, "0-1",
     "bound to nodes 0-1"},
    /* interleave: over the step's nodes, or the task's when the step is unknown */
    {"sandman", NP_POLICY_INTERLEAVE, "0", "0-31", NULL, false, true, NP_MODE_INTERLEAVE, "0-1",
     "interleave over nodes 0-1 (the nodes of the step's CPUs)"},
    {"sandman", NP_POLICY_INTERLEAVE, "40", NULL, NULL, false, true, NP_MODE_INTERLEAVE, "2",
     "interleave over node 2 (a single node: the task's (step unknown) CPUs are all on it)"},
    {"sandman", NP_POLICY_INTERLEAVE, "40-41", "40-47", NULL, false, true, NP_MODE_INTERLEAVE, "2",
     "interleave over node 2 (a single node: the step's CPUs are all on it)"},
    {"sandman", NP_POLICY_INTERLEAVE, "0", "60", NULL, false, true, NP_MODE_INTERLEAVE, "3",
     "the step's CPUs"}, /* the step decides, not the task */
    {"sandman", NP_POLICY_INTERLEAVE, "16", "16-47", "1-2", false, true, NP_MODE_INTERLEAVE, "1-2",
     "interleave over nodes 1-2"},
    {"sandman", NP_POLICY_INTERLEAVE_ALL, "0", NULL, NULL, false, true, NP_MODE_INTERLEAVE, "0-3",
     "interleave-all over nodes 0-3"},
    {"sandman", NP_POLICY_INTERLEAVE_ALL, "0", NULL, "1,3", false, true, NP_MODE_INTERLEAVE, "1,3",
     "interleave-all over nodes 1,3"},
    /* the allowed set: partly, wholly or entirely disjoint */
    {"sandman", NP_POLICY_LOCAL, "0", NULL, "1-3", false, true, NP_MODE_DEFAULT, "",
     "local wants node 0 but the cpuset allows 1-3: left the kernel default"},
    {"sandman", NP_POLICY_INTERLEAVE, "0", "0-31", "", false, true, NP_MODE_DEFAULT, "",
     "but the cpuset allows none"},
    {"sandman", NP_POLICY_LOCAL, "14-17", NULL, "1", false, true, NP_MODE_PREFERRED, "1",
     "preferred node 1"},
    /* none, unknown CPUs */
    {"sandman", NP_POLICY_NONE, "0", NULL, NULL, false, true, NP_MODE_DEFAULT, "",
     "none: kernel default and Slurm's --mem-bind left alone"},
    {"sandman", NP_POLICY_LOCAL, "500", NULL, NULL, false, true, NP_MODE_DEFAULT, "",
     "no memory node matches CPUs 500"},
    {"sandman", NP_POLICY_LOCAL, "", NULL, NULL, false, true, NP_MODE_DEFAULT, "",
     "no memory node matches CPUs none"},
    {"sandman", NP_POLICY_LOCAL_STRICT, NULL, NULL, NULL, false, true, NP_MODE_DEFAULT, "",
     "local-strict: no memory node matches CPUs none"}, /* task CPUs unknown */
    {"sandman", NP_POLICY_INTERLEAVE, NULL, NULL, NULL, false, true, NP_MODE_DEFAULT, "",
     "interleave: no memory node matches"},
    {"sandman", NP_POLICY_LOCAL_STRICT, "0-1", NULL, "1-3", false, true, NP_MODE_DEFAULT, "",
     "local-strict wants node 0 but the cpuset allows 1-3"},
    {"sandman", NP_POLICY_INTERLEAVE_ALL, "0", NULL, "5-6", false, true, NP_MODE_DEFAULT, "",
     "interleave-all wants nodes 0-3 but the cpuset allows 5-6"},
    /* the CPU-less memory node: excluded unless opted in */
    {"cpuless", NP_POLICY_INTERLEAVE_ALL, "0", NULL, NULL, false, true, NP_MODE_INTERLEAVE, "0-1",
     "interleave-all over nodes 0-1"},
    {"cpuless", NP_POLICY_INTERLEAVE_ALL, "0", NULL, NULL, true, true, NP_MODE_INTERLEAVE, "0-2",
     "CPU-less ones included"},
    {"cpuless", NP_POLICY_LOCAL, "0-15", NULL, NULL, true, true, NP_MODE_PREFERRED_MANY, "0-1",
     "preferred nodes 0-1"},
    {"cpuless", NP_POLICY_INTERLEAVE, "8-15", NULL, NULL, true, true, NP_MODE_INTERLEAVE, "1",
     "a single node"},
    {"cpuless", NP_POLICY_LOCAL_STRICT, "0-15", NULL, NULL, true, true, NP_MODE_BIND, "0-1",
     "bound to nodes 0-1"},
    {"cpuless", NP_POLICY_INTERLEAVE_ALL, "0", NULL, "2", true, true, NP_MODE_INTERLEAVE, "2",
     "interleave-all over node 2"}, /* only the CPU-less node allowed, and opted in */
    {"cpuless", NP_POLICY_INTERLEAVE_ALL, "0", NULL, "2", false, true, NP_MODE_DEFAULT, "",
     "interleave-all wants nodes 0-1 but the cpuset allows 2"},
    /* tiered memory: the HBM node 2 owns CPUs 4-5, so it is theirs and a CPU node; node 3 is
     * memory-only */
    {"tiered", NP_POLICY_LOCAL, "4-5", NULL, NULL, false, true, NP_MODE_PREFERRED, "2",
     "local: preferred node 2 (CPUs 4-5)"},
    {"tiered", NP_POLICY_INTERLEAVE_ALL, "0", NULL, NULL, false, true, NP_MODE_INTERLEAVE, "0-2",
     "interleave-all over nodes 0-2"},
    {"tiered", NP_POLICY_INTERLEAVE_ALL, "0", NULL, NULL, true, true, NP_MODE_INTERLEAVE, "0-3",
     "CPU-less ones included"},
    {"hbm-only", NP_POLICY_LOCAL_STRICT, "2-3", NULL, NULL, false, true, NP_MODE_BIND, "1",
     "bound to node 1"},
    /* two levels: local is the cluster's own node, never the package's node 2 */
    {"two-level", NP_POLICY_LOCAL, "0", NULL, NULL, true, true, NP_MODE_PREFERRED, "0",
     "preferred node 0"},
    {"two-level", NP_POLICY_INTERLEAVE, "0", "0-3", NULL, true, true, NP_MODE_INTERLEAVE, "0-1",
     "interleave over nodes 0-1"},
    /* GPU memory: never chosen, CPU-less nodes opted in or not */
    {"gpu", NP_POLICY_INTERLEAVE_ALL, "0", NULL, NULL, true, true, NP_MODE_INTERLEAVE, "0",
     "interleave-all over node 0"},
    {"gpu", NP_POLICY_INTERLEAVE_ALL, "0", NULL, "1", true, true, NP_MODE_DEFAULT, "",
     "interleave-all wants node 0 but the cpuset allows 1"},
    {"gpu", NP_POLICY_LOCAL, "0-3", NULL, NULL, true, true, NP_MODE_PREFERRED, "0",
     "preferred node 0"},
    {"gpu", NP_POLICY_AUTO, "0-3", "0-3", NULL, true, true, NP_MODE_PREFERRED, "0",
     "preferred node 0"},
    /* fast-tier: for each node of the CPUs the nearest faster memory; local where there is none
     * (or none allowed). flat: Xeon Max's flat mode, HBM nodes 2 and 3 beside DDR nodes 0, 1 */
    {"flat", NP_POLICY_FAST_TIER, "0-1", NULL, NULL, false, true, NP_MODE_PREFERRED, "2",
     "fast-tier: preferred node 2, the fast memory nearest node 0 of CPUs 0-1; other nodes"},
    {"flat", NP_POLICY_FAST_TIER, "1-2", NULL, NULL, false, true, NP_MODE_PREFERRED_MANY, "2-3",
     "preferred nodes 2-3, the fast memory nearest nodes 0-1 of CPUs 1-2"},
    {"flat", NP_POLICY_FAST_TIER, "1-3", NULL, NULL, false, false, NP_MODE_PREFERRED, "3",
     "preferred node 3"}, /* no PREFERRED_MANY: nearest the node holding most of the CPUs */
    {"flat", NP_POLICY_FAST_TIER_STRICT, "0-3", NULL, NULL, false, true, NP_MODE_BIND, "2-3",
     "fast-tier-strict: bound to nodes 2-3"},
    {"flat", NP_POLICY_FAST_TIER_STRICT, "0-1", NULL, "0-1,3", false, true, NP_MODE_BIND, "3",
     "bound to node 3"}, /* the near HBM not allowed: the allowed one */
    {"flat", NP_POLICY_FAST_TIER, "0-1", NULL, "0-1", false, true, NP_MODE_PREFERRED, "0",
     "fast-tier: no faster memory than the task's node(s) it may use: local instead; local: "
     "preferred node 0"},
    {"flat", NP_POLICY_FAST_TIER_STRICT, "2", NULL, "1", false, true, NP_MODE_BIND, "1",
     "local-strict instead; local-strict: bound to node 1"},
    {"flat", NP_POLICY_FAST_TIER, NULL, NULL, NULL, false, true, NP_MODE_DEFAULT, "",
     "local instead; local: no memory node matches CPUs none"},
    {"tiered", NP_POLICY_FAST_TIER, "0-1", NULL, NULL, false, true, NP_MODE_PREFERRED, "2",
     "preferred node 2, the fast memory nearest node 0"}, /* the HBM node with CPUs */
    {"tiered", NP_POLICY_FAST_TIER, "4-5", NULL, NULL, false, true, NP_MODE_PREFERRED, "2",
     "nearest node 2 of CPUs 4-5"},
    {"hbm-only", NP_POLICY_FAST_TIER_STRICT, "0", NULL, NULL, false, true, NP_MODE_BIND, "0",
     "fast-tier-strict: bound to node 0"}, /* every node is HBM: its own */
    {"cxl", NP_POLICY_FAST_TIER, "2-3", NULL, NULL, true, true, NP_MODE_PREFERRED, "1",
     "no faster memory"}, /* CXL is slower, never fast */
    {"gpu", NP_POLICY_FAST_TIER_STRICT, "0-3", NULL, NULL, true, true, NP_MODE_BIND, "0",
     "local-strict instead"}, /* GPU memory is never chosen */
    {"two-level", NP_POLICY_FAST_TIER, "0", NULL, NULL, true, true, NP_MODE_PREFERRED, "0",
     "no faster memory"},
    /* weighted-interleave: the step's nodes and, for each, the nearest CPU-less node of another
     * tier; plain interleave where the kernel lacks it (these cases) */
    {"cxl", NP_POLICY_WEIGHTED_INTERLEAVE, "0", "0-3", NULL, false, true, NP_MODE_INTERLEAVE, "0-2",
     "weighted-interleave over nodes 0-2 (the step's nodes and the nearest memory of another "
     "tier), this kernel has no weighted interleave (Linux 6.9+): plain interleave"},
    {"cxl", NP_POLICY_WEIGHTED_INTERLEAVE, "0", "0-3", "0-1", false, true, NP_MODE_INTERLEAVE,
     "0-1", "over nodes 0-1"}, /* the expander not allowed */
    {"flat", NP_POLICY_WEIGHTED_INTERLEAVE, "0", "0-1", NULL, false, true, NP_MODE_INTERLEAVE,
     "0,2", "over nodes 0,2"}, /* HBM beside DDR is another tier too */
    {"tiered", NP_POLICY_WEIGHTED_INTERLEAVE, "0", "0-1", NULL, false, true, NP_MODE_INTERLEAVE,
     "0", "over node 0"}, /* node 3 is in node 0's tier, node 2 has CPUs */
    {"gpu", NP_POLICY_WEIGHTED_INTERLEAVE, "0", "0-3", NULL, true, true, NP_MODE_INTERLEAVE, "0",
     "over node 0"}, /* never GPU memory */
    /* live: a 6.12 guest's kernel tiers (HMAT) put its memory-only nodes 2-3 first */
    {"root:qemu-hbm-6.12", NP_POLICY_FAST_TIER, "0-1", NULL, NULL, false, true, NP_MODE_PREFERRED,
     "2", "preferred node 2, the fast memory nearest node 0"},
    {"root:qemu-hbm-6.12", NP_POLICY_FAST_TIER, "0-3", NULL, NULL, false, true,
     NP_MODE_PREFERRED_MANY, "2-3", "preferred nodes 2-3"},
    /* live, kernel 6.1: a CPU-less node in the DRAM tier. hwloc 2.9 types nothing (no faster
     * memory: local); 2.10 and later may type the DRAM nodes HBM from the tree's HMAT bandwidths
     * (node 0 is then its own fast memory): node 0 either way */
    {"root:qemu-cxl-6.1", NP_POLICY_FAST_TIER, "0-1", NULL, NULL, false, true, NP_MODE_PREFERRED,
     "0", "preferred node 0"},
    /* other machines */
    {"snc", NP_POLICY_LOCAL, "6-9", NULL, NULL, false, true, NP_MODE_PREFERRED_MANY, "0-1",
     "preferred nodes 0-1"},
    {"snc", NP_POLICY_INTERLEAVE, "0", "0-31", NULL, false, true, NP_MODE_INTERLEAVE, "0-3",
     "nodes 0-3"},
    {"epyc8", NP_POLICY_LOCAL, "40", NULL, NULL, false, true, NP_MODE_PREFERRED, "5",
     "preferred node 5"},
    {"epyc8", NP_POLICY_INTERLEAVE, "0", "0-15", "0-7", false, true, NP_MODE_INTERLEAVE, "0-1",
     "nodes 0-1"},
    {"single", NP_POLICY_LOCAL, "3", NULL, "0", false, true, NP_MODE_PREFERRED, "0",
     "preferred node 0"},
    {"single", NP_POLICY_INTERLEAVE_ALL, "3", NULL, NULL, false, true, NP_MODE_INTERLEAVE, "0",
     "interleave-all over node 0"},
    {"single", NP_POLICY_LOCAL_STRICT, "0-7", NULL, NULL, false, false, NP_MODE_BIND, "0",
     "local-strict: bound to node 0 (CPUs 0-7)"},
    {"single", NP_POLICY_NONE, "0-7", NULL, "0", false, false, NP_MODE_DEFAULT, "", "none:"},
    {"epyc8", NP_POLICY_LOCAL, "6-9", NULL, NULL, false, false, NP_MODE_PREFERRED, "0",
     "preferred node 0, which holds most"}, /* tie 2-2: the lower node */
    {"epyc8", NP_POLICY_LOCAL, "7-9", NULL, NULL, false, false, NP_MODE_PREFERRED, "1",
     "preferred node 1, which holds most"},
};

START_TEST(test_place)
{
    char rel[64];
    struct np_topology *topo = NULL;
    struct np_placement out;
    hwloc_bitmap_t task = np_test_set(cases[_i].task), step = np_test_set(cases[_i].step);
    hwloc_bitmap_t allowed = np_test_set(cases[_i].allowed);
    struct np_place_input in = {
        .policy = cases[_i].policy,
        .task_cpus = task,
        .step_cpus = step,
        .mems_allowed = allowed,
        .include_cpuless = cases[_i].include_cpuless,
        .have_preferred_many = cases[_i].preferred_many,
    };

    snprintf(rel, sizeof(rel), "topology/%s.xml", cases[_i].fixture);
    if (strncmp(cases[_i].fixture, "root:", 5) == 0) {
        const char *root = np_test_root(cases[_i].fixture + 5);
        setenv("HWLOC_FSROOT", root, 1);
        ck_assert_int_eq(np_topology_load(&topo, NP_TOPOLOGY_LIVE, root, NULL), 0);
        unsetenv("HWLOC_FSROOT");
    } else {
        ck_assert_int_eq(np_topology_load(&topo, NP_TOPOLOGY_XML, np_test_fixture(rel), NULL), 0);
    }
    ck_assert_int_eq(np_placement_init(&out), 0);
    ck_assert_int_eq(np_place(topo, &in, &out), 0);
    ck_assert_msg(out.mode == cases[_i].mode, "mode %s, expected %s (%s)", np_mode_name(out.mode),
                  np_mode_name(cases[_i].mode), out.reason);
    ck_assert_str_eq(np_test_list(out.nodes), cases[_i].nodes);
    ck_assert_msg(strstr(out.reason, cases[_i].reason), "reason '%s' lacks '%s'", out.reason,
                  cases[_i].reason);
    ck_assert_ptr_null(strchr(out.reason, '\n'));
    np_placement_fini(&out);
    np_placement_fini(NULL);
    hwloc_bitmap_free(task);
    hwloc_bitmap_free(step);
    hwloc_bitmap_free(allowed);
    np_topology_free(topo);
}
END_TEST

/* fast_tier=high: a job that is not high gets local (local-strict), the reason says why. */
START_TEST(test_fast_tier_refused)
{
    struct np_topology *topo = NULL;
    struct np_placement out;
    hwloc_bitmap_t task = np_test_set("0-1");
    struct np_place_input in = {.policy = NP_POLICY_FAST_TIER_STRICT,
                                .task_cpus = task,
                                .have_preferred_many = true,
                                .fast_tier_refused = true};

    ck_assert_int_eq(
        np_topology_load(&topo, NP_TOPOLOGY_XML, np_test_fixture("topology/flat.xml"), NULL), 0);
    ck_assert_int_eq(np_placement_init(&out), 0);
    ck_assert_int_eq(np_place(topo, &in, &out), 0);
    ck_assert_int_eq(out.mode, NP_MODE_BIND);
    ck_assert_str_eq(np_test_list(out.nodes), "0");
    ck_assert_int_eq(out.policy, NP_POLICY_FAST_TIER_STRICT);
    ck_assert_int_eq(out.chosen, NP_POLICY_LOCAL_STRICT);
    ck_assert_pstr_eq(out.reason, "fast-tier-strict: the site keeps the fast tier for high jobs "
                                  "(fast_tier=high): local-strict instead; local-strict: bound to "
                                  "node 0 (CPUs 0-1)");
    in.fast_tier_refused = false; /* the same job, allowed: the HBM node */
    ck_assert_int_eq(np_place(topo, &in, &out), 0);
    ck_assert_str_eq(np_test_list(out.nodes), "2");
    ck_assert_int_eq(out.chosen, NP_POLICY_FAST_TIER_STRICT);
    np_placement_fini(&out);
    hwloc_bitmap_free(task);
    np_topology_free(topo);
}
END_TEST

START_TEST(test_place_errors)
{
    struct np_topology *topo = NULL;
    struct np_placement out;
    struct np_place_input in = {.policy = NP_POLICY_LOCAL};

    ck_assert_int_eq(
        np_topology_load(&topo, NP_TOPOLOGY_XML, np_test_fixture("topology/single.xml"), NULL), 0);
    ck_assert_int_eq(np_placement_init(&out), 0);
    ck_assert_int_eq(np_place(NULL, &in, &out), -EINVAL);
    ck_assert_int_eq(np_place(topo, NULL, &out), -EINVAL);
    ck_assert_int_eq(np_place(topo, &in, NULL), -EINVAL);
    in.policy = (enum np_policy)NP_POLICY_COUNT;
    ck_assert_int_eq(np_place(topo, &in, &out), -EINVAL);
    ck_assert_str_eq(np_policy_name(in.policy), "unknown");
    ck_assert_str_eq(np_mode_name((enum np_mode)99), "unknown");
    np_placement_fini(&out);
    np_topology_free(topo);
}
END_TEST

static const struct {
    const char *text;
    int rc;
    enum np_policy policy;
} name_cases[] = {
    {"none", 0, NP_POLICY_NONE},
    {"local", 0, NP_POLICY_LOCAL},
    {"local-strict", 0, NP_POLICY_LOCAL_STRICT},
    {"interleave", 0, NP_POLICY_INTERLEAVE},
    {"interleave-all", 0, NP_POLICY_INTERLEAVE_ALL},
    {"fast-tier", 0, NP_POLICY_FAST_TIER},
    {"fast-tier-strict", 0, NP_POLICY_FAST_TIER_STRICT},
    {"weighted-interleave", 0, NP_POLICY_WEIGHTED_INTERLEAVE},
    {"Local", -EINVAL, 0},
    {"interleaf", -EINVAL, 0},
    {"", -EINVAL, 0},
    {NULL, -EINVAL, 0},
};

START_TEST(test_policy_names)
{
    enum np_policy p = NP_POLICY_COUNT;
    struct np_err err = {0};

    ck_assert_int_eq(np_policy_from_name(name_cases[_i].text, &p, &err), name_cases[_i].rc);
    if (name_cases[_i].rc == 0) {
        ck_assert_int_eq(p, name_cases[_i].policy);
        ck_assert_str_eq(np_policy_name(p), name_cases[_i].text);
        ck_assert_str_ne(np_policy_help(p), "");
    } else {
        ck_assert_ptr_nonnull(strstr(err.msg, "accepted values are none, local, local-strict, "
                                              "interleave, interleave-all"));
        if (name_cases[_i].text)
            ck_assert_ptr_nonnull(strstr(err.msg, name_cases[_i].text));
    }
}
END_TEST

/* This machine's kernel, for real: apply and read back with get_mempolicy. */
static const struct {
    enum np_mode mode;
} apply_cases[] = {{NP_MODE_PREFERRED}, {NP_MODE_BIND}, {NP_MODE_INTERLEAVE}, {NP_MODE_DEFAULT}};

START_TEST(test_apply_on_this_kernel)
{
    struct np_placement pl;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    enum np_mode mode = NP_MODE_INTERLEAVE;
    struct np_err err = {0};

    if (np_test_numa_syscalls_missing("test_apply_on_this_kernel"))
        return;

    ck_assert_int_eq(np_placement_init(&pl), 0);
    pl.mode = apply_cases[_i].mode;
    if (pl.mode != NP_MODE_DEFAULT)
        hwloc_bitmap_only(pl.nodes, 0);
    ck_assert_msg(np_placement_apply(&pl, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(np_mempolicy_get(&mode, nodes, &err), 0);
    ck_assert_str_eq(np_mode_name(mode), np_mode_name(apply_cases[_i].mode));
    ck_assert_str_eq(np_test_list(nodes), pl.mode == NP_MODE_DEFAULT ? "" : "0");
    np_placement_fini(&pl);
    hwloc_bitmap_free(nodes);
}
END_TEST

/* MPOL_PREFERRED_MANY where the kernel has it; a clear -EINVAL, never a substitute, where not. */
START_TEST(test_apply_preferred_many)
{
    struct np_placement pl;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    enum np_mode mode = NP_MODE_DEFAULT;
    struct np_err err = {0};
    int rc;

    if (np_test_numa_syscalls_missing("test_apply_preferred_many"))
        return;

    ck_assert_int_eq(np_placement_init(&pl), 0);
    pl.mode = NP_MODE_PREFERRED_MANY;
    hwloc_bitmap_only(pl.nodes, 0);
    rc = np_placement_apply(&pl, &err);
    ck_assert_int_eq(np_mempolicy_get(&mode, nodes, NULL), 0);
    if (np_kernel_has_preferred_many()) {
        ck_assert_msg(rc == 0, "%s", err.msg);
        ck_assert_str_eq(np_mode_name(mode), "preferred-many");
        ck_assert_str_eq(np_test_list(nodes), "0");
    } else {
        ck_assert_int_eq(rc, -EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "this kernel may lack MPOL_PREFERRED_MANY"));
        ck_assert_str_eq(np_mode_name(mode), "default");
    }
    np_placement_fini(&pl);
    hwloc_bitmap_free(nodes);
}
END_TEST

/* MPOL_WEIGHTED_INTERLEAVE where the kernel has it (its weights in sysfs); a clear -EINVAL
 * where not (Debian 12's 6.1). */
START_TEST(test_apply_weighted_interleave)
{
    struct np_placement pl;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    enum np_mode mode = NP_MODE_DEFAULT;
    struct np_err err = {0};
    unsigned char weight = 0;
    int rc;

    if (np_test_numa_syscalls_missing("test_apply_weighted_interleave"))
        return;
    ck_assert_int_eq(np_placement_init(&pl), 0);
    pl.mode = NP_MODE_WEIGHTED_INTERLEAVE;
    hwloc_bitmap_only(pl.nodes, 0);
    rc = np_placement_apply(&pl, &err);
    ck_assert_int_eq(np_mempolicy_get(&mode, nodes, NULL), 0);
    if (np_interleave_weights(&weight, 1) == 0) {
        ck_assert_msg(rc == 0, "%s", err.msg);
        ck_assert_str_eq(np_mode_name(mode), "weighted-interleave");
        ck_assert_uint_ge(weight, 1);
    } else {
        ck_assert_int_eq(rc, -EINVAL);
        ck_assert_pstr_eq(err.msg, "set_mempolicy(weighted-interleave, nodes 0): Invalid argument "
                                   "(this kernel may lack MPOL_WEIGHTED_INTERLEAVE, Linux >= 6.9; "
                                   "place again without it)");
        ck_assert_str_eq(np_mode_name(mode), "default");
    }
    ck_assert_int_eq(np_placement_apply(&(struct np_placement){.mode = NP_MODE_DEFAULT}, &err), 0);
    np_placement_fini(&pl);
    hwloc_bitmap_free(nodes);
}
END_TEST

/* weighted-interleave names the kernel's weights where it has them, else says plain interleave. */
START_TEST(test_weighted_interleave_weights)
{
    static const unsigned char weights[] = {3, 3, 1};
    struct np_topology *topo = NULL;
    struct np_placement out;
    hwloc_bitmap_t step = np_test_set("0-3");
    struct np_place_input in = {.policy = NP_POLICY_WEIGHTED_INTERLEAVE,
                                .task_cpus = step,
                                .step_cpus = step,
                                .have_weighted_interleave = true,
                                .interleave_weights = weights,
                                .interleave_weights_count = 2}; /* node 2 beyond: weight 1 */

    ck_assert_int_eq(
        np_topology_load(&topo, NP_TOPOLOGY_XML, np_test_fixture("topology/cxl.xml"), NULL), 0);
    ck_assert_int_eq(np_placement_init(&out), 0);
    ck_assert_int_eq(np_place(topo, &in, &out), 0);
    ck_assert_int_eq(out.mode, NP_MODE_WEIGHTED_INTERLEAVE);
    ck_assert_str_eq(np_test_list(out.nodes), "0-2");
    ck_assert_pstr_eq(out.reason, "weighted-interleave over nodes 0-2 (the step's nodes and the "
                                  "nearest memory of another tier), the kernel's weights 0:3 1:3 "
                                  "2:1");
    in.interleave_weights = NULL;
    ck_assert_int_eq(np_place(topo, &in, &out), 0);
    ck_assert_ptr_nonnull(strstr(out.reason, "tier), weights unknown"));
    np_placement_fini(&out);
    hwloc_bitmap_free(step);
    np_topology_free(topo);
}
END_TEST

/*
 * End to end on this machine: its live topology, this process's affinity and cpuset.mems,
 * np_place, set_mempolicy, and get_mempolicy reading back what was decided.
 */
static const struct {
    enum np_policy policy;
    enum np_mode mode; /* with the calling CPUs on one node, as on a one-node machine */
} live_cases[] = {
    {NP_POLICY_LOCAL, NP_MODE_PREFERRED},
    {NP_POLICY_LOCAL_STRICT, NP_MODE_BIND},
    {NP_POLICY_INTERLEAVE, NP_MODE_INTERLEAVE},
    {NP_POLICY_NONE, NP_MODE_DEFAULT},
};

START_TEST(test_live_place_and_apply)
{
    struct np_topology *topo = NULL;
    struct np_placement pl;
    struct np_err err = {0};
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), allowed = hwloc_bitmap_alloc();
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc(), expected = hwloc_bitmap_alloc();
    struct np_place_input in = {.policy = live_cases[_i].policy};
    enum np_mode mode = NP_MODE_DEFAULT;

    if (np_test_numa_syscalls_missing("test_live_place_and_apply"))
        return;

    ck_assert_msg(np_topology_load(&topo, NP_TOPOLOGY_LIVE, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(hwloc_get_cpubind(np_topology_hwloc(topo), cpus, HWLOC_CPUBIND_PROCESS), 0);
    /* One CPU, so that local is a single node on any machine. */
    hwloc_bitmap_only(cpus, (unsigned)hwloc_bitmap_first(cpus));
    ck_assert_msg(np_mems_allowed(allowed, &err) == 0, "%s", err.msg);
    ck_assert(hwloc_bitmap_isset(allowed, 0));
    in.task_cpus = cpus;
    in.mems_allowed = allowed;
    in.have_preferred_many = np_kernel_has_preferred_many();
    ck_assert_int_eq(np_placement_init(&pl), 0);
    ck_assert_int_eq(np_place(topo, &in, &pl), 0);
    ck_assert_msg(pl.mode == live_cases[_i].mode, "%s: %s", np_mode_name(pl.mode), pl.reason);
    if (pl.mode != NP_MODE_DEFAULT) {
        np_topology_cpus_to_nodes(topo, cpus, expected);
        ck_assert_msg(hwloc_bitmap_isequal(pl.nodes, expected), "nodes %s: %s",
                      np_test_list(pl.nodes), pl.reason);
        if (np_topology_node_count(topo) == 1) /* this machine: node 0 */
            ck_assert_str_eq(np_test_list(pl.nodes), "0");
    }
    ck_assert_msg(np_placement_apply(&pl, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(np_mempolicy_get(&mode, nodes, &err), 0);
    ck_assert_str_eq(np_mode_name(mode), np_mode_name(live_cases[_i].mode));
    ck_assert_str_eq(np_test_list(nodes), np_test_list(pl.nodes));
    np_placement_fini(&pl);
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(allowed);
    hwloc_bitmap_free(nodes);
    hwloc_bitmap_free(expected);
    np_topology_free(topo);
}
END_TEST

START_TEST(test_apply_refused_node)
{
    struct np_placement pl;
    struct np_err err = {0};

    /* Node 40 does not exist here: the kernel refuses, the error names the call and nodes. */
    ck_assert_int_eq(np_placement_init(&pl), 0);
    pl.mode = NP_MODE_BIND;
    hwloc_bitmap_only(pl.nodes, 40);
    ck_assert_int_lt(np_placement_apply(&pl, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "set_mempolicy(bind, nodes 40)"));
    np_placement_fini(&pl);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("placement");
    TCase *tc = tcase_create("placement");

    tcase_add_loop_test(tc, test_place, 0, sizeof(cases) / sizeof(cases[0]));
    tcase_add_test(tc, test_place_errors);
    tcase_add_test(tc, test_fast_tier_refused);
    tcase_add_test(tc, test_weighted_interleave_weights);
    tcase_add_loop_test(tc, test_policy_names, 0, sizeof(name_cases) / sizeof(name_cases[0]));
    tcase_add_loop_test(tc, test_apply_on_this_kernel, 0,
                        sizeof(apply_cases) / sizeof(apply_cases[0]));
    tcase_add_test(tc, test_apply_preferred_many);
    tcase_add_test(tc, test_apply_weighted_interleave);
    tcase_add_loop_test(tc, test_live_place_and_apply, 0,
                        sizeof(live_cases) / sizeof(live_cases[0]));
    tcase_add_test(tc, test_apply_refused_node);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
