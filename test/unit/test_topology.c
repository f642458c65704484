/* Topology over hwloc fixtures of machines we do not have (test/fixtures/data/topology/). */
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "np_test.h"
#include "numaplace/topology.h"

static struct np_topology *load(const char *name)
{
    char rel[64];
    struct np_topology *topo = NULL;
    struct np_err err = {0};

    snprintf(rel, sizeof(rel), "topology/%s.xml", name);
    ck_assert_msg(np_topology_load(&topo, NP_TOPOLOGY_XML, np_test_fixture(rel), &err) == 0, "%s",
                  err.msg);
    return topo;
}

static const struct {
    const char *fixture;
    unsigned nodes;
    const char *node_cpus; /* node 0's CPUs */
    const char *memory_nodes, *memory_nodes_all;
    const char *cpuless; /* OS index of a CPU-less node or NULL */
} machine_cases[] = {
    {"sandman", 4, "0-15", "0-3", "0-3", NULL}, {"snc", 4, "0-7", "0-3", "0-3", NULL},
    {"epyc8", 8, "0-7", "0-7", "0-7", NULL},    {"cpuless", 3, "0-7", "0-1", "0-2", "2"},
    {"single", 1, "0-7", "0", "0", NULL},
};

START_TEST(test_machines)
{
    struct np_topology *topo = load(machine_cases[_i].fixture);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    const struct np_numa_node *node0 = np_topology_node_by_os_index(topo, 0);

    ck_assert_uint_eq(np_topology_node_count(topo), machine_cases[_i].nodes);
    ck_assert_str_eq(np_test_list(node0->cpus), machine_cases[_i].node_cpus);
    ck_assert_uint_gt(node0->memory_bytes, 0);
    np_topology_memory_nodes(topo, false, set);
    ck_assert_str_eq(np_test_list(set), machine_cases[_i].memory_nodes);
    np_topology_memory_nodes(topo, true, set);
    ck_assert_str_eq(np_test_list(set), machine_cases[_i].memory_nodes_all);
    for (unsigned i = 0; i < np_topology_node_count(topo); i++) {
        const struct np_numa_node *n = np_topology_node(topo, i);
        char idx[8];
        snprintf(idx, sizeof(idx), "%u", n->os_index);
        if (machine_cases[_i].cpuless && !strcmp(idx, machine_cases[_i].cpuless)) {
            ck_assert(n->cpuless);
            ck_assert(hwloc_bitmap_iszero(n->cpus));
            ck_assert_str_eq(n->subtype, "CXL-DRAM");
        } else {
            ck_assert(!n->cpuless);
            ck_assert(!hwloc_bitmap_iszero(n->cpus));
        }
        if (i > 0) /* OS-index order */
            ck_assert_uint_gt(n->os_index, np_topology_node(topo, i - 1)->os_index);
    }
    ck_assert_ptr_null(np_topology_node(topo, 99));
    ck_assert_ptr_null(np_topology_node_by_os_index(topo, 99));
    hwloc_bitmap_free(set);
    np_topology_free(topo);
}
END_TEST

static const struct {
    const char *fixture;
    unsigned from, to;
    int distance;
} distance_cases[] = {
    /* The model's machine, every pair. */
    {"sandman", 0, 0, 10},      {"sandman", 0, 1, 21},
    {"sandman", 0, 2, 21},      {"sandman", 0, 3, 30},
    {"sandman", 1, 2, 30},      {"sandman", 1, 3, 21},
    {"sandman", 2, 3, 21},      {"sandman", 3, 0, 30},
    {"snc", 0, 1, 11},          {"snc", 1, 2, 21},
    {"epyc8", 0, 3, 12},        {"epyc8", 0, 4, 32},
    {"cpuless", 0, 2, 17},      {"cpuless", 1, 0, 21},
    {"single", 0, 0, -ENOENT}, /* no matrix for one node */
    {"sandman", 0, 7, -EINVAL},
};

START_TEST(test_distances)
{
    struct np_topology *topo = load(distance_cases[_i].fixture);

    ck_assert_int_eq(np_topology_distance(topo, distance_cases[_i].from, distance_cases[_i].to),
                     distance_cases[_i].distance);
    np_topology_free(topo);
}
END_TEST

