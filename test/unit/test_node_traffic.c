/*
 * Memory-node traffic (np_node_traffic) and the destination rule (np_pick_destination) over
 * hand-built views of 2-, 4- and 8-node machines: a dual socket (10/21), the model's Sandman
 * (10/21/30) and the EPYC of test/fixtures/data/topology/epyc8.xml (10/12/32).
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/migration.h"

#define GiB  (1024ull * 1024ull * 1024ull)
#define MAXN 8

static const uint8_t dual[2][2] = {{10, 21}, {21, 10}};
static const uint8_t sandman[4][4] = {
    {10, 21, 21, 30}, {21, 10, 30, 21}, {21, 30, 10, 21}, {30, 21, 21, 10}};

static uint8_t epyc8(unsigned a, unsigned b)
{
    return a == b ? 10 : (a < 4) == (b < 4) ? 12 : 32;
}

static void make_view(struct np_node_view *v, unsigned nnodes)
{
    memset(v, 0, sizeof(*v));
    v->nnodes = nnodes;
    for (unsigned a = 0; a < nnodes; a++) {
        v->total_bytes[a] = 64 * GiB;
        v->free_bytes[a] = 32 * GiB;
        for (unsigned b = 0; b < nnodes; b++)
            v->distance[a][b] = nnodes == 2   ? dual[a][b]
                                : nnodes == 4 ? sandman[a][b]
                                              : epyc8(a, b);
    }
}

#define U NP_BW_SOURCE_UNAVAILABLE
#define P NP_BW_SOURCE_PROXY
#define M NP_BW_SOURCE_MISSES

/* Up to three jobs: bandwidth, proxy or measured, pages per node; then the expected traffic
 * (MB/s) and source of every node. */
static const struct {
    const char *what;
    unsigned nnodes;
    size_t njobs;
    struct {
        double mb_s;
        bool proxy;
        uint64_t pages[MAXN];
    } jobs[3];
    double traffic[MAXN];
    enum np_bandwidth_source source[MAXN];
} traffic_cases[] = {
    {"2 nodes, no jobs", 2, 0, {{0, false, {0}}}, {0, 0}, {U, U}},
    {"2 nodes, one job all remote: its CPU node serves nothing",
     2,
     1,
     {{1000, false, {0, 400}}},
     {0, 1000},
     {M, M}},
    {"2 nodes, split 1:3",
     2,
     2,
     {{1000, false, {100, 300}}, {200, false, {50, 0}}},
     {450, 750},
     {M, M}},
    {"2 nodes, pages not read: the job is skipped", 2, 1, {{1000, false, {0, 0}}}, {0, 0}, {U, U}},
    {"4 nodes, a proxy taints only the nodes it has pages on",
     4,
     2,
     {{800, false, {100, 100, 0, 0}}, {50, true, {0, 10, 0, 0}}},
     {400, 450, 0, 0},
     {M, P, M, M}},
    {"4 nodes, interleaved over four",
     4,
     1,
     {{4000, false, {25, 25, 25, 25}}},
     {1000, 1000, 1000, 1000},
     {M, M, M, M}},
    {"8 nodes, three jobs",
     8,
     3,
     {{1600, false, {0, 0, 0, 0, 100, 100, 100, 100}},
      {300, false, {30, 0, 0, 0, 0, 0, 0, 0}},
      {900, false, {0, 0, 0, 0, 0, 0, 0, 300}}},
     {300, 0, 0, 0, 400, 400, 400, 1300},
     {M, M, M, M, M, M, M, M}},
    {"8 nodes, only proxies", 8, 1, {{10, true, {0, 5, 5}}}, {0, 5, 5}, {P, P, P, P, P, P, P, P}},
};

START_TEST(test_traffic)
{
    struct np_node_view v;
    struct np_job_view jobs[3];

    make_view(&v, traffic_cases[_i].nnodes);
    memset(jobs, 0, sizeof(jobs));
    for (size_t j = 0; j < traffic_cases[_i].njobs; j++) {
        jobs[j].bandwidth = traffic_cases[_i].jobs[j].mb_s * 1e6;
        jobs[j].bandwidth_is_proxy = traffic_cases[_i].jobs[j].proxy;
        memcpy(jobs[j].pages_on_node, traffic_cases[_i].jobs[j].pages,
               sizeof(traffic_cases[_i].jobs[j].pages));
    }
    v.jobs = jobs;
    v.njobs = traffic_cases[_i].njobs;
    v.node_bandwidth[0] = 12345; /* stale figures are replaced */
    np_node_traffic(&v);
    for (unsigned n = 0; n < v.nnodes; n++) {
        ck_assert_msg(fabs(v.node_bandwidth[n] - traffic_cases[_i].traffic[n] * 1e6) < 1,
                      "%s: node %u serves %.0f, expected %.0f MB/s", traffic_cases[_i].what, n,
                      v.node_bandwidth[n] / 1e6, traffic_cases[_i].traffic[n]);
        ck_assert_msg(v.node_bandwidth_source[n] == traffic_cases[_i].source[n],
                      "%s: node %u source %s", traffic_cases[_i].what, n,
                      np_bandwidth_source_name(v.node_bandwidth_source[n]));
    }
    ck_assert_int_eq(v.node_bandwidth_available,
                     np_bandwidth_source_measured(v.node_bandwidth_source[0]) ||
                         np_bandwidth_source_measured(v.node_bandwidth_source[1]));
}
END_TEST

