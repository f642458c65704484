/* From samples to reports: the arithmetic over a recorded trace (a machine with a PMU), the
 * trace format's round trip, and malformed traces. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/protocol.h"
#include "numaplace/report.h"
#include "numaplace/summary.h"

#define MiB (1024.0 * 1024.0)

struct collected {
    json_t *reports[4];
    int n;
};

static int collect(json_t *report, void *arg)
{
    struct collected *c = arg;
    if (c->n < 4)
        c->reports[c->n++] = json_incref(report);
    return 0;
}

static double num(json_t *obj, const char *path)
{
    char copy[256], *save = NULL;
    json_t *v = obj;

    snprintf(copy, sizeof(copy), "%s", path);
    for (char *key = strtok_r(copy, ".", &save); key; key = strtok_r(NULL, ".", &save))
        v = json_is_array(v) ? json_array_get(v, strtoul(key, NULL, 10)) : json_object_get(v, key);
    ck_assert_msg(json_is_number(v), "%s is not a number", path);
    return json_number_value(v);
}

static const char *str_at(json_t *obj, const char *path)
{
    char copy[256], *save = NULL;
    json_t *v = obj;

    snprintf(copy, sizeof(copy), "%s", path);
    for (char *key = strtok_r(copy, ".", &save); key; key = strtok_r(NULL, ".", &save))
        v = json_is_array(v) ? json_array_get(v, strtoul(key, NULL, 10)) : json_object_get(v, key);
    ck_assert_msg(json_is_string(v), "%s is not a string", path);
    return json_string_value(v);
}

START_TEST(test_replay_hw_trace)
{
    struct collected c = {0};
    struct np_err err = {0};
    FILE *in = fopen(np_test_fixture("trace/hw.jsonl"), "r");
    json_t *r;
    char *printed = NULL;
    size_t len = 0;
    FILE *out;

    ck_assert_ptr_nonnull(in);
    ck_assert_msg(np_trace_replay(in, "hw.jsonl", collect, &c, &err) == 2, "%s", err.msg);
    fclose(in);
    ck_assert_int_eq(c.n, 2);

    r = c.reports[0]; /* step 0 ended: complete */
    ck_assert_int_eq(np_report_check(r, &err), 0);
    ck_assert(json_is_true(json_object_get(r, "complete")));
    ck_assert_str_eq(str_at(r, "step"), "0");
    ck_assert_double_eq_tol(num(r, "duration_s"), 4.5, 1e-9);
    ck_assert_int_eq((int)num(r, "sampling.count"), 5);
    /* per-interval CPI 1, 2, 3, 4 */
    ck_assert_double_eq_tol(num(r, "cpi.mean"), 2.5, 1e-9);
    ck_assert_double_eq_tol(num(r, "cpi.median"), 2.0, 1e-9);
    ck_assert_double_eq_tol(num(r, "cpi.p95"), 4.0, 1e-9);
    /* misses x 64 B / s: node 0 steady 100/s; node 1 one burst of 1000 */
    ck_assert_double_eq_tol(num(r, "bandwidth.per_node.0.mean_bytes_per_s"), 6400, 1e-6);
    ck_assert_double_eq_tol(num(r, "bandwidth.per_node.1.mean_bytes_per_s"), 16000, 1e-6);
    ck_assert_double_eq_tol(num(r, "bandwidth.per_node.1.peak_bytes_per_s"), 64000, 1e-6);
    ck_assert_double_eq_tol(num(r, "bandwidth.peak_bytes_per_s"), 70400, 1e-6);
    /* by the memory node serving it: each interval spread by that interval's page shares
     * (1:1, 2:1, 2:1 held over the skipped reading, then all on node 0) */
    ck_assert_double_eq_tol(num(r, "bandwidth.by_memory_node.per_node.0.mean_bytes_per_s"), 15200,
                            1e-6);
    ck_assert_double_eq_tol(num(r, "bandwidth.by_memory_node.per_node.1.mean_bytes_per_s"), 7200,
                            1e-6);
    ck_assert_int_eq((int)num(r, "bandwidth.by_memory_node.intervals"), 4);
    ck_assert_ptr_nonnull(strstr(str_at(r, "bandwidth.by_memory_node.source"), "misses: "));
    /* pages: one reading skipped (large job), peak per node */
    ck_assert_int_eq((int)num(r, "pages.samples"), 4);
    ck_assert_double_eq_tol(num(r, "pages.start_bytes.0"), 4096, 0.5);
    ck_assert_double_eq_tol(num(r, "pages.end_bytes.0"), MiB, 0.5);
    ck_assert_ptr_null(
        json_object_get(json_object_get(json_object_get(r, "pages"), "end_bytes"), "1"));
    ck_assert_double_eq_tol(num(r, "pages.peak_bytes.0"), 2 * MiB, 0.5);
    ck_assert_double_eq_tol(num(r, "pages.peak_bytes.1"), MiB, 0.5);
    ck_assert_double_eq_tol(num(r, "pages.peak_total_bytes"), 3 * MiB, 0.5);
    /* OS interference */
    ck_assert_double_eq_tol(num(r, "os_interference.kernel_time_share.value"), 0.2, 1e-9);
    ck_assert_double_eq_tol(num(r, "os_interference.involuntary_cs_per_s.value"), 10, 1e-9);
    ck_assert_int_eq((int)num(r, "os_interference.interrupts_on_cpus.count"), 400);
    ck_assert_double_eq_tol(num(r, "os_interference.softirqs_on_cpus.per_s"), 100, 1e-9);
    ck_assert_double_eq_tol(num(r, "os_interference.other_cpu_time_s.value"), 1.0, 1e-9);
    ck_assert_double_eq_tol(num(r, "cpu.user_s"), 4, 1e-9);
    ck_assert_double_eq_tol(num(r, "perf_counts.task_clock_ns.value"), 4e9, 1);
    ck_assert_double_eq_tol(num(r, "helper.cpu_time_s"), 0.005, 1e-9);
    ck_assert_int_eq((int)num(r, "numa_balancing.pages_migrated"), 40);
    ck_assert_int_eq((int)num(r, "numa_balancing.faults"), 400);
    ck_assert_str_eq(str_at(r, "policy.tasks.0.nodes"), "0-1");
    ck_assert_str_eq(str_at(r, "sampling.backends"), "replay of perf,proc");
    /* A trace holds samples, not moves: the replay says it cannot tell, not "not enabled". */
    ck_assert_str_eq(str_at(r, "migrations.source"),
                     "unavailable: a replayed trace records no migrations");

    r = c.reports[1]; /* step 1: no end line, one sample, no PMU */
    ck_assert(json_is_false(json_object_get(r, "complete")));
    ck_assert_ptr_nonnull(strstr(str_at(r, "cpi.unavailable"), "no hardware PMU"));
    ck_assert_ptr_nonnull(strstr(str_at(r, "pages.unavailable"), "Permission denied"));
    ck_assert_ptr_nonnull(strstr(str_at(r, "os_interference.interrupts_on_cpus.unavailable"),
                                 "fewer than two samples"));
    ck_assert_str_eq(str_at(r, "sensitivity"), "high");
    ck_assert_ptr_nonnull(strstr(str_at(r, "numa_balancing.unavailable"), "numa_balancing = 0"));

    /* The text form says unavailable with the reason, and carries the figures. */
    out = open_memstream(&printed, &len);
    ck_assert_int_eq(np_report_print(out, c.reports[0]), 0);
    ck_assert_int_eq(np_report_print(out, c.reports[1]), 0);
    fclose(out);
    ck_assert_ptr_nonnull(strstr(printed, "mean 2.500, median 2.000, p95 4.000"));
    ck_assert_ptr_nonnull(strstr(printed, "peak     node0=2.0 MiB node1=1.0 MiB"));
    ck_assert_ptr_nonnull(strstr(printed, "CPI                    unavailable (perf::CYCLES"));
    ck_assert_ptr_nonnull(strstr(printed, "[incomplete"));
    free(printed);
    for (int i = 0; i < c.n; i++)
        json_decref(c.reports[i]);
}
END_TEST

