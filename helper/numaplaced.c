/*
 * numaplaced - the per-node helper (numaplaced(8)).
 *
 * One thread, one poll loop: the listening socket and its clients, a timerfd for the sampling
 * interval and a signalfd for SIGHUP (reload) and SIGTERM/SIGINT (clean stop). Data flows one
 * way: registrations from the plugin create jobs; each interval the node counters and every
 * job's sampler fill samples; the samples fold into the job's stats; a step's end turns its stats
 * into a report in the spool.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <hwloc.h>
#include <jansson.h>

#include "migrator.h"
#include "numaplace/engine.h"
#include "numaplace/helperconf.h"
#include "numaplace/migrate.h"
#include "numaplace/migration.h"
#include "numaplace/perf.h"
#include "numaplace/procfs.h"
#include "numaplace/protocol.h"
#include "numaplace/report.h"
#include "numaplace/sampler.h"
#include "numaplace/topology.h"

#define MAX_CLIENTS    64
#define CLIENT_TIMEOUT 2.0 /* seconds a client may take to send its request */
#define MAX_OVERRIDES  64  /* above the number of keys: a flag given twice counts twice */

struct job {
    struct np_job_meta meta;
    struct np_sampler sampler;
    struct np_jobstats stats;
    json_t *tasks;           /* [{task, pid, policy, mode, nodes, cpus}] */
    enum np_class job_class; /* from the label (class_map), or set by an administrator */
    double registered_mono;
    double last_pages_mono, last_detail_mono;
    double homecoming_quiet_until; /* its last homecoming moved nothing: not again before */
    bool traced, ended;
};

struct client {
    int fd;
    uint64_t pending; /* a migrate request waiting for the worker: its tag, else 0 */
    struct ucred cred;
    char buf[NP_PROTO_MAX_MSG + 1];
    size_t len;
    double since;
};

static struct {
    struct np_helper_config cfg;
    char config_path[1024];
    char *overrides[MAX_OVERRIDES][2];
    unsigned noverrides;
    FILE *logfile;
    bool use_syslog;
    struct np_log log;
    struct np_topology *topology;
    int *cpu_node;
    unsigned ncpus;
    unsigned perf_mask;
    char perf_off_reason[NP_REASON_MAX];
    struct np_node_counters counters;
    struct job **jobs;
    unsigned njobs;
    struct client clients[MAX_CLIENTS];
    int listen_fd, timer_fd, signal_fd, pid_fd;
    FILE *trace;
    /* migration: one request at a time in the worker, the rest queued */
    struct migrator *migrator;
    struct queued_request {
        struct np_request request;
        const struct np_order_ops *order;
        bool dry_run;
        uint64_t tag; /* client tag, or 0 for a trigger */
    } queue[16];
    unsigned nqueued;
    uint64_t next_tag;
    unsigned char trigger_state[4][NP_TRIGGER_STATE_SIZE];
    char trigger_inactive[4][160];
    double trigger_quiet_until[4]; /* after a request that moved nothing: back off */
    char host[64];
    double started_mono;
    bool stop;
} d = {.listen_fd = -1, .timer_fd = -1, .signal_fd = -1, .pid_fd = -1};

/* ---- logging: the library does not log; this is its sink ---- */

static void log_sink(enum np_log_level level, const char *msg, void *arg)
{
    static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
    (void)arg;
    if ((int)level > d.cfg.log_level)
        return;
    if (d.use_syslog) {
        syslog(prio[level], "%s", msg);
    } else {
        FILE *out = d.logfile ? d.logfile : stderr;
        struct timespec ts;
        struct tm tm;
        char when[32];
        clock_gettime(CLOCK_REALTIME, &ts);
        localtime_r(&ts.tv_sec, &tm);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
        fprintf(out, "%s.%03ld numaplaced: %s: %s\n", when, ts.tv_nsec / 1000000,
                np_log_level_name(level), msg);
        fflush(out);
    }
}

#define LOG(level, ...) np_logf(&d.log, NP_LOG_##level, __VA_ARGS__)

static int open_log(void)
{
    if (d.logfile) {
        fclose(d.logfile);
        d.logfile = NULL;
    }
    d.use_syslog = strcmp(d.cfg.log, "syslog") == 0;
    if (d.use_syslog) {
        openlog("numaplaced", LOG_PID, LOG_DAEMON);
    } else if (strcmp(d.cfg.log, "stderr") != 0) {
        d.logfile = fopen(d.cfg.log, "ae");
        if (!d.logfile) {
            fprintf(stderr, "numaplaced: cannot open log %s: %s\n", d.cfg.log, strerror(errno));
            return -errno;
        }
    }
    d.log.fn = log_sink;
    return 0;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double epoch_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- configuration ---- */

static int load_config(bool initial)
{
    struct np_helper_config cfg;
    struct np_err err = {0};
    int rc;

    np_helper_config_defaults(&cfg);
    rc = np_helper_config_load(&cfg, d.config_path, &d.log, &err);
    if (rc == -ENOENT && strcmp(d.config_path, NP_HELPER_DEFAULT_CONFIG) == 0)
        rc = 0; /* no file at the default path: defaults and flags */
    if (rc < 0) {
        LOG(ERROR, "%s", err.msg);
        if (rc != -EINVAL || initial)
            return rc;
    }
    for (unsigned i = 0; i < d.noverrides; i++)
        if (np_helper_config_set(&cfg, d.overrides[i][0], d.overrides[i][1], &err) < 0) {
            LOG(ERROR, "--%s: %s", d.overrides[i][0], err.msg);
            return -EINVAL;
        }
    if (!initial &&
        (strcmp(cfg.socket, d.cfg.socket) != 0 || strcmp(cfg.pid_file, d.cfg.pid_file) != 0 ||
         strcmp(cfg.proc_root, d.cfg.proc_root) != 0)) {
        LOG(WARNING, "reload: socket, pid_file and proc_root changes take effect at restart");
        memcpy(cfg.socket, d.cfg.socket, sizeof(cfg.socket));
        memcpy(cfg.pid_file, d.cfg.pid_file, sizeof(cfg.pid_file));
        memcpy(cfg.proc_root, d.cfg.proc_root, sizeof(cfg.proc_root));
    }
    d.cfg = cfg;
    return 0;
}

static int mkdir_p(const char *path, mode_t mode)
{
    char tmp[1024];

    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    if (mkdir(tmp, mode) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

static void dirname_of(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, size, "%.*s", slash && slash != path ? (int)(slash - path) : 1, path);
}

/* ---- housekeeping CPUs: keep the helper off the jobs' CPUs ---- */

static void slurm_spec_cpus(char *out, size_t size)
{
    char cmd[256], line[8192];
    FILE *p;

    out[0] = '\0';
    snprintf(cmd, sizeof(cmd), "timeout 5 scontrol show node %s -o 2>/dev/null", d.host);
    p = popen(cmd, "re");
    if (!p)
        return;
    while (fgets(line, sizeof(line), p)) {
        char *spec = strstr(line, "CPUSpecList=");
        if (spec) {
            spec += strlen("CPUSpecList=");
            spec[strcspn(spec, " \n")] = '\0';
            snprintf(out, size, "%s", spec);
        }
    }
    pclose(p);
}

static void pin_housekeeping(void)
{
    char list[256] = "", running[256] = "";
    const char *why;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    cpu_set_t mask;

    if (!set)
        return;
    if (strcmp(d.cfg.housekeeping_cpus, "auto") == 0) {
        slurm_spec_cpus(list, sizeof(list));
        why = list[0] ? "Slurm's CpuSpecList for this node" : NULL;
    } else if (strcmp(d.cfg.housekeeping_cpus, "none") != 0) {
        snprintf(list, sizeof(list), "%s", d.cfg.housekeeping_cpus);
        why = "housekeeping_cpus";
    } else {
        why = NULL;
    }
    if (list[0] && hwloc_bitmap_list_sscanf(set, list) == 0 && !hwloc_bitmap_iszero(set)) {
        int cpu;
        CPU_ZERO(&mask);
        hwloc_bitmap_foreach_begin(cpu, set)
        {
            if (cpu < CPU_SETSIZE)
                CPU_SET(cpu, &mask);
        }
        hwloc_bitmap_foreach_end();
        if (sched_setaffinity(0, sizeof(mask), &mask) < 0)
            LOG(WARNING, "cannot pin to housekeeping CPUs %s (%s): %s", list, why, strerror(errno));
    } else {
        why = NULL;
    }
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
        hwloc_bitmap_zero(set);
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &mask))
                hwloc_bitmap_set(set, (unsigned)c);
        hwloc_bitmap_list_snprintf(running, sizeof(running), set);
    }
    if (why)
        LOG(INFO, "runs on housekeeping CPUs %s (%s)", running, why);
    else
        LOG(INFO,
            "runs on CPUs %s: no housekeeping CPUs (housekeeping_cpus=%s%s); it may share CPUs "
            "with jobs",
            running, d.cfg.housekeeping_cpus,
            strcmp(d.cfg.housekeeping_cpus, "auto") == 0 ? " and this node has no CpuSpecList"
                                                         : "");
    hwloc_bitmap_free(set);
}

