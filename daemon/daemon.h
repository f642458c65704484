/*
 * daemon.h - numaplaced's context: everything the daemon knows is in one struct np_daemon, passed
 * to every part, so each can be driven by a unit test without a socket, Slurm or root; then each
 * part's functions, bottom to top (a part uses those above it; lifecycle.c starts and stops them).
 * What stands apart from the context keeps its own header (auth.h, migrator.h, writer.h ...), as
 * does the protocol's surface (ops.h). Data flows one way: registrations create jobs; each
 * interval the node counters and every job's sampler fill samples, which fold into the job's
 * stats; a step's end turns them into a report in the spool.
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
    /** owned: its report once built, kept (and in registry.json and the journal) until it is
     *  durable: a restart meanwhile writes this one, not an empty one */
    json_t *final_report;
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
    /** Memory traffic each node served, summed over the intervals: its controllers' counts
     *  (uncore_bw_tick), and its steps' LLC misses x 64 B spread by their pages (sampling.c). */
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
    struct np_topology *topology;       /**< NULL when it could not be loaded */
    int *cpu_node;                      /**< NUMA node of each CPU number, -1 unknown */
    struct np_kept_file *meminfo_files; /**< owned: each node's meminfo kept open, by node number
                                             (NP_MAX_NODES; sampling.c), NULL: read afresh */
    unsigned ncpus;
    unsigned perf_mask;
    /** The probe's counters on numaplaced itself, kept open: while an event of each kind exists
     *  the kernel keeps its perf hooks on, so a step's first counters do not rewrite kernel
     *  code and interrupt every CPU (static keys), a cost its launch paid (sampling.c). */
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
    /** A step's report is durable or held: job_report_done (set by np_daemon_init). Called from
     *  report_out.c, which is below the step's life and does not know it. */
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
    /** what says this node's CPU is an emulator's (numaplace/procfs.h), else "": its counters
     *  count the emulator's definitions, which the reports say */
    char emulated_cpu[256];
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

/* accept(2) that never spins at the descriptor limit (EMFILE, ENFILE), where a listener stays
 * readable and a poll loop would wake forever: a spare descriptor, one for the process (the
 * loop's thread alone accepts), is closed to take the connection, closed at once, and reopened. */

/** Open the spare (numaplaced's start, while descriptors are free). 0 or -errno. */
int accept_shed_init(void);

/** accept4 of @p listen_fd (@p addr, @p len, @p flags as accept4's). At the descriptor limit the
 *  waiting connection is shed through the spare: -1 with errno EMFILE, and the listener is no
 *  longer readable for it. Other failures: -1 with accept4's errno. */
int accept_shed(int listen_fd, struct sockaddr *addr, socklen_t *len, int flags);

/** Connections shed since start (for the log). */
unsigned long accept_shed_count(void);

/* The log sink: the library never logs, it hands messages to this. */

/** @p msg with control characters written as \\xNN into @p out (cut, never overflowed): whatever
 *  a user put in it (a request's op, a job name ...), it cannot forge a log line. */
void log_escape(const char *msg, char *out, size_t size);

/** The np_log_fn of the daemon; @p arg is its struct np_daemon. Safe from the worker thread. */
void log_sink(enum np_log_level level, const char *msg, void *arg);

/** (Re)open the destination cfg.log names: "syslog", "stderr" or a file. @return 0 or -errno */
int log_open(struct np_daemon *d);

/** Close a log file (syslog and stderr need nothing). */
void log_close(struct np_daemon *d);

/* ---- registry.c: one tracked step, the object (its class, its tasks, its CPUs), and the
 * steps, keyed by (job_id, step_id), with their copy in registry.json (schema
 * numaplace.state/1) so they survive a restart ---- */

/** Free a job that is not (or no longer) in the registry. Accepts NULL. */
void job_free(struct np_daemon_job *j);

/** Its entry in j->tasks for @p pid, or NULL. Borrowed. */
json_t *job_task_entry(const struct np_daemon_job *j, pid_t pid);