static const struct {
    const char *trace;
    const char *msg;
} bad_traces[] = {
    {"not json\n", "bad.jsonl:1: not a trace line"},
    {"{\"no\":\"event\"}\n", "bad.jsonl:1: not a trace line (no \"event\")"},
    {"{\"event\":\"sample\",\"job\":1,\"step\":0,\"sample\":{\"t\":0,\"processes\":1}}\n",
     "bad.jsonl:1: sample for a job with no \"job\" line"},
    {"{\"event\":\"job\",\"schema\":\"numaplace.trace/9\",\"job\":1,\"step\":0}\n",
     "trace schema numaplace.trace/9; this numaplace reads numaplace.trace/1"},
    {"{\"event\":\"job\",\"schema\":\"numaplace.trace/1\",\"job\":1,\"step\":0}\n\n"
     "{\"event\":\"sample\",\"job\":1,\"step\":0,\"sample\":{\"t\":-1,\"processes\":1}}\n",
     "bad.jsonl:3: sample member \"t\" must be a non-negative number"},
    {"{\"event\":\"job\",\"schema\":\"numaplace.trace/1\",\"job\":1,\"step\":0}\n"
     "{\"event\":\"sample\",\"job\":1,\"step\":0,\"sample\":{\"t\":1,\"processes\":1,\"pages\":"
     "{\"node_bytes\":{\"x\":1}}}}\n",
     "\"x\" must be a node number from 0 to 63"},
    {"{\"event\":\"job\",\"schema\":\"numaplace.trace/1\",\"job\":1,\"step\":0}\n"
     "{\"event\":\"sample\",\"job\":1,\"step\":0,\"sample\":{\"t\":2,\"processes\":1}}\n"
     "{\"event\":\"sample\",\"job\":1,\"step\":0,\"sample\":{\"t\":1,\"processes\":1}}\n",
     "bad.jsonl:3: sample goes back in time"},
    {"{\"event\":\"reboot\"}\n", "unknown event \"reboot\"; accepted: job, sample, end"},
    {"{\"event\":\"job\",\"schema\":\"numaplace.trace/1\",\"job\":1,\"step\":0}\n"
     "{\"event\":\"sample\",\"job\":1,\"step\":0,\"sample\":{\"t\":1,\"processes\":1,\"perf\":"
     "{\"cycles\":\"many\"}}}\n",
     "\"perf.cycles\" must be a count"},
};