/* ---- topology: which NUMA node each CPU belongs to ---- */

static void load_topology(void)
{
    struct np_err err = {0};
    int maxcpu = (int)sysconf(_SC_NPROCESSORS_CONF);

    d.ncpus = maxcpu > 0 ? (unsigned)maxcpu : 1;
    if (np_topology_load(&d.topology, NP_TOPOLOGY_LIVE, NULL, &err) < 0) {
        LOG(WARNING, "topology: %s; bandwidth cannot be attributed to nodes", err.msg);
        return;
    }
    free(d.cpu_node);
    d.cpu_node = malloc(d.ncpus * sizeof(int));
    if (!d.cpu_node)
        return;
    for (unsigned c = 0; c < d.ncpus; c++)
        d.cpu_node[c] = -1;
    for (unsigned i = 0; i < np_topology_node_count(d.topology); i++) {
        const struct np_numa_node *node = np_topology_node(d.topology, i);
        int cpu;
        hwloc_bitmap_foreach_begin(cpu, node->cpus)
        {
            if ((unsigned)cpu < d.ncpus)
                d.cpu_node[cpu] = (int)node->os_index;
        }
        hwloc_bitmap_foreach_end();
    }
    LOG(INFO, "topology: %u NUMA node(s), %u CPU(s)", np_topology_node_count(d.topology), d.ncpus);
}

static void probe_perf(void)
{
    struct np_err err = {0};
    struct np_perf_counters c;
    int opened;

    d.perf_mask = 0;
    if (!d.cfg.perf) {
        snprintf(d.perf_off_reason, sizeof(d.perf_off_reason),
                 "perf backend turned off (backends=proc)");
        LOG(INFO, "perf: %s", d.perf_off_reason);
        return;
    }
    if (np_perf_init(&err) < 0) {
        snprintf(d.perf_off_reason, sizeof(d.perf_off_reason), "libpfm4: %.400s", err.msg);
        LOG(WARNING, "perf: unavailable: %s", err.msg);
        return;
    }
    /* Try every event on ourselves once, to say at start-up what this node can count. */
    np_perf_counters_init(&c);
    opened = np_perf_open(&c, getpid(), NP_PERF_ALL_MASK, &err);
    for (int e = 0; e < NP_PERF_NEVENTS; e++) {
        if (c.fd[e] >= 0)
            d.perf_mask |= 1u << e;
        else
            LOG(INFO, "perf: %s unavailable: %s", np_perf_event_name((enum np_perf_event)e),
                c.reason[e]);
    }
    np_perf_close(&c);
    /* Keep asking for the hardware events too: their per-task failure is the reason shown. */
    d.perf_mask = opened > 0 ? NP_PERF_ALL_MASK : 0;
    if (!d.perf_mask)
        snprintf(d.perf_off_reason, sizeof(d.perf_off_reason), "no perf event opens here (%.400s)",
                 err.msg[0] ? err.msg : "see the helper's log");
    LOG(INFO, "perf: %d of %d events count on this node", opened < 0 ? 0 : opened, NP_PERF_NEVENTS);
}

/* ---- the registry ---- */

static struct job *find_job(uint32_t job_id, uint32_t step_id)
{
    for (unsigned i = 0; i < d.njobs; i++)
        if (d.jobs[i]->meta.job_id == job_id && d.jobs[i]->meta.step_id == step_id)
            return d.jobs[i];
    return NULL;
}

static void trace_line(json_t *line)
{
    if (d.trace && line) {
        json_dumpf(line, d.trace, JSON_COMPACT);
        fputc('\n', d.trace);
        fflush(d.trace);
    }
    json_decref(line);
}

static void save_state(void);

static void free_job(struct job *j)
{
    if (!j)
        return;
    np_sampler_fini(&j->sampler);
    np_jobstats_fini(&j->stats);
    json_decref(j->tasks);
    free(j);
}

/* Write the step's report to the spool, owned by the job's user so that only they (and root)
 * can read it. */
static void write_report(struct job *j, bool complete)
{
    char path[2048], tmp[2100];
    json_t *report;
    int fd;

    j->meta.end_epoch = epoch_s();
    j->meta.tasks = j->tasks;
    report = np_report_new(&j->meta, &j->stats, complete);
    if (!report) {
        LOG(ERROR, "job %u.%s: out of memory building its report", j->meta.job_id,
            np_step_name(j->meta.step_id));
        return;
    }
    snprintf(path, sizeof(path), "%s/%u.%s.%s.json", d.cfg.spool_dir, j->meta.job_id,
             np_step_name(j->meta.step_id), d.host);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || json_dumpfd(report, fd, JSON_INDENT(2)) < 0 || write(fd, "\n", 1) != 1 ||
        fchown(fd, j->meta.uid, (gid_t)-1) < 0 || fsync(fd) < 0 || rename(tmp, path) < 0)
        LOG(ERROR, "job %u.%s: cannot write its report %s: %s", j->meta.job_id,
            np_step_name(j->meta.step_id), path, strerror(errno));
    else
        LOG(INFO, "job %u.%s: report %s (%u samples, helper %.4f s CPU)", j->meta.job_id,
            np_step_name(j->meta.step_id), path, j->stats.samples, j->stats.helper_cpu_s);
    if (fd >= 0)
        close(fd);
    json_decref(report);
}

static void sample_job(struct job *j, double now, bool node_counters_read, bool final);

static void finish_job(struct job *j, bool complete)
{
    if (!j->ended) {
        /* The final figures: perf totals include every exited thread and child. */
        np_node_counters_read(&d.counters, d.cfg.proc_root);
        sample_job(j, np_monotonic_s(), true, true);
        j->ended = true;
    }
    write_report(j, complete);
    if (j->traced)
        trace_line(np_trace_end_line(j->meta.job_id, j->meta.step_id, j->meta.end_epoch));
    for (unsigned i = 0; i < d.njobs; i++)
        if (d.jobs[i] == j) {
            d.jobs[i] = d.jobs[--d.njobs];
            break;
        }
    free_job(j);
    save_state();
}

/* ---- state: the registry survives a restart of the helper ---- */