/** Set its priority class (and the name its report carries). */
void job_set_class(struct np_daemon_job *j, enum np_class cls);

/** What decided its class (class_source): "label", "default", "admin", "auto: ..." */
void job_set_class_source(struct np_daemon_job *j, const char *source);

/** Follow the sampler's effective CPUs (the registered ones narrowed to the tasks' affinity) into
 *  meta.effective_cpus and local_nodes (which the migration view and local share read); meta.cpus
 *  and registered_nodes keep what was registered. @return whether they changed */
bool job_follow_effective_cpus(const struct np_daemon *d, struct np_daemon_job *j);

/** numaplaced's CPUs and those of them that are @p j's (meta.helper_cpus, meta.shared_cpus; once
 *  shared, a CPU stays listed). Nothing when either set is unknown. */
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

/** The i-th step in (job_id, step_id) order; i < r->count. Removing it shifts the later ones
 *  down one, so a loop that removes the current step does not advance. Borrowed. */
static inline struct np_daemon_job *registry_at(const struct np_registry *r, unsigned i)
{
    return r->jobs[i];
}

/** Write every step to registry.json (atomically; failures logged): at stop, and registry_flush. */
void registry_save(struct np_daemon *d);

/** Something a restart needs changed in @p j (registered, a task added, a class): a line with its
 *  entry is appended to registry.journal at once (a kill -9 right after the reply loses nothing;
 *  not flushed: a power loss loses the requests since the last tick), and registry.json is
 *  rewritten at the next tick, not per request. Past REGISTRY_JOURNAL_MIN_BYTES and twice
 *  registry.json's size, registry.json is written at once and the journal starts again, so the
 *  writes stay proportional to what the requests change. */
void registry_note(struct np_daemon *d, const struct np_daemon_job *j);

/** As registry_note, for one task's entry of @p j (@p task, borrowed, in j->tasks) alone: a step
 *  of many tasks journals each task's once, not the whole step per task. */
void registry_note_task(struct np_daemon *d, const struct np_daemon_job *j, json_t *task);

/** As registry_note_task, for a task just registered (its pid sampled): with the pid's start
 *  time, so a step registered task by task journals linearly in its tasks, not quadratically. */
void registry_note_task_added(struct np_daemon *d, const struct np_daemon_job *j, json_t *task);

/** The step ended (its report is written): a journal line, as registry_note. */
void registry_note_end(struct np_daemon *d, uint32_t job_id, uint32_t step_id);

/** Once per interval tick: registry_save when marked dirty, else nothing. */
void registry_flush(struct np_daemon *d);

/* ---- registry_restore.c: the steps back after a restart (above the registry and the step's
 * life: it creates the steps that still run and finishes those that ended meanwhile) ---- */

/** Read registry.json back with the journal's later lines: steps whose processes still run are
 *  tracked again, those that ended meanwhile get an incomplete report. A file unreadable or not
 *  numaplace.state/1 is logged and the registry starts empty; a bad entry is logged, skipped. */
void registry_restore(struct np_daemon *d);

/* ---- auto_class.c: class_default=auto (docs/sensitivity.md): a step without a label is classed
 * by its predicted sensitivity, through class_map, once it has NPD_AUTO_CLASS_SAMPLES samples
 * with counters. A label, the site's refusal of one, or set-class wins (class_source says) ---- */

/* Its start-up (loading input, allocating) is not what it runs like: at 1 s, half a minute. */
#define NPD_AUTO_CLASS_SAMPLES 30

/** Load sensitivity_table when class_default=auto or the migration order ranks by prediction, or
 *  log why it cannot be (a table a user could write is refused: root reads it). */
void auto_class_load(struct np_daemon *d);

/** After each sample of @p j: count it when it has the counters, and class the step when due. */
void auto_class_consider(struct np_daemon *d, struct np_daemon_job *j, const struct np_sample *s);