START_TEST(test_replay_bad)
{
    struct np_err err = {0};
    FILE *in = fmemopen((void *)bad_traces[_i].trace, strlen(bad_traces[_i].trace), "r");

    ck_assert_int_eq(np_trace_replay(in, "bad.jsonl", NULL, NULL, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, bad_traces[_i].msg), "case %d: \"%s\"", _i, err.msg);
    fclose(in);
}
END_TEST

START_TEST(test_sample_round_trip)
{
    struct np_sample s, back;
    struct np_err err = {0};
    json_t *obj;

    np_sample_init(&s);
    s.t = 3.5;
    s.processes = 4;
    s.have_proc = true;
    s.utime_s = 1.25;
    s.have_cs = true;
    s.involuntary_cs = 99;
    s.have_pages = true;
    s.node_bytes[3] = 12345;
    snprintf(s.irq_reason, sizeof(s.irq_reason), "cannot read /proc/interrupts");
    s.have_perf[NP_PERF_TASK_CLOCK] = true;
    s.perf[NP_PERF_TASK_CLOCK] = 777;
    snprintf(s.perf_reason[NP_PERF_CYCLES], sizeof(s.perf_reason[0]), "no PMU");
    obj = np_sample_to_json(&s);
    ck_assert_msg(np_sample_from_json(obj, &back, &err) == 0, "%s", err.msg);
    json_decref(obj);
    ck_assert_double_eq(back.t, 3.5);
    ck_assert(back.have_proc && back.have_pages && !back.have_irq && !back.have_cpu_busy);
    ck_assert_uint_eq(back.node_bytes[3], 12345);
    ck_assert(back.have_cs);
    ck_assert_uint_eq(back.involuntary_cs, 99);
    ck_assert_str_eq(back.irq_reason, "cannot read /proc/interrupts");
    ck_assert(back.have_perf[NP_PERF_TASK_CLOCK]);
    ck_assert_uint_eq(back.perf[NP_PERF_TASK_CLOCK], 777);
    ck_assert(!back.have_perf[NP_PERF_CYCLES]);
    ck_assert_str_eq(back.perf_reason[NP_PERF_CYCLES], "no PMU");
}
END_TEST

/* The processes are gone at the final sample: CPU figures come from the last sample that saw
 * them, and are not zeroed. */
START_TEST(test_exited_processes_keep_figures)
{
    struct np_step_figures js;
    struct np_job_meta meta = {.job_id = 1, .interval_s = 1, .sensitivity = "low"};
    struct np_sample s;
    json_t *r;

    np_step_figures_init(&js);
    for (int i = 0; i < 3; i++) {
        np_sample_init(&s);
        s.t = i;
        s.processes = 1;
        s.have_proc = true;
        s.utime_s = 2.0 * i;
        s.stime_s = 0.5 * i;
        ck_assert_int_eq(np_step_figures_add(&js, &s), 0);
    }
    np_sample_init(&s);
    s.t = 3;
    snprintf(s.proc_reason, sizeof(s.proc_reason), "no live process");
    ck_assert_int_eq(np_step_figures_add(&js, &s), 0);
    s.t = 1; /* time does not go back */
    ck_assert_int_eq(np_step_figures_add(&js, &s), -EINVAL);
    r = np_report_new(&meta, &js, true);
    ck_assert_double_eq_tol(num(r, "cpu.user_s"), 4.0, 1e-9);
    ck_assert_double_eq_tol(num(r, "os_interference.kernel_time_share.value"), 0.2, 1e-9);
    ck_assert_int_eq((int)num(r, "sampling.count"), 4);
    json_decref(r);
    np_step_figures_fini(&js);
    np_step_figures_fini(NULL);
}
END_TEST

/* A counter the kernel multiplexed (time running below time enabled) says so in the report, with
 * its share of time on a counter, and its source says the value is scaled; one that had a
 * counter throughout has no such member. The CPI over multiplexed counts says it is an estimate. */