static void save_state(void)
{
    char path[1100], tmp[1200];
    json_t *state = json_pack("{s:s, s:[]}", "schema", "numaplace.state/1", "jobs");
    json_t *arr = json_object_get(state, "jobs");

    for (unsigned i = 0; arr && i < d.njobs; i++) {
        const struct job *j = d.jobs[i];
        json_t *pids = json_array();
        for (unsigned t = 0; pids && t < j->sampler.ntasks; t++)
            if (!j->sampler.tasks[t].gone)
                json_array_append_new(pids, json_integer(j->sampler.tasks[t].pid));
        json_array_append_new(
            arr, json_pack("{s:I, s:I, s:I, s:f, s:s, s:s, s:s, s:s, s:o, s:O}", "job",
                           (json_int_t)j->meta.job_id, "step", (json_int_t)j->meta.step_id, "uid",
                           (json_int_t)j->meta.uid, "start", j->meta.start_epoch, "policy",
                           j->meta.policy_requested, "sensitivity", j->meta.sensitivity, "class",
                           np_class_name(j->job_class), "cpus", j->meta.cpus, "pids", pids, "tasks",
                           j->tasks));
    }
    snprintf(path, sizeof(path), "%s/registry.json", d.cfg.state_dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (!state || json_dump_file(state, tmp, JSON_COMPACT) < 0 || rename(tmp, path) < 0)
        LOG(ERROR, "cannot save the registry to %s: %s", path, strerror(errno));
    json_decref(state);
}

/* Bit n: some CPU of @p cpus is on NUMA node n. */
static uint64_t cpu_nodes_mask(hwloc_const_bitmap_t cpus)
{
    uint64_t mask = 0;
    int cpu;

    if (!d.cpu_node || !cpus)
        return 0;
    hwloc_bitmap_foreach_begin(cpu, cpus)
    {
        if ((unsigned)cpu < d.ncpus && d.cpu_node[cpu] >= 0 && d.cpu_node[cpu] < 64)
            mask |= 1ull << d.cpu_node[cpu];
    }
    hwloc_bitmap_foreach_end();
    return mask;
}

static struct job *new_job(uint32_t job_id, uint32_t step_id, uid_t uid, const char *cpus,
                           const char *policy, const char *sensitivity, struct np_err *err)
{
    struct job *j;

    if (d.njobs >= d.cfg.max_jobs) {
        np_err_set(err, -ENOSPC, "the helper tracks %u steps already (max_jobs)", d.njobs);
        return NULL;
    }
    j = calloc(1, sizeof(*j));
    if (!j || np_sampler_init(&j->sampler, d.cfg.proc_root, d.perf_mask, d.perf_off_reason,
                              d.cpu_node, d.cpu_node ? d.ncpus : 0, cpus, err) < 0) {
        free(j);
        if (!err->code)
            np_err_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    np_jobstats_init(&j->stats);
    j->tasks = json_array();
    j->meta.job_id = job_id;
    j->meta.step_id = step_id;
    j->meta.uid = uid;
    j->meta.start_epoch = epoch_s();
    j->meta.interval_s = d.cfg.interval_ms / 1000.0;
    snprintf(j->meta.node, sizeof(j->meta.node), "%s", d.host);
    snprintf(j->meta.cpus, sizeof(j->meta.cpus), "%s", cpus);
    snprintf(j->meta.policy_requested, sizeof(j->meta.policy_requested), "%s", policy);
    snprintf(j->meta.sensitivity, sizeof(j->meta.sensitivity), "%s", sensitivity);
    j->job_class = (strcmp(sensitivity, "high") == 0  ? d.cfg.class_high_is_high
                    : strcmp(sensitivity, "low") == 0 ? d.cfg.class_low_is_high
                                                      : d.cfg.class_default_high)
                       ? NP_CLASS_HIGH
                       : NP_CLASS_LOW;
    snprintf(j->meta.job_class, sizeof(j->meta.job_class), "%s", np_class_name(j->job_class));
    j->stats.migration_enabled = d.cfg.migration;
    j->meta.local_nodes = j->stats.local_nodes = cpu_nodes_mask(j->sampler.cpus);
    snprintf(j->meta.backends, sizeof(j->meta.backends), "%s", d.perf_mask ? "perf,proc" : "proc");
    j->registered_mono = np_monotonic_s();
    j->last_pages_mono = j->last_detail_mono = -1e9;
    d.jobs[d.njobs++] = j;
    return j;
}

static void load_state(void)
{
    char path[1100];
    json_error_t jerr;
    json_t *state, *entry;
    size_t i;
    unsigned restored = 0, lost = 0;

    snprintf(path, sizeof(path), "%s/registry.json", d.cfg.state_dir);
    state = json_load_file(path, 0, &jerr);
    if (!state) {
        if (access(path, F_OK) == 0)
            LOG(ERROR, "registry %s is unreadable (%s); starting empty", path, jerr.text);
        return;
    }
    json_array_foreach(json_object_get(state, "jobs"), i, entry)
    {
        struct np_err err = {0};
        json_t *pid;
        size_t k;
        struct job *j = new_job((uint32_t)json_integer_value(json_object_get(entry, "job")),
                                (uint32_t)json_integer_value(json_object_get(entry, "step")),
                                (uid_t)json_integer_value(json_object_get(entry, "uid")),
                                json_string_value(json_object_get(entry, "cpus"))
                                    ? json_string_value(json_object_get(entry, "cpus"))
                                    : "",
                                json_string_value(json_object_get(entry, "policy"))
                                    ? json_string_value(json_object_get(entry, "policy"))
                                    : "",
                                json_string_value(json_object_get(entry, "sensitivity"))
                                    ? json_string_value(json_object_get(entry, "sensitivity"))
                                    : "low",
                                &err);
        if (!j)
            continue;
        j->meta.start_epoch = json_number_value(json_object_get(entry, "start"));
        /* a class an administrator set survives the restart */
        if (np_class_from_name(json_string_value(json_object_get(entry, "class")), &j->job_class,
                               NULL) == 0)
            snprintf(j->meta.job_class, sizeof(j->meta.job_class), "%s",
                     np_class_name(j->job_class));
        if (json_is_array(json_object_get(entry, "tasks"))) {
            json_decref(j->tasks);
            j->tasks = json_incref(json_object_get(entry, "tasks"));
        }
        json_array_foreach(json_object_get(entry, "pids"), k, pid)
        {
            np_sampler_add_task(&j->sampler, (pid_t)json_integer_value(pid), NULL);
        }
        if (j->sampler.ntasks) {
            restored++;
        } else {
            /* Ended while the helper was down: say so in its report rather than lose it. */
            lost++;
            j->ended = true;
            finish_job(j, false);
        }
    }
    json_decref(state);
    if (restored || lost)
        LOG(INFO,
            "registry: %u step(s) still running restored (their counters restart now), %u "
            "ended while the helper was down (incomplete reports written)",
            restored, lost);
}

/* ---- sampling ---- */

static void sample_job(struct job *j, double now, bool node_counters_read, bool final)
{
    const double cpu0 = thread_cpu_s();
    const double half = d.cfg.interval_ms / 2.0;
    const bool large = j->stats.last.rss_bytes >= d.cfg.numa_maps_large_bytes;
    const bool pages_due =
        (now - j->last_pages_mono) * 1000.0 >=
        (large ? d.cfg.numa_maps_large_interval_ms : d.cfg.numa_maps_interval_ms) - half;
    const bool detail_due =
        final || (now - j->last_detail_mono) * 1000.0 >= d.cfg.detail_interval_ms - half;
    struct np_sample s;

    np_sampler_sample(&j->sampler, now, node_counters_read ? &d.counters : NULL, pages_due,
                      detail_due, &s);
    if (s.have_pages)
        j->last_pages_mono = now;
    if (detail_due)
        j->last_detail_mono = now;
    if (np_jobstats_add(&j->stats, &s) < 0)
        LOG(ERROR, "job %u: out of memory", j->meta.job_id);
    if (d.trace) {
        if (!j->traced) {
            j->meta.tasks = j->tasks;
            trace_line(np_trace_job_line(&j->meta));
            j->traced = true;
        }
        trace_line(
            np_trace_sample_line(j->meta.job_id, j->meta.step_id, &s, j->stats.helper_cpu_s));
    }
    j->stats.helper_cpu_s += thread_cpu_s() - cpu0;
}

static void run_triggers(void);

static void tick(void)
{
    const double now = np_monotonic_s();
    uint64_t expirations;

    if (read(d.timer_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
        LOG(WARNING, "timerfd: %s", strerror(errno));
    if (d.njobs == 0)
        return;
    np_node_counters_read(&d.counters, d.cfg.proc_root);
    for (unsigned i = 0; i < d.njobs;) {
        struct job *j = d.jobs[i];
        sample_job(j, now, true, false);
        /* Tasks all gone and no step_end came: the plugin's message was lost; end it anyway. */
        if (j->stats.last.processes == 0 &&
            now - j->registered_mono > 2.0 * d.cfg.interval_ms / 1000.0) {
            LOG(INFO, "job %u.%s: its processes are gone without a step_end; ending it",
                j->meta.job_id, np_step_name(j->meta.step_id));
            j->ended = true;
            finish_job(j, true);
            continue;
        }
        i++;
    }
    if (d.cfg.migration)
        run_triggers();
}

/* ---- migration: the view, the triggers, the worker ---- */

/* The node as the engine sees it, copied so the worker owns it while it moves memory. */
static struct np_node_view *build_view(void)
{
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    struct np_node_view *view = migrator_view_new(d.njobs);
    const unsigned count = d.topology ? np_topology_node_count(d.topology) : 1;

    if (!view)
        return NULL;
    /* Indexed by the kernel's node numbers, as numa_maps, move_pages and the CPUs' nodes are;
     * a gap in the numbering is a slot with no memory, never a candidate or a destination. */
    for (unsigned n = 0; n < count; n++) {
        const struct np_numa_node *node = d.topology ? np_topology_node(d.topology, n) : NULL;
        const unsigned os = node ? node->os_index : n;
        if (os >= NP_MAX_NODES)
            continue;
        if (os + 1 > view->nnodes)
            view->nnodes = os + 1;
        np_node_meminfo(d.cfg.proc_root, os, &view->total_bytes[os], &view->free_bytes[os], NULL);
        for (unsigned m = 0; m < count; m++) {
            const struct np_numa_node *to = d.topology ? np_topology_node(d.topology, m) : NULL;
            const unsigned os_to = to ? to->os_index : m;
            const int dist = d.topology ? np_topology_distance(d.topology, n, m) : 0;
            if (os_to < NP_MAX_NODES)
                view->distance[os][os_to] = (uint8_t)(dist > 0 && dist < 256 ? dist : 0);
        }
    }
    for (unsigned i = 0; i < d.njobs; i++) {
        const struct job *j = d.jobs[i];
        struct np_job_view *v = &view->jobs[view->njobs];
        pid_t *pids;

        if (j->ended || j->sampler.npids == 0)
            continue;
        pids = malloc(j->sampler.npids * sizeof(pid_t));
        if (!pids)
            break;
        memcpy(pids, j->sampler.pids, j->sampler.npids * sizeof(pid_t));
        v->pids = pids;
        v->npids = j->sampler.npids;
        v->job_id = j->meta.job_id;
        v->step_id = j->meta.step_id;
        v->id = (uint64_t)j->meta.job_id << 16 | (j->meta.step_id & 0xffffu);
        v->job_class = j->job_class;
        v->cpu_nodes = j->stats.local_nodes;
        v->homecoming_paused = np_monotonic_s() < j->homecoming_quiet_until;
        for (unsigned n = 0; n < view->nnodes; n++)
            v->pages_on_node[n] = j->stats.pages_end[n] / page;
        if (j->stats.bw_intervals) {
            v->bandwidth = j->stats.bw_last_total;
            for (unsigned n = 0; n < view->nnodes; n++)
                view->node_bandwidth[n] += j->stats.bw_last[n];
            view->node_bandwidth_available = true;
        } else {
            const struct np_sample *l = &j->stats.last_proc, *p = &j->stats.prev;
            const double dt = l->t - p->t;
            const double cores = dt > 0 && p->have_proc
                                     ? ((l->utime_s + l->stime_s) - (p->utime_s + p->stime_s)) / dt
                                     : 0;
            v->bandwidth = np_bandwidth_proxy(cores > 0 ? cores : 0, l->rss_bytes);
            v->bandwidth_is_proxy = true;
        }
        view->njobs++;
    }
    return view;
}

static struct job *job_of_view(const struct np_node_view *view, size_t index)
{
    return index < view->njobs ? find_job(view->jobs[index].job_id, view->jobs[index].step_id)
                               : NULL;
}

static int enqueue(const struct np_request *req, const struct np_order_ops *order, bool dry_run,
                   uint64_t tag)
{
    if (d.nqueued == sizeof(d.queue) / sizeof(d.queue[0]))
        return -EBUSY;
    d.queue[d.nqueued++] = (struct queued_request){*req, order, dry_run, tag};
    return 0;
}

static void submit_next(void)
{
    struct np_engine_config cfg = {0};
    struct queued_request q;
    struct np_node_view *view;

    if (!d.migrator || d.nqueued == 0 || migrator_busy(d.migrator))
        return;
    q = d.queue[0];
    memmove(&d.queue[0], &d.queue[1], --d.nqueued * sizeof(d.queue[0]));
    view = build_view();
    if (!view) {
        LOG(ERROR, "migration: out of memory building the node view");
        return;
    }
    cfg.order = q.order;
    cfg.seed = (uint64_t)time(NULL);
    cfg.free_floor_bytes = d.cfg.free_floor_mb << 20;
    cfg.dry_run = q.dry_run || d.cfg.migration_dry_run;
    migrator_set_rate(d.migrator, d.cfg.migration_rate_mb_s * 1e6);
    if (migrator_submit(d.migrator, view, &cfg, &q.request, q.tag) < 0) {
        migrator_view_free(view);
        enqueue(&q.request, q.order, q.dry_run, q.tag);
    }
}

static json_t *result_json(const struct migrator_done *done)
{
    const struct np_request_result *r = &done->result;
    json_t *obj, *jobs = json_array();

    if (done->rc < 0) {
        json_decref(jobs);
        return np_proto_reply_error("%s", done->err.msg);
    }
    for (size_t i = 0; jobs && i < r->noutcomes; i++) {
        const struct np_job_outcome *o = &r->outcomes[i];
        const struct np_job_view *v = &done->view->jobs[o->job_index];
        json_t *failed = json_object();
        for (int f = 0; failed && f < NP_MOVE_FAIL_COUNT; f++)
            if (o->moved.pages_failed[f])
                json_object_set_new(failed, np_move_failure_name((enum np_move_failure)f),
                                    json_integer((json_int_t)o->moved.pages_failed[f]));
        json_array_append_new(
            jobs, json_pack("{s:I, s:I, s:s, s:I, s:I, s:o, s:b, s:b, s:f}", "job",
                            (json_int_t)v->job_id, "step", (json_int_t)v->step_id, "class",
                            np_class_name(v->job_class), "planned_pages", (json_int_t)o->planned,
                            "moved_pages", (json_int_t)o->moved.pages_moved, "failed_pages", failed,
                            "process_gone", o->moved.process_gone, "whole", o->moved.whole,
                            "moving_s", o->moved.ns_moving / 1e9));
    }
    obj = np_proto_reply_ok();
    json_object_set_new(
        obj, "result",
        json_pack("{s:s, s:i, s:i, s:I, s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:b, s:o, s:s}",
                  "trigger", np_trigger_name(r->request.trigger), "from", (int)r->request.src, "to",
                  (int)r->request.dst, "requested_pages", (json_int_t)r->request.pages, "order",
                  r->order ? r->order : "?", "reason", r->request.reason, "used_proxy",
                  r->used_proxy, "candidates", (json_int_t)r->candidates, "planned_pages",
                  (json_int_t)r->planned, "moved_pages", (json_int_t)r->moved,
                  "capped_by_floor_pages", (json_int_t)r->capped_by_floor, "stopped", r->stopped,
                  "jobs", jobs, "summary", r->summary));
    return obj;
}

static void reply_client(struct client *c, json_t *reply);

/* The worker finished: book what moved into the jobs' reports, answer whoever asked. */
static void collect_migration(void)
{
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    struct migrator_done done;
    const struct np_request_result *r = &done.result;

    if (!d.migrator || !migrator_collect(d.migrator, &done))
        return;
    if (done.rc == 0) {
        const bool dry = strstr(r->summary, "would move") != NULL;
        for (size_t i = 0; i < r->noutcomes; i++) {
            const struct np_job_outcome *o = &r->outcomes[i];
            struct job *j = job_of_view(done.view, o->job_index);
            if (!j)
                continue; /* ended meanwhile */
            if (!dry && o->moved.pages_moved) {
                char label[48];
                snprintf(label, sizeof(label), "%u->%u %" PRIu64 " MiB", r->request.src,
                         r->request.dst, o->moved.pages_moved * page >> 20);
                np_jobstats_event(&j->stats, np_monotonic_s() - j->registered_mono, label);
            }
            if (!dry) {
                j->stats.pages_out[r->request.src] += o->moved.pages_moved * page;
                j->stats.pages_in[r->request.dst] += o->moved.pages_moved * page;
                j->stats.migration_moving_s += o->moved.ns_moving / 1e9;
                for (int f = 0; f < NP_MOVE_FAIL_COUNT; f++)
                    j->stats.migration_failed[f] += o->moved.pages_failed[f];
                /* read its pages again at the next sample */
                j->last_pages_mono = -1e9;
                j->sampler.pages_read = false;
            }
            if (!j->stats.migration_requests)
                j->stats.migration_requests = json_array();
            json_array_append_new(
                j->stats.migration_requests,
                json_pack("{s:s, s:i, s:i, s:s, s:s, s:I, s:I, s:b, s:b, s:b}", "trigger",
                          np_trigger_name(r->request.trigger), "from", (int)r->request.src, "to",
                          (int)r->request.dst, "order", r->order ? r->order : "?", "reason",
                          r->request.reason, "planned_pages", (json_int_t)o->planned, "moved_pages",
                          (json_int_t)o->moved.pages_moved, "dry_run", dry, "used_proxy",
                          r->used_proxy, "stopped", o->moved.stopped));
        }
        /* A trigger whose request moved nothing would ask again at once: it waits 30 s. A
         * homecoming waits per job, so one stuck high job does not hold back the others. */
        if (r->moved == 0 && r->request.trigger == NP_TRIGGER_HOMECOMING) {
            struct job *j = r->request.target_job >= 0
                                ? job_of_view(done.view, (size_t)r->request.target_job)
                                : NULL;
            if (j)
                j->homecoming_quiet_until = np_monotonic_s() + 30.0;
        } else if (r->moved == 0 && r->request.trigger != NP_TRIGGER_ADMIN) {
            d.trigger_quiet_until[r->request.trigger] = np_monotonic_s() + 30.0;
        }
    } else {
        LOG(ERROR, "migration: %s", done.err.msg);
    }
    if (done.tag) {
        for (int i = 0; i < MAX_CLIENTS; i++)
            if (d.clients[i].fd >= 0 && d.clients[i].pending == done.tag) {
                d.clients[i].pending = 0;
                reply_client(&d.clients[i], result_json(&done));
            }
    }
    migrator_done_fini(&done);
    submit_next();
}

/* Every interval: the enabled triggers look at the node and may queue requests. */
static void run_triggers(void)
{
    struct np_trigger_config tc = {0};
    struct np_node_view *view;

    if (!d.migrator || d.nqueued || migrator_busy(d.migrator) || d.njobs == 0)
        return;
    tc.enabled[NP_TRIGGER_PRESSURE] = d.cfg.trigger_pressure;
    tc.enabled[NP_TRIGGER_BANDWIDTH] = d.cfg.trigger_bandwidth;
    tc.enabled[NP_TRIGGER_HOMECOMING] = d.cfg.trigger_homecoming;
    tc.free_floor_bytes = d.cfg.free_floor_mb << 20;
    tc.bandwidth_threshold = d.cfg.bandwidth_threshold_mb_s * 1e6;
    tc.bandwidth_intervals = d.cfg.bandwidth_intervals;
    view = build_view();
    if (!view)
        return;
    for (size_t i = 0; np_trigger_at(i); i++) {
        const struct np_trigger_ops *t = np_trigger_at(i);
        struct np_request reqs[4];
        char why[160] = "";
        int n;

        if (t->kind == NP_TRIGGER_ADMIN || !tc.enabled[t->kind] ||
            np_monotonic_s() < d.trigger_quiet_until[t->kind])
            continue;
        n = t->propose(view, &tc, d.trigger_state[t->kind], reqs, 4, why, sizeof(why));
        if (strcmp(why, d.trigger_inactive[t->kind]) != 0) {
            if (why[0])
                LOG(INFO, "trigger %s inactive: %s", t->name, why);
            snprintf(d.trigger_inactive[t->kind], sizeof(d.trigger_inactive[t->kind]), "%s", why);
        }
        for (int k = 0; k < n; k++) {
            LOG(INFO, "trigger %s: %s", t->name, reqs[k].reason);
            enqueue(&reqs[k], np_order_lookup(d.cfg.migration_order), false, 0);
        }
    }
    migrator_view_free(view);
    submit_next();
}

/* Root, or a member of admin_group. */
static bool is_admin(const struct client *c)
{
    struct group *gr;
    struct passwd *pw;
    gid_t groups[256];
    int ngroups = 256;

    if (c->cred.uid == 0)
        return true;
    if (!d.cfg.admin_group[0] || !(gr = getgrnam(d.cfg.admin_group)))
        return false;
    if (c->cred.gid == gr->gr_gid)
        return true;
    pw = getpwuid(c->cred.uid);
    if (!pw || getgrouplist(pw->pw_name, pw->pw_gid, groups, &ngroups) < 0)
        return false;
    for (int i = 0; i < ngroups; i++)
        if (groups[i] == gr->gr_gid)
            return true;
    return false;
}

static json_t *do_set_class(const struct client *c, uint32_t job_id, const char *name)
{
    enum np_class cls;
    unsigned changed = 0;
    json_t *reply;

    if (!is_admin(c))
        return np_proto_reply_error("only root or members of admin_group%s%s may change a job's "
                                    "class; uid %u may not",
                                    d.cfg.admin_group[0] ? " " : "", d.cfg.admin_group,
                                    (unsigned)c->cred.uid);
    if (np_class_from_name(name, &cls, NULL) < 0)
        return np_proto_reply_error("class \"%s\": accepted: high, low", name);
    for (unsigned i = 0; i < d.njobs; i++)
        if (d.jobs[i]->meta.job_id == job_id) {
            LOG(INFO, "job %u.%s: class %s -> %s (set by uid %u)", job_id,
                np_step_name(d.jobs[i]->meta.step_id), np_class_name(d.jobs[i]->job_class),
                np_class_name(cls), (unsigned)c->cred.uid);
            d.jobs[i]->job_class = cls;
            snprintf(d.jobs[i]->meta.job_class, sizeof(d.jobs[i]->meta.job_class), "%s",
                     np_class_name(cls));
            changed++;
        }
    if (!changed)
        return np_proto_reply_error("job %u is not tracked on this node", job_id);
    reply = np_proto_reply_ok();
    json_object_set_new(reply, "steps", json_integer(changed));
    json_object_set_new(reply, "class", json_string(np_class_name(cls)));
    return reply;
}

/* Is @p os a NUMA node of this machine (the kernel's numbering)? */
static bool node_exists(unsigned os)
{
    const unsigned count = d.topology ? np_topology_node_count(d.topology) : 1;

    for (unsigned n = 0; n < count; n++)
        if ((d.topology ? np_topology_node(d.topology, n)->os_index : n) == os)
            return true;
    return false;
}

/* "nodes 0,1,2,3": for messages. Static buffer. */
static const char *node_list_text(void)
{
    static char text[256];
    const unsigned count = d.topology ? np_topology_node_count(d.topology) : 1;
    size_t len = (size_t)snprintf(text, sizeof(text), "nodes ");

    for (unsigned n = 0; n < count && len < sizeof(text); n++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%u", n ? "," : "",
                                d.topology ? np_topology_node(d.topology, n)->os_index : n);
    return text;
}

/* NULL: queued, the reply comes when the worker is done. */
static json_t *do_migrate(struct client *c, const struct np_proto_request *req)
{
    const struct np_order_ops *order =
        np_order_lookup(req->migrate.order[0] ? req->migrate.order : d.cfg.migration_order);
    struct np_request r = {.src = req->migrate.from,
                           .dst = req->migrate.to,
                           .pages = req->migrate.pages,
                           .trigger = NP_TRIGGER_ADMIN,
                           .target_job = -1};

    if (!is_admin(c))
        return np_proto_reply_error("only root or members of admin_group%s%s may request "
                                    "migrations; uid %u may not",
                                    d.cfg.admin_group[0] ? " " : "", d.cfg.admin_group,
                                    (unsigned)c->cred.uid);
    if (!d.cfg.migration || !d.migrator)
        return np_proto_reply_error("migration is off on this node (migration=off)");
    if (!order)
        return np_proto_reply_error("order \"%s\": accepted: best-plus, best, random, worst, "
                                    "worst-plus",
                                    req->migrate.order);
    if (!node_exists(r.src) || !node_exists(r.dst) || r.src == r.dst)
        return np_proto_reply_error("nodes %u -> %u: they must be two different NUMA nodes of "
                                    "this machine (%s)",
                                    r.src, r.dst, node_list_text());
    snprintf(r.reason, sizeof(r.reason), "administrator (uid %u)%s", (unsigned)c->cred.uid,
             req->migrate.dry_run ? ", dry run" : "");
    c->pending = ++d.next_tag;
    if (enqueue(&r, order, req->migrate.dry_run, c->pending) < 0) {
        c->pending = 0;
        return np_proto_reply_error("%u migration requests are queued already; try again",
                                    d.nqueued);
    }
    submit_next();
    return NULL;
}

/* ---- requests ---- */

static json_t *task_entry(struct job *j, pid_t pid)
{
    json_t *t;
    size_t i;

    json_array_foreach(j->tasks, i, t)
    {
        if (json_integer_value(json_object_get(t, "pid")) == pid)
            return t;
    }
    return NULL;
}

static json_t *do_register(const struct client *c, const struct np_task_reg *r)
{
    struct np_err err = {0};
    const double cpu0 = thread_cpu_s();
    struct job *j;

    if (c->cred.uid != 0)
        return np_proto_reply_error("only root (slurmstepd) may register tasks; uid %u may not",
                                    (unsigned)c->cred.uid);
    j = find_job(r->job_id, r->step_id);
    if (!j) {
        j = new_job(r->job_id, r->step_id, r->uid, r->cpus, r->policy_requested, r->sensitivity,
                    &err);
        if (!j)
            return np_proto_reply_error("%s", err.msg);
        LOG(INFO, "job %u.%s: registered (uid %u, class %s, policy %s, CPUs %s)", r->job_id,
            np_step_name(r->step_id), (unsigned)r->uid, r->sensitivity,
            r->policy_requested[0] ? r->policy_requested : "-", r->cpus[0] ? r->cpus : "-");
    } else if (j->meta.uid != r->uid) {
        return np_proto_reply_error("job %u.%s is registered for uid %u, not %u", r->job_id,
                                    np_step_name(r->step_id), (unsigned)j->meta.uid,
                                    (unsigned)r->uid);
    }
    if (np_sampler_add_task(&j->sampler, r->pid, &err) < 0) {
        if (j->sampler.ntasks == 0)
            finish_job(j, false);
        return np_proto_reply_error("task pid %d: %s", (int)r->pid, err.msg);
    }
    if (!task_entry(j, r->pid))
        json_array_append_new(
            j->tasks, json_pack("{s:i, s:I}", "task", r->task_id, "pid", (json_int_t)r->pid));
    j->stats.helper_cpu_s += thread_cpu_s() - cpu0;
    save_state();
    return np_proto_reply_ok();
}

static json_t *do_applied(const struct client *c, const struct np_task_applied *a)
{
    struct job *j = find_job(a->job_id, a->step_id);
    json_t *t;

    /* The task speaks for itself only: its own pid, and the job's uid. */
    if (c->cred.pid != a->pid && c->cred.uid != 0)
        return np_proto_reply_error("a task may report only itself (peer pid %d, claimed %d)",
                                    (int)c->cred.pid, (int)a->pid);
    if (!j || !(t = task_entry(j, a->pid)))
        return np_proto_reply_error("job %u.%s has no registered task with pid %d", a->job_id,
                                    np_step_name(a->step_id), (int)a->pid);
    if (c->cred.uid != 0 && c->cred.uid != j->meta.uid)
        return np_proto_reply_error("job %u is not yours", a->job_id);
    json_object_set_new(t, "policy", json_string(a->policy));
    json_object_set_new(t, "mode", json_string(a->mode));
    json_object_set_new(t, "nodes", json_string(a->nodes));
    json_object_set_new(t, "cpus", json_string(a->cpus));
    save_state();
    return np_proto_reply_ok();
}

static json_t *do_step_end(const struct client *c, uint32_t job_id, uint32_t step_id)
{
    struct job *j = find_job(job_id, step_id);

    if (c->cred.uid != 0)
        return np_proto_reply_error("only root (slurmstepd) may end steps; uid %u may not",
                                    (unsigned)c->cred.uid);
    if (!j)
        return np_proto_reply_error("job %u.%s is not tracked here", job_id, np_step_name(step_id));
    LOG(INFO, "job %u.%s: step ended", job_id, np_step_name(step_id));
    finish_job(j, true);
    return np_proto_reply_ok();
}

static json_t *job_status(const struct job *j)
{
    json_t *obj =
        json_pack("{s:I, s:I, s:s, s:I, s:s, s:s, s:s, s:f, s:O, s:o}", "job",
                  (json_int_t)j->meta.job_id, "step", (json_int_t)j->meta.step_id, "step_name",
                  np_step_name(j->meta.step_id), "uid", (json_int_t)j->meta.uid, "class",
                  np_class_name(j->job_class), "policy", j->meta.policy_requested, "cpus",
                  j->meta.cpus, "running_s", np_monotonic_s() - j->registered_mono, "tasks",
                  j->tasks, "latest", np_jobstats_latest(&j->stats));
    if (obj)
        json_object_set_new(obj, "helper_cpu_s", json_real(j->stats.helper_cpu_s));
    return obj;
}

static json_t *do_status(const struct client *c, uint32_t job_id)
{
    json_t *reply = np_proto_reply_ok(), *jobs = json_array();
    struct rusage ru;
    bool found = false;

    for (unsigned i = 0; i < d.njobs; i++) {
        const struct job *j = d.jobs[i];
        if (job_id && j->meta.job_id != job_id)
            continue;
        found = found || job_id;
        if (c->cred.uid != 0 && c->cred.uid != j->meta.uid) {
            if (job_id) {
                json_decref(reply);
                json_decref(jobs);
                return np_proto_reply_error("job %u is not yours (it belongs to uid %u)", job_id,
                                            (unsigned)j->meta.uid);
            }
            continue; /* users see their own jobs only */
        }
        json_array_append_new(jobs, job_status(j));
    }
    if (job_id && !found) {
        json_decref(reply);
        json_decref(jobs);
        return np_proto_reply_error("job %u is not tracked on this node", job_id);
    }
    getrusage(RUSAGE_SELF, &ru);
    json_object_set_new(reply, "jobs", jobs);
    json_object_set_new(
        reply, "helper",
        json_pack("{s:s, s:i, s:f, s:f, s:i, s:s, s:i}", "node", d.host, "pid", (int)getpid(),
                  "uptime_s", np_monotonic_s() - d.started_mono, "cpu_time_s",
                  (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
                  "interval_ms", (int)d.cfg.interval_ms, "backends",
                  d.perf_mask ? "perf,proc" : "proc", "jobs", (int)d.njobs));
    return reply;
}

static json_t *handle(struct client *c, const char *buf, size_t len)
{
    struct np_proto_request req;
    struct np_err err = {0};

    if (np_proto_decode(buf, len, &req, &err) < 0) {
        LOG(WARNING, "bad request from pid %d uid %u: %s", (int)c->cred.pid, (unsigned)c->cred.uid,
            err.msg);
        return np_proto_reply_error("%s", err.msg);
    }
    switch (req.op) {
    case NP_OP_REGISTER:
        return do_register(c, &req.reg);
    case NP_OP_APPLIED:
        return do_applied(c, &req.applied);
    case NP_OP_STEP_END:
        return do_step_end(c, req.job_id, req.step_id);
    case NP_OP_STATUS:
        return do_status(c, req.job_id);
    case NP_OP_PING: {
        json_t *r = np_proto_reply_ok();
        json_object_set_new(r, "version", json_integer(NP_PROTO_VERSION));
        return r;
    }
    case NP_OP_SET_CLASS:
        return do_set_class(c, req.job_id, req.job_class);
    case NP_OP_MIGRATE:
        return do_migrate(c, &req);
    }
    return np_proto_reply_error("unhandled op");
}

static void close_client(struct client *c)
{
    close(c->fd);
    c->fd = -1;
    c->len = 0;
    c->pending = 0;
}

static void reply_client(struct client *c, json_t *reply)
{
    char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;

    if (text) {
        size_t len = strlen(text), off = 0;
        /* Replies are small and the socket buffer takes them at once; a client that does not
         * read never holds the helper up. */
        while (off < len) {
            ssize_t n = send(c->fd, text + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n <= 0)
                break;
            off += (size_t)n;
        }
        if (off == len)
            (void)!send(c->fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        free(text);
    }
    json_decref(reply);
    close_client(c);
}

static void accept_clients(void)
{
    for (;;) {
        int fd = accept4(d.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        socklen_t len = sizeof(struct ucred);
        struct client *c = NULL;

        if (fd < 0)
            return;
        for (int i = 0; i < MAX_CLIENTS && !c; i++)
            if (d.clients[i].fd < 0)
                c = &d.clients[i];
        if (!c) {
            LOG(WARNING, "more than %d clients at once; refusing one", MAX_CLIENTS);
            close(fd);
            continue;
        }
        c->fd = fd;
        c->len = 0;
        c->pending = 0;
        c->since = np_monotonic_s();
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) < 0) {
            LOG(WARNING, "SO_PEERCRED: %s; refusing the client", strerror(errno));
            close_client(c);
        }
    }
}

static void read_client(struct client *c)
{
    const double cpu0 = thread_cpu_s();
    ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
    char *nl;

    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        close_client(c);
        return;
    }
    if (n < 0)
        return;
    c->len += (size_t)n;
    nl = memchr(c->buf, '\n', c->len);
    if (!nl && c->len < sizeof(c->buf) - 1)
        return;
    if (!nl) {
        reply_client(c, np_proto_reply_error("request over %d bytes", NP_PROTO_MAX_MSG));
        return;
    }
    {
        json_t *reply = handle(c, c->buf, (size_t)(nl - c->buf) + 1);
        if (reply)
            reply_client(c, reply);
        /* else: a migration the worker will answer; the client waits, with no timeout */
    }
    (void)cpu0;
}

/* ---- start and stop ---- */

static int open_socket(void)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    char dir[1024];
    struct np_err err = {0};
    json_t *reply = NULL;
    int rc;

    dirname_of(d.cfg.socket, dir, sizeof(dir));
    if ((rc = mkdir_p(dir, 0755)) < 0) {
        LOG(ERROR, "cannot create %s: %s", dir, strerror(-rc));
        return rc;
    }
    /* A live helper on this socket wins; a stale socket file is replaced. */
    if (np_proto_call(d.cfg.socket, "{\"v\":1,\"op\":\"ping\"}\n", 500, &reply, &err) == 0) {
        json_decref(reply);
        LOG(ERROR, "another numaplaced answers on %s; not starting a second one", d.cfg.socket);
        return -EADDRINUSE;
    }
    unlink(d.cfg.socket);
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", d.cfg.socket);
    d.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (d.listen_fd < 0 || bind(d.listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
        chmod(d.cfg.socket, 0666) < 0 || listen(d.listen_fd, 128) < 0) {
        rc = -errno;
        LOG(ERROR, "cannot listen on %s: %s", d.cfg.socket, strerror(errno));
        return rc;
    }
    return 0;
}

static int write_pid_file(void)
{
    char dir[1024], text[32];
    int rc;

    if (!d.cfg.pid_file[0])
        return 0;
    dirname_of(d.cfg.pid_file, dir, sizeof(dir));
    if ((rc = mkdir_p(dir, 0755)) < 0) {
        LOG(ERROR, "cannot create %s: %s", dir, strerror(-rc));
        return rc;
    }
    d.pid_fd = open(d.cfg.pid_file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (d.pid_fd < 0 || flock(d.pid_fd, LOCK_EX | LOCK_NB) < 0) {
        rc = -errno;
        LOG(ERROR, "pid file %s: %s%s", d.cfg.pid_file, strerror(errno),
            errno == EWOULDBLOCK ? " (another numaplaced holds it)" : "");
        return rc;
    }
    snprintf(text, sizeof(text), "%d\n", (int)getpid());
    if (ftruncate(d.pid_fd, 0) < 0 || write(d.pid_fd, text, strlen(text)) < 0)
        LOG(WARNING, "pid file %s: %s", d.cfg.pid_file, strerror(errno));
    return 0;
}

static void start_migrator(void)
{
    int rc;

    if (!d.cfg.migration || d.migrator) {
        if (!d.cfg.migration)
            LOG(INFO, "migration: off (migration=off)");
        return;
    }
    rc = migrator_start(&d.migrator, d.cfg.migration_rate_mb_s * 1e6, &d.log);
    if (rc < 0) {
        LOG(ERROR, "migration: cannot start its worker: %s; migration off", strerror(-rc));
        return;
    }
    LOG(INFO, "migration: on, order %s, rate %u MB/s%s, free floor %llu MiB, triggers:%s%s%s%s",
        d.cfg.migration_order, d.cfg.migration_rate_mb_s,
        d.cfg.migration_rate_mb_s ? "" : " (no limit)", (unsigned long long)d.cfg.free_floor_mb,
        d.cfg.trigger_homecoming ? " homecoming" : "", d.cfg.trigger_pressure ? " pressure" : "",
        d.cfg.trigger_bandwidth ? " bandwidth" : "", d.cfg.migration_dry_run ? " (dry run)" : "");
    {
        struct np_err err = {0};
        if (np_numa_balancing_enabled(d.cfg.proc_root, &err) == 1)
            LOG(WARNING,
                "migration: the kernel's automatic NUMA balancing is on "
                "(/proc/sys/kernel/numa_balancing): it moves pages on its own and can undo "
                "numaplace's moves, and pages it has marked for NUMA hinting faults cannot be "
                "found or moved by move_pages on some kernels (seen on Debian 12's 6.1: "
                "-ENOENT while the job leaves them untouched), so partial moves leave them behind "
                "(whole moves use migrate_pages, which walks the page tables itself); nodes "
                "where numaplaced migrates usually run "
                "with sysctl kernel.numa_balancing=0 (docs/migration.md)");
    }
}

static void set_timer(void)
{
    struct itimerspec its = {0};

    its.it_interval.tv_sec = d.cfg.interval_ms / 1000;
    its.it_interval.tv_nsec = (long)(d.cfg.interval_ms % 1000) * 1000000L;
    its.it_value = its.it_interval;
    timerfd_settime(d.timer_fd, 0, &its, NULL);
}

static int open_trace(void)
{
    if (d.trace) {
        fclose(d.trace);
        d.trace = NULL;
    }
    if (!d.cfg.record[0])
        return 0;
    d.trace = fopen(d.cfg.record, "ae");
    if (!d.trace) {
        LOG(ERROR, "cannot open the trace %s: %s", d.cfg.record, strerror(errno));
        return -errno;
    }
    LOG(INFO, "recording every sample to %s", d.cfg.record);
    return 0;
}

static void reload(void)
{
    LOG(INFO, "SIGHUP: reloading %s", d.config_path);
    if (load_config(false) < 0) {
        LOG(ERROR, "reload failed; the previous configuration stays");
        return;
    }
    open_log();
    mkdir_p(d.cfg.spool_dir, 0755);
    mkdir_p(d.cfg.state_dir, 0700);
    open_trace();
    set_timer();
    probe_perf();
    pin_housekeeping();
    start_migrator();
    LOG(INFO, "reloaded: interval %u ms, backends %s", d.cfg.interval_ms,
        d.perf_mask ? "perf,proc" : "proc");
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: numaplaced [--config FILE] [--KEY=VALUE ...]\n"
            "  runs in the foreground (for systemd and tests); every configuration key is also "
            "a flag, --KEY=VALUE\n"
            "  (dashes may replace underscores). Keys: %s.\n"
            "  --check-config validates and exits. Default config: %s. See numaplaced(8).\n",
            np_helper_config_keys(), NP_HELPER_DEFAULT_CONFIG);
}

static int parse_args(int argc, char **argv, bool *check_only)
{
    snprintf(d.config_path, sizeof(d.config_path), "%s", NP_HELPER_DEFAULT_CONFIG);
    for (int i = 1; i < argc; i++) {
        char key[128], *arg = argv[i], *value;

        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strcmp(arg, "--check-config") == 0) {
            *check_only = true;
            continue;
        }
        if (strcmp(arg, "--foreground") == 0 || strcmp(arg, "-F") == 0)
            continue; /* always in the foreground; accepted for habit */
        if (strncmp(arg, "--", 2) != 0) {
            fprintf(stderr, "numaplaced: unexpected argument \"%s\"\n", arg);
            usage(stderr);
            return -EINVAL;
        }
        arg += 2;
        value = strchr(arg, '=');
        if (!value) {
            if (i + 1 >= argc) {
                fprintf(stderr, "numaplaced: --%s needs a value\n", arg);
                return -EINVAL;
            }
            snprintf(key, sizeof(key), "%s", arg);
            value = argv[++i];
        } else {
            snprintf(key, sizeof(key), "%.*s", (int)(value - arg), arg);
            value++;
        }
        for (char *p = key; *p; p++)
            if (*p == '-')
                *p = '_';
        if (strcmp(key, "config") == 0) {
            snprintf(d.config_path, sizeof(d.config_path), "%s", value);
            continue;
        }
        if (d.noverrides == MAX_OVERRIDES) {
            fprintf(stderr, "numaplaced: too many flags\n");
            return -EINVAL;
        }
        d.overrides[d.noverrides][0] = strdup(key);
        d.overrides[d.noverrides][1] = strdup(value);
        d.noverrides++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    bool check_only = false;
    sigset_t mask;
    int rc;

    d.log.fn = log_sink;
    d.cfg.log_level = NP_LOG_INFO;
    for (int i = 0; i < MAX_CLIENTS; i++)
        d.clients[i].fd = -1;
    if (parse_args(argc, argv, &check_only) < 0)
        return 2;
    if (load_config(true) < 0)
        return 2;
    if (check_only) {
        printf("numaplaced: %s is valid\n", d.config_path);
        return 0;
    }
    if (open_log() < 0)
        return 1;
    gethostname(d.host, sizeof(d.host) - 1);
    d.started_mono = np_monotonic_s();
    LOG(INFO, "numaplaced starting (protocol %d, pid %d, config %s)", NP_PROTO_VERSION,
        (int)getpid(), d.config_path);
    if (geteuid() != 0)
        LOG(WARNING, "not running as root: other users' processes cannot be read or counted");

    sigemptyset(&mask);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    d.signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    d.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

    if ((rc = mkdir_p(d.cfg.spool_dir, 0755)) < 0 || (rc = mkdir_p(d.cfg.state_dir, 0700)) < 0) {
        LOG(ERROR, "cannot create the spool or state directory: %s", strerror(-rc));
        return 1;
    }
    if (write_pid_file() < 0 || open_socket() < 0 || d.signal_fd < 0 || d.timer_fd < 0)
        return 1;
    d.jobs = calloc(65536, sizeof(struct job *)); /* max_jobs' ceiling: reloads may raise it */
    if (!d.jobs || np_node_counters_init(&d.counters, 4096) < 0) {
        LOG(ERROR, "out of memory");
        return 1;
    }
    pin_housekeeping();
    load_topology();
    probe_perf();
    open_trace();
    start_migrator();
    load_state();
    set_timer();
    LOG(INFO, "listening on %s; spool %s; interval %u ms", d.cfg.socket, d.cfg.spool_dir,
        d.cfg.interval_ms);

    while (!d.stop) {
        struct pollfd pfd[4 + MAX_CLIENTS];
        struct client *owner[4 + MAX_CLIENTS];
        int n = 0;

        pfd[n++] = (struct pollfd){.fd = d.signal_fd, .events = POLLIN};
        pfd[n++] = (struct pollfd){.fd = d.timer_fd, .events = POLLIN};
        pfd[n++] = (struct pollfd){.fd = d.listen_fd, .events = POLLIN};
        pfd[n++] =
            (struct pollfd){.fd = d.migrator ? migrator_fd(d.migrator) : -1, .events = POLLIN};
        for (int i = 0; i < MAX_CLIENTS; i++)
            if (d.clients[i].fd >= 0) {
                owner[n] = &d.clients[i];
                pfd[n++] = (struct pollfd){.fd = d.clients[i].fd, .events = POLLIN};
            }
        if (poll(pfd, (nfds_t)n, 1000) < 0) {
            if (errno == EINTR)
                continue;
            LOG(ERROR, "poll: %s", strerror(errno));
            break;
        }
        if (pfd[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(d.signal_fd, &si, sizeof(si)) == sizeof(si)) {
                if (si.ssi_signo == SIGHUP)
                    reload();
                else
                    d.stop = true;
            }
        }
        for (int i = 4; i < n; i++)
            if (pfd[i].revents)
                read_client(owner[i]);
        if (pfd[3].revents & POLLIN)
            collect_migration();
        if (pfd[2].revents & POLLIN)
            accept_clients();
        if (pfd[1].revents & POLLIN)
            tick();
        for (int i = 0; i < MAX_CLIENTS; i++) /* a silent client never holds a slot for long */
            if (d.clients[i].fd >= 0 && !d.clients[i].pending &&
                np_monotonic_s() - d.clients[i].since > CLIENT_TIMEOUT)
                close_client(&d.clients[i]);
    }

    LOG(INFO, "stopping: %u step(s) still running stay in %s/registry.json", d.njobs,
        d.cfg.state_dir);
    if (d.migrator && migrator_busy(d.migrator)) {
        /* What the running request moved until now still goes into its jobs' reports, and the
         * client waiting on it still gets its answer. */
        struct pollfd done = {.fd = migrator_fd(d.migrator), .events = POLLIN};
        LOG(INFO, "stopping: the migration in progress ends after its current batch");
        migrator_cancel(d.migrator);
        while (poll(&done, 1, -1) < 0 && errno == EINTR)
            ;
        collect_migration();
    }
    migrator_stop(d.migrator);
    save_state();
    for (unsigned i = 0; i < d.njobs; i++)
        free_job(d.jobs[i]);
    free(d.jobs);
    for (int i = 0; i < MAX_CLIENTS; i++)
        if (d.clients[i].fd >= 0)
            close_client(&d.clients[i]);
    close(d.listen_fd);
    unlink(d.cfg.socket);
    if (d.pid_fd >= 0) {
        unlink(d.cfg.pid_file);
        close(d.pid_fd);
    }
    if (d.trace)
        fclose(d.trace);
    np_node_counters_fini(&d.counters);
    np_topology_free(d.topology);
    free(d.cpu_node);
    for (unsigned i = 0; i < d.noverrides; i++) {
        free(d.overrides[i][0]);
        free(d.overrides[i][1]);
    }
    LOG(INFO, "stopped");
    if (d.logfile)
        fclose(d.logfile);
    return 0;
}