/** The predicted remote slowdown of a job whose last sample is @p s, with the inputs used.
 *  @return 0, or -ENODATA with @p err "unavailable: why" (no model, a counter missing) */
int auto_class_predict(const struct np_daemon *d, const struct np_sample *s,
                       struct np_sens_inputs *in, double *slowdown, struct np_err *err);

/** Root reads only files no other user could have written (numaplaced(8) SECURITY): a regular
 *  file, not a symlink, root's (or numaplaced's), not group- or world-writable; @p what names it
 *  in the message. @return 0 or -errno with @p err */
int auto_class_file_is_safe(const char *what, const char *path, struct np_err *err);

/* ---- sampling.c: what numaplaced learns about the node at start, and about each step each
 * interval; where it runs: the housekeeping CPUs, never those the kernel keeps quiet ---- */

/** The kernel's quiet CPUs under @p root ("" = /): /sys/devices/system/cpu/nohz_full into @p nohz,
 *  .../isolated (isolcpus) into @p isolated; a missing or empty file, or "(null)", means none.
 *  @return 0, or -EINVAL when a file holds no CPU list (the set stays empty) */
int housekeeping_quiet_cpus(const char *root, hwloc_bitmap_t nohz, hwloc_bitmap_t isolated);

/** numaplaced's CPUs into @p out: @p wanted (empty: @p started, the affinity it was started with)
 *  without @p quiet; if none is left, @p started without @p quiet; if still none, @p started.
 *  @return 0, 1 when @p wanted gave way to @p started, 2 when nothing outside @p quiet was left */
int housekeeping_choose(hwloc_const_bitmap_t wanted, hwloc_const_bitmap_t started,
                        hwloc_const_bitmap_t quiet, hwloc_bitmap_t out);

/** The CPUs slurmd runs on, into @p out: where Slurm enforces specialized CPUs (CpuSpecList,
 *  CoreSpecCount; task/cgroup with ConstrainCores, without SlurmdOffSpec) it confines slurmd to
 *  them, so the node knows them without slurmctld. From the Cpus_allowed_list of each process
 *  named slurmd under @p root ("" = /) whose parent is not one (slurmd's own forks).
 *  @return 1, 0 when no slurmd runs, -EINVAL when they disagree or one is unreadable (empty) */
int housekeeping_slurmd_cpus(const char *root, hwloc_bitmap_t out);

/** Keep the helper off the jobs' CPUs: housekeeping_cpus, or with "auto" the CPUs Slurm
 *  confines this node's slurmd to (housekeeping_slurmd_cpus). Says where it runs. */
void sampling_pin_housekeeping(struct np_daemon *d);

/** Which NUMA node each CPU belongs to (d->topology, d->cpu_node). Failure is logged: then
 *  bandwidth cannot be attributed to nodes. */
void sampling_load_topology(struct np_daemon *d);

/** Close the nodes' kept meminfo files (d->meminfo_files) and free them; NULL is fine. */
void sampling_close_meminfo(struct np_daemon *d);

/** Which perf events count on this node (d->perf_mask), and why not when none does. */
void sampling_probe_perf(struct np_daemon *d);

/** Add @p bytes of @p j's traffic (an interval's LLC misses x 64 B) to totals.misses_bytes of the
 *  nodes holding its pages, spread as np_node_traffic does; nothing before its pages are read. */
void sampling_count_node_traffic(struct np_daemon *d, const struct np_daemon_job *j,
                                 uint64_t bytes);

/** One sample of @p j at @p now folded into its stats (and the trace). @p final: its last. */
void sampling_sample_job(struct np_daemon *d, struct np_daemon_job *j, double now,
                         bool node_counters_read, bool final);

/* ---- sampling.c, uncore_bw: each memory node's traffic from its controllers' own counters,
 * where the kernel and libpfm4 have them (Intel IMC): source "uncore", in place of the estimate
 * from the jobs' misses (np_node_traffic); elsewhere it says why not, once ---- */