START_TEST(test_multiplexed_counts_said)
{
    struct np_step_figures js;
    struct np_job_meta meta = {.job_id = 1, .interval_s = 1, .sensitivity = "low"};
    struct np_sample s;
    json_t *r, *cycles, *clock;

    np_step_figures_init(&js);
    for (int i = 1; i <= 3; i++) {
        np_sample_init(&s);
        s.t = i;
        s.processes = 1;
        s.have_perf[NP_PERF_CYCLES] = s.have_perf[NP_PERF_INSTRUCTIONS] = true;
        s.have_perf[NP_PERF_TASK_CLOCK] = true;
        s.perf[NP_PERF_CYCLES] = 2000u * (unsigned)i;
        s.perf[NP_PERF_INSTRUCTIONS] = 1000u * (unsigned)i;
        s.perf[NP_PERF_TASK_CLOCK] = 1000u * (unsigned)i;
        for (int e = 0; e < NP_PERF_NEVENTS; e++)
            s.perf_enabled_ns[e] = s.perf_running_ns[e] = 1000u * (unsigned)i;
        s.perf_running_ns[NP_PERF_CYCLES] = 250u * (unsigned)i; /* a quarter of the time */
        ck_assert_int_eq(np_step_figures_add(&js, &s), 0);
    }
    r = np_report_new(&meta, &js, true);
    cycles = json_object_get(json_object_get(r, "perf_counts"), "cycles");
    ck_assert_double_eq_tol(num(cycles, "multiplexed.running_share"), 0.25, 1e-9);
    ck_assert_ptr_nonnull(strstr(str_at(cycles, "source"), "scaled"));
    ck_assert_int_eq((int)num(cycles, "value"), 6000);
    clock = json_object_get(json_object_get(r, "perf_counts"), "task_clock_ns");
    ck_assert_ptr_null(json_object_get(clock, "multiplexed"));
    ck_assert_ptr_null(strstr(str_at(clock, "source"), "scaled"));
    ck_assert_ptr_nonnull(strstr(str_at(r, "cpi.multiplexed"), "estimate"));
    ck_assert_double_eq_tol(num(r, "cpi.mean"), 2.0, 1e-9);
    json_decref(r);
    np_step_figures_fini(&js);
}
END_TEST

/* Counters for Prometheus: every interval's increase summed, so rate() over any window sees all
 * of it (not the last interval's rate); an interval whose sum over the tasks fell (a task went)
 * adds nothing, and without counters nothing is counted. */
static const struct {
    const char *name;
    bool perf, misses;
    uint64_t cycles[4], instructions[4], misses0[4];
    uint64_t cycles_total, instructions_total, traffic_total;
    unsigned counted;
} counted_cases[] = {
    {"steady",
     true,
     true,
     {0, 100, 300, 600},
     {0, 50, 150, 300},
     {0, 10, 30, 60},
     600,
     300,
     60 * 64,
     3},
    {"a task went",
     true,
     true,
     {0, 100, 40, 140},
     {0, 50, 20, 70},
     {0, 10, 4, 14},
     200,
     100,
     20 * 64,
     3},
    {"no counters",
     false,
     false,
     {0, 100, 300, 600},
     {0, 50, 150, 300},
     {0, 10, 30, 60},
     0,
     0,
     0,
     0},
};

START_TEST(test_counters_accumulate)
{
    struct np_step_figures js;
    struct np_sample s;

    np_step_figures_init(&js);
    for (int i = 0; i < 4; i++) {
        np_sample_init(&s);
        s.t = i;
        s.have_perf[NP_PERF_CYCLES] = s.have_perf[NP_PERF_INSTRUCTIONS] = counted_cases[_i].perf;
        s.perf[NP_PERF_CYCLES] = counted_cases[_i].cycles[i];
        s.perf[NP_PERF_INSTRUCTIONS] = counted_cases[_i].instructions[i];
        s.have_misses_by_node = counted_cases[_i].misses;
        s.misses_by_node[0] = counted_cases[_i].misses0[i];
        ck_assert_int_eq(np_step_figures_add(&js, &s), 0);
    }
    ck_assert_msg(js.cycles_total == counted_cases[_i].cycles_total, "%s: cycles %llu",
                  counted_cases[_i].name, (unsigned long long)js.cycles_total);
    ck_assert_uint_eq(js.instructions_total, counted_cases[_i].instructions_total);
    ck_assert_uint_eq(js.traffic_bytes_total, counted_cases[_i].traffic_total);
    ck_assert_uint_eq(js.counted_intervals, counted_cases[_i].counted);
    np_step_figures_fini(&js);
}
END_TEST

/* A task whose counters numaplaced opened after its program started says so in the text, and so
 * does one that ended before its registration was read; one counted from before its exec not. */
