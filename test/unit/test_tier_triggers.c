/*
 * The triggers on a tiered node: demotion, promotion, and the others kept within a tier. The
 * view is a Xeon Max in flat mode with a CXL expander: DRAM nodes 0 and 1 own the CPUs (tier 1),
 * HBM nodes 2 and 3 hang under sockets 0 and 1 (tier 0), CXL node 4 under socket 0 (tier 2).
 * Each case changes that view and says what one trigger must propose.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "numaplace/migration.h"

#define MiB   (1024ull * 1024ull)
#define GiB   (1024ull * MiB)
#define FLOOR (1 * GiB)

/* SLIT as such a machine reports it: HBM 13 from its own socket, CXL 17 from socket 0. */
static const uint8_t slit[5][5] = {{10, 21, 13, 23, 17},
                                   {21, 10, 23, 13, 28},
                                   {13, 23, 10, 23, 20},
                                   {23, 13, 23, 10, 30},
                                   {17, 28, 20, 30, 10}};
static const unsigned tiers[5] = {1, 1, 0, 0, 2};

static struct np_job_view jobs[3];
static struct np_node_view view;

/* Job 1 high with CPUs on node 0; job 2 low on node 0, with pages on DRAM 0 and HBM 2; job 3
 * low on node 1. Every node has 8 GiB free. */
static void base_view(void)
{
    memset(&view, 0, sizeof(view));
    memset(jobs, 0, sizeof(jobs));
    view.nnodes = 5;
    for (unsigned a = 0; a < 5; a++) {
        view.total_bytes[a] = a == 4 ? 128 * GiB : 64 * GiB;
        view.free_bytes[a] = 8 * GiB;
        view.tier[a] = tiers[a];
        memcpy(view.distance[a], slit[a], sizeof(slit[a]));
    }
    for (unsigned i = 0; i < 3; i++) {
        jobs[i].job_id = i + 1;
        jobs[i].id = (uint64_t)(i + 1) << 16;
        jobs[i].job_class = i == 0 ? NP_CLASS_HIGH : NP_CLASS_LOW;
        jobs[i].cpu_nodes = i == 2 ? 1u << 1 : 1u << 0;
    }
    jobs[1].pages_on_node[0] = 5000;
    jobs[1].pages_on_node[2] = 5000;
    view.jobs = jobs;
    view.njobs = 3;
}