/* The model's machine (docs/model.md): 10 local, 21 near, 30 far, in OS-index order. */
static const int sandman_matrix[4][4] = {
    {10, 21, 21, 30},
    {21, 10, 30, 21},
    {21, 30, 10, 21},
    {30, 21, 21, 10},
};

START_TEST(test_sandman_matrix)
{
    struct np_topology *topo = load("sandman");
    const unsigned from = (unsigned)_i / 4, to = (unsigned)_i % 4;

    ck_assert_int_eq(np_topology_distance(topo, from, to), sandman_matrix[from][to]);
    np_topology_free(topo);
}
END_TEST

static const struct {
    const char *fixture, *cpus, *nodes;
    int count;
} cpus_to_nodes_cases[] = {
    {"sandman", "0", "0", 1},       {"sandman", "0-1", "0", 1}, /* SMT siblings of one core */
    {"sandman", "15-16", "0-1", 2},                             /* spans two nodes */
    {"sandman", "0,63", "0,3", 2},  {"sandman", "", "", 0},
    {"sandman", "64-100", "", 0}, /* CPUs this machine does not have (or offline) */
    {"snc", "6-9", "0-1", 2},       {"epyc8", "40", "5", 1},
    {"cpuless", "0-15", "0-1", 2}, /* the CPU-less node is local to nobody */
    {"single", "3", "0", 1},
};

START_TEST(test_cpus_to_nodes)
{
    struct np_topology *topo = load(cpus_to_nodes_cases[_i].fixture);
    hwloc_bitmap_t cpus = np_test_set(cpus_to_nodes_cases[_i].cpus);
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();

    ck_assert_int_eq(np_topology_cpus_to_nodes(topo, cpus, nodes), cpus_to_nodes_cases[_i].count);
    ck_assert_str_eq(np_test_list(nodes), cpus_to_nodes_cases[_i].nodes);
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(nodes);
    np_topology_free(topo);
}
END_TEST

static const struct {
    const char *fixture, *cores;
    int rc;
    const char *cpus; /* or a message fragment when rc < 0 */
} cores_cases[] = {
    {"sandman", "0", 0, "0-1"},
    {"sandman", "0-1,8", 0, "0-3,16-17"},
    {"sandman", "31", 0, "62-63"},
    {"sandman", "", 0, ""},
    {"epyc8", "4-7", 0, "8-15"},
    {"sandman", "32", -ERANGE, "core 32 in '32' is beyond this machine's 32 cores"},
    {"sandman", "1-", -EINVAL, "invalid core list '1-'"},
    {"sandman", "a", -EINVAL, "invalid core list 'a' at 'a'"},
    {"sandman", "3-1", -EINVAL, "invalid core list '3-1'"},
    {"sandman", "1,,2", -EINVAL, "invalid core list"},
    {"sandman", "1,", -EINVAL, "invalid core list"},
    {"sandman", " 1", -EINVAL, "invalid core list"},
    {"sandman", "65536", -EINVAL, "expected decimal numbers below 65536"},
    {"sandman", "08", -EINVAL, "(no leading zeros)"},
};

START_TEST(test_cores_to_cpus)
{
    struct np_topology *topo = load(cores_cases[_i].fixture);
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    struct np_err err = {0};
    const int rc = np_topology_cores_to_cpus(topo, cores_cases[_i].cores, cpus, &err);

    ck_assert_int_eq(rc, cores_cases[_i].rc);
    if (rc == 0)
        ck_assert_str_eq(np_test_list(cpus), cores_cases[_i].cpus);
    else
        ck_assert_msg(strstr(err.msg, cores_cases[_i].cpus), "'%s' lacks '%s'", err.msg,
                      cores_cases[_i].cpus);
    hwloc_bitmap_free(cpus);
    np_topology_free(topo);
}
END_TEST

static const struct {
    enum np_topology_source_kind kind;
    int rc;
    const char *arg, *message;
} load_error_cases[] = {
    {NP_TOPOLOGY_XML, -ENOENT, "/nonexistent/topo.xml",
     "cannot load topology XML '/nonexistent/topo.xml': No such file or directory"},
    {NP_TOPOLOGY_XML, -ENOENT, NULL, "cannot load topology XML"},
    {NP_TOPOLOGY_SYNTHETIC, -EINVAL, "pack:two", "invalid synthetic topology 'pack:two'"},
    {NP_TOPOLOGY_SYNTHETIC, -EINVAL, NULL, "invalid synthetic topology"},
    {(enum np_topology_source_kind)7, -EINVAL, "x", "unknown topology source 7"},
};

