/*
 * daemon.h - numaplaced's context: one struct np_daemon passed to every part, so a unit test
 * drives each without a socket, Slurm or root; then the parts' functions, bottom to top
 * (lifecycle.c starts and stops them). What stands apart has its own header (auth.h, ops.h ...).
 * Registrations create jobs, each interval's samples fold into their stats, a step's end turns
 * them into a report in the spool.
 */
#ifndef NUMAPLACED_DAEMON_H
#define NUMAPLACED_DAEMON_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include <jansson.h>

#include "auth.h"
#include "migrator.h"
#include "numaplace/engine.h"
#include "numaplace/helperconf.h"
#include "numaplace/migration.h"
#include "numaplace/protocol.h"
#include "numaplace/report.h"
#include "numaplace/sampler.h"
#include "numaplace/sensitivity.h"
#include "numaplace/topology.h"
#include "numaplace/perf.h"

#define NPD_MAX_CLIENTS       64
#define NPD_ROOT_RESERVED     16   /* slots only root (slurmstepd) may use: steps always register */
#define NPD_MAX_PER_USER      8    /* connections one other user may hold at once */
#define NPD_CLIENT_TIMEOUT_S  2.0  /* seconds a client may take to send its request */
#define NPD_MAX_OVERRIDES     64   /* above the number of keys: a flag given twice counts twice */
#define NPD_QUEUE_MAX         16   /* migration requests waiting for the worker */
#define NPD_TRIGGER_BACKOFF_S 30.0 /* a trigger whose request moved nothing waits this long */
#define NPD_HOLD_MAX          1024 /* reports held while the spool refuses them (report_out.c) */
#define NPD_HOLD_MAX_BYTES    (64u << 20)
#define NPD_HOLD_REMIND_S     60.0 /* while it refuses them: one log line per this many seconds */
/* Root's clients may wait longer: slurmstepd connects its tasks' sockets before the fork. */
#define NPD_ROOT_CLIENT_TIMEOUT_S 30.0

struct np_held_report;

/** Reports the spool refused, oldest first (report_out.c); their steps stay in the registry. */
struct np_report_hold {
    struct np_held_report *first, *last; /**< owned */
    unsigned count;
    size_t bytes;
    double reminded;  /**< when the refusal was last logged (monotonic s) */
    bool retrying;    /**< the oldest is with the writer */
    unsigned written; /**< written since the spool last refused one (for the log line) */
};

/** One step on this node. Owned by the registry. */
struct np_daemon_job {
    struct np_job_meta meta;
    struct np_sampler sampler;
    struct np_step_figures stats;
    json_t *tasks;            /**< owned: [{task, pid, policy, mode, nodes, cpus}] */
    enum np_class job_class;  /**< from the label (class_map), or set by an administrator */
    bool unlabelled;          /**< no --numa-sensitivity: class_default=auto may class it */
    unsigned counter_samples; /**< samples with the counters the prediction needs */
    double registered_mono;
    double last_pages_mono, last_detail_mono;
    double homecoming_quiet_until; /**< its last homecoming moved nothing: not again before */
    char user[64];   /**< its user's name for the metrics page (user_names.h), or its uid */
    bool user_known; /**< user is the name, not the uid standing in for it */
    bool traced, ended;
    bool restored;  /**< adopted after a restart: its counters before it are lost */
    bool finishing; /**< its report is with the writer: still in the registry until it is durable */
    bool report_held; /**< the spool refused its report: held (report_hold_add), listed ending */
    json_t *final_report;    /**< owned: its report, kept (and journaled) until it is durable */
    char *final_report_text; /**< owned: its compact text, for registry.json (dumped once) */
    uint64_t reply_tag;      /**< the step_end client waiting for that, else 0 */
    char job_name[128];      /**< SLURM_JOB_NAME from advise (--numa-policy=auto), else "" */
};

#define NPD_HISTORY_MAX 256 /* (user, job name) sensitivities remembered (placement_hint.c) */
#define NPD_ADVISED_MAX 64  /* names of steps advised and not registered yet */

/** --numa-policy=auto's placement hint (placement_hint.c). */
struct np_hint_state {
    double capacity_mbps[NP_MAX_NODES]; /**< 0: unknown */
    double threshold;                   /**< utilisation above which a node is loaded */
    char capacity_from[64];             /**< the profile, or why no capacities */
    /* auto_load=cpu-busy (hint_tick): each node's CPUs' busy share over the last interval */
    double node_busy[NP_MAX_NODES];         /**< 0..1; NAN: not read yet */
    uint64_t node_busy_ticks[NP_MAX_NODES]; /**< busy clock ticks at the last reading */
    uint64_t node_all_ticks[NP_MAX_NODES];  /**< ticks of every kind at the last reading */
    double busy_read_at;                    /**< monotonic s of it; 0: none */
    struct {
        uid_t uid;
        char name[128];
        unsigned high, low; /**< runs that ended labelled or predicted so */
        uint64_t last;      /**< history_seq at the latest run, for replacement */
    } history[NPD_HISTORY_MAX];
    unsigned nhistory;
    uint64_t history_seq; /**< runs counted, across restarts (history.json keeps it) */
    struct {
        uint32_t job_id, step_id;
        char name[128];
    } advised[NPD_ADVISED_MAX];
    unsigned next_advised;
};

