/* numaplaced's configuration: key = value lines, every key also a flag. */
#include "numaplace/helperconf.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <pwd.h>

#include "numaplace/cpulist.h"

#include "numaplace/migration.h"
#include "numaplace/names.h"

static const char *const auto_load_names[NP_AUTO_LOAD_COUNT] = {
    [NP_AUTO_LOAD_MEASURED] = "measured",
    [NP_AUTO_LOAD_CPU_BUSY] = "cpu-busy",
};
static const struct np_name_table auto_loads = {"auto_load", auto_load_names, NP_AUTO_LOAD_COUNT,
                                                NULL};

static int set_switch(bool *out, const char *key, const char *value, struct np_err *err)
{
    const bool on = strcmp(value, "on") == 0 || strcmp(value, "yes") == 0;

    if (!on && strcmp(value, "off") != 0 && strcmp(value, "no") != 0)
        return np_err_set(err, -EINVAL, "%s=\"%s\": accepted: on, off", key, value);
    *out = on;
    return 0;
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

/* Digits only, no sign or blank, and no overflow. */
static bool parse_decimal(const char *text, unsigned long long *out)
{
    char *end;

    errno = 0;
    *out = strtoull(text, &end, 10);
    return isdigit((unsigned char)text[0]) && !*end && !errno;
}

static int set_uint(uint64_t *out, const char *key, const char *value, uint64_t min, uint64_t max,
                    struct np_err *err)
{
    unsigned long long v;

    if (!parse_decimal(value, &v) || v < min || v > max)
        return np_err_set(err, -EINVAL, "%s=\"%s\": an integer from %llu to %llu is required", key,
                          value, (unsigned long long)min, (unsigned long long)max);
    *out = v;
    return 0;
}

static int set_log(struct np_helper_config *cfg, const char *key, const char *value,
                   struct np_err *err)
{
    if (strcmp(value, "syslog") == 0 || strcmp(value, "stderr") == 0) {
        snprintf(cfg->log, sizeof(cfg->log), "%s", value);
        return 0;
    }
    if (value[0] != '/')
        return np_err_set(err, -EINVAL,
                          "log=\"%s\": accepted: syslog, stderr or an absolute file path", value);
    return set_path(cfg->log, sizeof(cfg->log), key, value, false, err);
}

static int set_log_level(struct np_helper_config *cfg, const char *key, const char *value,
                         struct np_err *err)
{
    for (int l = NP_LOG_ERROR; l <= NP_LOG_DEBUG; l++)
        if (strcmp(value, np_log_level_name((enum np_log_level)l)) == 0) {
            cfg->log_level = l;
            return 0;
        }
    return np_err_set(err, -EINVAL, "%s=\"%s\": accepted: error, warning, info, debug", key, value);
}

static int set_backends(struct np_helper_config *cfg, const char *key, const char *value,
                        struct np_err *err)
{
    const bool perf = strcmp(value, "perf,proc") == 0 || strcmp(value, "proc,perf") == 0;

    if (perf || strcmp(value, "proc") == 0) {
        cfg->perf = perf;
        return 0;
    }
    return np_err_set(err, -EINVAL,
                      "%s=\"%s\": accepted: perf,proc or proc (proc is always on; "
                      "replay is the `numaplace replay` command)",
                      key, value);
}

static int set_migration_order(struct np_helper_config *cfg, const char *key, const char *value,
                               struct np_err *err)
{
    if (!np_order_lookup(value))
        return np_err_set(err, -EINVAL, "%s=\"%s\": accepted: %s", key, value, np_order_names());
    snprintf(cfg->migration_order, sizeof(cfg->migration_order), "%s", value);
    return 0;
}

static int set_admin_group(struct np_helper_config *cfg, const char *key, const char *value,
                           struct np_err *err)
{
    if (strlen(value) >= sizeof(cfg->admin_group))
        return np_err_set(err, -EINVAL, "%s: a group name up to %zu characters", key,
                          sizeof(cfg->admin_group) - 1);
    snprintf(cfg->admin_group, sizeof(cfg->admin_group), "%s", value);
    return 0;
}

static int set_class_default(struct np_helper_config *cfg, const char *key, const char *value,
                             struct np_err *err)
{
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

static int set_auto_load(struct np_helper_config *cfg, const char *key, const char *value,
                         struct np_err *err)
{
    unsigned load;
    const int parsed = np_name_parse(&auto_loads, value, &load, err);

    (void)key;
    if (parsed == 0)
        cfg->auto_load = (enum np_auto_load)load;
    return parsed;
}

static int set_class_map(struct np_helper_config *cfg, const char *key, const char *value,
                         struct np_err *err)
{
    /* label:class pairs, e.g. high:high,low:low (the plugin's labels are high and low) */
    char copy[128], *save = NULL;
    bool hi = cfg->class_high_is_high, lo = cfg->class_low_is_high;

    snprintf(copy, sizeof(copy), "%s", value);
    for (char *pair = strtok_r(copy, ",", &save); pair; pair = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(pair, ':');
        int rc;
        if (!colon)
            return np_err_set(err, -EINVAL,
                              "class_map=\"%s\": \"%s\" is not label:class (e.g. "
                              "high:high,low:low)",
                              value, pair);
        *colon = '\0';
        if (np_sensitivity_from_name(pair, &(enum np_sensitivity){0}, NULL) < 0)
            return np_err_set(err, -EINVAL, "class_map: label \"%s\": accepted labels: %s", pair,
                              np_sensitivity_names());
        if ((rc = parse_class(key, colon + 1, strcmp(pair, "high") == 0 ? &hi : &lo, err)) < 0)
            return rc;
    }
    cfg->class_high_is_high = hi;
    cfg->class_low_is_high = lo;
    return 0;
}

static int count_cpus(void *count, unsigned first, unsigned last)
{
    *(unsigned *)count += last - first + 1;
    return 0;
}

static int set_housekeeping_cpus(struct np_helper_config *cfg, const char *key, const char *value,
                                 struct np_err *err)
{
    unsigned count = 0;

    if (strcmp(value, "auto") != 0 && strcmp(value, "none") != 0 &&
        (strlen(value) >= sizeof(cfg->housekeeping_cpus) ||
         np_cpu_list_parse(value, "CPU list", count_cpus, &count, NULL) < 0 || count == 0))
        return np_err_set(err, -EINVAL,
                          "%s=\"%s\": accepted: auto (Slurm's "
                          "CpuSpecList), none, or a CPU list like 0,1 or 0-3 of CPUs "
                          "below %u",
                          key, value, NP_CPU_LIST_LIMIT);
    snprintf(cfg->housekeeping_cpus, sizeof(cfg->housekeeping_cpus), "%s", value);
    return 0;
}

/* numaplaced's Prometheus endpoint settings. */
static int parse_listen(struct np_metrics_config *mc, const char *value, struct np_err *err)
{
    const bool v6 = value[0] == '['; /* [IPv6]:PORT */
    char host[64];
    const char *colon;
    unsigned long long port;
    size_t hlen;

    if (!*value) {
        mc->listen[0] = '\0';
        return 0;
    }
    colon = strrchr(value, ':');
    if (!colon || colon == value || strlen(value) >= sizeof(mc->listen))
        goto bad;
    hlen = (size_t)(colon - value);
    if (v6 && (hlen < 3 || value[hlen - 1] != ']'))
        goto bad;
    snprintf(host, sizeof(host), "%.*s", (int)(v6 ? hlen - 2 : hlen), v6 ? value + 1 : value);
    mc->family = v6 ? AF_INET6 : AF_INET;
    if (inet_pton(mc->family, host, mc->addr) != 1)
        goto bad;
    if (!parse_decimal(colon + 1, &port) || port < 1 || port > 65535)
        goto bad;
    mc->port = (uint16_t)port;
    snprintf(mc->listen, sizeof(mc->listen), "%s", value);
    return 0;
bad:
    return np_err_set(err, -EINVAL,
                      "metrics_listen=\"%s\": accepted: nothing (off), or HOST:PORT with an IPv4 "
                      "address or [IPv6] and a port from 1 to 65535 (e.g. 127.0.0.1:9477, "
                      "[::1]:9477)",
                      value);
}

static int parse_uid(const char *item, uid_t *out)
{
    char buf[4096];
    struct passwd pw, *found = NULL;

    if (isdigit((unsigned char)item[0])) {
        unsigned long long v;
        if (!parse_decimal(item, &v) || v >= (uid_t)-1)
            return -EINVAL;
        *out = (uid_t)v;
        return 0;
    }
    if (getpwnam_r(item, &pw, buf, sizeof(buf), &found) != 0 || !found)
        return -ENOENT;
    *out = found->pw_uid;
    return 0;
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

/* Calls @p fn on each comma-separated, trimmed, non-empty item; stops at its first error. */
static int each_item(const char *value, char *bad, size_t bad_size,
                     int (*fn)(const char *item, void *arg), void *arg)
{
    char copy[2048], *save = NULL;

    if (strlen(value) >= sizeof(copy)) {
        snprintf(bad, bad_size, "(a list over %zu bytes)", sizeof(copy) - 1);
        return -EINVAL;
    }
    snprintf(copy, sizeof(copy), "%s", value);
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const char *item = trim(tok);
        int rc;
        if (!*item)
            continue;
        if ((rc = fn(item, arg)) < 0) {
            snprintf(bad, bad_size, "%s", item);
            return rc;
        }
    }
    return 0;
}

static int add_user(const char *item, void *arg)
{
    struct np_metrics_config *mc = arg;
    uid_t uid;
    int rc;

    if (mc->nuids == NP_METRICS_MAX_USERS)
        return -E2BIG;
    if ((rc = parse_uid(item, &uid)) < 0)
        return rc;
    mc->uids[mc->nuids++] = uid;
    return 0;
}

static int add_net(const char *item, void *arg)
{
    struct np_metrics_config *mc = arg;

    if (mc->nnets == NP_METRICS_MAX_NETS)
        return -E2BIG;
    return np_cidr_parse(item, &mc->nets[mc->nnets++]) < 0 ? (mc->nnets--, -EINVAL) : 0;
}

int np_cidr_parse(const char *text, struct np_cidr *out)
{
    char host[64];
    const char *slash = strchr(text, '/');
    const size_t hlen = slash ? (size_t)(slash - text) : strlen(text);
    unsigned long long max, prefix;

    if (hlen == 0 || hlen >= sizeof(host))
        return -EINVAL;
    snprintf(host, sizeof(host), "%.*s", (int)hlen, text);
    memset(out, 0, sizeof(*out));
    if (inet_pton(AF_INET, host, out->addr) == 1)
        out->family = AF_INET;
    else if (inet_pton(AF_INET6, host, out->addr) == 1)
        out->family = AF_INET6;
    else
        return -EINVAL;
    prefix = max = out->family == AF_INET ? 32 : 128;
    if (slash && (!parse_decimal(slash + 1, &prefix) || prefix > max))
        return -EINVAL;
    out->prefix = (unsigned)prefix;
    return 0;
}

bool np_cidr_contains(const struct np_cidr *net, int family, const unsigned char *addr)
{
    const unsigned full = net->prefix / 8, rest = net->prefix % 8;

    if (family != net->family)
        return false;
    if (memcmp(net->addr, addr, full) != 0)
        return false;
    return rest == 0 || ((net->addr[full] ^ addr[full]) & (0xffu << (8 - rest)) & 0xffu) == 0;
}

static int parse_step_series(struct np_metrics_config *mc, const char *value, struct np_err *err)
{
    unsigned long long n;

    if (strcmp(value, "on") == 0 || strcmp(value, "off") == 0) {
        mc->step_series_off = value[1] == 'f';
        mc->step_series_max = 0;
        return 0;
    }
    if (!parse_decimal(value, &n) || n < 1 || n > NP_METRICS_MAX_STEP_SERIES)
        return np_err_set(err, -EINVAL,
                          "metrics_step_series=\"%s\": accepted: on (every step), off (no per-step "
                          "series), or the most steps with series, from 1 to %d",
                          value, NP_METRICS_MAX_STEP_SERIES);
    mc->step_series_off = false;
    mc->step_series_max = (unsigned)n;
    return 0;
}

/* Set one metrics key (numaplaced(8), METRICS; each parser's error says what it accepts): a list
 * replaces the last. @return 0, or -EINVAL with @p err naming the key, the value and what is
 * accepted */
static int set_metrics(struct np_helper_config *cfg, const char *key, const char *value,
                       struct np_err *err)
{
    struct np_metrics_config *mc = &cfg->metrics;
    struct np_metrics_config next = *mc;
    bool users = strcmp(key, "metrics_users") == 0;
    char bad[128] = "";
    int rc;

    if (strcmp(key, "metrics_step_series") == 0)
        return parse_step_series(mc, value, err);
    if (strcmp(key, "metrics_listen") == 0) {
        if ((rc = parse_listen(&next, value, err)) == 0)
            *mc = next;
        return rc;
    }
    if (!users && strcmp(key, "metrics_allow") != 0)
        return np_err_set(err, -EINVAL, "\"%s\" is not a metrics key", key);
    *(users ? &next.nuids : &next.nnets) = 0; /* the list is replaced, not added to */
    rc = each_item(value, bad, sizeof(bad), users ? add_user : add_net, &next);
    if (rc == -E2BIG && users)
        return np_err_set(err, -EINVAL, "metrics_users: at most %d users", NP_METRICS_MAX_USERS);
    if (rc == -E2BIG)
        return np_err_set(err, -EINVAL, "metrics_allow: at most %d networks", NP_METRICS_MAX_NETS);
    if (rc < 0 && users)
        return np_err_set(err, -EINVAL,
                          "metrics_users=\"%s\": %s\"%s\"; accepted: user names of this node "
                          "or uids, comma-separated (root may always read)",
                          value, rc == -ENOENT ? "no such user " : "bad uid ", bad);
    if (rc < 0)
        return np_err_set(err, -EINVAL,
                          "metrics_allow=\"%s\": \"%s\" is not a network; accepted: CIDRs "
                          "like 10.1.0.0/16 or fd00::/8 (or one address), comma-separated",
                          value, bad);
    *mc = next;
    return 0;
}

/* How a key's value is read: into the field at its offset, or by its own setter. */
enum key_kind {
    KEY_PATH,         /* an absolute path */
    KEY_PATH_OR_NONE, /* an absolute path, or nothing to turn it off */
    KEY_SWITCH,       /* on|yes, off|no */
    KEY_UINT,         /* a decimal integer from min to max, into an unsigned or uint64_t */
    KEY_SETTER,       /* the key's own setter */
};

typedef int key_setter(struct np_helper_config *cfg, const char *key, const char *value,
                       struct np_err *err);

/*
 * Every key, in the order numaplaced(8), usage and the unknown-key error list them:
 * X(name, kind, field, min, max, setter, default). The field is the one the key sets (for a
 * setter, the one its documentation names); min and max bound KEY_UINT; the default (numaplaced(8)
 * documents them) is read as a value in the file is, NULL leaving the field zero.
 */
#define HELPER_KEYS(X)                                                                             \
    X(socket, KEY_PATH, socket, 0, 0, NULL, NP_HELPER_DEFAULT_SOCKET)                              \
    X(state_dir, KEY_PATH, state_dir, 0, 0, NULL, "/var/lib/numaplace")                            \
    X(spool_dir, KEY_PATH, spool_dir, 0, 0, NULL, "/var/spool/numaplace")                          \
    X(pid_file, KEY_PATH_OR_NONE, pid_file, 0, 0, NULL, "/run/numaplace/numaplaced.pid")           \
    X(log, KEY_SETTER, log, 0, 0, set_log, "syslog")                                               \
    X(log_level, KEY_SETTER, log_level, 0, 0, set_log_level, "info")                               \
    X(interval_ms, KEY_UINT, interval_ms, 100, 3600000, NULL, "1000")                              \
    X(numa_maps_interval_ms, KEY_UINT, numa_maps_interval_ms, 100, 3600000, NULL, "30000")         \
    X(numa_maps_large_interval_ms, KEY_UINT, numa_maps_large_interval_ms, 100, 3600000, NULL,      \
      "60000")                                                                                     \
    X(numa_maps_large_bytes, KEY_UINT, numa_maps_large_bytes, 0, UINT64_MAX, NULL, "1073741824")   \
    X(detail_interval_ms, KEY_UINT, detail_interval_ms, 100, 3600000, NULL, "10000")               \
    X(backends, KEY_SETTER, perf, 0, 0, set_backends, "perf,proc")                                 \
    X(housekeeping_cpus, KEY_SETTER, housekeeping_cpus, 0, 0, set_housekeeping_cpus, "auto")       \
    X(record, KEY_PATH_OR_NONE, record, 0, 0, NULL, NULL)                                          \
    X(proc_root, KEY_PATH, proc_root, 0, 0, NULL, "/")                                             \
    X(max_jobs, KEY_UINT, max_jobs, 1, 65536, NULL, "1024")                                        \
    X(migration, KEY_SWITCH, migration, 0, 0, NULL, "on")                                          \
    X(migration_dry_run, KEY_SWITCH, migration_dry_run, 0, 0, NULL, NULL)                          \
    X(migration_rate_mb_s, KEY_UINT, migration_rate_mb_s, 0, 1000000, NULL, "200")                 \
    X(move_shared_pages, KEY_SWITCH, move_shared_pages, 0, 0, NULL, NULL)                          \
    X(migration_order, KEY_SETTER, migration_order, 0, 0, set_migration_order, "best-plus")        \
    X(free_floor_mb, KEY_UINT, free_floor_mb, 0, UINT64_MAX >> 20, NULL, "256")                    \
    X(trigger_homecoming, KEY_SWITCH, trigger_homecoming, 0, 0, NULL, "on")                        \
    X(trigger_pressure, KEY_SWITCH, trigger_pressure, 0, 0, NULL, "on")                            \
    X(trigger_bandwidth, KEY_SWITCH, trigger_bandwidth, 0, 0, NULL, "on")                          \
    X(trigger_demotion, KEY_SWITCH, trigger_demotion, 0, 0, NULL, "on")                            \
    X(trigger_promotion, KEY_SWITCH, trigger_promotion, 0, 0, NULL, "on")                          \
    X(bandwidth_threshold_mb_s, KEY_UINT, bandwidth_threshold_mb_s, 1, 100000000, NULL, "10000")   \
    X(bandwidth_intervals, KEY_UINT, bandwidth_intervals, 1, 3600, NULL, "5")                      \
    X(admin_group, KEY_SETTER, admin_group, 0, 0, set_admin_group, NULL)                           \
    X(class_map, KEY_SETTER, class_high_is_high, 0, 0, set_class_map, "high:high,low:low")         \
    X(class_default, KEY_SETTER, class_default_high, 0, 0, set_class_default, NULL)                \
    X(sensitivity_table, KEY_PATH, sensitivity_table, 0, 0, NULL, NULL)                            \
    X(machine_profile, KEY_PATH, machine_profile, 0, 0, NULL, NULL)                                \
    X(auto_load, KEY_SETTER, auto_load, 0, 0, set_auto_load, NULL)                                 \
    X(metrics_listen, KEY_SETTER, metrics, 0, 0, set_metrics, NULL)                                \
    X(metrics_users, KEY_SETTER, metrics, 0, 0, set_metrics, NULL)                                 \
    X(metrics_allow, KEY_SETTER, metrics, 0, 0, set_metrics, NULL)                                 \
    X(metrics_step_series, KEY_SETTER, metrics, 0, 0, set_metrics, NULL)

struct helper_key {
    const char *name;
    enum key_kind kind;
    size_t offset, size;
    uint64_t min, max;
    key_setter *set;
    const char *default_value;
};

#define FIELD(field)                                                                               \
    offsetof(struct np_helper_config, field), sizeof(((struct np_helper_config *)0)->field)
#define KEY_ENTRY(name, kind, field, min, max, set, default_value)                                 \
    {#name, kind, FIELD(field), min, max, set, default_value},
static const struct helper_key helper_keys[] = {HELPER_KEYS(KEY_ENTRY)};

/* ", socket, state_dir, ..." at compile time; the names start after the first separator. */
#define KEY_NAME(name, kind, field, min, max, set, default_value) ", " #name
static const char key_names[] = HELPER_KEYS(KEY_NAME);

const char *np_helper_config_keys(void)
{
    return key_names + 2;
}

static int set_key(struct np_helper_config *cfg, const struct helper_key *k, const char *value,
                   struct np_err *err)
{
    char *field = (char *)cfg + k->offset;
    uint64_t v = 0;
    int rc;

    switch (k->kind) {
    case KEY_PATH:
    case KEY_PATH_OR_NONE:
        return set_path(field, k->size, k->name, value, k->kind == KEY_PATH_OR_NONE, err);
    case KEY_SWITCH:
        return set_switch((bool *)field, k->name, value, err);
    case KEY_UINT:
        if ((rc = set_uint(&v, k->name, value, k->min, k->max, err)) < 0)
            return rc;
        if (k->size == sizeof(uint64_t))
            memcpy(field, &v, sizeof(v));
        else
            memcpy(field, &(unsigned){(unsigned)v}, sizeof(unsigned));
        return 0;
    case KEY_SETTER:
        return k->set(cfg, k->name, value, err);
    }
    return -EINVAL;
}

void np_helper_config_defaults(struct np_helper_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < sizeof(helper_keys) / sizeof(helper_keys[0]); i++)
        if (helper_keys[i].default_value)
            set_key(cfg, &helper_keys[i], helper_keys[i].default_value, NULL);
}

int np_helper_config_set(struct np_helper_config *cfg, const char *key, const char *value,
                         struct np_err *err)
{
    for (size_t i = 0; i < sizeof(helper_keys) / sizeof(helper_keys[0]); i++)
        if (strcmp(key, helper_keys[i].name) == 0)
            return set_key(cfg, &helper_keys[i], value, err);
    return np_err_set(err, -EINVAL, "unknown key \"%s\"; accepted: %s", key,
                      np_helper_config_keys());
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