START_TEST(test_load_errors)
{
    struct np_topology *topo = (struct np_topology *)1;
    struct np_err err = {0};

    ck_assert_int_eq(
        np_topology_load(&topo, load_error_cases[_i].kind, load_error_cases[_i].arg, &err),
        load_error_cases[_i].rc);
    ck_assert_ptr_null(topo);
    ck_assert_msg(strstr(err.msg, load_error_cases[_i].message), "'%s' lacks '%s'", err.msg,
                  load_error_cases[_i].message);
}
END_TEST

/* Existing files that do not give a topology numaplace can use. */
static const struct {
    const char *fixture, *message, *or_message;
} bad_xml_cases[] = {
    {"topology/generate.sh", "not an hwloc XML file", NULL},
    /* fuzz_topology_xml: hwloc's own XML parser loads two NUMA nodes of OS index 0, and numaplace
     * refuses them; where hwloc reads XML with libxml2 (its plugin installed, as in Debian 13's
     * root) hwloc itself refuses the file. Refused either way, naming it. */
    {"topology/duplicate-node.xml", "topology has NUMA node 0 twice", "not an hwloc XML file"},
};

START_TEST(test_not_xml)
{
    struct np_topology *topo = NULL;
    struct np_err err = {0};

    ck_assert_int_eq(
        np_topology_load(&topo, NP_TOPOLOGY_XML, np_test_fixture(bad_xml_cases[_i].fixture), &err),
        -EINVAL);
    ck_assert_ptr_null(topo);
    ck_assert_msg(
        strstr(err.msg, bad_xml_cases[_i].message) ||
            (bad_xml_cases[_i].or_message && strstr(err.msg, bad_xml_cases[_i].or_message)),
        "'%s' lacks '%s'", err.msg, bad_xml_cases[_i].message);
}
END_TEST

START_TEST(test_live_and_synthetic)
{
    struct np_topology *topo = NULL;
    struct np_err err = {0};

    ck_assert_msg(np_topology_load(&topo, NP_TOPOLOGY_LIVE, NULL, &err) == 0, "%s", err.msg);
    ck_assert_uint_ge(np_topology_node_count(topo), 1);
    ck_assert(!hwloc_bitmap_iszero(np_topology_cpus(topo)));
    np_topology_free(topo);

    ck_assert_int_eq(np_topology_load(&topo, NP_TOPOLOGY_SYNTHETIC,
                                      "pack:2 [numa(memory=1073741824)] core:2 pu:1", &err),
                     0);
    ck_assert_uint_eq(np_topology_node_count(topo), 2);
    ck_assert_str_eq(np_test_list(np_topology_node_by_os_index(topo, 1)->cpus), "2-3");
    np_topology_free(topo);
    np_topology_free(NULL);
}
END_TEST

/*
 * A captured Linux tree, written at run time: 2 packages x 2 cores x 2 threads, one node per
 * package, SLIT 10/21, and a cgroup v2 cpuset that allows only node 0's CPUs (as slurmstepd
 * sees the machine from inside a step on node 0). Files are what hwloc 2.9's Linux backend reads.
 */
static void put(const char *root, const char *path, const char *fmt, ...) NP_PRINTF(3, 4);
static void put(const char *root, const char *path, const char *fmt, ...)
{
    char full[512];
    va_list ap;
    FILE *f;

    snprintf(full, sizeof(full), "%s/%s", root, path);
    for (char *slash = strchr(full + strlen(root) + 1, '/'); slash;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(full, 0755); /* exists already, mostly */
        *slash = '/';
    }
    f = fopen(full, "w");
    ck_assert_msg(f != NULL, "cannot write %s", full);
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
}