/** The steps, sorted by (job_id, step_id) for a binary-search lookup. */
struct np_registry {
    struct np_daemon_job **jobs; /**< owned, as are the jobs */
    unsigned count, cap;
    bool save_failing;         /**< the last save failed (a full or read-only disk) */
    double save_failed_logged; /**< when that was last logged (monotonic s) */
    bool dirty;            /**< changed in what a restart needs since registry.json was written */
    unsigned long saves;   /**< registry.json writes since start (the write-count suite) */
    uint64_t generation;   /**< registry.json's; journal lines carry the one they follow */
    size_t journal_bytes;  /**< appended to registry.journal since registry.json was written */
    size_t snapshot_bytes; /**< registry.json's size at its last write */
    bool restoring;        /**< no compaction: the journal holds steps not restored yet */
    bool save_in_flight;   /**< registry.json is with the writer (one at a time) */
    unsigned long journal_lines;   /**< lines appended since start */
    unsigned long lines_at_submit; /**< journal_lines when the save in flight was serialised */
    size_t bytes_at_submit;        /**< journal_bytes then: the lines the snapshot holds */
};

/** A connected client of the socket. */
struct np_daemon_client {
    int fd;              /**< -1: a free slot */
    uint64_t pending;    /**< a migrate request waiting for the worker: its tag, else 0 */
    struct np_peer cred; /**< who is asking (auth_peer_read), owned */
    char buf[NP_PROTO_MAX_MSG + 1];
    size_t len;
    double since; /**< connected, or last progress writing its reply */
    char *out;    /**< owned: the reply still being sent (a large status), else NULL */
    size_t out_len, out_off;
};

/** A migration request waiting for the worker. */
struct np_queued_request {
    struct np_request request;
    const struct np_order_ops *order;
    bool dry_run;
    uint64_t tag; /**< client tag, or 0 for a trigger */
};

/** Migration: one request at a time in the worker, the rest queued; the triggers' memory. */
struct np_migration_state {
    struct migrator *migrator; /**< NULL: migration off */
    struct np_queued_request queue[NPD_QUEUE_MAX];
    unsigned nqueued;
    uint64_t next_tag; /**< the last client tag given (migrations, step_end replies) */
    unsigned char trigger_state[NP_TRIGGER_COUNT][NP_TRIGGER_STATE_SIZE];
    char trigger_inactive[NP_TRIGGER_COUNT][160];
    double trigger_quiet_until[NP_TRIGGER_COUNT]; /**< after a request that moved nothing */
};

#define NPD_MAX_ORDERS 16 /* above the number of migration orders (np_order_at) */
#define NPD_MAX_TIERS  8  /* tiers counted apart on the metrics page */

/** Daemon-wide counters since start (the Prometheus page, metrics.c). */
struct np_daemon_totals {
    uint64_t pages_moved[NP_TRIGGER_COUNT][NPD_MAX_ORDERS]; /**< by trigger and order index */
    uint64_t requests[NP_TRIGGER_COUNT][NP_OUTCOME_COUNT];  /**< by enum np_request_outcome */
    uint64_t failed_pages[NP_MOVE_FAIL_COUNT];              /**< by enum np_move_failure */
    /** Pages moved from one tier to another, by the tiers (0 fastest; the last holds the rest) */
    uint64_t tier_pages[NPD_MAX_TIERS][NPD_MAX_TIERS];
    double sampling_cpu_s; /**< CPU time spent sampling steps and the node */
    uint64_t samples;      /**< step samples taken */
    /** Traffic each node served: its controllers' counts, its steps' misses x 64 B (sampling.c) */
    uint64_t uncore_bytes[NP_MAX_NODES];
    double misses_bytes[NP_MAX_NODES];
    uint64_t reports_held;         /**< reports the spool refused, held in memory */
    uint64_t reports_lost;         /**< dropped: the hold full, or held at a stop unsaved */
    uint64_t spool_write_failures; /**< writes to the spool that failed (retries included) */
    uint64_t connections_refused;  /**< socket connections refused (server.c) */
    uint64_t scrapes_refused;      /**< metrics peers refused (http.c) */
};

struct http_server;
struct writer;