/** Detect, encode and open the counters (perf on, as root); logs what it found. */
void uncore_bw_start(struct np_daemon *d);

/** After SIGHUP: counters counting stay open (reopening would leave an interval without a rate);
 *  a change of `perf` (@p perf_before: its value before), or none open, starts afresh. */
void uncore_bw_reload(struct np_daemon *d, bool perf_before);

/** Read them once per interval, adding each node's bytes to totals.uncore_bytes. */
void uncore_bw_tick(struct np_daemon *d);

/** Does a memory controller counted now serve @p node (its traffic then from uncore_bytes)? */
bool uncore_bw_counts_node(const struct np_daemon *d, unsigned node);

/** Replace @p view's per-node traffic by the counters' where they have a rate. */
void uncore_bw_apply(const struct np_daemon *d, struct np_node_view *view);

void uncore_bw_stop(struct np_daemon *d);

/* ---- migration.c: the node view the engine works on, the worker's queue (migrator.h), the
 * triggers with their back-off, and what moved booked into the jobs' reports ---- */

/** Start the worker when migration is on and it is not running yet; says how it is set up. */
void migration_start(struct np_daemon *d);

/** Stopping: end the running request after its batch, book and answer it, stop the worker. */
void migration_stop(struct np_daemon *d);

/** The node as the engine sees it, a deep copy the worker may own. New (migrator_view_free). */
struct np_node_view *migration_build_view(const struct np_daemon *d);

/** Each memory node's traffic now (np_node_traffic), for status: [{"node", "source", and
 *  "bytes_per_s" where measured, "proxy_rank" for a proxy, else "unavailable": why}]. New; NULL
 *  when out of memory. */
json_t *migration_node_traffic_json(const struct np_daemon *d);

/** Queue one request. @return 0 or -EBUSY (the queue is full) */
int migration_enqueue(struct np_daemon *d, const struct np_request *req,
                      const struct np_order_ops *order, bool dry_run, uint64_t tag);

/** Hand the oldest queued request to the worker when it is idle. */
void migration_submit_next(struct np_daemon *d);

/** The worker finished: book the result, answer the client that asked, submit the next. */
void migration_collect(struct np_daemon *d);

/** Book a finished request at @p now into each job still tracked (and, unless a dry run, its
 *  pages read again at the next sample). One that moved nothing backs its trigger off for
 *  NPD_TRIGGER_BACKOFF_S: a homecoming per job, the others as a whole, an administrator never. */
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
 * A report the spool will not take (full, read-only, removed, unsafe) is held in memory, in the
 * order the steps ended, its step still in the registry, finishing (listed "ending", so `store`
 * and `report` wait), the report in registry.json and the journal (a restart writes it). Retries
 * go to the writer, oldest first, one at a time. The first refusal is logged, then a reminder
 * every NPD_HOLD_REMIND_S; one that cannot be held (the hold full), or still held at stop that
 * registry.json could not keep, is logged as lost. */

/** Hold the report @p name (@p len bytes of @p text, stolen) of step @p j (borrowed: it stays in
 *  the registry until written); @p why: the write's error. @return true: held (j->report_held);
 *  false: lost (logged), the step may be forgotten */
bool report_hold_add(struct np_daemon *d, struct np_daemon_job *j, const char *name, char *text,
                     size_t len, const char *why);

/** Each interval: the oldest held report again, on the writer's thread when there is one, else
 *  here, oldest first until one is refused. Nothing held, or a retry under way: nothing. */
void report_hold_retry(struct np_daemon *d);

/** At stop, once the writer has stopped and registry.json is saved: every report still held is
 *  logged, as kept in registry.json for the next start, or as lost when that save failed. */
void report_hold_flush(struct np_daemon *d);

/** Free what is held without a word (np_daemon_fini). */
void report_hold_fini(struct np_daemon *d);

