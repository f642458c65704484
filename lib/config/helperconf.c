/* numaplaced's configuration: key = value lines, every key also a flag. */
#include "numaplace/helperconf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "numaplace/cpulist.h"

#include "numaplace/labels.h"
#include "numaplace/migration.h"
#include "numaplace/names.h"

#define KEYS                                                                                       \
    "socket, state_dir, spool_dir, pid_file, log, log_level, interval_ms, "                        \
    "numa_maps_interval_ms, numa_maps_large_interval_ms, numa_maps_large_bytes, "                  \
    "detail_interval_ms, backends, housekeeping_cpus, record, proc_root, max_jobs, migration, "    \
    "migration_dry_run, migration_rate_mb_s, move_shared_pages, migration_order, free_floor_mb, "  \
    "trigger_homecoming, trigger_pressure, trigger_bandwidth, bandwidth_threshold_mb_s, "          \
    "bandwidth_intervals, admin_group, class_map, class_default, sensitivity_table, "              \
    "machine_profile, auto_load, metrics_listen, metrics_users, metrics_allow, "                   \
    "metrics_step_series"

static const char *const auto_load_names[NP_AUTO_LOAD_COUNT] = {
    [NP_AUTO_LOAD_MEASURED] = "measured",
    [NP_AUTO_LOAD_CPU_BUSY] = "cpu-busy",
};
static const struct np_name_table auto_loads = {"auto_load", auto_load_names, NP_AUTO_LOAD_COUNT,
                                                NULL};

const char *np_auto_load_name(enum np_auto_load load)
{
    return np_name_of(&auto_loads, (unsigned)load);
}

const char *np_helper_config_keys(void)
{
    return KEYS;
}

void np_helper_config_defaults(struct np_helper_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    snprintf(cfg->socket, sizeof(cfg->socket), "%s", NP_HELPER_DEFAULT_SOCKET);
    snprintf(cfg->state_dir, sizeof(cfg->state_dir), "/var/lib/numaplace");
    snprintf(cfg->spool_dir, sizeof(cfg->spool_dir), "/var/spool/numaplace");
    snprintf(cfg->pid_file, sizeof(cfg->pid_file), "/run/numaplace/numaplaced.pid");
    snprintf(cfg->log, sizeof(cfg->log), "syslog");
    cfg->log_level = NP_LOG_INFO;
    cfg->interval_ms = 1000;
    cfg->numa_maps_interval_ms = 30000;
    cfg->numa_maps_large_interval_ms = 60000;
    cfg->detail_interval_ms = 10000;
    cfg->numa_maps_large_bytes = 1ull << 30;
    cfg->perf = true;
    snprintf(cfg->housekeeping_cpus, sizeof(cfg->housekeeping_cpus), "auto");
    snprintf(cfg->proc_root, sizeof(cfg->proc_root), "/");
    cfg->max_jobs = 1024;
    cfg->migration = true;
    cfg->migration_rate_mb_s = 200;
    snprintf(cfg->migration_order, sizeof(cfg->migration_order), "best-plus");
    cfg->free_floor_mb = 256;
    cfg->trigger_homecoming = cfg->trigger_pressure = cfg->trigger_bandwidth = true;
    cfg->bandwidth_threshold_mb_s = 10000;
    cfg->bandwidth_intervals = 5;
    cfg->class_high_is_high = true;
}

static int set_switch(bool *out, const char *key, const char *value, struct np_err *err)
{
    if (strcmp(value, "on") == 0 || strcmp(value, "yes") == 0) {
        *out = true;
        return 0;
    }
    if (strcmp(value, "off") == 0 || strcmp(value, "no") == 0) {
        *out = false;
        return 0;
    }
    return np_err_set(err, -EINVAL, "%s=\"%s\": accepted: on, off", key, value);
}

static int parse_class(const char *key, const char *value, bool *high, struct np_err *err)
{
    enum np_class c;

    if (np_class_from_name(value, &c, NULL) == 0) {
        *high = c == NP_CLASS_HIGH;
        return 0;
    }
    return np_err_set(err, -EINVAL, "%s: class \"%s\": accepted: %s", key, value, np_class_names());
}