struct np_daemon {
    struct np_helper_config cfg;
    char config_path[1024];
    char *overrides[NPD_MAX_OVERRIDES][2]; /**< owned: --KEY=VALUE flags, applied on each load */
    unsigned noverrides;
    /* the log sink (daemon.c) */
    struct np_log log;
    FILE *logfile;
    bool use_syslog;
    /* the node */
    char host[64];
    struct np_topology *topology; /**< NULL when it could not be loaded */
    /** HMAT's figures for the migration view, read once (migration_read_tier_figures): each
     *  pair's latency ratio (owned, NP_MAX_NODES rows; NULL: none read) and each node's
     *  capacity in bytes/s. */
    float (*tier_latency)[NP_MAX_NODES];
    double tier_capacity[NP_MAX_NODES];
    int *cpu_node;                      /**< NUMA node of each CPU number, -1 unknown */
    struct np_kept_file *meminfo_files; /**< owned: each node's meminfo kept open, by node number
                                             (NP_MAX_NODES; sampling.c), NULL: read afresh */
    unsigned ncpus;
    unsigned perf_mask;
    /** The probe's counters on itself, kept open: the kernel's perf hooks stay on, so a step's
     *  first counters do not patch kernel code and interrupt every CPU (static keys). */
    struct np_perf_counters perf_held;
    char perf_off_reason[NP_REASON_MAX];
    char hw_off_reason[NP_REASON_MAX]; /**< why hw_counters is false, else "" */
    struct np_node_counters counters;
    struct np_uncore_reader uncore; /**< the memory controllers' counters (uncore_bw_*) */
    /* class_default=auto: the sensitivity model (auto_class.c), or why there is none */
    struct np_sens_model sens_model;
    struct np_hint_state hint;
    bool sens_loaded;
    char sens_why[NP_ERR_MSG_MAX];
    /* the steps and the clients */
    struct np_registry registry;
    struct np_daemon_client clients[NPD_MAX_CLIENTS];
    unsigned refused;      /**< connections refused since the last log line about them */
    double refused_logged; /**< when that line was written (monotonic s) */
    int listen_fd, timer_fd, signal_fd, pid_fd;
    FILE *trace;
    char spool_without_acl[1024]; /**< the spool whose refusal of ACLs was logged */
    struct np_migration_state migration;
    struct np_report_hold report_hold;
    struct writer *writer; /**< reports and registry.json off the loop (writer.h); NULL: written
                                on the loop thread (start-up, stop, the unit suites) */
    /** job_report_done, for report_out.c, which is below the step's life and does not know it */
    void (*report_durable)(struct np_daemon *d, struct np_daemon_job *j);
    struct np_daemon_totals totals;
    struct np_fd_budget fd_budget; /**< /proc files the samplers may keep open (sampling.c) */
    long fd_limit;                 /**< RLIMIT_NOFILE as raised at start (0: unknown) */
    hwloc_bitmap_t started_cpus;   /**< owned: the affinity it was started with */
    hwloc_bitmap_t helper_cpus;    /**< owned: where it runs (a job on them shares its CPUs) */
    /* the Prometheus endpoint (http.c), NULL when metrics_listen is empty */
    struct http_server *http;
    double metrics_render_s;       /**< time the last page took to render */
    uint64_t metrics_refused;      /**< scrapes refused since the last log line about them */
    double metrics_refused_logged; /**< when that line was written (monotonic s) */
    double started_mono;
    enum np_perf_why hw_off_why; /**< why hw_counters is false, as a code (the metrics page) */
    bool hw_counters;            /**< cycles, instructions and LLC misses count here (sampling.c) */
    char emulated_cpu[256];      /**< why the CPU is an emulator's (the reports say so), else "" */
    bool stop;
};

#define NPD_LOG(d, level, ...) np_logf(&(d)->log, NP_LOG_##level, __VA_ARGS__)
/** NPD_LOG, then @p rc as the expression's value: `return NPD_LOG_RC(d, ERROR, rc, ...);` */
#define NPD_LOG_RC(d, level, rc, ...) (NPD_LOG(d, level, __VA_ARGS__), (rc))

/* ---- daemon.c: small helpers every part may use ---- */

/** mkdir -p: the parents 0755, the last @p mode. @return 0 or -errno */
int np_daemon_mkdir_p(const char *path, mode_t mode);

/** The directory part of @p path ("/" for "/x"). */
void np_daemon_dirname(const char *path, char *out, size_t size);

/** Take the pid file's lock and write our pid (nothing when pid_file is empty). @return 0/-errno */
int np_daemon_write_pid_file(struct np_daemon *d);

/* accept(2) that never spins at the descriptor limit, where a listener stays readable: one spare
 * descriptor is closed to take the connection, which is closed at once, and reopened. */

/** Open the spare (numaplaced's start, while descriptors are free). 0 or -errno. */
int accept_shed_init(void);

/** accept4; at the descriptor limit the waiting connection is shed: -1 with errno EMFILE. */
int accept_shed(int listen_fd, struct sockaddr *addr, socklen_t *len, int flags);

/** Connections shed since start (for the log). */
unsigned long accept_shed_count(void);

/* The log sink: the library never logs, it hands messages to this. */

/** @p msg with control characters as \\xNN into @p out: a user's text cannot forge a log line. */
void log_escape(const char *msg, char *out, size_t size);

