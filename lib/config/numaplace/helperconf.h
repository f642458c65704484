/*
 * numaplace/helperconf.h - numaplaced's configuration (etc/numaplaced.conf, numaplaced(8)).
 *
 * A file of `key = value` lines ('#' starts a comment); every key can also be given as a
 * command-line flag --key=value, which wins over the file (and survives SIGHUP reloads).
 */
#ifndef NUMAPLACE_HELPERCONF_H
#define NUMAPLACE_HELPERCONF_H

#include <stdbool.h>
#include <stdint.h>

#include "numaplace/common.h"
#include "numaplace/metricsconf.h"

#define NP_HELPER_DEFAULT_SOCKET "/run/numaplace/numaplaced.sock"
#define NP_HELPER_DEFAULT_CONFIG "/etc/numaplace/numaplaced.conf"

/** auto_load: what --numa-policy=auto's advice calls a loaded node (docs/auto.md). */
enum np_auto_load {
    NP_AUTO_LOAD_MEASURED = 0, /**< "measured": memory traffic from counters only (default) */
    NP_AUTO_LOAD_CPU_BUSY,     /**< "cpu-busy": where no counter measures a node, the busy share
                                    of its CPUs, a proxy the site opts into (a VM, no PMU) */
    NP_AUTO_LOAD_COUNT
};

struct np_helper_config {
    char socket[108];                     /**< socket: the Unix socket (sun_path size) */
    char state_dir[1024];                 /**< state_dir: the registry survives restarts here */
    char spool_dir[1024];                 /**< spool_dir: job reports */
    char pid_file[1024];                  /**< pid_file: "" for none */
    char log[1024];                       /**< log: "syslog", "stderr" or a file path */
    int log_level;                        /**< log_level: enum np_log_level */
    unsigned interval_ms;                 /**< interval_ms: sampling interval */
    unsigned numa_maps_interval_ms;       /**< numa_maps_interval_ms: pages per node, small jobs */
    unsigned detail_interval_ms;          /**< detail_interval_ms: context switches, balancing */
    unsigned numa_maps_large_interval_ms; /**< numa_maps_large_interval_ms: jobs over ... */
    uint64_t numa_maps_large_bytes;       /**< numa_maps_large_bytes: ... this RSS */
    bool perf;                            /**< backends: "perf,proc" or "proc" */
    char housekeeping_cpus[256];          /**< housekeeping_cpus: "auto", "none" or a list */
    char record[1024];                    /**< record: trace file of every sample, "" for none */
    char proc_root[1024];                 /**< proc_root: "/" (tests point it elsewhere) */
    unsigned max_jobs;                    /**< max_jobs: steps tracked at once */
    /* migration (docs/migration.md) */
    bool migration;                    /**< migration: on|off */
    bool migration_dry_run;            /**< migration_dry_run: decide and log, move nothing */
    unsigned migration_rate_mb_s;      /**< migration_rate_mb_s: all moves together; 0 = no limit */
    bool move_shared_pages;            /**< move_shared_pages: pages other processes map move too */
    char migration_order[32];          /**< migration_order: best-plus, best, random, ... */
    uint64_t free_floor_mb;            /**< free_floor_mb: never push a node below this */
    bool trigger_homecoming;           /**< trigger_homecoming: high jobs' pages brought home */
    bool trigger_pressure;             /**< trigger_pressure: room made on a high job's node */
    bool trigger_bandwidth;            /**< trigger_bandwidth: saturated nodes relieved */
    unsigned bandwidth_threshold_mb_s; /**< bandwidth_threshold_mb_s: a node is saturated above */
    unsigned bandwidth_intervals;      /**< bandwidth_intervals: ... for this many intervals */
    char admin_group[64];              /**< admin_group: may set-class and migrate besides root */
    bool class_high_is_high;           /**< class_map: how the plugin's labels map to classes */
    bool class_low_is_high;
    bool class_default_high; /**< class_default: a missing or unknown label */
    /** class_default=auto: an unlabelled step's class from its predicted sensitivity, after
     * enough samples with counters, through class_map (docs/sensitivity.md) */
    bool class_default_auto;
    char sensitivity_table[1024];     /**< sensitivity_table: "" = the installed table */
    char machine_profile[1024];       /**< machine_profile: "" = NP_PROFILE_DEFAULT_PATH */
    enum np_auto_load auto_load;      /**< auto_load: what makes a node loaded for auto */
    struct np_metrics_config metrics; /**< metrics_listen, metrics_users, metrics_allow */
};

/** The defaults (documented in numaplaced(8)). */
NP_API void np_helper_config_defaults(struct np_helper_config *cfg);

/** Every key np_helper_config_set() takes, ", "-separated (for usage and error messages). Static.
 */
NP_API const char *np_helper_config_keys(void);

/**
 * Set one key. @return 0, or -EINVAL with @p err naming the key, the value and what is accepted
 * (an unknown key lists the known ones).
 */
NP_API int np_helper_config_set(struct np_helper_config *cfg, const char *key, const char *value,
                                struct np_err *err);

/**
 * Read a config file over @p cfg. Every bad line is reported through @p log with its file and
 * line number; the first is also returned.
 * @return 0, -ENOENT (no such file), -EINVAL (bad lines; good ones are applied) or -errno
 */
NP_API int np_helper_config_load(struct np_helper_config *cfg, const char *path,
                                 const struct np_log *log, struct np_err *err);

#endif /* NUMAPLACE_HELPERCONF_H */