START_TEST(test_late_counters_are_said)
{
    struct np_step_figures js;
    struct np_job_meta meta = {.job_id = 1, .interval_s = 1, .sensitivity = "low"};
    json_t *tasks = json_pack("[{s:i, s:i, s:s}, {s:i, s:i, s:s, s:b}, {s:i, s:i, s:b}]", "task", 0,
                              "pid", 10, "policy", "local", "task", 1, "pid", 11, "policy", "local",
                              "counters_late", 1, "task", 2, "pid", 12, "ended_before_read", 1);
    json_t *r;
    FILE *text;
    char *buf = NULL;
    size_t len = 0;

    np_step_figures_init(&js);
    meta.tasks = tasks;
    r = np_report_new(&meta, &js, true);
    text = open_memstream(&buf, &len);
    np_report_print(text, r);
    fclose(text);
    ck_assert_ptr_nonnull(strstr(buf, "task 0 pid 10: local (mode -) nodes - cpus -\n"));
    ck_assert_ptr_nonnull(
        strstr(buf, "task 1 pid 11: local (mode -) nodes - cpus - (counted from after its program "
                    "started)\n"));
    ck_assert_ptr_nonnull(strstr(buf, "task 2 pid 12: not reported (mode -) nodes - cpus - (ended "
                                      "before numaplaced read its registration: not counted)\n"));
    free(buf);
    json_decref(r);
    json_decref(tasks);
    np_step_figures_fini(&js);
}
END_TEST

/* A sample whose walk a limit cut makes the report say so, and so does a step the descriptor
 * budget put on /proc alone; a step seen whole with its counters has no such keys (its report is
 * as before, byte for byte). */
START_TEST(test_processes_cut_is_said)
{
    struct np_step_figures js;
    struct np_job_meta meta = {.job_id = 1, .interval_s = 1, .sensitivity = "low"};
    struct np_sample s;
    json_t *r, *cut;
    FILE *text;
    char *buf = NULL;
    size_t len = 0;

    np_step_figures_init(&js);
    for (int i = 0; i < 3; i++) {
        np_sample_init(&s);
        s.t = i;
        s.processes = 4096;
        s.have_proc = true;
        s.processes_cut = _i == 1 && i > 0;
        if (s.processes_cut)
            snprintf(s.proc_reason, sizeof(s.proc_reason), "more than 4096 processes: cut");
        ck_assert_int_eq(np_step_figures_add(&js, &s), 0);
    }
    if (_i == 1) /* numaplaced's descriptor budget took its perf counters */
        snprintf(meta.backends_reason, sizeof(meta.backends_reason),
                 "descriptor budget: 200 of 256 open");
    r = np_report_new(&meta, &js, true);
    cut = json_object_get(r, "processes_cut");
    text = open_memstream(&buf, &len);
    np_report_print(text, r);
    fclose(text);
    if (_i == 0) {
        ck_assert_ptr_null(cut);
        ck_assert_ptr_null(strstr(buf, "processes left out"));
        ck_assert_ptr_null(json_object_get(json_object_get(r, "sampling"), "backends_reason"));
    } else {
        ck_assert_str_eq(
            json_string_value(json_object_get(json_object_get(r, "sampling"), "backends_reason")),
            "descriptor budget: 200 of 256 open");
        ck_assert_ptr_nonnull(strstr(buf, "no perf counters       descriptor budget: 200"));
        ck_assert_int_eq(json_integer_value(json_object_get(cut, "samples")), 2);
        ck_assert_str_eq(json_string_value(json_object_get(cut, "reason")),
                         "more than 4096 processes: cut");
        ck_assert_ptr_nonnull(strstr(buf, "processes left out"));
    }
    free(buf);
    json_decref(r);
    np_step_figures_fini(&js);
}
END_TEST

/* Local share: each numa_maps reading holds until the next; the last until the last sample. */
static const struct {
    const char *name;
    uint64_t local_nodes;
    int nreadings;
    struct {
        double t;
        uint64_t on0, on1;
    } readings[4];
    double last_t; /* a final sample without pages */
    double expect; /* < 0: unavailable */
} local_cases[] = {
    {"all local on node 0", 0x1, 2, {{0, 100, 0}, {10, 200, 0}}, 10, 1.0},
    {"half the time remote", 0x1, 2, {{0, 100, 0}, {5, 0, 100}}, 10, 0.5},
    {"a quarter local, held to the end", 0x2, 1, {{0, 300, 100}}, 8, 0.25},
    {"weighted by time held",
     0x1,
     3,
     {{0, 100, 0}, {2, 0, 100}, {4, 100, 100}},
     10,
     0.2 + 0.6 * 0.5},
    {"CPUs' nodes unknown", 0x0, 1, {{0, 100, 0}}, 5, -1},
    {"no pages at any reading", 0x1, 1, {{0, 0, 0}}, 5, -1},
};

/* The helper reads the interrupt counters at a job's first and last sample only (unless it
 * records a trace): the report must be the same as with a reading every interval. */