/** The np_log_fn of the daemon; @p arg is its struct np_daemon. Safe from the worker thread. */
void log_sink(enum np_log_level level, const char *msg, void *arg);

/** (Re)open the destination cfg.log names: "syslog", "stderr" or a file. @return 0 or -errno */
int log_open(struct np_daemon *d);

/** Close a log file (syslog and stderr need nothing). */
void log_close(struct np_daemon *d);

/* ---- registry.c: one step, and the steps by (job_id, step_id), kept in registry.json ---- */

/** Free a job that is not (or no longer) in the registry. Accepts NULL. */
void job_free(struct np_daemon_job *j);

/** Its entry in j->tasks for @p pid, or NULL. Borrowed. */
json_t *job_task_entry(const struct np_daemon_job *j, pid_t pid);

/** Set its priority class (and the name its report carries). */
void job_set_class(struct np_daemon_job *j, enum np_class cls);

/** What decided its class (class_source): "label", "default", "admin", "auto: ..." */
void job_set_class_source(struct np_daemon_job *j, const char *source);

/** Follow the tasks' affinity into meta.effective_cpus and local_nodes. @return if they changed */
bool job_follow_effective_cpus(const struct np_daemon *d, struct np_daemon_job *j);

/** numaplaced's CPUs, and those @p j shares, into meta.helper_cpus and meta.shared_cpus. */
void job_note_helper_cpus(const struct np_daemon *d, struct np_daemon_job *j);

/** Bit n: some CPU of @p cpus is on NUMA node n (nothing when the node map is unknown). */
uint64_t job_cpu_nodes_mask(const struct np_daemon *d, hwloc_const_bitmap_t cpus);

#define NPD_STATE_SCHEMA "numaplace.state/1"

#define REGISTRY_JOURNAL_NAME      "registry.journal" /* registry_note's, beside registry.json */
#define REGISTRY_JOURNAL_MIN_BYTES (64u << 10) /* never folded into registry.json below this */

/** Empty. Cannot fail (memory comes with the first insert). */
void registry_init(struct np_registry *r);

/** Free every job and the index; accepts an empty registry. */
void registry_fini(struct np_registry *r);

/** The step, or NULL. Borrowed. */
struct np_daemon_job *registry_find(const struct np_registry *r, uint32_t job_id, uint32_t step_id);

/** Add @p job (stolen on success). @return 0, -EEXIST (that step is there), -ENOMEM */
int registry_insert(struct np_registry *r, struct np_daemon_job *job);

/** Take @p job out (not freed: the caller owns it again). @return 0 or -ENOENT */
int registry_remove(struct np_registry *r, const struct np_daemon_job *job);

/** The i-th step in (job_id, step_id) order; removing it shifts the later ones down. Borrowed. */
static inline struct np_daemon_job *registry_at(const struct np_registry *r, unsigned i)
{
    return r->jobs[i];
}

/** Write every step to registry.json (atomically; failures logged): at stop, and registry_flush. */
void registry_save(struct np_daemon *d);

/** Something a restart needs changed in @p j: its entry is appended to registry.journal at once
 *  (a kill -9 after the reply loses nothing), registry.json rewritten at the next tick, or at
 *  once past REGISTRY_JOURNAL_MIN_BYTES and twice its size (the journal then starts again). */
void registry_note(struct np_daemon *d, const struct np_daemon_job *j);

/** As registry_note, for one task's entry (@p task, borrowed, in j->tasks) alone. */
void registry_note_task(struct np_daemon *d, const struct np_daemon_job *j, json_t *task);

/** As registry_note_task, for a task just registered: with its pid's start time. */
void registry_note_task_added(struct np_daemon *d, const struct np_daemon_job *j, json_t *task);

/** The step ended (its report is written): a journal line, as registry_note. */
void registry_note_end(struct np_daemon *d, uint32_t job_id, uint32_t step_id);

/** Once per interval tick: registry_save when marked dirty, else nothing. */
void registry_flush(struct np_daemon *d);

/* ---- registry_restore.c: the steps back after a restart (above the step's life) ---- */

/** registry.json with the journal's later lines: running steps are tracked again, those that
 *  ended meanwhile get an incomplete report. A bad file starts empty, a bad entry is skipped. */
void registry_restore(struct np_daemon *d);

/* ---- auto_class.c: class_default=auto (docs/sensitivity.md): an unlabelled step is classed by
 * its predicted sensitivity once it has NPD_AUTO_CLASS_SAMPLES samples with counters ---- */

/* Its start-up (loading input, allocating) is not what it runs like: at 1 s, half a minute. */
#define NPD_AUTO_CLASS_SAMPLES 30

/** Load sensitivity_table when class_default=auto or the order ranks by prediction, or say why. */
void auto_class_load(struct np_daemon *d);

/** After each sample of @p j: count it when it has the counters, and class the step when due. */
void auto_class_consider(struct np_daemon *d, struct np_daemon_job *j, const struct np_sample *s);

