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
#include <sys/types.h>

#include "numaplace/common.h"

/* Numaplaced's Prometheus endpoint settings (numaplaced(8), METRICS):
 * where it listens, which local users and which networks may read the page.
 *
 * The page names every job's user and id on the node, while `numaplace status` shows a user only
 * their own jobs: so it is off unless metrics_listen is set, and then readable only by root, the
 * users named in metrics_users (over loopback) and the networks named in metrics_allow. */
#define NP_METRICS_MAX_USERS       32
#define NP_METRICS_MAX_NETS        32
#define NP_METRICS_MAX_STEP_SERIES 1000000 /* the largest cap metrics_step_series takes */

/** An address family's network: @p family AF_INET (4 bytes used) or AF_INET6 (16). */
struct np_cidr {
    int family;
    unsigned char addr[16];
    unsigned prefix; /**< leading bits that must match */
};

struct np_metrics_config {
    char listen[64];                  /**< metrics_listen as given; "" = off */
    int family;                       /**< AF_INET or AF_INET6 when on */
    unsigned char addr[16];           /**< the address to bind (network order) */
    uint16_t port;                    /**< host order */
    uid_t uids[NP_METRICS_MAX_USERS]; /**< metrics_users, names resolved at parse time */
    unsigned nuids;
    struct np_cidr nets[NP_METRICS_MAX_NETS]; /**< metrics_allow */
    unsigned nnets;
    /** metrics_step_series: on (the zeroed default: every step), off, or the most steps with
     *  series of their own (a large node's page stays bounded) */
    bool step_series_off;
    unsigned step_series_max; /**< 0: no cap */
};

/** Parse one CIDR ("10.0.0.0/8", "fd00::/8", "192.0.2.7"). @return 0 or -EINVAL */
NP_API int np_cidr_parse(const char *text, struct np_cidr *out);

/** Is @p addr (@p family's bytes, network order) inside @p net? */
NP_API bool np_cidr_contains(const struct np_cidr *net, int family, const unsigned char *addr);

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
    bool trigger_demotion;             /**< trigger_demotion: low jobs' pages down a tier */
    bool trigger_promotion;            /**< trigger_promotion: high jobs' pages up a tier */
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