/* Destinations: traffic per node (GB/s, all measured), the threshold, from which node. */
static const struct {
    const char *what;
    unsigned nnodes;
    double gb_s[MAXN];
    unsigned from;
    double threshold_gb_s;
    uint64_t avoid;
    int expected;
} dest_cases[] = {
    {"2 nodes: the other one", 2, {20, 1}, 0, 10, 0, 1},
    {"2 nodes: the other one is saturated", 2, {20, 15}, 0, 10, 0, -1},
    {"4 nodes: near (21) before far (30)", 4, {20, 0, 0, 0}, 0, 10, 0, 1},
    {"4 nodes: equally near, the less loaded", 4, {20, 5, 2, 0}, 0, 10, 0, 2},
    {"4 nodes: near ones saturated, the far one", 4, {20, 11, 12, 3}, 0, 10, 0, 3},
    {"4 nodes: no threshold, never saturated", 4, {20, 11, 12, 3}, 0, 0, 0, 1},
    {"4 nodes: avoided node skipped", 4, {20, 5, 2, 0}, 0, 10, 1u << 2, 1},
    {"8 nodes: same socket (12) before the other (32)", 8, {20, 9, 9, 9, 0, 0, 0, 0}, 0, 10, 0, 1},
    {"8 nodes: own socket saturated, the other's least loaded",
     8,
     {20, 11, 11, 11, 4, 3, 1, 2},
     0,
     10,
     0,
     6},
    {"8 nodes: from node 5", 8, {0, 0, 0, 0, 8, 20, 6, 7}, 5, 10, 0, 6},
};

START_TEST(test_destination)
{
    struct np_node_view v;

    make_view(&v, dest_cases[_i].nnodes);
    for (unsigned n = 0; n < v.nnodes; n++) {
        v.node_bandwidth[n] = dest_cases[_i].gb_s[n] * 1e9;
        v.node_bandwidth_source[n] = NP_BW_SOURCE_MISSES;
    }
    ck_assert_msg(np_pick_destination(&v, dest_cases[_i].from, dest_cases[_i].avoid, 0,
                                      dest_cases[_i].threshold_gb_s * 1e9) ==
                      dest_cases[_i].expected,
                  "%s", dest_cases[_i].what);
}
END_TEST

START_TEST(test_proxy_is_never_saturated)
{
    struct np_node_view v;

    make_view(&v, 2);
    v.node_bandwidth[1] = 1e15; /* a proxy's "bytes/s" ranks jobs, it is no controller's load */
    v.node_bandwidth_source[1] = NP_BW_SOURCE_PROXY;
    ck_assert(!np_node_saturated(&v, 1, 10e9));
    v.node_bandwidth_source[1] = NP_BW_SOURCE_UNCORE;
    ck_assert(np_node_saturated(&v, 1, 10e9));
    ck_assert(!np_node_saturated(&v, 5, 10e9)); /* out of range */
    v.free_bytes[1] = GiB;
    v.node_bandwidth_source[1] = NP_BW_SOURCE_MISSES;
    v.node_bandwidth[1] = 0;
    ck_assert_int_eq(np_pick_destination(&v, 0, 0, 2 * GiB, 10e9), -1); /* no room */
    ck_assert_str_eq(np_bandwidth_source_name(NP_BW_SOURCE_MISSES), "misses");
    ck_assert_str_eq(np_bandwidth_source_name(NP_BW_SOURCE_COUNT), "unknown");
}
END_TEST

/* The bandwidth trigger acts on the memory node's traffic: a job running on node 0 with all its
 * pages on node 1 saturates node 1, not node 0; the pages go to node 1's nearest unsaturated. */
START_TEST(test_trigger_uses_memory_node)
{
    const struct np_trigger_ops *t = np_trigger_lookup("bandwidth");
    struct np_trigger_config tc = {.bandwidth_threshold = 10e9, .bandwidth_intervals = 1};
    char state[NP_TRIGGER_STATE_SIZE] = {0}, why[160] = "";
    static const struct {
        unsigned cpu, mem;
        double bw;
    } spec[] = {{0, 1, 12e9}, {2, 0, 9e9}, {3, 3, 9.5e9}};
    struct np_request out[4];
    struct np_node_view v;
    struct np_job_view jobs[3];

    make_view(&v, 4);
    memset(jobs, 0, sizeof(jobs));
    for (size_t j = 0; j < 3; j++) {
        jobs[j].job_class = NP_CLASS_LOW;
        jobs[j].cpu_nodes = 1u << spec[j].cpu;
        jobs[j].bandwidth = spec[j].bw;
        jobs[j].pages_on_node[spec[j].mem] = 1000;
    }
    v.jobs = jobs;
    v.njobs = 3;
    np_node_traffic(&v);
    ck_assert_int_eq(t->propose(&v, &tc, state, out, 4, why, sizeof(why)), 1);
    ck_assert_uint_eq(out[0].src, 1);
    ck_assert_uint_eq(out[0].dst, 0); /* 21 away and loaded (9 GB/s) beats idle node 2 at 30 */
    ck_assert_ptr_nonnull(strstr(out[0].reason, "memory node 1 serves 12000 MB/s (misses)"));
    jobs[1].bandwidth = 11e9; /* node 0 saturated too: never a destination */
    np_node_traffic(&v);
    ck_assert_int_eq(t->propose(&v, &tc, state, out, 4, why, sizeof(why)), 2);
    ck_assert_uint_eq(out[0].src, 0);
    ck_assert_uint_eq(out[0].dst, 2);
    ck_assert_uint_eq(out[1].src, 1);
    ck_assert_uint_eq(out[1].dst, 3);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("node_traffic");
    TCase *tc = tcase_create("node_traffic");
    tcase_add_loop_test(tc, test_traffic, 0, sizeof(traffic_cases) / sizeof(traffic_cases[0]));
    tcase_add_loop_test(tc, test_destination, 0, sizeof(dest_cases) / sizeof(dest_cases[0]));
    tcase_add_test(tc, test_proxy_is_never_saturated);
    tcase_add_test(tc, test_trigger_uses_memory_node);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