/** @p s's predicted remote slowdown, with its inputs. @return 0, or -ENODATA with @p err */
int auto_class_predict(const struct np_daemon *d, const struct np_sample *s,
                       struct np_sens_inputs *in, double *slowdown, struct np_err *err);

/** Root reads only a regular file of root's (or numaplaced's) no one else may write, no symlink
 *  (numaplaced(8) SECURITY); @p what names it. @return 0 or -errno with @p err */
int auto_class_file_is_safe(const char *what, const char *path, struct np_err *err);

/* ---- sampling.c: the node at start, each step each interval, on the housekeeping CPUs ---- */

/** nohz_full and isolated CPUs under @p root ("" = /). @return 0, or -EINVAL: not a CPU list */
int housekeeping_quiet_cpus(const char *root, hwloc_bitmap_t nohz, hwloc_bitmap_t isolated);

/** @p wanted (empty: @p started) without @p quiet, else @p started without it, else @p started.
 *  @return 0, 1 when @p wanted gave way to @p started, 2 when nothing outside @p quiet was left */
int housekeeping_choose(hwloc_const_bitmap_t wanted, hwloc_const_bitmap_t started,
                        hwloc_const_bitmap_t quiet, hwloc_bitmap_t out);

/** The CPUs slurmd runs on (Slurm confines it to the specialized CPUs, CpuSpecList or
 *  CoreSpecCount), from each slurmd's Cpus_allowed_list under @p root, its forks left out.
 *  @return 1, 0 when no slurmd runs, -EINVAL when they disagree or one is unreadable (empty) */
int housekeeping_slurmd_cpus(const char *root, hwloc_bitmap_t out);

/** Pin to housekeeping_cpus ("auto": housekeeping_slurmd_cpus), and say where it runs. */
void sampling_pin_housekeeping(struct np_daemon *d);

/** Which NUMA node each CPU belongs to (d->topology, d->cpu_node); a failure is logged. */
void sampling_load_topology(struct np_daemon *d);

/** Close the nodes' kept meminfo files (d->meminfo_files) and free them; NULL is fine. */
void sampling_close_meminfo(struct np_daemon *d);

/** Which perf events count on this node (d->perf_mask), and why not when none does. */
void sampling_probe_perf(struct np_daemon *d);

/** @p bytes of @p j's traffic into totals.misses_bytes, spread over the nodes of its pages. */
void sampling_count_node_traffic(struct np_daemon *d, const struct np_daemon_job *j,
                                 uint64_t bytes);

/** One sample of @p j at @p now folded into its stats (and the trace). @p final: its last. */
void sampling_sample_job(struct np_daemon *d, struct np_daemon_job *j, double now,
                         bool node_counters_read, bool final);

/* ---- sampling.c, uncore_bw: each node's traffic from its memory controllers' counters ---- */

/** Detect, encode and open the counters (perf on, as root); logs what it found. */
void uncore_bw_start(struct np_daemon *d);

/** After SIGHUP: open counters stay (no interval without a rate) unless `perf` changed. */
void uncore_bw_reload(struct np_daemon *d, bool perf_before);

/** Read them once per interval, adding each node's bytes to totals.uncore_bytes. */
void uncore_bw_tick(struct np_daemon *d);

/** Does a memory controller counted now serve @p node (its traffic then from uncore_bytes)? */
bool uncore_bw_counts_node(const struct np_daemon *d, unsigned node);

/** Replace @p view's per-node traffic by the counters' where they have a rate. */
void uncore_bw_apply(const struct np_daemon *d, struct np_node_view *view);

/* ---- migration.c: the engine's node view, the worker's queue, the triggers, the booking ---- */

/** Start the worker when migration is on and it is not running yet; says how it is set up. */
void migration_start(struct np_daemon *d);

/** Stopping: end the running request after its batch, book and answer it, stop the worker. */
void migration_stop(struct np_daemon *d);

/** Read the topology's HMAT figures into d->tier_latency and d->tier_capacity, once after the
 *  topology loads (they never change while it stays). */
void migration_read_tier_figures(struct np_daemon *d);

/** The node as the engine sees it, a deep copy the worker may own. New (migrator_view_free). */
struct np_node_view *migration_build_view(const struct np_daemon *d);

/** Each memory node's traffic now, for status: its source, and its rate or why none. New. */
json_t *migration_node_traffic_json(const struct np_daemon *d);

/** Queue one request. @return 0 or -EBUSY (the queue is full) */
int migration_enqueue(struct np_daemon *d, const struct np_request *req,
                      const struct np_order_ops *order, bool dry_run, uint64_t tag);

/** Hand the oldest queued request to the worker when it is idle. */
void migration_submit_next(struct np_daemon *d);

/** The worker finished: book the result, answer the client that asked, submit the next. */
void migration_collect(struct np_daemon *d);

/** Book a finished request into each job still tracked; one that moved nothing backs off. */
void migration_book(struct np_daemon *d, const struct migrator_done *done, double now);