static int set_path(char *dst, size_t size, const char *key, const char *value, bool may_be_empty,
                    struct np_err *err)
{
    if (!*value && may_be_empty) {
        dst[0] = '\0';
        return 0;
    }
    if (value[0] != '/')
        return np_err_set(err, -EINVAL, "%s=\"%s\": an absolute path is required%s", key, value,
                          may_be_empty ? " (or nothing, to turn it off)" : "");
    if (strlen(value) >= size)
        return np_err_set(err, -EINVAL, "%s: path longer than %zu bytes", key, size - 1);
    snprintf(dst, size, "%s", value);
    return 0;
}

static int set_uint(uint64_t *out, const char *key, const char *value, uint64_t min, uint64_t max,
                    struct np_err *err)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(value, &end, 10);
    if (!isdigit((unsigned char)value[0]) || *end || errno || v < min || v > max)
        return np_err_set(err, -EINVAL, "%s=\"%s\": an integer from %llu to %llu is required", key,
                          value, (unsigned long long)min, (unsigned long long)max);
    *out = v;
    return 0;
}

int np_helper_config_set(struct np_helper_config *cfg, const char *key, const char *value,
                         struct np_err *err)
{
    uint64_t v = 0;
    int rc;

    if (np_metrics_config_key(key))
        return np_metrics_config_set(&cfg->metrics, key, value, err);
    if (strcmp(key, "socket") == 0)
        return set_path(cfg->socket, sizeof(cfg->socket), key, value, false, err);
    if (strcmp(key, "state_dir") == 0)
        return set_path(cfg->state_dir, sizeof(cfg->state_dir), key, value, false, err);
    if (strcmp(key, "spool_dir") == 0)
        return set_path(cfg->spool_dir, sizeof(cfg->spool_dir), key, value, false, err);
    if (strcmp(key, "pid_file") == 0)
        return set_path(cfg->pid_file, sizeof(cfg->pid_file), key, value, true, err);
    if (strcmp(key, "record") == 0)
        return set_path(cfg->record, sizeof(cfg->record), key, value, true, err);
    if (strcmp(key, "proc_root") == 0)
        return set_path(cfg->proc_root, sizeof(cfg->proc_root), key, value, false, err);
    if (strcmp(key, "log") == 0) {
        if (strcmp(value, "syslog") == 0 || strcmp(value, "stderr") == 0) {
            snprintf(cfg->log, sizeof(cfg->log), "%s", value);
            return 0;
        }
        if (value[0] != '/')
            return np_err_set(err, -EINVAL,
                              "log=\"%s\": accepted: syslog, stderr or an absolute file path",
                              value);
        return set_path(cfg->log, sizeof(cfg->log), key, value, false, err);
    }
    if (strcmp(key, "log_level") == 0) {
        for (int l = NP_LOG_ERROR; l <= NP_LOG_DEBUG; l++)
            if (strcmp(value, np_log_level_name((enum np_log_level)l)) == 0) {
                cfg->log_level = l;
                return 0;
            }
        return np_err_set(err, -EINVAL, "log_level=\"%s\": accepted: error, warning, info, debug",
                          value);
    }
    if (strcmp(key, "interval_ms") == 0) {
        if ((rc = set_uint(&v, key, value, 100, 3600000, err)) == 0)
            cfg->interval_ms = (unsigned)v;
        return rc;
    }
    if (strcmp(key, "numa_maps_interval_ms") == 0) {
        if ((rc = set_uint(&v, key, value, 100, 3600000, err)) == 0)
            cfg->numa_maps_interval_ms = (unsigned)v;
        return rc;
    }
    if (strcmp(key, "detail_interval_ms") == 0) {
        if ((rc = set_uint(&v, key, value, 100, 3600000, err)) == 0)
            cfg->detail_interval_ms = (unsigned)v;
        return rc;
    }
    if (strcmp(key, "numa_maps_large_interval_ms") == 0) {
        if ((rc = set_uint(&v, key, value, 100, 3600000, err)) == 0)
            cfg->numa_maps_large_interval_ms = (unsigned)v;
        return rc;
    }
    if (strcmp(key, "numa_maps_large_bytes") == 0)
        return set_uint(&cfg->numa_maps_large_bytes, key, value, 0, UINT64_MAX, err);
    if (strcmp(key, "max_jobs") == 0) {
        if ((rc = set_uint(&v, key, value, 1, 65536, err)) == 0)
            cfg->max_jobs = (unsigned)v;
        return rc;
    }
    if (strcmp(key, "backends") == 0) {
        if (strcmp(value, "perf,proc") == 0 || strcmp(value, "proc,perf") == 0) {
            cfg->perf = true;
            return 0;
        }
        if (strcmp(value, "proc") == 0) {
            cfg->perf = false;
            return 0;
        }
        return np_err_set(err, -EINVAL,
                          "backends=\"%s\": accepted: perf,proc or proc (proc is always on; "
                          "replay is the `numaplace replay` command)",
                          value);
    }
    if (strcmp(key, "migration") == 0)
        return set_switch(&cfg->migration, key, value, err);
    if (strcmp(key, "migration_dry_run") == 0)
        return set_switch(&cfg->migration_dry_run, key, value, err);
    if (strcmp(key, "move_shared_pages") == 0)
        return set_switch(&cfg->move_shared_pages, key, value, err);
    if (strcmp(key, "trigger_homecoming") == 0)
        return set_switch(&cfg->trigger_homecoming, key, value, err);
    if (strcmp(key, "trigger_pressure") == 0)
        return set_switch(&cfg->trigger_pressure, key, value, err);
    if (strcmp(key, "trigger_bandwidth") == 0)
        return set_switch(&cfg->trigger_bandwidth, key, value, err);
    if (strcmp(key, "migration_rate_mb_s") == 0) {
        if ((rc = set_uint(&v, key, value, 0, 1000000, err)) == 0)
            cfg->migration_rate_mb_s = (unsigned)v;
        return rc;
    }
    if (strcmp(key, "free_floor_mb") == 0)
        return set_uint(&cfg->free_floor_mb, key, value, 0, UINT64_MAX >> 20, err);
    if (strcmp(key, "bandwidth_threshold_mb_s") == 0) {
        if ((rc = set_uint(&v, key, value, 1, 100000000, err)) == 0)
            cfg->bandwidth_threshold_mb_s = (unsigned)v;
        return rc;
    }
    if (strcmp(key, "bandwidth_intervals") == 0) {
        if ((rc = set_uint(&v, key, value, 1, 3600, err)) == 0)
            cfg->bandwidth_intervals = (unsigned)v;
        return rc;
    }
    if (strcmp(key, "migration_order") == 0) {
        if (!np_order_lookup(value))
            return np_err_set(err, -EINVAL, "migration_order=\"%s\": accepted: %s", value,
                              np_order_names());
        snprintf(cfg->migration_order, sizeof(cfg->migration_order), "%s", value);
        return 0;
    }
    if (strcmp(key, "admin_group") == 0) {
        if (strlen(value) >= sizeof(cfg->admin_group))
            return np_err_set(err, -EINVAL, "admin_group: a group name up to %zu characters",
                              sizeof(cfg->admin_group) - 1);
        snprintf(cfg->admin_group, sizeof(cfg->admin_group), "%s", value);
        return 0;
    }
    if (strcmp(key, "class_default") == 0) {
        /* auto: unlabelled steps classed by their predicted sensitivity (docs/sensitivity.md) */
        cfg->class_default_auto = strcmp(value, "auto") == 0;
        if (cfg->class_default_auto) {
            cfg->class_default_high = false;
            return 0;
        }
        if (np_class_from_name(value, &(enum np_class){0}, NULL) < 0)
            return np_err_set(err, -EINVAL, "class_default: \"%s\": accepted: %s, auto", value,
                              np_class_names());
        return parse_class(key, value, &cfg->class_default_high, err);
    }
    if (strcmp(key, "sensitivity_table") == 0)
        return set_path(cfg->sensitivity_table, sizeof(cfg->sensitivity_table), key, value, false,
                        err);
    if (strcmp(key, "auto_load") == 0) {
        unsigned load;
        const int parsed = np_name_parse(&auto_loads, value, &load, err);
        if (parsed == 0)
            cfg->auto_load = (enum np_auto_load)load;
        return parsed;
    }
    if (strcmp(key, "machine_profile") == 0)
        return set_path(cfg->machine_profile, sizeof(cfg->machine_profile), key, value, false, err);
    if (strcmp(key, "class_map") == 0) {
        /* label:class pairs, e.g. high:high,low:low (the plugin's labels are high and low) */
        char copy[128], *save = NULL;
        bool hi = cfg->class_high_is_high, lo = cfg->class_low_is_high;
        snprintf(copy, sizeof(copy), "%s", value);
        for (char *pair = strtok_r(copy, ",", &save); pair; pair = strtok_r(NULL, ",", &save)) {
            char *colon = strchr(pair, ':');
            if (!colon)
                return np_err_set(err, -EINVAL,
                                  "class_map=\"%s\": \"%s\" is not label:class (e.g. "
                                  "high:high,low:low)",
                                  value, pair);
            *colon = '\0';
            if (np_sensitivity_from_name(pair, &(enum np_sensitivity){0}, NULL) < 0)
                return np_err_set(err, -EINVAL, "class_map: label \"%s\": accepted labels: %s",
                                  pair, np_sensitivity_names());
            if ((rc = parse_class(key, colon + 1, strcmp(pair, "high") == 0 ? &hi : &lo, err)) < 0)
                return rc;
        }
        cfg->class_high_is_high = hi;
        cfg->class_low_is_high = lo;
        return 0;
    }
    if (strcmp(key, "housekeeping_cpus") == 0) {
        hwloc_bitmap_t set;
        if (strcmp(value, "auto") != 0 && strcmp(value, "none") != 0) {
            /* Bounded before hwloc reads it: hwloc sizes its bitmap for the largest CPU. */
            set = strlen(value) < sizeof(cfg->housekeeping_cpus) && np_cpu_list_bounded(value)
                      ? hwloc_bitmap_alloc()
                      : NULL;
            rc = set && hwloc_bitmap_list_sscanf(set, value) == 0 && !hwloc_bitmap_iszero(set);
            hwloc_bitmap_free(set);
            if (!rc)
                return np_err_set(err, -EINVAL,
                                  "housekeeping_cpus=\"%s\": accepted: auto (Slurm's "
                                  "CpuSpecList), none, or a CPU list like 0,1 or 0-3 of CPUs "
                                  "below %u",
                                  value, NP_CPU_LIST_LIMIT);
        }
        snprintf(cfg->housekeeping_cpus, sizeof(cfg->housekeeping_cpus), "%s", value);
        return 0;
    }
    return np_err_set(err, -EINVAL, "unknown key \"%s\"; accepted: " KEYS, key);
}

