/*
 * numaplaced's Prometheus page rendered from a daemon state built here: every family of the
 * contract with HELP and TYPE, the figures the state holds, label values escaped (user and job
 * names are untrusted), series only where measured, and an ended step's series gone.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "metrics_text.h"
#include "user_names.h"
#include "np_daemon_test.h"

static struct np_test_daemon t;
static struct np_daemon_job *measured, *bare;
static uint64_t page_size;

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* This process's files in the root (the process_* families): 250 + 50 ticks of CPU, started
 * 1000 ticks after a boot at 1700000000, 2048 kB resident, 3 descriptors, a limit of 4096. */
static void make_process_files(void)
{
    char path[1024];

    snprintf(path, sizeof(path), "%s/root/proc/%d/fd", t.dir, (int)getpid());
    ck_assert_int_eq(np_daemon_mkdir_p(path, 0755), 0);
    for (int fd = 0; fd < 3; fd++) {
        snprintf(path, sizeof(path), "%s/root/proc/%d/fd/%d", t.dir, (int)getpid(), fd);
        write_file(path, "");
    }
    snprintf(path, sizeof(path), "%s/root/proc/%d/stat", t.dir, (int)getpid());
    write_file(path, "42 (numaplaced) S 1 42 42 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 3 0 1000 "
                     "100000000 512 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
    snprintf(path, sizeof(path), "%s/root/proc/%d/status", t.dir, (int)getpid());
    write_file(path, "Name:\tnumaplaced\nTgid:\t42\nVmRSS:\t    2048 kB\n");
    snprintf(path, sizeof(path), "%s/root/proc/%d/limits", t.dir, (int)getpid());
    write_file(path, "Limit                     Soft Limit           Hard Limit           Units\n"
                     "Max open files            4096                 524288               files\n");
    snprintf(path, sizeof(path), "%s/root/proc/stat", t.dir);
    write_file(path, "cpu  1 2 3 4 5 6 7 0 0 0\nbtime 1700000000\nprocesses 99\n");
}

/* A root with two NUMA nodes' meminfo: node 0 2 GiB (1 GiB free), node 1 1 GiB (256 MiB free). */
static void make_root(void)
{
    char path[1024];

    snprintf(t.d->cfg.proc_root, sizeof(t.d->cfg.proc_root), "%s/root", t.dir);
    for (int n = 0; n < 2; n++) {
        snprintf(path, sizeof(path), "%s/root/sys/devices/system/node/node%d", t.dir, n);
        ck_assert_int_eq(np_daemon_mkdir_p(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/root/sys/devices/system/node/node%d/meminfo", t.dir, n);
        write_file(path, n == 0 ? "Node 0 MemTotal: 2097152 kB\nNode 0 MemFree: 1048576 kB\n"
                                : "Node 1 MemTotal: 1048576 kB\nNode 1 MemFree: 262144 kB\n");
    }
    make_process_files();
}

static void setup(void)
{
    struct np_err err = {0};

    np_test_daemon_init(&t);
    page_size = (uint64_t)sysconf(_SC_PAGESIZE);
    ck_assert_int_eq(
        np_topology_load(&t.d->topology, NP_TOPOLOGY_SYNTHETIC, "pack:2 numa:1 core:1 pu:1", &err),
        0);
    make_root();
    t.d->hw_counters = false;
    snprintf(t.d->hw_off_reason, sizeof(t.d->hw_off_reason), "no hardware PMU (virtual machine)");
    t.d->hw_off_why = NP_PERF_WHY_NO_PMU;
    /* A step with every figure measured, and one with none yet. */
    measured = job_new(t.d, 1234, 0, 0, "", "local", "high", &err);
    bare = job_new(t.d, 77, NP_STEP_BATCH, 0, "", "", "low", &err);
    ck_assert_ptr_nonnull(measured);
    ck_assert_ptr_nonnull(bare);
    snprintf(measured->user, sizeof(measured->user), "alice");
    snprintf(bare->user, sizeof(bare->user), "bob");
    measured->user_known = bare->user_known = true;
    /* a live task: the memory-node traffic counts running steps only */
    measured->sampler.npids = 1;
    measured->sampler.pids = calloc(1, sizeof(pid_t));
    measured->sampler.starttimes = calloc(1, sizeof(uint64_t));
    ck_assert_ptr_nonnull(measured->sampler.pids);
    ck_assert_ptr_nonnull(measured->sampler.starttimes);
    measured->sampler.pids[0] = NP_TEST_LIVE_PID;
    measured->stats.page_samples = 1;
    measured->stats.pages_end[0] = 10 * page_size;
    measured->stats.pages_end[1] = 5 * page_size;
    measured->stats.local_nodes = 1;
    measured->stats.local_share_readings = 1;
    measured->stats.local_share_last = 0.75;
    measured->stats.cpi = malloc(sizeof(double));
    ck_assert_ptr_nonnull(measured->stats.cpi);
    measured->stats.cpi[0] = 1.5;
    measured->stats.ncpi = measured->stats.cpi_cap = 1;
    measured->stats.bw_intervals = 1;
    measured->stats.bw_last[0] = 1e9;
    measured->stats.bw_last[1] = 2e9;
    measured->stats.bw_last_total = 3e9;
    measured->stats.traffic_bytes_total = 123456789012ull;
    measured->stats.counted_intervals = 2;
    measured->stats.cycles_total = 3000;
    measured->stats.instructions_total = 2000;
    t.d->totals.pages_moved[NP_TRIGGER_PRESSURE][migration_order_index("best")] = 42;
    t.d->totals.requests[NP_TRIGGER_ADMIN][NP_OUTCOME_DRY_RUN] = 3;
    t.d->totals.failed_pages[NP_MOVE_FAIL_BUSY] = 7;
    t.d->totals.samples = 99;
    t.d->totals.sampling_cpu_s = 1.5;
    t.d->totals.reports_held = 4;
    t.d->totals.reports_lost = 1;
    t.d->totals.spool_write_failures = 6;
    t.d->totals.connections_refused = 8;
    t.d->totals.scrapes_refused = 9;
}

static void teardown(void)
{
    np_test_daemon_fini(&t);
}

/* The page, rendered now. Free it. */
static char *render(void)
{
    struct metrics_text page;

    ck_assert_int_eq(metrics_render(t.d, &page), 0);
    ck_assert_ptr_nonnull(page.buf);
    ck_assert_uint_eq(strlen(page.buf), page.len);
    return page.buf;
}

/* Is @p line one whole line of @p page? */
static bool has_line(const char *page, const char *line)
{
    const size_t n = strlen(line);

    for (const char *p = strstr(page, line); p; p = strstr(p + 1, line))
        if ((p == page || p[-1] == '\n') && p[n] == '\n')
            return true;
    return false;
}

/* Every family of the contract (numaplaced(8), METRICS), with its type. */
static const struct {
    const char *name, *type;
} families[] = {
    {"numaplace_node_memory_total_bytes", "gauge"},
    {"numaplace_node_memory_free_bytes", "gauge"},
    {"numaplace_node_memory_traffic_bytes_total", "counter"},
    {"numaplace_counters_available", "gauge"},
    {"numaplace_counters_info", "gauge"},
    {"numaplace_moved_bytes_total", "counter"},
    {"numaplace_migration_requests_total", "counter"},
    {"numaplace_move_failed_bytes_total", "counter"},
    {"numaplace_build_info", "gauge"},
    {"numaplace_sampling_seconds_total", "counter"},
    {"numaplace_samples_total", "counter"},
    {"numaplace_steps", "gauge"},
    {"numaplace_scrape_render_seconds", "gauge"},
    {"numaplace_reports_in_memory", "gauge"},
    {"numaplace_reports_held_total", "counter"},
    {"numaplace_reports_lost_total", "counter"},
    {"numaplace_spool_write_failures_total", "counter"},
    {"numaplace_connections_refused_total", "counter"},
    {"numaplace_scrapes_refused_total", "counter"},
    {"process_cpu_seconds_total", "counter"},
    {"process_start_time_seconds", "gauge"},
    {"process_resident_memory_bytes", "gauge"},
    {"process_open_fds", "gauge"},
    {"process_max_fds", "gauge"},
    {"numaplace_step_memory_bytes", "gauge"},
    {"numaplace_step_local_ratio", "gauge"},
    {"numaplace_step_info", "gauge"},
    {"numaplace_step_cycles_total", "counter"},
    {"numaplace_step_instructions_total", "counter"},
    {"numaplace_step_memory_traffic_bytes_total", "counter"},
    {"numaplace_step_series_left_out", "gauge"},
};

START_TEST(family_has_help_and_type)
{
    char *page = render(), line[256], *help;

    snprintf(line, sizeof(line), "# TYPE %s %s", families[_i].name, families[_i].type);
    ck_assert_msg(has_line(page, line), "no \"%s\"", line);
    snprintf(line, sizeof(line), "# HELP %s ", families[_i].name);
    help = strstr(page, line);
    ck_assert_msg(help && strlen(help) > strlen(line) + 10, "no help for %s", families[_i].name);
    free(page);
}
END_TEST

/* The figures of the state built in setup(), line by line. */
static const char *const expected_lines[] = {
    "numaplace_node_memory_total_bytes{node=\"0\"} 2147483648",
    "numaplace_node_memory_total_bytes{node=\"1\"} 1073741824",
    "numaplace_node_memory_free_bytes{node=\"0\"} 1073741824",
    "numaplace_node_memory_free_bytes{node=\"1\"} 268435456",
    "numaplace_counters_available 0",
    "numaplace_counters_info{reason=\"no_pmu\"} 1",
    "numaplace_migration_requests_total{trigger=\"admin\",outcome=\"dry_run\"} 3",
    "numaplace_migration_requests_total{trigger=\"bandwidth\",outcome=\"failed\"} 0",
    "numaplace_samples_total 99",
    "numaplace_sampling_seconds_total 1.5",
    "numaplace_steps 2",
    "numaplace_reports_in_memory 0",
    "numaplace_reports_held_total 4",
    "numaplace_reports_lost_total 1",
    "numaplace_spool_write_failures_total 6",
    "numaplace_connections_refused_total 8",
    "numaplace_scrapes_refused_total 9",
    "process_start_time_seconds 1700000010.00", /* at Linux's 100 ticks a second */
    "process_cpu_seconds_total 3",
    "process_resident_memory_bytes 2097152",
    "process_open_fds 3",
    "process_max_fds 4096",
    /* pages_end is bytes already: 10 and 5 pages */
    "numaplace_step_local_ratio{jobid=\"1234\",step=\"0\"} 0.75",
    "numaplace_step_info{jobid=\"1234\",step=\"0\",user=\"alice\",class=\"high\",policy=\"local\"} "
    "1",
    "numaplace_step_info{jobid=\"77\",step=\"batch\",user=\"bob\",class=\"low\",policy=\"unknown\"}"
    " 1",
    "numaplace_step_cycles_total{jobid=\"1234\",step=\"0\"} 3000",
    "numaplace_step_instructions_total{jobid=\"1234\",step=\"0\"} 2000",
    "numaplace_step_memory_traffic_bytes_total{jobid=\"1234\",step=\"0\"} 123456789012",
    "numaplace_step_series_left_out 0",
};

/* Sizes in bytes at the page size the daemon reads (sysconf), not an assumed 4 KiB. */
START_TEST(sizes_are_bytes)
{
    char *page = render(), line[256];
    const unsigned long long p = page_size;

    snprintf(line, sizeof(line),
             "numaplace_step_memory_bytes{jobid=\"1234\",step=\"0\",node=\"0\"} %llu", 10 * p);
    ck_assert_msg(has_line(page, line), "no \"%s\"", line);
    snprintf(line, sizeof(line),
             "numaplace_step_memory_bytes{jobid=\"1234\",step=\"0\",node=\"1\"} %llu", 5 * p);
    ck_assert_msg(has_line(page, line), "no \"%s\"", line);
    snprintf(line, sizeof(line),
             "numaplace_moved_bytes_total{trigger=\"memory_pressure\",order=\"best\"} %llu",
             42 * p);
    ck_assert_msg(has_line(page, line), "no \"%s\"", line);
    ck_assert(
        has_line(page, "numaplace_moved_bytes_total{trigger=\"admin\",order=\"best_plus\"} 0"));
    snprintf(line, sizeof(line), "numaplace_move_failed_bytes_total{cause=\"busy\"} %llu", 7 * p);
    ck_assert_msg(has_line(page, line), "no \"%s\"", line);
    free(page);
}
END_TEST

/* Prometheus's conventions over the whole page: no rate gauge, no page unit, no sentence as a
 * label value (codes in snake_case), the user only on numaplace_step_info, the version. */
START_TEST(page_follows_conventions)
{
    char *page = render();
    unsigned series = 0;

    for (const char *p = page; *p; p = strchr(p, '\n') + 1) {
        const char *brace = strchr(p, '{'), *eol = strchr(p, '\n');
        const size_t name_len = strcspn(p, "{ ");
        if (*p == '#')
            continue;
        ck_assert_msg(!memmem(p, name_len, "_per_second", 11) && !memmem(p, name_len, "pages", 5) &&
                          !memmem(p, name_len, "_per_", 5),
                      "a rate or a page unit: %.*s", (int)(eol - p), p);
        if (!brace || brace > eol)
            continue;
        series++;
        ck_assert_msg(!memchr(brace, ' ', (size_t)(strchr(brace, '}') - brace)),
                      "a label value with a space: %.*s", (int)(eol - p), p);
        ck_assert_msg(strncmp(p, "numaplace_step_info{", 20) == 0 ||
                          !memmem(p, (size_t)(eol - p), "user=", 5),
                      "user label off numaplace_step_info: %.*s", (int)(eol - p), p);
        ck_assert_msg(!memchr(brace, '-', (size_t)(strchr(brace, '}') - brace)) ||
                          strncmp(p, "numaplace_step_info{", 20) == 0,
                      "a label value not in snake_case: %.*s", (int)(eol - p), p);
    }
    ck_assert_uint_gt(series, 50);
    ck_assert_ptr_nonnull(strstr(page, "\nnumaplace_build_info{version=\""));
    ck_assert_ptr_null(strstr(page, "numaplace_build_info{version=\"unknown\"}"));
    free(page);
}
END_TEST

START_TEST(figures_are_rendered)
{
    char *page = render();

    ck_assert_msg(has_line(page, expected_lines[_i]), "no line \"%s\" in:\n%.1500s",
                  expected_lines[_i], page);
    free(page);
}
END_TEST

/* What was not measured has no series (never a made-up 0). */
static const char *const absent[] = {
    "numaplace_step_memory_bytes{jobid=\"77\"",
    "numaplace_step_local_ratio{jobid=\"77\"",
    "numaplace_step_cycles_total{jobid=\"77\"",
    "numaplace_step_instructions_total{jobid=\"77\"",
    "numaplace_step_memory_traffic_bytes_total{jobid=\"77\"",
    /* no hardware counters here and no memory controller counted: no node traffic */
    "numaplace_node_memory_traffic_bytes_total{",
};

START_TEST(unmeasured_has_no_series)
{
    char *page = render();

    ck_assert_msg(!strstr(page, absent[_i]), "\"%s\" in:\n%.1500s", absent[_i], page);
    free(page);
}
END_TEST

/* A node's traffic is a counter of bytes: a step's interval spread over the memory holding its
 * pages (10 on node 0, 5 on node 1), not over its CPUs' nodes; summed over intervals, so it only
 * grows; shown with the hardware counters (source misses) or the node's memory controllers
 * (source uncore, which take over that node), absent with neither. */
START_TEST(node_traffic_is_counted)
{
    int cpu_node[2] = {0, 1};
    char *page;

    sampling_count_node_traffic(t.d, measured, 3000);
    sampling_count_node_traffic(t.d, measured, 300);
    sampling_count_node_traffic(t.d, bare, 5000); /* no pages read: not attributed */
    page = render();
    ck_assert_ptr_null(strstr(page, "numaplace_node_memory_traffic_bytes_total{"));
    ck_assert(has_line(page, "# TYPE numaplace_node_memory_traffic_bytes_total counter"));
    free(page);
    t.d->hw_counters = true;
    page = render();
    ck_assert(has_line(
        page, "numaplace_node_memory_traffic_bytes_total{node=\"0\",source=\"misses\"} 2200"));
    ck_assert(has_line(
        page, "numaplace_node_memory_traffic_bytes_total{node=\"1\",source=\"misses\"} 1100"));
    ck_assert(has_line(page, "numaplace_counters_info{reason=\"none\"} 1"));
    free(page);
    /* a memory controller counted on CPU 1 (node 1) */
    t.d->cpu_node = malloc(sizeof(cpu_node));
    ck_assert_ptr_nonnull(t.d->cpu_node);
    memcpy(t.d->cpu_node, cpu_node, sizeof(cpu_node));
    t.d->ncpus = 2;
    t.d->uncore.boxes = calloc(1, sizeof(*t.d->uncore.boxes));
    ck_assert_ptr_nonnull(t.d->uncore.boxes);
    t.d->uncore.boxes[0].cpu = 1;
    t.d->uncore.boxes[0].fd[0] = t.d->uncore.boxes[0].fd[1] = -1;
    t.d->uncore.nboxes = 1;
    t.d->totals.uncore_bytes[1] = 987654321;
    page = render();
    ck_assert(has_line(
        page, "numaplace_node_memory_traffic_bytes_total{node=\"0\",source=\"misses\"} 2200"));
    ck_assert(has_line(
        page, "numaplace_node_memory_traffic_bytes_total{node=\"1\",source=\"uncore\"} 987654321"));
    ck_assert_ptr_null(strstr(page, "{node=\"1\",source=\"misses\"}"));
    free(page);
}
END_TEST

/* metrics_step_series: every step (on), none (off), or the first N by (jobid, step); the left-out
 * ones counted. The node's families stay. */
static const struct {
    const char *setting;
    bool has77, has1234;
    const char *left;
} capped[] = {
    {"on", true, true, "numaplace_step_series_left_out 0"},
    {"1", true, false, "numaplace_step_series_left_out 1"},
    {"2", true, true, "numaplace_step_series_left_out 0"},
    {"off", false, false, "numaplace_step_series_left_out 2"},
};

START_TEST(step_series_can_be_capped)
{
    struct np_err err = {0};
    char *page;

    ck_assert_int_eq(
        np_helper_config_set(&t.d->cfg, "metrics_step_series", capped[_i].setting, &err), 0);
    page = render();
    ck_assert_msg(!strstr(page, "jobid=\"77\"") == !capped[_i].has77, "%s", capped[_i].setting);
    ck_assert_msg(!strstr(page, "jobid=\"1234\"") == !capped[_i].has1234, "%s", capped[_i].setting);
    ck_assert_msg(has_line(page, capped[_i].left), "no \"%s\"", capped[_i].left);
    ck_assert(has_line(page, "numaplace_steps 2"));
    ck_assert(has_line(page, "# TYPE numaplace_step_info gauge"));
    free(page);
}
END_TEST

/* User names reach the page from the password database and policy names from the plugin:
 * neither may break a line or a label. */
static const struct {
    const char *user, *escaped;
} hostile[] = {
    {"a\"b", "a\\\"b"},
    {"a\\b", "a\\\\b"},
    {"a\nnumaplace_steps 1000", "a\\nnumaplace_steps 1000"},
    {"x\"} 1\nnumaplace_steps{a=\"", "x\\\"} 1\\nnumaplace_steps{a=\\\""},
    {"tab\there", "tab?here"},
    {"bad\xff\xfeutf8", "bad??utf8"},
    {"cut\xc3", "cut?"},
    {"s\xed\xa0\x80urrogate", "s???urrogate"},
    {"jos\xc3\xa9", "jos\xc3\xa9"},
    {"\xe2\x82\xac\xf0\x9f\x98\x80", "\xe2\x82\xac\xf0\x9f\x98\x80"},
};

START_TEST(label_values_are_escaped)
{
    char *page, line[512];
    unsigned lines = 0;

    snprintf(measured->user, sizeof(measured->user), "%s", hostile[_i].user);
    measured->user_known = true;
    snprintf(measured->meta.policy_requested, sizeof(measured->meta.policy_requested), "%s",
             hostile[_i].user);
    page = render();
    /* the policy is a code: a name the plugin sent that is not one is "other" */
    snprintf(line, sizeof(line),
             "numaplace_step_info{jobid=\"1234\",step=\"0\",user=\"%s\",class=\"high\","
             "policy=\"other\"} 1",
             hostile[_i].escaped);
    ck_assert_msg(has_line(page, line), "no \"%s\" in:\n%.1500s", line, page);
    /* Nothing was injected: every line is a comment or one of our series. */
    for (const char *p = page; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        ck_assert_msg(*p == '#' || strncmp(p, "numaplace_", 10) == 0 ||
                          strncmp(p, "process_", 8) == 0,
                      "stray line: %.60s", p);
        ck_assert_msg(strncmp(p, "numaplace_steps ", 16) != 0 || strncmp(p + 16, "2\n", 2) == 0,
                      "forged numaplace_steps");
        lines++;
    }
    ck_assert_uint_gt(lines, 50);
    free(page);
}
END_TEST

/* A step's series end with it: ended (still in the registry for its last sample) or removed. */
START_TEST(ended_step_series_are_gone)
{
    char *page = render();

    ck_assert_ptr_nonnull(strstr(page, "jobid=\"1234\""));
    free(page);
    measured->ended = true;
    page = render();
    ck_assert_ptr_null(strstr(page, "jobid=\"1234\""));
    free(page);
    ck_assert_int_eq(registry_remove(&t.d->registry, measured), 0);
    job_free(measured);
    page = render();
    ck_assert_ptr_null(strstr(page, "jobid=\"1234\""));
    ck_assert_ptr_nonnull(strstr(page, "jobid=\"77\""));
    ck_assert(has_line(page, "numaplace_steps 1"));
    free(page);
}
END_TEST

/* A step with no user name yet: the scrape never asks the name service (a slow one would stall
 * the loop); it shows the uid until a thread of its own found the name, then the name. */
START_TEST(user_name_is_looked_up_once)
{
    const double deadline = np_monotonic_s() + 10;
    char *page;

    measured->user_known = bare->user_known = false;
    measured->meta.uid = 0;
    bare->meta.uid = 4000000001u; /* no such user */
    page = render();
    if (!measured->user_known) /* the lookup is not done at the scrape */
        ck_assert_ptr_nonnull(strstr(page, "jobid=\"1234\",step=\"0\",user=\"0\""));
    ck_assert_ptr_nonnull(strstr(page, "jobid=\"77\",step=\"batch\",user=\"4000000001\""));
    free(page);
    while (!user_name_get(0, (char[64]){0}, 64) && np_monotonic_s() < deadline)
        usleep(10000);
    page = render();
    ck_assert_ptr_nonnull(strstr(page, "jobid=\"1234\",step=\"0\",user=\"root\""));
    free(page);
    ck_assert_str_eq(measured->user, "root");
}
END_TEST

/* Migration results are counted where they are booked: by trigger and order, by outcome, and
 * failed pages by cause. */
static const struct {
    enum np_trigger_kind trigger;
    int rc;
    bool dry_run;
    uint64_t requested, moved;
    const char *outcome, *label; /* the trigger's code on the page */
} booked[] = {
    {NP_TRIGGER_HOMECOMING, 0, false, 100, 100, "done", "homecoming"},
    {NP_TRIGGER_PRESSURE, 0, false, 100, 60, "short", "memory_pressure"},
    {NP_TRIGGER_BANDWIDTH, -EINVAL, false, 100, 0, "failed", "bandwidth"},
    {NP_TRIGGER_ADMIN, 0, true, 100, 0, "dry_run", "admin"},
};

START_TEST(migration_results_are_counted)
{
    struct migrator_done done = {0};
    char *page, line[256];
    const uint64_t before = t.d->totals.requests[booked[_i].trigger][NP_OUTCOME_DRY_RUN];

    done.trigger = booked[_i].trigger;
    done.rc = booked[_i].rc;
    done.view = migrator_view_new(1);
    ck_assert_ptr_nonnull(done.view);
    done.result.request = (struct np_request){
        .pages = booked[_i].requested, .trigger = booked[_i].trigger, .target_job = -1};
    done.result.order = "worst";
    done.result.dry_run = booked[_i].dry_run;
    done.result.moved = booked[_i].moved;
    done.result.outcomes = calloc(1, sizeof(*done.result.outcomes));
    ck_assert_ptr_nonnull(done.result.outcomes);
    done.result.noutcomes = 1;
    done.result.outcomes[0].moved.pages_failed[NP_MOVE_FAIL_NOMEM] = 40;
    migration_book(t.d, &done, 1000.0);
    migrator_done_fini(&done);
    page = render();
    snprintf(line, sizeof(line),
             "numaplace_migration_requests_total{trigger=\"%s\",outcome=\"%s\"} %d",
             booked[_i].label, booked[_i].outcome,
             strcmp(booked[_i].outcome, "dry_run") == 0 ? (int)before + 1 : 1);
    ck_assert_msg(has_line(page, line), "no \"%s\"", line);
    snprintf(line, sizeof(line), "numaplace_moved_bytes_total{trigger=\"%s\",order=\"worst\"} %llu",
             booked[_i].label,
             booked[_i].rc || booked[_i].dry_run
                 ? 0ull
                 : (unsigned long long)(booked[_i].moved * page_size));
    ck_assert_msg(has_line(page, line), "no \"%s\"", line);
    /* failed and dry-run requests moved nothing, so nothing failed either; the cause is named
     * from the move-failure table, as a code (no-memory-on-destination there) */
    snprintf(line, sizeof(line), "numaplace_move_failed_bytes_total{cause=\"%s\"} %llu",
             "no_memory_on_destination",
             booked[_i].rc || booked[_i].dry_run ? 0ull : (unsigned long long)(40 * page_size));
    ck_assert_msg(has_line(page, line), "no \"%s\"", line);
    free(page);
}
END_TEST

/* Prometheus's own checker (Debian's prometheus package) takes the page, hostile names and
 * all, when it is installed; without it the case says so and passes. */
START_TEST(promtool_accepts_the_page)
{
    char path[512], cmd[1024], *page;
    FILE *f;
    int rc;

    if (system("command -v promtool >/dev/null 2>&1") != 0) {
        fprintf(stderr, "promtool_accepts_the_page: no promtool here; not checked\n");
        return;
    }
    snprintf(measured->user, sizeof(measured->user), "%s", "a\"b\\c\nd\xff");
    measured->user_known = true;
    page = render();
    snprintf(path, sizeof(path), "%s/page.txt", t.dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(page, f);
    fclose(f);
    free(page);
    snprintf(cmd, sizeof(cmd), "promtool check metrics < %s > %s/promtool.out 2>&1", path, t.dir);
    rc = system(cmd);
    snprintf(cmd, sizeof(cmd), "cat %s/promtool.out >&2", t.dir);
    if (rc != 0 && system(cmd) != 0)
        fprintf(stderr, "(no promtool output)\n");
    ck_assert_int_eq(rc, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_metrics");
    TCase *tc = tcase_create("page");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, family_has_help_and_type, 0,
                        (int)(sizeof(families) / sizeof(families[0])));
    tcase_add_loop_test(tc, figures_are_rendered, 0,
                        (int)(sizeof(expected_lines) / sizeof(expected_lines[0])));
    tcase_add_loop_test(tc, unmeasured_has_no_series, 0, (int)(sizeof(absent) / sizeof(absent[0])));
    tcase_add_test(tc, node_traffic_is_counted);
    tcase_add_loop_test(tc, step_series_can_be_capped, 0,
                        (int)(sizeof(capped) / sizeof(capped[0])));
    tcase_add_test(tc, sizes_are_bytes);
    tcase_add_test(tc, page_follows_conventions);
    tcase_add_loop_test(tc, label_values_are_escaped, 0,
                        (int)(sizeof(hostile) / sizeof(hostile[0])));
    tcase_add_test(tc, ended_step_series_are_gone);
    tcase_add_test(tc, user_name_is_looked_up_once);
    tcase_add_loop_test(tc, migration_results_are_counted, 0,
                        (int)(sizeof(booked) / sizeof(booked[0])));
    tcase_add_test(tc, promtool_accepts_the_page);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