/** Index of the order called @p name in np_order_at's table, or -1. */
int migration_order_index(const char *name);

/** May trigger @p kind propose requests at @p now (not backed off)? */
bool migration_trigger_ready(const struct np_daemon *d, enum np_trigger_kind kind, double now);

/** Every interval: the enabled triggers look at the node and may queue requests. */
void migration_run_triggers(struct np_daemon *d);

/** Is @p os a NUMA node of this machine (the kernel's numbering)? */
bool migration_node_exists(const struct np_daemon *d, unsigned os);

/** "nodes 0,1,2,3", for messages. */
void migration_node_list(const struct np_daemon *d, char *out, size_t size);

/* ---- report_out.c: a step's report to the spool, samples to the trace ----
 * A report the spool refuses is held in memory, its step still in the registry (listed "ending",
 * the report with it), retried oldest first; the refusal is logged every NPD_HOLD_REMIND_S. */

/** Hold the report @p name (@p len bytes of @p text, stolen) of @p j (borrowed); @p why: the
 *  write's error. @return true: held (j->report_held); false: lost (logged) */
bool report_hold_add(struct np_daemon *d, struct np_daemon_job *j, const char *name, char *text,
                     size_t len, const char *why);

/** Each interval: the oldest held report again (on the writer's thread when there is one). */
void report_hold_retry(struct np_daemon *d);

/** At stop, after registry.json's save: each report still held logged as kept in it, or lost. */
void report_hold_flush(struct np_daemon *d);

/** Free what is held without a word (np_daemon_fini). */
void report_hold_fini(struct np_daemon *d);

/** Each NUMA node's memory tier from d->topology into @p tier[NP_SAMPLE_MAX_NODES] (0 where the
 *  topology is unknown): the report's and status's pages by tier. */
void report_node_tiers(const struct np_daemon *d, unsigned *tier);

/** Write the step's report, built once into j->final_report, to <spool>/<job>.<step>.<host>.json,
 *  mode 0600, its user in a read ACL entry. @return false: written or lost (the step may be
 *  forgotten); true: held, or queued to d->writer (then d->report_durable runs on the loop) */
bool report_out_write(struct np_daemon *d, struct np_daemon_job *j, bool complete);

/** (Re)open the trace cfg.record names (none when empty). @return 0 or -errno (logged) */
int trace_open(struct np_daemon *d);

/** Append one trace line (stolen; NULL is ignored) when a trace is open. */
void trace_line(struct np_daemon *d, json_t *line);

/* ---- clients.c: replies, now or once what a client waits for is done ---- */

/** Close @p c and drop what it was sent or was sending; its slot is free again. */
void client_close(struct np_daemon_client *c);

/** Send @p reply (stolen; NULL: nothing) without blocking, the rest on POLLOUT, then close. */
void client_reply(struct np_daemon_client *c, json_t *reply);

/** On POLLOUT: more of the reply; closes the client once it is out or the client is gone. */
void client_write(struct np_daemon_client *c);

/** Answer the client waiting on @p tag with @p reply (stolen; freed when nobody waits). */
void client_answer_tag(struct np_daemon *d, uint64_t tag, json_t *reply);

/* ---- job_life.c: a step created, finished into a report, forgotten once that is durable ---- */

/** A new step in the registry (borrowed); NULL with @p err (-ENOSPC: max_jobs, -EINVAL ...). */
struct np_daemon_job *job_new(struct np_daemon *d, uint32_t job_id, uint32_t step_id, uid_t uid,
                              const char *cpus, const char *policy, const char *sensitivity,
                              struct np_err *err);

/** May @p j's next task open perf counters in the descriptor budget? Else it goes to /proc. */
bool job_keep_perf_for_task(struct np_daemon *d, struct np_daemon_job *j);

/** The step ended (@p complete) or cannot be followed: its final sample, report and trace end,
 *  then forgotten; while its report is with the writer or held, it stays, j->finishing. */
void job_finish(struct np_daemon *d, struct np_daemon_job *j, bool complete);

/** Its report is durable or held: answer its step_end client; unless held, forget the step. */
void job_report_done(struct np_daemon *d, struct np_daemon_job *j);

/* ---- placement_hint.c: op "advise" (docs/auto.md): node load, and the job name's history ---- */

/** Read the machine profile's capacities and the loaded threshold (start and SIGHUP). */
void hint_load(struct np_daemon *d);

/** Each interval, with auto_load=cpu-busy: every node's CPUs' busy share since the last one. */
void hint_tick(struct np_daemon *d);

/** The reply to advise (root only). New reference. */
json_t *op_advise(struct np_daemon *d, const struct np_peer *peer, uint32_t job_id,
                  uint32_t step_id, uid_t uid, const char *name);

/** At register: the job name advise was told for this step, if any, into @p j. */
void hint_claim_name(struct np_daemon *d, struct np_daemon_job *j);

/** At a step's end: remember its sensitivity under its user and name, when both are known. */
void hint_remember(struct np_daemon *d, const struct np_daemon_job *j);

