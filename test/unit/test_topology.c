/* Topology over hwloc fixtures of machines we do not have (test/fixtures/topology/). */
#include <errno.h>
#include <string.h>

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
    const char *arg;
    int rc;
    const char *message;
} load_error_cases[] = {
    {NP_TOPOLOGY_XML, "/nonexistent/topo.xml", -ENOENT,
     "cannot load topology XML '/nonexistent/topo.xml'"},
    {NP_TOPOLOGY_XML, NULL, -ENOENT, "cannot load topology XML"},
    {NP_TOPOLOGY_SYNTHETIC, "pack:two", -EINVAL, "invalid synthetic topology 'pack:two'"},
    {NP_TOPOLOGY_SYNTHETIC, NULL, -EINVAL, "invalid synthetic topology"},
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

START_TEST(test_not_xml)
{
    struct np_topology *topo = NULL;
    struct np_err err = {0};

    /* An existing file that is not hwloc XML. */
    ck_assert_int_eq(
        np_topology_load(&topo, NP_TOPOLOGY_XML, np_test_fixture("topology/generate.sh"), &err),
        -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "not an hwloc XML file"));
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

int main(void)
{
    Suite *s = suite_create("topology");
    TCase *tc = tcase_create("topology");

    tcase_add_loop_test(tc, test_machines, 0, sizeof(machine_cases) / sizeof(machine_cases[0]));
    tcase_add_loop_test(tc, test_distances, 0, sizeof(distance_cases) / sizeof(distance_cases[0]));
    tcase_add_loop_test(tc, test_cpus_to_nodes, 0,
                        sizeof(cpus_to_nodes_cases) / sizeof(cpus_to_nodes_cases[0]));
    tcase_add_loop_test(tc, test_cores_to_cpus, 0, sizeof(cores_cases) / sizeof(cores_cases[0]));
    tcase_add_loop_test(tc, test_load_errors, 0,
                        sizeof(load_error_cases) / sizeof(load_error_cases[0]));
    tcase_add_test(tc, test_not_xml);
    tcase_add_test(tc, test_live_and_synthetic);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