static char *trim(char *s)
{
    char *end;

    while (isspace((unsigned char)*s))
        s++;
    end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return s;
}

/* Longer lines are refused whole: a line cut in two would have its tail read as a setting. */
#define MAX_LINE 2047

int np_helper_config_load(struct np_helper_config *cfg, const char *path, const struct np_log *log,
                          struct np_err *err)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned lineno = 0;
    int first = 0;
    FILE *f = fopen(path, "re");

    if (!f)
        return np_err_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
    while ((len = getline(&line, &cap, f)) >= 0) {
        struct np_err lerr = {0};

        lineno++;
        if (len > MAX_LINE + 1 || (len == MAX_LINE + 1 && line[len - 1] != '\n')) {
            np_err_set(&lerr, -EINVAL, "line of %zd bytes: lines are at most %d bytes", len,
                       MAX_LINE);
        } else {
            char *hash = strchr(line, '#'), *key, *eq;
            if (hash)
                *hash = '\0';
            key = trim(line);
            if (!*key)
                continue;
            eq = strchr(key, '=');
            if (!eq) {
                np_err_set(&lerr, -EINVAL, "\"%s\" is not key = value", key);
            } else {
                *eq = '\0';
                np_helper_config_set(cfg, trim(key), trim(eq + 1), &lerr);
            }
        }
        if (lerr.code) {
            np_logf(log, NP_LOG_ERROR, "%s:%u: %s", path, lineno, lerr.msg);
            if (!first)
                first = np_err_set(err, -EINVAL, "%s:%u: %s", path, lineno, lerr.msg);
        }
    }
    free(line);
    fclose(f);
    return first;
}