/** Write the step's report to <spool_dir>/<job>.<step>.<host>.json, numaplaced's, mode 0600, the
 *  job's user in a read ACL entry (root trusts it in the epilog; a spool without ACLs keeps it
 *  root-only, logged once). Built once into j->final_report (meta.end_epoch set) unless restored
 *  with one. Failures are logged; a refused report is held. @return false: done (written or
 *  lost: the step may be forgotten); true: held, or queued to d->writer, whose completion runs
 *  d->report_durable(d, j) on the loop */
bool report_out_write(struct np_daemon *d, struct np_daemon_job *j, bool complete);

/** (Re)open the trace cfg.record names (none when empty). @return 0 or -errno (logged) */
int trace_open(struct np_daemon *d);

/** Append one trace line (stolen; NULL is ignored) when a trace is open. */
void trace_line(struct np_daemon *d, json_t *line);

/* ---- clients.c: replies, now or once what a client waits for is done (a migration, a report);
 * below every part that answers ---- */

/** Close @p c and drop what it was sent or was sending; its slot is free again. */
void client_close(struct np_daemon_client *c);

/** Send @p reply (stolen; NULL: nothing) without blocking, the rest on POLLOUT, then close. */
void client_reply(struct np_daemon_client *c, json_t *reply);

/** On POLLOUT: more of the reply; closes the client once it is out or the client is gone. */
void client_write(struct np_daemon_client *c);

/** Answer the client waiting on @p tag with @p reply (stolen; freed when nobody waits). */
void client_answer_tag(struct np_daemon *d, uint64_t tag, json_t *reply);

/* ---- job_life.c: a step created at its first registration, finished into a report, forgotten
 * once that is durable; above the parts it drives, which call back through the context ---- */

/** A new step in the registry (borrowed), its class from @p sensitivity and the class_* keys,
 *  its sampler on @p cpus. @return NULL with @p err (-ENOSPC: max_jobs; -EINVAL: bad @p cpus;
 *  -ENOMEM) */
struct np_daemon_job *job_new(struct np_daemon *d, uint32_t job_id, uint32_t step_id, uid_t uid,
                              const char *cpus, const char *policy, const char *sensitivity,
                              struct np_err *err);

/** May @p j open perf counters for one more task within the descriptor budget (or has none)?
 *  When not, the whole step goes to /proc alone, and says so (backends_reason, the log). */
bool job_keep_perf_for_task(struct np_daemon *d, struct np_daemon_job *j);

/** The step ended (@p complete) or cannot be followed: its final sample, its report, its trace's
 *  end, then out of the registry (journaled) and freed. While the writer has the report, or the
 *  spool refuses it (held), the step stays, j->finishing, its entry with the report journaled. */
void job_finish(struct np_daemon *d, struct np_daemon_job *j, bool complete);

/** Its report is durable or held: answer the step_end client on j->reply_tag, if any, and,
 *  unless held, drop it from the registry and free it. */
void job_report_done(struct np_daemon *d, struct np_daemon_job *j);

/* ---- placement_hint.c: the hint --numa-policy=auto gets before the tasks start (op "advise",
 * docs/auto.md): each node's traffic against its capacity from the machine profile (without
 * one, no node is loaded, and the reply says why), and this user's earlier runs of the job
 * name (its history, below) ---- */

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

/* ---- placement_hint.c, the history: what --numa-policy=auto learnt of each (user, job name)
 * here: how many runs ended labelled (or predicted) high and low (docs/auto.md). NPD_HISTORY_MAX
 * entries shared among the users (one past their share replaces their own entry used longest
 * ago, else one of the user holding the most), and history.json in state_dir: written whole after
 * every change through safe_file, read back once at start, only from a regular file of
 * numaplaced's own that no one else may write, of at most NPD_HISTORY_FILE_MAX bytes ---- */

