/*
 * daemon.h - numaplaced's context: everything the daemon knows lives in one struct np_daemon,
 * passed to every part (config, registry, server, handlers, sampling, migration, reports), so
 * each can be driven by a unit test without a socket, Slurm or root.
 *
 * Data flows one way: registrations from the plugin create jobs; each interval the node counters
 * and every job's sampler fill samples; the samples fold into the job's stats; a step's end turns
 * its stats into a report in the spool.
 */
#ifndef NUMAPLACED_DAEMON_H
#define NUMAPLACED_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <jansson.h>

#include "auth.h"
#include "numaplace/engine.h"
#include "numaplace/helperconf.h"
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
#define NPD_HOLD_MAX          1024 /* reports held while the spool refuses them (report_hold.h) */
#define NPD_HOLD_MAX_BYTES    (64u << 20)
#define NPD_HOLD_REMIND_S     60.0 /* while it refuses them: one log line per this many seconds */
/* Root's clients may wait longer: slurmstepd connects its tasks' sockets before the fork. */
#define NPD_ROOT_CLIENT_TIMEOUT_S 30.0

struct migrator;
struct np_held_report;

/** Reports the spool refused, oldest first (report_hold.c); their steps stay in the registry. */
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
    bool report_held; /**< the spool refused its report: held (report_hold.h), listed ending */
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

/** Daemon-wide counters since start (the Prometheus page, metrics.c). */
struct np_daemon_totals {
    uint64_t pages_moved[NP_TRIGGER_COUNT][NPD_MAX_ORDERS]; /**< by trigger and order index */
    uint64_t requests[NP_TRIGGER_COUNT][NP_OUTCOME_COUNT];  /**< by enum np_request_outcome */
    uint64_t failed_pages[NP_MOVE_FAIL_COUNT];              /**< by enum np_move_failure */
    double sampling_cpu_s; /**< CPU time spent sampling steps and the node */
    uint64_t samples;      /**< step samples taken */
    /** Memory traffic each node served, summed over the intervals: its controllers' counts
     *  (uncore_bw.c), and its steps' LLC misses x 64 B spread by their pages (sampling.c). */
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
    /* the log sink (log.c) */
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
    struct np_uncore_reader uncore; /**< the memory controllers' counters (uncore_bw.c) */
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
    /** what says this node's CPU is an emulator's (numaplace/emulated.h), else "": its counters
     *  count the emulator's definitions, which the reports say */
    char emulated_cpu[256];
    bool stop;
};

/** mkdir -p: the parents 0755, the last @p mode. @return 0 or -errno */
int np_daemon_mkdir_p(const char *path, mode_t mode);

/** The directory part of @p path ("/" for "/x"). */
void np_daemon_dirname(const char *path, char *out, size_t size);

/** Take the pid file's lock and write our pid (nothing when pid_file is empty). @return 0/-errno */
int np_daemon_write_pid_file(struct np_daemon *d);

/** This thread's CPU time, seconds (what numaplaced spends on a job). */
double np_daemon_thread_cpu_s(void);

/** Wall clock, seconds since the epoch. */
double np_daemon_epoch_s(void);

#define NPD_LOG(d, level, ...) np_logf(&(d)->log, NP_LOG_##level, __VA_ARGS__)

#endif /* NUMAPLACED_DAEMON_H */