static json_t *irq_report(bool every_interval)
{
    struct np_step_figures js;
    struct np_job_meta meta = {.job_id = 1, .interval_s = 1, .sensitivity = "low"};
    struct np_sample s;
    json_t *r, *os;

    np_step_figures_init(&js);
    for (int i = 0; i < 6; i++) {
        np_sample_init(&s);
        s.t = i;
        s.processes = 1;
        s.have_proc = true;
        s.have_irq = every_interval || i == 0 || i == 5;
        if (s.have_irq) {
            s.interrupts = 1000 + 37u * (unsigned)(i * i);
            s.softirqs = 500 + 11u * (unsigned)i;
        } else {
            snprintf(s.irq_reason, sizeof(s.irq_reason), "not read at this interval");
        }
        ck_assert_int_eq(np_step_figures_add(&js, &s), 0);
    }
    r = np_report_new(&meta, &js, true);
    os = json_incref(json_object_get(r, "os_interference"));
    json_decref(r);
    np_step_figures_fini(&js);
    return os;
}

START_TEST(test_irq_first_and_last_suffice)
{
    json_t *every = irq_report(true), *lazy = irq_report(false);

    ck_assert_ptr_nonnull(json_object_get(every, "interrupts_on_cpus"));
    ck_assert_double_eq_tol(
        json_real_value(json_object_get(json_object_get(every, "interrupts_on_cpus"), "per_s")),
        37.0 * 25 / 5, 1e-9);
    ck_assert_msg(json_equal(every, lazy), "the report differs when only first and last are read");
    json_decref(every);
    json_decref(lazy);
}
END_TEST

START_TEST(test_local_share)
{
    struct np_step_figures js;
    struct np_job_meta meta = {.job_id = 7, .interval_s = 1};
    json_t *r, *share;

    np_step_figures_init(&js);
    js.local_nodes = local_cases[_i].local_nodes;
    for (int k = 0; k < local_cases[_i].nreadings; k++) {
        struct np_sample s;
        np_sample_init(&s);
        s.t = local_cases[_i].readings[k].t;
        s.have_pages = true;
        s.node_bytes[0] = local_cases[_i].readings[k].on0;
        s.node_bytes[1] = local_cases[_i].readings[k].on1;
        ck_assert_int_eq(np_step_figures_add(&js, &s), 0);
    }
    {
        struct np_sample s;
        np_sample_init(&s);
        s.t = local_cases[_i].last_t;
        ck_assert_int_eq(np_step_figures_add(&js, &s), 0);
    }
    r = np_report_new(&meta, &js, true);
    share = json_object_get(json_object_get(r, "pages"), "local_share");
    ck_assert_msg(share != NULL, "%s: no pages.local_share", local_cases[_i].name);
    if (local_cases[_i].expect < 0) {
        ck_assert_msg(json_is_string(json_object_get(share, "unavailable")), "%s: not unavailable",
                      local_cases[_i].name);
        ck_assert_ptr_null(json_object_get(share, "value"));
    } else {
        ck_assert_msg(fabs(num(share, "value") - local_cases[_i].expect) < 1e-9, "%s: %g, not %g",
                      local_cases[_i].name, num(share, "value"), local_cases[_i].expect);
    }
    json_decref(r);
    np_step_figures_fini(&js);
}
END_TEST

/* pages.by_tier: on a node of tiers, the last reading's bytes summed by tier; absent on one. */
START_TEST(test_pages_by_tier)
{
    struct np_step_figures js;
    struct np_job_meta meta = {.job_id = 7, .interval_s = 1};
    struct np_sample s;
    json_t *r, *by_tier;

    np_step_figures_init(&js);
    np_sample_init(&s);
    s.t = 1;
    s.have_pages = true;
    s.node_bytes[0] = 100; /* DRAM, tier 1 */
    s.node_bytes[1] = 50;  /* DRAM, tier 1 */
    s.node_bytes[2] = 30;  /* HBM, tier 0 */
    ck_assert_int_eq(np_step_figures_add(&js, &s), 0);
    if (_i) {
        meta.node_tier[0] = meta.node_tier[1] = 1;
        meta.node_tier[3] = 2; /* a tier with no pages of the step: not listed */
    }
    r = np_report_new(&meta, &js, true);
    by_tier = json_object_get(json_object_get(r, "pages"), "by_tier");
    if (!_i) {
        ck_assert_ptr_null(by_tier);
    } else {
        ck_assert_uint_eq(json_object_size(by_tier), 2);
        ck_assert_int_eq(json_integer_value(json_object_get(by_tier, "0")), 30);
        ck_assert_int_eq(json_integer_value(json_object_get(by_tier, "1")), 150);
    }
    json_decref(r);
    np_step_figures_fini(&js);
}
END_TEST

/* A step's effective CPUs and their nodes through the trace: on the job line, and on the sample
 * where they changed after it; a replay's report says what the helper's said. A trace without
 * them (older) keeps the job line's local_nodes. */
static const struct {
    const char *name;
    bool narrowed_later; /* a sample line carries new effective CPUs */
    bool older;          /* written before effective_cpus existed */
    const char *effective;
    int nlocal;
} cpus_traces[] = {
    {"narrowed after the job line", true, false, "0-3", 1},
    {"as on the job line", false, false, "0-7", 2},
    {"older trace: no effective CPUs", false, true, NULL, 2},
};