#define NPD_HISTORY_SCHEMA "numaplace-history/1"
#define NPD_HISTORY_FILE   "history.json"
/*
 * The longest history.json: NPD_HISTORY_MAX entries of the longest figures and names, a name's
 * every byte escaped. Names are printable (np_proto_printable: advise refuses others, a restore
 * drops them), so the worst escape is two bytes (\" or \\; UTF-8 is written as it is). An entry
 * {"uid":U,"name":"N","high":H,"low":L,"last":S}, and its comma: 42 bytes of keys and
 * punctuation, uid, high and low of at most 10 digits, last of at most 20 (a json_int_t). Around
 * them {"schema":"numaplace-history/1","seq":S,"entries":[]}: 52 bytes and seq's 20.
 */
#define NPD_HISTORY_NAME_MAX  127 /* bytes, as advise's "name" */
#define NPD_HISTORY_ENTRY_MAX (42 + 3 * 10 + 20 + 2 * NPD_HISTORY_NAME_MAX)
#define NPD_HISTORY_FILE_MAX  (52 + 20 + NPD_HISTORY_MAX * NPD_HISTORY_ENTRY_MAX) /* 88,648 */
/* What the reader accepts: more than is ever written (a longer text is not, and says why), so an
 * older numaplaced's file still reads. */
#define NPD_HISTORY_READ_MAX 131072 /* 128 KiB */
_Static_assert(NPD_HISTORY_FILE_MAX <= NPD_HISTORY_READ_MAX, "the reader refuses what is written");

/** The entry for (@p uid, @p name), or -1. */
int history_find(const struct np_hint_state *a, uid_t uid, const char *name);

/** Count a run of (@p uid, @p name) that ended @p high or low, and save; a name empty, too long
 *  or not printable is not kept. */
void history_note(struct np_daemon *d, uid_t uid, const char *name, bool high);

/** Write history.json now (on the writer's thread when there is one). */
void history_save(struct np_daemon *d);

/** At start: read history.json back, or start empty saying why (missing: silently). @return the
 *  entries restored, or -errno (refused or unreadable; logged) */
int history_restore(struct np_daemon *d);

/* ---- server.c: the socket, its clients (who, from SO_PEERCRED; how long) and requests ---- */

/** Listen on cfg.socket (mode 0666: who may do what is decided per request); a live numaplaced
 *  there wins, a stale socket file is replaced. @return 0 or -errno (logged) */
int server_open(struct np_daemon *d);

/** Close every client and the socket, and remove the socket file. */
void server_close(struct np_daemon *d);

/** Take every waiting connection (up to NPD_MAX_CLIENTS at once). */
void server_accept(struct np_daemon *d);

/** May a client of @p uid have a slot now? Root: any free one; others: not the NPD_ROOT_RESERVED
 *  slots kept for root, and at most NPD_MAX_PER_USER at once. */
bool server_admit(const struct np_daemon *d, uid_t uid);

/** Read what @p c sent; a whole line is handled and answered (a migration later). */
void server_read(struct np_daemon *d, struct np_daemon_client *c);

/** Close idle clients: those silent for NPD_CLIENT_TIMEOUT_S and not waiting on a migration. */
void server_expire_idle(struct np_daemon *d, double now);

/* ---- http.c: GET /metrics over libmicrohttpd, without a thread: its epoll fd is in the poll
 * loop, which calls http_run() when it is readable and at least every http_timeout_ms(), so the
 * page is rendered in the loop's thread (no locks, no copies) and nothing waits on a client
 * (non-blocking sockets, bounded in number and time). Peers are judged when accepted (peer.h):
 * one that may not read the page is answered 403 and closed, one that may holds at most its
 * share of the slots, and root on this host always finds one free ---- */

#define NPD_HTTP_MAX_CONNECTIONS 16 /* scrapers at once; more are answered 503 */
#define NPD_HTTP_ROOT_RESERVED   4  /* of them, only root on this host may take */
#define NPD_HTTP_MAX_PER_PEER    4  /* one user on this host, or one other host, at most */
#define NPD_HTTP_TIMEOUT_S       5  /* a connection idle this long is closed */
#define NPD_HTTP_LIFETIME_S      10 /* and any connection this old (a slow client included) */