/* ---- placement_hint.c, the history: how many runs of each (user, job name) ended high and low.
 * NPD_HISTORY_MAX entries shared among the users, in state_dir's history.json, rewritten after
 * each change, read once at start only from a file of numaplaced's no one else may write ---- */

#define NPD_HISTORY_SCHEMA "numaplace-history/1"
#define NPD_HISTORY_FILE   "history.json"
/* The longest history.json: each entry {"uid":U,"name":"N","high":H,"low":L,"last":S}, is 42
 * bytes with its comma, 10 digits for U, H and L, 20 for S, a printable name's bytes escaped as
 * two at worst; around them {"schema":"numaplace-history/1","seq":S,"entries":[]}: 52 and 20. */
#define NPD_HISTORY_NAME_MAX  127 /* bytes, as advise's "name" */
#define NPD_HISTORY_ENTRY_MAX (42 + 3 * 10 + 20 + 2 * NPD_HISTORY_NAME_MAX)
#define NPD_HISTORY_FILE_MAX  (52 + 20 + NPD_HISTORY_MAX * NPD_HISTORY_ENTRY_MAX) /* 88,648 */
/* What the reader accepts: more than is ever written, so an older numaplaced's file still reads */
#define NPD_HISTORY_READ_MAX 131072 /* 128 KiB */
_Static_assert(NPD_HISTORY_FILE_MAX <= NPD_HISTORY_READ_MAX, "the reader refuses what is written");

/** The entry for (@p uid, @p name), or -1. */
int history_find(const struct np_hint_state *a, uid_t uid, const char *name);

/** Count a run of (@p uid, @p name) that ended @p high or low, and save (a bad name: nothing). */
void history_note(struct np_daemon *d, uid_t uid, const char *name, bool high);

/** Write history.json now (on the writer's thread when there is one). */
void history_save(struct np_daemon *d);

/** At start: history.json back, or empty (said unless missing). @return entries, or -errno */
int history_restore(struct np_daemon *d);

/* ---- server.c: the socket, its clients (who, from SO_PEERCRED; how long) and requests ---- */

/** Listen on cfg.socket (mode 0666: rights are per request), unless a numaplaced answers there. */
int server_open(struct np_daemon *d);

/** Close every client and the socket, and remove the socket file. */
void server_close(struct np_daemon *d);

/** Take every waiting connection (up to NPD_MAX_CLIENTS at once). */
void server_accept(struct np_daemon *d);

/** May a client of @p uid have a slot (root any free one, others their share outside root's)? */
bool server_admit(const struct np_daemon *d, uid_t uid);

/** Read what @p c sent; a whole line is handled and answered (a migration later). */
void server_read(struct np_daemon *d, struct np_daemon_client *c);

/** Close idle clients: those silent for NPD_CLIENT_TIMEOUT_S and not waiting on a migration. */
void server_expire_idle(struct np_daemon *d, double now);

/* ---- http.c: GET /metrics over libmicrohttpd in the loop's thread (no locks, nothing waits on a
 * client); peers are judged when accepted (peer.h), and root on this host finds a slot ---- */

#define NPD_HTTP_MAX_CONNECTIONS 16 /* scrapers at once; more are answered 503 */
#define NPD_HTTP_ROOT_RESERVED   4  /* of them, only root on this host may take */
#define NPD_HTTP_MAX_PER_PEER    4  /* one user on this host, or one other host, at most */
#define NPD_HTTP_TIMEOUT_S       5  /* a connection idle this long is closed */
#define NPD_HTTP_LIFETIME_S      10 /* and any connection this old (a slow client included) */

/** Serve d->cfg.metrics (unless metrics_listen is empty). @return 0 or -errno (logged) */
int http_start(struct np_daemon *d);

/** Stop serving (accepts a daemon that serves nothing). */
void http_stop(struct np_daemon *d);

/** At a reload: move to a new metrics_listen (the old one stays when it cannot be bound); users
 *  and networks apply at the next request. */
void http_reload(struct np_daemon *d, const struct np_metrics_config *old);

/** The fd to poll for input, or -1. */
int http_fd(const struct np_daemon *d);

/** How long the loop may wait before calling http_run, at most @p max_ms. */
int http_timeout_ms(const struct np_daemon *d, int max_ms);

/** Do whatever the endpoint can without waiting (accept, read, answer, time out). */
void http_run(struct np_daemon *d);

/** Change the connections' lifetime (NPD_HTTP_LIFETIME_S; the suites shorten it). */
void http_set_lifetime(struct np_daemon *d, double seconds);