START_TEST(test_trace_effective_cpus)
{
    struct np_job_meta meta = {.job_id = 9, .interval_s = 1, .local_nodes = 0x3};
    struct collected c = {0};
    struct np_err err = {0};
    FILE *f = tmpfile();
    json_t *r;

    ck_assert_ptr_nonnull(f);
    snprintf(meta.cpus, sizeof(meta.cpus), "0-7");
    if (!cpus_traces[_i].older) {
        snprintf(meta.effective_cpus, sizeof(meta.effective_cpus), "0-7");
        meta.registered_nodes = 0x3;
    }
    for (int k = 0; k < 3; k++) {
        struct np_sample s;
        np_sample_init(&s);
        s.t = k;
        s.have_pages = true;
        s.node_bytes[0] = s.node_bytes[1] = 100;
        json_t *line = k == 0 ? np_trace_job_line(&meta) : NULL;
        if (line) {
            json_dumpf(line, f, JSON_COMPACT);
            fputc('\n', f);
            json_decref(line);
        }
        line = np_trace_sample_line(9, 0, &s, 0);
        if (k == 1 && cpus_traces[_i].narrowed_later) {
            snprintf(meta.effective_cpus, sizeof(meta.effective_cpus), "0-3");
            meta.local_nodes = 0x1;
            np_trace_sample_cpus(line, &meta);
        }
        json_dumpf(line, f, JSON_COMPACT);
        fputc('\n', f);
        json_decref(line);
    }
    rewind(f);
    ck_assert_msg(np_trace_replay(f, "cpus.jsonl", collect, &c, &err) == 1, "%s", err.msg);
    fclose(f);
    r = c.reports[0];
    ck_assert_int_eq(np_report_check(r, &err), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(r, "local_nodes")), cpus_traces[_i].nlocal);
    ck_assert_str_eq(str_at(r, "cpus"), "0-7");
    if (cpus_traces[_i].effective) {
        ck_assert_str_eq(str_at(r, "effective_cpus"), cpus_traces[_i].effective);
        ck_assert_uint_eq(json_array_size(json_object_get(r, "registered_nodes")), 2);
    } else {
        ck_assert_ptr_null(json_object_get(r, "effective_cpus"));
        ck_assert_ptr_null(json_object_get(r, "registered_nodes"));
    }
    json_decref(r);
}
END_TEST

/* The timeline stays bounded and still spans the whole run; events are capped too. */
START_TEST(test_timeline_bounded)
{
    struct np_step_figures js;
    struct np_job_meta meta = {.job_id = 8, .interval_s = 1};
    json_t *r, *tl, *t;

    np_step_figures_init(&js);
    for (int k = 0; k < 1000; k++) {
        struct np_sample s;
        np_sample_init(&s);
        s.t = k;
        s.have_pages = true;
        s.node_bytes[(k / 100) % 2] = (uint64_t)k << 20;
        ck_assert_int_eq(np_step_figures_add(&js, &s), 0);
    }
    for (int k = 0; k < NP_TIMELINE_MAX_EVENTS + 5; k++)
        np_step_figures_event(&js, k, "0->1 1 MiB");
    r = np_report_new(&meta, &js, true);
    tl = json_object_get(r, "timeline");
    t = json_object_get(tl, "t");
    ck_assert_uint_le(json_array_size(t), NP_TIMELINE_MAX_POINTS);
    ck_assert_uint_ge(json_array_size(t), NP_TIMELINE_MAX_POINTS / 2);
    ck_assert_double_eq(json_number_value(json_array_get(t, 0)), 0);
    ck_assert_double_ge(json_number_value(json_array_get(t, json_array_size(t) - 1)), 990);
    ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(tl, "node_bytes"), "1")),
                      json_array_size(t));
    ck_assert_uint_eq(json_array_size(json_object_get(tl, "events")), NP_TIMELINE_MAX_EVENTS);
    /* no counters in these samples: the bandwidth and CPI series are null, with the reason */
    ck_assert(json_is_null(json_array_get(json_object_get(tl, "cpi"), 0)));
    ck_assert(json_is_string(json_object_get(tl, "cpi_note")));
    ck_assert(json_is_string(json_object_get(tl, "bandwidth_note")));
    json_decref(r);
    np_step_figures_fini(&js);
}
END_TEST

static const struct {
    const char *schema;
    int rc;
} minors[] = {
    {"numaplace.report/1", 0},        {"numaplace.report/1.1", 0},
    {"numaplace.report/1.12", 0},     {"numaplace.report/10", -EPROTO},
    {"numaplace.report/1.", -EPROTO}, {"numaplace.report/1.1x", -EPROTO},
    {"numaplace.report/1x", -EPROTO}, {"numaplace.report/2", -EPROTO},
};