static uint64_t pages_of(uint64_t bytes)
{
    return bytes / (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The changes a case makes to base_view. */
static void hbm2_full_fast_job(void)
{
    jobs[0].wants_fast_tier = true;
    view.free_bytes[2] = FLOOR / 4;
}
static void hbm2_full_local_job(void)
{
    view.free_bytes[2] = FLOOR / 4;
}
static void dram0_full_job_on_cxl(void)
{
    jobs[0].pages_on_node[4] = 1000;
    view.free_bytes[0] = FLOOR / 2;
}
static void dram0_full_job_at_home(void)
{
    jobs[0].pages_on_node[0] = 1000;
    view.free_bytes[0] = FLOOR / 2;
}
static void dram0_full_cxl_full(void)
{
    dram0_full_job_on_cxl();
    view.free_bytes[4] = FLOOR / 2;
}
static void kernel_demotes(void)
{
    hbm2_full_fast_job();
    snprintf(view.kernel_tiering, sizeof(view.kernel_tiering),
             "the kernel demotes pages itself (/sys/kernel/mm/numa/demotion_enabled is true)");
}
static void fast_job_on_dram(void)
{
    jobs[0].wants_fast_tier = true;
    jobs[0].pages_on_node[0] = 1000;
}
static void fast_job_on_dram_little_room(void)
{
    fast_job_on_dram();
    view.free_bytes[2] = FLOOR + 300 * (uint64_t)sysconf(_SC_PAGESIZE);
}
static void fast_job_on_dram_no_room(void)
{
    fast_job_on_dram();
    view.free_bytes[2] = FLOOR + (uint64_t)sysconf(_SC_PAGESIZE);
}
static void local_job_on_cxl(void)
{
    jobs[0].pages_on_node[4] = 1000;
}
static void low_job_on_cxl(void)
{
    jobs[1].pages_on_node[4] = 1000;
}
static void local_job_on_hbm(void)
{
    jobs[0].pages_on_node[2] = 1000;
}
static void dram0_saturated(void)
{
    view.node_bandwidth_available = true;
    for (unsigned n = 0; n < 5; n++)
        view.node_bandwidth_source[n] = NP_BW_SOURCE_MISSES;
    view.node_bandwidth[0] = 20e9;
}
static void one_tier(void)
{
    memset(view.tier, 0, sizeof(view.tier));
    dram0_full_job_on_cxl();
}

static const struct {
    const char *what, *trigger;
    void (*change)(void);
    int requests; /* 0: none; else one, as below */
    unsigned src, dst;
    uint64_t pages; /* 0: the room wanted up to the floor, in pages */
    long target_job;
    const char *reason; /* a part of the reason (requests), or of why it is inactive */
} cases[] = {
    {"full HBM a fast-tier high job needs: low pages down to its socket's DRAM", "demotion",
     hbm2_full_fast_job, 1, 2, 0, 0, -1, "high job 1.0 needs it: low jobs' pages go to tier 1"},
    {"full HBM no high job asked for: left alone", "demotion", hbm2_full_local_job, 0, 0, 0, 0, -1,
     ""},
    {"full DRAM while its high job spilled to CXL: low pages down to CXL", "demotion",
     dram0_full_job_on_cxl, 1, 0, 4, 0, -1, "below the 1024 MiB floor"},
    {"full DRAM, its high job all at home: no demotion yet", "demotion", dram0_full_job_at_home, 0,
     0, 0, 0, -1, ""},
    {"full DRAM and full CXL: nowhere down to go", "demotion", dram0_full_cxl_full, 0, 0, 0, 0, -1,
     ""},
    {"the kernel's own demotion on: demotion stands aside", "demotion", kernel_demotes, 0, 0, 0, 0,
     -1, "demotion_enabled is true"},
    {"the kernel's own demotion on: promotion stands aside", "promotion", kernel_demotes, 0, 0, 0,
     0, -1, "demotion_enabled is true"},
    {"a fast-tier high job's DRAM pages go up to its HBM", "promotion", fast_job_on_dram, 1, 0, 2,
     1000, 0, "below its tier 0; node 2 has room"},
    {"up to the floor only", "promotion", fast_job_on_dram_little_room, 1, 0, 2, 0, 0, ""},
    {"no room above the floor: no promotion", "promotion", fast_job_on_dram_no_room, 0, 0, 0, 0, -1,
     ""},
    {"a local high job's CXL pages come up to its DRAM", "promotion", local_job_on_cxl, 1, 4, 0,
     1000, 0, "(tier 2), below its tier 1"},
    {"a low job is never promoted", "promotion", low_job_on_cxl, 0, 0, 0, 0, -1, ""},
    {"a local high job's HBM pages stay (faster than its tier)", "promotion", local_job_on_hbm, 0,
     0, 0, 0, -1, ""},
    {"homecoming leaves a high job's HBM pages on the HBM", "homecoming", local_job_on_hbm, 0, 0, 0,
     0, -1, ""},
    {"homecoming leaves CXL pages to promotion", "homecoming", local_job_on_cxl, 0, 0, 0, 0, -1,
     ""},
    {"memory pressure leaves a node with a slower tier to demotion", "memory-pressure",
     dram0_full_job_on_cxl, 0, 0, 0, 0, -1, ""},
    {"on one tier memory pressure acts as before (the nearest node, HBM or not)", "memory-pressure",
     one_tier, 1, 0, 2, 0, -1, "below the 1024 MiB floor"},
    {"on one tier no demotion", "demotion", one_tier, 0, 0, 0, 0, -1, ""},
    {"bandwidth relief never sends low pages up to HBM", "bandwidth", dram0_saturated, 1, 0, 4,
     5000 / 2, -1, "node 4 is the nearest unsaturated"},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

START_TEST(test_tier_trigger)
{
    const struct np_trigger_ops *t = np_trigger_lookup(cases[_i].trigger);
    struct np_trigger_config tc = {
        .free_floor_bytes = FLOOR, .bandwidth_threshold = 10e9, .bandwidth_intervals = 1};
    char state[NP_TRIGGER_STATE_SIZE] = {0}, why[160] = "";
    struct np_request out[4];
    int n;

    base_view();
    cases[_i].change();
    ck_assert_ptr_nonnull(t);
    n = t->propose(&view, &tc, state, out, 4, why, sizeof(why));
    ck_assert_msg(n == cases[_i].requests, "%s: %d requests (%s)", cases[_i].what, n,
                  n > 0 ? out[0].reason : why);
    if (n == 0) {
        ck_assert_msg(strstr(why, cases[_i].reason), "%s: inactive \"%s\"", cases[_i].what, why);
        return;
    }
    ck_assert_uint_eq(out[0].src, cases[_i].src);
    ck_assert_uint_eq(out[0].dst, cases[_i].dst);
    ck_assert_int_eq(out[0].target_job, cases[_i].target_job);
    if (cases[_i].pages)
        ck_assert_uint_eq(out[0].pages, cases[_i].pages);
    else if (out[0].trigger == NP_TRIGGER_PROMOTION)
        ck_assert_uint_eq(out[0].pages, pages_of(view.free_bytes[out[0].dst] - FLOOR));
    else
        ck_assert_uint_eq(out[0].pages, (FLOOR - view.free_bytes[out[0].src] +
                                         (uint64_t)sysconf(_SC_PAGESIZE) - 1) /
                                            (uint64_t)sysconf(_SC_PAGESIZE));
    ck_assert_msg(strstr(out[0].reason, cases[_i].reason), "%s: reason \"%s\"", cases[_i].what,
                  out[0].reason);
}
END_TEST

/* `numaplace migrate --tier`'s destination: the nearest node one tier down or up. */
static const struct {
    unsigned from;
    bool down;
    int dst;
} neighbours[] = {{2, true, 0},  {3, true, 1},   {0, true, 4}, {4, false, 0},
                  {1, false, 3}, {2, false, -1}, {4, true, -1}};

START_TEST(test_tier_neighbour)
{
    base_view();
    ck_assert_int_eq(np_tier_neighbour(&view, neighbours[_i].from, neighbours[_i].down, FLOOR),
                     neighbours[_i].dst);
}
END_TEST

START_TEST(test_tier_neighbour_needs_room)
{
    base_view();
    view.free_bytes[0] = FLOOR / 2;
    ck_assert_int_eq(np_tier_neighbour(&view, 2, true, FLOOR), 1); /* the other socket's DRAM */
    view.free_bytes[1] = FLOOR / 2;
    ck_assert_int_eq(np_tier_neighbour(&view, 2, true, FLOOR), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tier_triggers");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_tier_trigger, 0, NCASES);
    tcase_add_loop_test(tc, test_tier_neighbour, 0, sizeof(neighbours) / sizeof(neighbours[0]));
    tcase_add_test(tc, test_tier_neighbour_needs_room);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