static void make_linux_tree(const char *root)
{
    char path[128];

    put(root, "sys/devices/system/cpu/online", "0-7\n");
    put(root, "sys/devices/system/cpu/possible", "0-7\n");
    put(root, "sys/devices/system/cpu/present", "0-7\n");
    for (unsigned cpu = 0; cpu < 8; cpu++) {
        const unsigned core = cpu / 2, pack = cpu / 4;
#define CPU_FILE(name)                                                                             \
    (snprintf(path, sizeof(path), "sys/devices/system/cpu/cpu%u/%s", cpu, name), path)
        put(root, CPU_FILE("online"), "1\n");
        put(root, CPU_FILE("topology/core_id"), "%u\n", core % 2);
        put(root, CPU_FILE("topology/physical_package_id"), "%u\n", pack);
        put(root, CPU_FILE("topology/thread_siblings"), "%x\n", 3u << (core * 2));
        put(root, CPU_FILE("topology/core_siblings"), "%x\n", 15u << (pack * 4));
#undef CPU_FILE
    }
    put(root, "sys/devices/system/node/online", "0-1\n");
    put(root, "sys/devices/system/node/possible", "0-1\n");
    put(root, "sys/devices/system/node/has_memory", "0-1\n");
    put(root, "sys/devices/system/node/has_cpu", "0-1\n");
    for (unsigned node = 0; node < 2; node++) {
        snprintf(path, sizeof(path), "sys/devices/system/node/node%u/cpumap", node);
        put(root, path, "%x\n", 15u << (node * 4));
        snprintf(path, sizeof(path), "sys/devices/system/node/node%u/meminfo", node);
        put(root, path, "Node %u MemTotal:       4194304 kB\n", node);
        snprintf(path, sizeof(path), "sys/devices/system/node/node%u/distance", node);
        put(root, path, node == 0 ? "10 21\n" : "21 10\n");
    }
    put(root, "proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec 0 0\n");
    put(root, "proc/self/cgroup", "0::/step\n");
    put(root, "proc/self/cpuset", "/step\n");
    put(root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
    put(root, "sys/fs/cgroup/step/cpuset.cpus.effective", "0-3\n");
    put(root, "sys/fs/cgroup/step/cpuset.mems.effective", "0-1\n");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tree(const char *root)
{
    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

START_TEST(test_fsroot)
{
    char root[] = "/tmp/np-topo-XXXXXX";
    struct np_topology *topo = NULL;
    struct np_err err = {0};
    hwloc_bitmap_t set = hwloc_bitmap_alloc();

    ck_assert_ptr_nonnull(mkdtemp(root));
    make_linux_tree(root);
    /* hwloc reads a root from HWLOC_FSROOT only: a root it does not name is refused. */
    setenv("HWLOC_FSROOT", "/callers-own", 1);
    ck_assert_int_eq(np_topology_load(&topo, NP_TOPOLOGY_LIVE, root, &err), -EINVAL);
    ck_assert_ptr_null(topo);
    ck_assert_msg(strstr(err.msg, "HWLOC_FSROOT only, which names '/callers-own'"), "%s", err.msg);
    setenv("HWLOC_FSROOT", root, 1);
    ck_assert_msg(np_topology_load(&topo, NP_TOPOLOGY_LIVE, root, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(getenv("HWLOC_FSROOT"), root);
    unsetenv("HWLOC_FSROOT");

    /* The whole machine although the cgroup allows CPUs 0-3 only. */
    ck_assert_uint_eq(np_topology_node_count(topo), 2);
    ck_assert_str_eq(np_test_list(np_topology_cpus(topo)), "0-7");
    ck_assert_str_eq(np_test_list(np_topology_node(topo, 0)->cpus), "0-3");
    ck_assert_str_eq(np_test_list(np_topology_node(topo, 1)->cpus), "4-7");
    ck_assert(!np_topology_node(topo, 1)->cpuless);
    ck_assert_uint_eq(np_topology_node(topo, 1)->memory_bytes, 4294967296ull);
    ck_assert_int_eq(np_topology_memory_nodes(topo, false, set), 2);
    /* Slurm's core numbers are the machine's: core 2 is the first core of package 1. */
    ck_assert_int_eq(np_topology_cores_to_cpus(topo, "2-3", set, &err), 0);
    ck_assert_str_eq(np_test_list(set), "4-7");
    ck_assert_int_eq(np_topology_distance(topo, 0, 1), 21);
    ck_assert_int_eq(np_topology_distance(topo, 1, 1), 10);
    np_topology_free(topo);
    hwloc_bitmap_free(set);
    remove_tree(root);
}
END_TEST

/*
 * Each node as "OS:CPUS/KIND/TIER" (with @p kinds; else "OS:CPUS/TIER"), space-separated, in
 * OS-index order ("2:/dram/1": no CPUs). Static buffer: use it at once.
 */
static const char *describe(const struct np_topology *topo, bool kinds)
{
    static char text[512];
    size_t used = 0;

    text[0] = '\0';
    for (unsigned i = 0; i < np_topology_node_count(topo); i++) {
        const struct np_numa_node *n = np_topology_node(topo, i);
        used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%u:%s%s%s/%u", i ? " " : "",
                                 n->os_index, np_test_list(n->cpus), kinds ? "/" : "",
                                 kinds ? np_memory_kind_name(n->kind) : "", n->tier);
        ck_assert_uint_eq(n->cpuless, hwloc_bitmap_iszero(n->cpus));
    }
    return text;
}

/* "OS:CPUS" of each node in a description, the rest of each cut. Static buffer. */
static const char *cpus_only(const char *description)
{
    static char text[512];
    size_t used = 0;

    for (const char *c = description; *c && used + 1 < sizeof(text); c++)
        if (*c == '/')
            c += strcspn(c, " ") - 1; /* on to the next node's space, or the end */
        else
            text[used++] = *c;
    text[used] = '\0';
    return text;
}

/* A live topology from a captured root: HWLOC_FSROOT names it for the load only. */
static struct np_topology *load_root(const char *root)
{
    struct np_topology *topo = NULL;
    struct np_err err = {0};

    setenv("HWLOC_FSROOT", root, 1);
    ck_assert_msg(np_topology_load(&topo, NP_TOPOLOGY_LIVE, root, &err) == 0, "%s", err.msg);
    unsetenv("HWLOC_FSROOT");
    return topo;
}

/*
 * Tiered machines as their kernels listed them: each node's CPUs (nodeN/cpulist) and tier
 * (memory_tierN/nodelist, ranked). Live from the captured tree; the kinds only where hwloc typed
 * the memory, so not in the trees hwloc 2.9 reads (it types nothing there).
 */
static const struct {
    const char *root; /* test/fixtures/data/topology/NAME/ or test/fixtures/roots/NAME */
    bool captured;    /* roots/: captured in the QEMU guest (test/vm/capture_tiers.sh) */
    const char *nodes;
} live_tier_cases[] = {
    /* the HBM node 2 owns CPUs 4-5 and is the kernel's fastest tier; node 3 has no CPUs */
    {"tiered", false, "0:0-1/1 1:2-3/1 2:4-5/0 3:/1"},
    {"hbm-only", false, "0:0-1/0 1:2-3/0"},
    /* flat mode on 6.1: the HBM nodes 2-3 have no CPUs and sit in the DRAM tier */
    {"flat", false, "0:0-1/0 1:2-3/0 2:/0 3:/0"},
    /* node 2 hangs under the package beside the clusters' nodes: local to no CPU */
    {"two-level", false, "0:0-1/0 1:2-3/0 2:/0 3:4-5/0"},
    {"cxl", false, "0:0-1/0 1:2-3/0 2:/1"},
    {"gpu", false, "0:0-3/0 1:/0"},
    /* a 6.12 guest: memory_tier1 2-3, memory_tier4 0-1 */
    {"qemu-hbm-6.12", true, "0:0-1/1 1:2-3/1 2:/0 3:/0"},
    /* memory_tier4 0-1, memory_tier54 2 */
    {"qemu-cxl-6.12", true, "0:0-1/0 1:2-3/0 2:/1"},
    /* 6.1 leaves the CPU-less node in the DRAM tier: memory_tier4 0-2 */
    {"qemu-cxl-6.1", true, "0:0-1/0 1:2-3/0 2:/0"},
};

START_TEST(test_live_tiers)
{
    char rel[64];
    const char *root;
    struct np_topology *topo;

    snprintf(rel, sizeof(rel), "topology/%s", live_tier_cases[_i].root);
    root = live_tier_cases[_i].captured ? np_test_root(live_tier_cases[_i].root)
                                        : np_test_fixture(rel);
    topo = load_root(root);
    ck_assert_str_eq(describe(topo, false), live_tier_cases[_i].nodes);
    for (unsigned i = 0; i < np_topology_node_count(topo); i++)
        ck_assert_str_eq(np_tier_source_name(np_topology_node(topo, i)->tier_source), "kernel");
    np_topology_free(topo);
}
END_TEST

/*
 * The same machines from hwloc's XML export (no /sys): the narrowest-node rule gives each node
 * the CPUs its kernel listed, and the subtypes or MemoryTier the export carries give the tiers.
 * Where an export carries neither, the distance ranks them (the 6.12 guest's: its kernel put
 * the HBM nodes first, which SLIT distances cannot tell).
 */
static const struct {
    const char *xml, *nodes;
    enum np_tier_source source;
} xml_tier_cases[] = {
    {"topology/tiered.xml", "0:0-1/dram/1 1:2-3/dram/1 2:4-5/hbm/0 3:/dram/1", NP_TIER_SUBTYPE},
    {"topology/hbm-only.xml", "0:0-1/hbm/0 1:2-3/hbm/0", NP_TIER_SUBTYPE},
    {"topology/flat.xml", "0:0-1/dram/1 1:2-3/dram/1 2:/hbm/0 3:/hbm/0", NP_TIER_SUBTYPE},
    {"topology/two-level.xml", "0:0-1/dram/0 1:2-3/dram/0 2:/dram/0 3:4-5/dram/0", NP_TIER_HWLOC},
    {"topology/cxl.xml", "0:0-1/dram/0 1:2-3/dram/0 2:/cxl/1", NP_TIER_SUBTYPE},
    {"topology/gpu.xml", "0:0-3/dram/0 1:/gpu/1", NP_TIER_SUBTYPE},
    {"topology/cpuless.xml", "0:0-7/dram/0 1:8-15/dram/0 2:/cxl/1", NP_TIER_SUBTYPE},
    {"topology/sandman.xml", "0:0-15/dram/0 1:16-31/dram/0 2:32-47/dram/0 3:48-63/dram/0",
     NP_TIER_DISTANCE},
    {"../roots/qemu-hbm-6.12/topology.xml", "0:0-1/dram/0 1:2-3/dram/0 2:/dram/1 3:/dram/1",
     NP_TIER_DISTANCE},
    {"../roots/qemu-cxl-6.12/topology.xml", "0:0-1/dram/0 1:2-3/dram/0 2:/dram/1",
     NP_TIER_DISTANCE},
};

START_TEST(test_xml_tiers)
{
    struct np_topology *topo = NULL;
    struct np_err err = {0};
    const char *xml = np_test_fixture(xml_tier_cases[_i].xml);
    enum np_tier_source source;
    char cpus[512];

    ck_assert_msg(np_topology_load(&topo, NP_TOPOLOGY_XML, xml, &err) == 0, "%s", err.msg);
    snprintf(cpus, sizeof(cpus), "%s", cpus_only(describe(topo, true)));
    ck_assert_str_eq(cpus, cpus_only(xml_tier_cases[_i].nodes));
    source = np_topology_node(topo, 0)->tier_source;
    /* hwloc 2.10 and later may type and rank an export's nodes itself (MemoryTier, from the
     * bandwidths an export of a real machine carries): then only the CPUs are this rule's. */
    if (source == NP_TIER_HWLOC && xml_tier_cases[_i].source != NP_TIER_HWLOC &&
        hwloc_get_api_version() >= 0x20a00) {
        fprintf(stderr, "SKIPPED the tiers of %s: this hwloc ranked them itself\n", xml);
    } else {
        ck_assert_str_eq(describe(topo, true), xml_tier_cases[_i].nodes);
        ck_assert_int_eq(source, xml_tier_cases[_i].source);
    }
    np_topology_free(topo);
}
END_TEST

/* What the CPUs of the two-level and tiered machines are local to, live and from XML alike. */
static const struct {
    const char *fixture, *cpus, *nodes;
} tier_local_cases[] = {
    {"two-level", "0", "0"}, /* the cluster's own node, not the package's node 2 */
    {"two-level", "0-3", "0-1"}, {"two-level", "4", "3"},
    {"tiered", "4-5", "2"},   /* the HBM node that owns CPUs */
    {"tiered", "0-5", "0-2"}, /* never the memory-only node 3 */
    {"gpu", "0-3", "0"},
};

START_TEST(test_tier_local)
{
    char rel[64];
    hwloc_bitmap_t cpus = np_test_set(tier_local_cases[_i].cpus), nodes = hwloc_bitmap_alloc();
    struct np_topology *topo;

    snprintf(rel, sizeof(rel), "topology/%s", tier_local_cases[_i].fixture);
    topo = load_root(np_test_fixture(rel));
    np_topology_cpus_to_nodes(topo, cpus, nodes);
    ck_assert_str_eq(np_test_list(nodes), tier_local_cases[_i].nodes);
    np_topology_free(topo);
    topo = load(tier_local_cases[_i].fixture);
    np_topology_cpus_to_nodes(topo, cpus, nodes);
    ck_assert_str_eq(np_test_list(nodes), tier_local_cases[_i].nodes);
    np_topology_free(topo);
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(nodes);
}
END_TEST

/* HMAT's figures as hwloc keeps them (the guests' captured exports): each node's nearest
 * initiators only, so a pair HMAT does not list is unknown, never a guess. */
static const struct {
    const char *xml;
    unsigned cpu, mem;
    double ratio, bandwidth; /* bandwidth: of @c mem, MiB/s as hwloc keeps it */
} memattr_cases[] = {
    {"../roots/qemu-hbm-6.12/topology.xml", 0, 2, 1.2, 81920}, /* HBM 120 ns against 100 */
    {"../roots/qemu-hbm-6.12/topology.xml", 1, 3, 1.2, 81920},
    {"../roots/qemu-hbm-6.12/topology.xml", 0, 0, 1.0, 20480},
    {"../roots/qemu-hbm-6.12/topology.xml", 0, 3, 0, 81920},  /* node 3's initiator is socket 1 */
    {"../roots/qemu-hbm-6.12/topology.xml", 0, 1, 0, 20480},  /* the other socket: not listed */
    {"../roots/qemu-cxl-6.12/topology.xml", 0, 2, 3.0, 5120}, /* CXL-like 300 ns, 5 GB/s */
    {"topology/sandman.xml", 0, 1, 0, 0},                     /* no HMAT at all */
};

START_TEST(test_memattrs)
{
    struct np_topology *topo = NULL;
    struct np_err err = {0};

    ck_assert_msg(
        np_topology_load(&topo, NP_TOPOLOGY_XML, np_test_fixture(memattr_cases[_i].xml), &err) == 0,
        "%s", err.msg);
    ck_assert_double_eq_tol(
        np_topology_latency_ratio(topo, memattr_cases[_i].cpu, memattr_cases[_i].mem),
        memattr_cases[_i].ratio, 1e-12);
    ck_assert_double_eq_tol(np_topology_bandwidth_mbps(topo, memattr_cases[_i].mem),
                            memattr_cases[_i].bandwidth * 1.048576, 1e-6); /* in MB/s */
    np_topology_free(topo);
}
END_TEST

/* GPU memory is never among the memory nodes, CPU-less ones included or not. */
START_TEST(test_gpu_memory_left_out)
{
    struct np_topology *topo = load("gpu");
    hwloc_bitmap_t set = hwloc_bitmap_alloc();

    ck_assert_int_eq(np_topology_memory_nodes(topo, true, set), 1);
    ck_assert_str_eq(np_test_list(set), "0");
    ck_assert_str_eq(np_memory_kind_name(NP_MEMORY_KIND_COUNT), "unknown");
    ck_assert_str_eq(np_tier_source_name(NP_TIER_SOURCE_COUNT), "unknown");
    hwloc_bitmap_free(set);
    np_topology_free(topo);
}
END_TEST

/* Roots that are not Linux trees fail, naming the root, instead of describing this machine. */
static const struct {
    const char *make; /* "missing", "empty", "file", "bare" (an empty sys/devices/system/cpu) */
    int rc;
    const char *message;
} fsroot_error_cases[] = {
    {"missing", -ENOENT, "No such file or directory"},
    {"empty", -ENOENT, "no sys/devices/system/cpu there (not a Linux filesystem root)"},
    {"file", -ENOENT, "not a directory"},
    {"bare", -EIO, "hwloc's Linux backend did not accept the tree"},
};

START_TEST(test_fsroot_errors)
{
    char dir[] = "/tmp/np-topo-XXXXXX", root[64];
    struct np_topology *topo = (struct np_topology *)1;
    struct np_err err = {0};
    const char *make = fsroot_error_cases[_i].make;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(root, sizeof(root), "%s/root", dir);
    if (!strcmp(make, "empty") || !strcmp(make, "bare"))
        ck_assert_int_eq(mkdir(root, 0755), 0);
    if (!strcmp(make, "file"))
        put(dir, "root", "not a tree\n");
    else if (!strcmp(make, "bare"))
        put(root, "sys/devices/system/cpu/online", "0\n");
    setenv("HWLOC_FSROOT", root, 1);
    ck_assert_int_eq(np_topology_load(&topo, NP_TOPOLOGY_LIVE, root, &err),
                     fsroot_error_cases[_i].rc);
    ck_assert_ptr_null(topo);
    ck_assert_msg(strstr(err.msg, root) && strstr(err.msg, fsroot_error_cases[_i].message),
                  "'%s' lacks '%s' or the root", err.msg, fsroot_error_cases[_i].message);
    ck_assert_str_eq(getenv("HWLOC_FSROOT"), root);
    unsetenv("HWLOC_FSROOT");
    remove_tree(dir);
}
END_TEST

/*
 * Loading never touches the environment: slurmstepd and numaplaced load topologies while other
 * threads may read it. The first load of this (forked) test process is watched: a variable set
 * and removed again would have replaced environ's array.
 */
START_TEST(test_environment_untouched)
{
    char **const before = environ;
    size_t count = 0;
    char **entries;
    const char *xml = np_test_fixture("topology/sandman.xml");
    struct np_topology *topo = NULL;
    struct np_err err = {0};

    while (before[count])
        count++;
    entries = calloc(count + 1, sizeof(*entries));
    ck_assert_ptr_nonnull(entries);
    memcpy(entries, before, count * sizeof(*entries));
    ck_assert_msg(np_topology_load(&topo, NP_TOPOLOGY_LIVE, NULL, &err) == 0, "%s", err.msg);
    np_topology_free(topo);
    ck_assert_msg(np_topology_load(&topo, NP_TOPOLOGY_XML, xml, &err) == 0, "%s", err.msg);
    np_topology_free(topo);
    ck_assert_int_eq(np_topology_load(&topo, NP_TOPOLOGY_SYNTHETIC, "pack:2 core:2 pu:1", &err), 0);
    np_topology_free(topo);
    ck_assert_ptr_eq(environ, before);
    for (size_t i = 0; i <= count; i++)
        ck_assert_ptr_eq(environ[i], entries[i]);
    ck_assert_ptr_null(getenv("HWLOC_PLUGINS_BLACKLIST"));
    free(entries);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("topology");
    TCase *tc = tcase_create("topology");

    tcase_add_loop_test(tc, test_machines, 0, sizeof(machine_cases) / sizeof(machine_cases[0]));
    tcase_add_loop_test(tc, test_distances, 0, sizeof(distance_cases) / sizeof(distance_cases[0]));
    tcase_add_loop_test(tc, test_sandman_matrix, 0, 16);
    tcase_add_loop_test(tc, test_cpus_to_nodes, 0,
                        sizeof(cpus_to_nodes_cases) / sizeof(cpus_to_nodes_cases[0]));
    tcase_add_loop_test(tc, test_cores_to_cpus, 0, sizeof(cores_cases) / sizeof(cores_cases[0]));
    tcase_add_loop_test(tc, test_load_errors, 0,
                        sizeof(load_error_cases) / sizeof(load_error_cases[0]));
    tcase_add_loop_test(tc, test_not_xml, 0, sizeof(bad_xml_cases) / sizeof(bad_xml_cases[0]));
    tcase_add_test(tc, test_live_and_synthetic);
    tcase_add_test(tc, test_fsroot);
    tcase_add_test(tc, test_environment_untouched);
    tcase_add_loop_test(tc, test_fsroot_errors, 0,
                        sizeof(fsroot_error_cases) / sizeof(fsroot_error_cases[0]));
    tcase_add_loop_test(tc, test_live_tiers, 0,
                        sizeof(live_tier_cases) / sizeof(live_tier_cases[0]));
    tcase_add_loop_test(tc, test_xml_tiers, 0, sizeof(xml_tier_cases) / sizeof(xml_tier_cases[0]));
    tcase_add_loop_test(tc, test_tier_local, 0,
                        sizeof(tier_local_cases) / sizeof(tier_local_cases[0]));
    tcase_add_test(tc, test_gpu_memory_left_out);
    tcase_add_loop_test(tc, test_memattrs, 0, sizeof(memattr_cases) / sizeof(memattr_cases[0]));
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