START_TEST(test_report_check)
{
    struct np_err err = {0};
    json_t *other = json_pack("{s:s}", "schema", "numaplace.report/2");
    json_t *none = json_object();

    ck_assert_int_eq(np_report_check(other, &err), -EPROTO);
    ck_assert_ptr_nonnull(strstr(err.msg, "report schema numaplace.report/2"));
    ck_assert_int_eq(np_report_check(none, &err), -EINVAL);
    /* /1 and its minor versions are read; another major, or a minor that is no number, not */
    for (size_t i = 0; i < sizeof(minors) / sizeof(minors[0]); i++) {
        json_t *r = json_pack("{s:s}", "schema", minors[i].schema);
        ck_assert_msg(np_report_check(r, &err) == minors[i].rc, "%s", minors[i].schema);
        json_decref(r);
    }
    json_decref(other);
    json_decref(none);
    ck_assert_str_eq(np_step_name(NP_STEP_BATCH), "batch");
    ck_assert_str_eq(np_step_name(7), "7");
}
END_TEST

/* A report with auto's facts (a task's "auto" member) and one from before them: both are read
 * (numaplace.report/1 and /1.1); the facts and the class_prediction read back as the fields
 * they were written from. */
static const struct {
    const char *fixture;
    bool has_facts;
    const char *sensitivity;
    uint64_t task_nodes, allowed_nodes, loaded_nodes;
} auto_reports[] = {
    {"report-auto.json", false, "", 0, 0, 0},
    {"report-auto-facts.json", true, "unknown", 0x1, 0x3, 0x1},
    {"report-auto-facts-1.0.json", true, "unknown", 0x1, 0x3, 0x1},
};

START_TEST(test_auto_facts_read)
{
    json_t *r = json_load_file(np_test_fixture(auto_reports[_i].fixture), 0, NULL);
    json_t *task = json_array_get(json_object_get(json_object_get(r, "policy"), "tasks"), 0);
    struct np_applied_auto facts;
    struct np_err err = {0};
    json_t *summary = np_summary_new(300);

    ck_assert_ptr_nonnull(task);
    ck_assert_msg(np_report_check(r, &err) == 0, "%s", err.msg);
    /* a summary reads it: its one task's policy */
    ck_assert_msg(np_summary_add_report(summary, r, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(summary, "policy_applied"), "local")),
        1);
    json_decref(summary);
    ck_assert_int_eq(np_proto_applied_auto_from_json(json_object_get(task, "auto"), &facts, NULL) ==
                         0,
                     auto_reports[_i].has_facts);
    ck_assert_str_eq(facts.sensitivity, auto_reports[_i].sensitivity);
    ck_assert_uint_eq(facts.task_nodes, auto_reports[_i].task_nodes);
    ck_assert_uint_eq(facts.allowed_nodes, auto_reports[_i].allowed_nodes);
    ck_assert_uint_eq(facts.loaded_nodes, auto_reports[_i].loaded_nodes);
    {
        struct np_class_prediction p;
        json_t *j = json_object_get(r, "class_prediction");
        ck_assert_int_eq(np_class_prediction_from_json(j, &p), 0);
        ck_assert_int_eq(p.known, j != NULL);
        if (p.known) { /* the words class_source says are the fields' */
            char text[192];
            json_t *again = np_class_prediction_json(&p);
            np_class_prediction_text(&p, text, sizeof(text));
            ck_assert_str_eq(text, json_string_value(json_object_get(r, "class_source")));
            ck_assert(json_equal(again, j));
            json_decref(again);
        }
    }
    if (facts.given) { /* written as numaplaced writes them, they read back the same */
        json_t *again = np_proto_applied_auto_json(&facts);
        ck_assert(json_equal(again, json_object_get(task, "auto")));
        json_decref(again);
    }
    json_decref(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");

    tcase_add_test(tc, test_replay_hw_trace);
    tcase_add_loop_test(tc, test_replay_bad, 0, (int)(sizeof(bad_traces) / sizeof(bad_traces[0])));
    tcase_add_test(tc, test_sample_round_trip);
    tcase_add_test(tc, test_exited_processes_keep_figures);
    tcase_add_test(tc, test_multiplexed_counts_said);
    tcase_add_loop_test(tc, test_processes_cut_is_said, 0, 2);
    tcase_add_loop_test(tc, test_counters_accumulate, 0,
                        (int)(sizeof(counted_cases) / sizeof(counted_cases[0])));
    tcase_add_test(tc, test_report_check);
    tcase_add_test(tc, test_late_counters_are_said);
    tcase_add_loop_test(tc, test_auto_facts_read, 0,
                        sizeof(auto_reports) / sizeof(auto_reports[0]));
    tcase_add_loop_test(tc, test_local_share, 0,
                        (int)(sizeof(local_cases) / sizeof(local_cases[0])));
    tcase_add_loop_test(tc, test_pages_by_tier, 0, 2);
    tcase_add_test(tc, test_timeline_bounded);
    tcase_add_loop_test(tc, test_trace_effective_cpus, 0,
                        (int)(sizeof(cpus_traces) / sizeof(cpus_traces[0])));
    tcase_add_test(tc, test_irq_first_and_last_suffice);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