/* ---- fd_budget.c: a descriptor reserve no step may take, so a report or a registry save always
 * finds one; above it, a budget for the steps' perf counters and kept /proc files ----
 * The reserve: what can be open at once on top of what is open when a step registers: every
 * client slot (64); every scraper and one answered 503 (17); the writer's report (directory,
 * temporary) and registry.json (directory, temporary, journal), a trace and the held-report
 * retry (NPD_FD_SAVES, 7 at most); slurmd's /proc scan (3), the migrator (2), the name service
 * (4), hwloc at a reload (2), syslog (1) and a sampler's passing read (1) (NPD_FD_TRANSIENT); the
 * node's kept files: /proc/stat, interrupts, softirqs, balancing, vmstat and a meminfo for each
 * of eleven nodes (NPD_FD_NODE_FILES); and what that misses (NPD_FD_MARGIN). Listeners, signalfd,
 * timerfd and eventfds are open at start: in the count, not the reserve. 145 in all. */
#define NPD_FD_SAVES      8
#define NPD_FD_TRANSIENT  16
#define NPD_FD_NODE_FILES 16
#define NPD_FD_MARGIN     24
#define NPD_FD_RESERVE                                                                             \
    (NPD_MAX_CLIENTS + NPD_HTTP_MAX_CONNECTIONS + 1 + NPD_FD_SAVES + NPD_FD_TRANSIENT +            \
     NPD_FD_NODE_FILES + NPD_FD_MARGIN)

enum fd_verdict { FD_OK, FD_NO_PERF, FD_REFUSE };

/** The budget's figures at one moment. */
struct fd_use {
    long open;      /**< descriptors open now (fd_count_open) */
    long reserve;   /**< of NPD_FD_RESERVE, what is not open already (fd_reserve_left) */
    long limit;     /**< RLIMIT_NOFILE (0: unknown, nothing is checked) */
    long kept_left; /**< kept /proc files the samplers may still open (d->fd_budget.left) */
};

/** May a task whose perf counters take @p perf_need descriptors have them (FD_OK), /proc alone
 *  (FD_NO_PERF: they would eat into the reserve), or nothing (FD_REFUSE: the reserve)? Pure. */
enum fd_verdict fd_verdict(const struct fd_use *u, long perf_need);

/** Entries of the directory @p path that do not start with '.', or -errno. */
long fd_count_entries(const char *path);

/** Entries of @p fd_dir ("/proc/self/fd": every open descriptor) but its own, or -errno. */
long fd_count_open(const char *fd_dir);

/** NPD_FD_RESERVE less what of it is open now (clients, kept node files): none counts twice. */
long fd_reserve_left(const struct np_daemon *d);

/** Descriptors the perf counters of one task take with @p perf_mask: one per event. */
long fd_perf_need(unsigned perf_mask);

/** fd_verdict now for a task needing @p perf_need; @p why names the budget unless FD_OK. */
enum fd_verdict fd_check(const struct np_daemon *d, long perf_need, char *why, size_t why_size);

/** Raise the limit to the hard one (this process polls; select's 1024 does not apply) and give
 *  the samplers a quarter of what is above the reserve to keep /proc files open. */
void fd_budget_start(struct np_daemon *d);

/* ---- lifecycle.c, the configuration: the file, then the command line's --KEY=VALUE flags ---- */

/** d->config_path over the defaults, then d->overrides; a reload keeps socket, pid_file and
 *  proc_root. @return 0, or -errno with the reason logged (d->cfg unchanged) */
int config_load(struct np_daemon *d, bool initial);

/** SIGHUP: load again, apply what can change; a failed load keeps the running one. 0/-errno */
int config_reload(struct np_daemon *d);

/* ---- loop.c: one poll over signals, timer, socket, worker, metrics and the writer ---- */

/** The next whole multiple of @p interval_ms since the epoch: the same on every node. */
struct timespec loop_next_deadline(struct timespec now, unsigned interval_ms);

/** SIGHUP/SIGTERM/SIGINT into a signalfd, SIGPIPE ignored, the timerfd. @return 0 or -errno */
int loop_open_fds(struct np_daemon *d);

/** Arm the timerfd at every cfg.interval_ms on the wall clock (loop_next_deadline). */
void loop_set_timer(struct np_daemon *d);

/** The clients of @p pfd[from..n) to read, into @p order, oldest connection first: a task's
 *  registration is read before its own `applied`. @return how many */
int loop_read_order(struct np_daemon_client *const *owner, const struct pollfd *pfd, int from,
                    int n, int *order);

/** Run until SIGTERM or SIGINT (SIGHUP reloads) or poll fails. */
void loop_run(struct np_daemon *d);

/** The interval's work: sample every step, end those whose processes are gone, run the triggers. */
void sampling_tick(struct np_daemon *d);

/* ---- lifecycle.c: the context set up and torn down, above every part it starts and stops ---- */

/** Everything off: fds -1, the log sink pointed at @p d, default configuration. Cannot fail. */
void np_daemon_init(struct np_daemon *d);

/** Free and close what @p d holds but the log; the registry is not saved. */
void np_daemon_fini(struct np_daemon *d);

/** Write what the writer has, run its completions and end it (later writes: on the loop). */
void np_daemon_stop_writer(struct np_daemon *d);

#endif /* NUMAPLACED_DAEMON_H */