/** Start serving d->cfg.metrics (unless metrics_listen is empty); says where. @return 0 or
 *  -errno (logged; metrics stay off) */
int http_start(struct np_daemon *d);

/** Stop serving (accepts a daemon that serves nothing). */
void http_stop(struct np_daemon *d);

/** At a reload: move to a new metrics_listen (the old one stays, and cfg says so, when it cannot
 *  be bound), or start when not serving. Users and networks apply at the next request. */
void http_reload(struct np_daemon *d, const struct np_metrics_config *old);

/** The fd to poll for input, or -1. */
int http_fd(const struct np_daemon *d);

/** How long the loop may wait before calling http_run, at most @p max_ms. */
int http_timeout_ms(const struct np_daemon *d, int max_ms);

/** Do whatever the endpoint can without waiting (accept, read, answer, time out). */
void http_run(struct np_daemon *d);

/** Change the connections' lifetime (NPD_HTTP_LIFETIME_S; the suites shorten it). */
void http_set_lifetime(struct np_daemon *d, double seconds);

/* ---- lifecycle.c, the configuration: the file, then the command line's --KEY=VALUE flags ---- */

/** Load d->config_path over the defaults (none at the default path is fine), then d->overrides.
 *  At a reload (@p initial false) socket, pid_file and proc_root keep their running values (they
 *  take effect at restart). @return 0, or -errno with the reason logged (d->cfg unchanged) */
int config_load(struct np_daemon *d, bool initial);

/** SIGHUP: load again and apply what can change while running (log, dirs, trace, perf,
 *  housekeeping CPUs, migration, metrics); a failed load keeps the running configuration. The
 *  loop re-arms its timer on success (the interval may change). @return 0 or -errno (logged) */
int config_reload(struct np_daemon *d);

/* ---- loop.c: a poll over the signalfd, the sampling timerfd, the socket and its clients, the
 * migration worker, the metrics endpoint and the writer (the only disk flushes are its) ---- */

/** The first whole multiple of @p interval_ms since the epoch after @p now (CLOCK_REALTIME):
 *  when the sampling timer next fires, the same on every node whose clock agrees. */
struct timespec loop_next_deadline(struct timespec now, unsigned interval_ms);

/** SIGHUP/SIGTERM/SIGINT into a signalfd, SIGPIPE ignored, the timerfd. @return 0 or -errno */
int loop_open_fds(struct np_daemon *d);

/** Arm the timerfd at every cfg.interval_ms on the wall clock (loop_next_deadline), re-armed
 *  when the clock is set (TFD_TIMER_CANCEL_ON_SET). */
void loop_set_timer(struct np_daemon *d);

/** The clients of @p pfd[from..n) with a request to read, into @p order, oldest connection first
 *  (since): a task's registration, on a socket connected before its fork, is read before its own
 *  later `applied` in the same round, whatever the slots. @return how many */
int loop_read_order(struct np_daemon_client *const *owner, const struct pollfd *pfd, int from,
                    int n, int *order);

/** Run until SIGTERM or SIGINT (SIGHUP reloads) or poll fails. */
void loop_run(struct np_daemon *d);

/** The interval's work: sample every step, end those whose processes are gone, run the triggers. */
void sampling_tick(struct np_daemon *d);

/* ---- lifecycle.c: the context set up and torn down, above every part it starts and stops ---- */

/** Everything off: fds -1, the log sink pointed at @p d, default configuration. Cannot fail. */
void np_daemon_init(struct np_daemon *d);

/** Free and close what @p d holds (jobs, clients, socket, pid file, trace, node data,
 *  overrides); the log stays open. Does not save the registry. */
void np_daemon_fini(struct np_daemon *d);

/** Write what the writer still has, run its completions and end it (later writes are made on the
 *  loop thread). */
void np_daemon_stop_writer(struct np_daemon *d);

#endif /* NUMAPLACED_DAEMON_H */
