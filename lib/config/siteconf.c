/* User options and site configuration (see numaplace/siteconf.h). */
#include "numaplace/siteconf.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_HELPER_SOCKET "/run/numaplace/numaplaced.sock"

int np_policy_request_parse(const char *text, struct np_policy_request *out, struct np_err *err)
{
    char copy[128], *save = NULL, *word;
    int words = 0;

    memset(out, 0, sizeof(*out));
    if (!text || !*text || strlen(text) >= sizeof(copy))
        goto bad;
    snprintf(copy, sizeof(copy), "%s", text);
    for (word = strtok_r(copy, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
        enum np_policy policy;
        words++;
        if (strcmp(word, "verbose") == 0) {
            if (out->verbose)
                goto bad;
            out->verbose = true;
        } else if (strcmp(word, "help") == 0) {
            out->help = true;
        } else if (np_policy_from_name(word, &policy, NULL) == 0) {
            if (out->policy_given)
                goto bad; /* one policy at most */
            out->policy = policy;
            out->policy_given = true;
        } else {
            goto bad;
        }
    }
    /* "help" stands alone; empty items ("local,,") are not words. */
    if (words == 0 || (out->help && words > 1) || text[strlen(text) - 1] == ',' || text[0] == ',' ||
        strstr(text, ",,"))
        goto bad;
    return 0;
bad:
    memset(out, 0, sizeof(*out));
    return np_err_set(err, -EINVAL,
                      "invalid --numa-policy value '%s': accepted values are [verbose,]%s, "
                      "verbose, or help",
                      text ? text : "", np_policy_names_separated("|"));
}

static void free_list(char **list)
{
    for (size_t i = 0; list && list[i]; i++)
        free(list[i]);
    free(list);
}

/* Split "a,b,c" into a new NULL-terminated array; empty items are an error. */
static int split_list(const char *text, char ***out)
{
    size_t n = 1, i = 0;
    const char *p;
    char **list;

    if (!*text)
        return -EINVAL;
    for (p = text; *p; p++)
        n += *p == ',';
    list = calloc(n + 1, sizeof(*list));
    if (!list)
        return -ENOMEM;
    for (p = text; i < n; i++) {
        const size_t len = strcspn(p, ",");
        if (len == 0) {
            free_list(list);
            return -EINVAL;
        }
        list[i] = strndup(p, len);
        if (!list[i]) {
            free_list(list);
            return -ENOMEM;
        }
        p += len + (p[len] == ',');
    }
    *out = list;
    return 0;
}

int np_site_config_init(struct np_site_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->default_policy = NP_POLICY_NONE;
    cfg->allowed_policies = (1u << NP_POLICY_COUNT) - 1;
    cfg->default_sensitivity = NP_SENSITIVITY_LOW;
    cfg->high_unauthorized = NP_HIGH_DOWNGRADE;
    cfg->helper_timeout_ms = 100;
    cfg->helper_socket = strdup(DEFAULT_HELPER_SOCKET);
    return cfg->helper_socket ? 0 : -ENOMEM;
}

void np_site_config_fini(struct np_site_config *cfg)
{
    if (!cfg)
        return;
    free_list(cfg->high_users);
    free_list(cfg->high_groups);
    free(cfg->topology_xml);
    free(cfg->helper_socket);
    memset(cfg, 0, sizeof(*cfg));
}

static int parse_bool(const char *value, const char *yes, const char *no, bool *out)
{
    if (strcmp(value, yes) != 0 && strcmp(value, no) != 0)
        return -EINVAL;
    *out = strcmp(value, yes) == 0;
    return 0;
}

static int replace_string(char **slot, const char *value)
{
    char *copy = strdup(value);

    if (!copy)
        return -ENOMEM;
    free(*slot);
    *slot = copy;
    return 0;
}

#define KEYS                                                                                       \
    "default_policy, allowed_policies, default_sensitivity, high_users, high_groups, "             \
    "high_unauthorized, topology_xml, cpuless_nodes, fast_tier, on_error, verbose, "               \
    "helper_socket, helper_timeout_ms"

/* Apply one key=value. Returns 0, -ENOMEM, or -EINVAL having logged why. */
static int apply_one(struct np_site_config *cfg, const char *arg, const struct np_log *log)
{
    const char *eq = strchr(arg, '=');
    char key[64];
    const char *value;
    const char *accepted = NULL; /* set on a bad value: what would have been accepted */
    int rc = 0;

    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(key)) {
        np_logf(log, NP_LOG_ERROR,
                "numaplace: plugstack argument '%s' is not key=value; accepted keys are " KEYS,
                arg);
        return -EINVAL;
    }
    snprintf(key, sizeof(key), "%.*s", (int)(eq - arg), arg);
    value = eq + 1;

    if (strcmp(key, "default_policy") == 0) {
        enum np_policy p = NP_POLICY_NONE;
        if (np_policy_from_name(value, &p, NULL) < 0)
            goto bad_policy;
        cfg->default_policy = p;
    } else if (strcmp(key, "allowed_policies") == 0) {
        char **names = NULL;
        unsigned mask = 0;
        rc = split_list(value, &names);
        for (size_t i = 0; rc == 0 && names[i]; i++) {
            enum np_policy p = NP_POLICY_NONE;
            if (np_policy_from_name(names[i], &p, NULL) < 0)
                rc = -EINVAL;
            else
                mask |= 1u << p;
        }
        free_list(names);
        if (rc == -ENOMEM)
            return rc;
        if (rc < 0)
            goto bad_policy;
        cfg->allowed_policies = mask;
    } else if (strcmp(key, "default_sensitivity") == 0) {
        enum np_sensitivity s = NP_SENSITIVITY_LOW;
        if (np_sensitivity_from_name(value, &s, NULL) < 0) {
            accepted = np_sensitivity_names();
            goto bad_value;
        }
        cfg->default_sensitivity = s;
    } else if (strcmp(key, "high_users") == 0 || strcmp(key, "high_groups") == 0) {
        char **list = NULL;
        rc = split_list(value, &list);
        if (rc == -ENOMEM)
            return rc;
        if (rc < 0) {
            accepted = "a comma-separated list of names";
            goto bad_value;
        }
        char ***slot = key[5] == 'u' ? &cfg->high_users : &cfg->high_groups;
        free_list(*slot);
        *slot = list;
    } else if (strcmp(key, "high_unauthorized") == 0) {
        bool refuse;
        if (parse_bool(value, "refuse", "downgrade", &refuse) < 0) {
            accepted = "downgrade, refuse";
            goto bad_value;
        }
        cfg->high_unauthorized = refuse ? NP_HIGH_REFUSE : NP_HIGH_DOWNGRADE;
    } else if (strcmp(key, "topology_xml") == 0) {
        if (value[0] != '/') {
            accepted = "an absolute path to an hwloc XML file";
            goto bad_value;
        }
        return replace_string(&cfg->topology_xml, value);
    } else if (strcmp(key, "cpuless_nodes") == 0) {
        if (parse_bool(value, "include", "exclude", &cfg->include_cpuless) < 0) {
            accepted = "include, exclude";
            goto bad_value;
        }
    } else if (strcmp(key, "fast_tier") == 0) {
        if (parse_bool(value, "high", "all", &cfg->fast_tier_high_only) < 0) {
            accepted = "all, high";
            goto bad_value;
        }
    } else if (strcmp(key, "on_error") == 0) {
        if (parse_bool(value, "fail", "ignore", &cfg->fail_on_error) < 0) {
            accepted = "ignore, fail";
            goto bad_value;
        }
    } else if (strcmp(key, "verbose") == 0) {
        if (parse_bool(value, "yes", "no", &cfg->verbose) < 0) {
            accepted = "yes, no";
            goto bad_value;
        }
    } else if (strcmp(key, "helper_socket") == 0) {
        if (value[0] != '/' && strcmp(value, "none") != 0) {
            accepted = "an absolute path to the helper's Unix socket, or none";
            goto bad_value;
        }
        return replace_string(&cfg->helper_socket, value);
    } else if (strcmp(key, "helper_timeout_ms") == 0) {
        char *end;
        const unsigned long ms = strtoul(value, &end, 10);
        if (!*value || *end || ms < 1 || ms > 5000 || value[0] == '-') {
            accepted = "a whole number of milliseconds from 1 to 5000";
            goto bad_value;
        }
        cfg->helper_timeout_ms = (unsigned)ms;
    } else {
        np_logf(log, NP_LOG_ERROR,
                "numaplace: unknown plugstack argument '%s'; accepted keys are " KEYS, arg);
        return -EINVAL;
    }
    return 0;

bad_policy:
    np_logf(log, NP_LOG_ERROR,
            "numaplace: invalid plugstack argument '%s': accepted values are %s%s", arg,
            np_policy_names(), strcmp(key, "allowed_policies") == 0 ? " (comma-separated)" : "");
    return -EINVAL;
bad_value:
    np_logf(log, NP_LOG_ERROR, "numaplace: invalid plugstack argument '%s': accepted values are %s",
            arg, accepted);
    return -EINVAL;
}

int np_site_config_parse(struct np_site_config *cfg, int argc, char *const argv[],
                         const struct np_log *log)
{
    int rejected = 0;

    for (int i = 0; i < argc; i++) {
        const int rc = apply_one(cfg, argv[i], log);
        if (rc == -ENOMEM)
            return rc;
        rejected += rc < 0;
    }
    /* The default must be something users are allowed to ask for. */
    if (!np_site_config_allows(cfg, cfg->default_policy)) {
        char names[256];
        np_logf(log, NP_LOG_ERROR,
                "numaplace: default_policy=%s is not in allowed_policies=%s; using 'none' as "
                "the default and allowing it",
                np_policy_name(cfg->default_policy),
                np_site_config_allowed_names(cfg, names, sizeof(names)));
        cfg->default_policy = NP_POLICY_NONE;
        cfg->allowed_policies |= 1u << NP_POLICY_NONE;
        rejected++;
    }
    if (rejected) {
        cfg->high_closed = true;
        np_logf(log, NP_LOG_ERROR,
                "numaplace: %d plugstack argument(s) rejected: until they are fixed only root may "
                "claim --numa-sensitivity=high (a misspelt or malformed high_users= or "
                "high_groups= must not let everyone claim it)",
                rejected);
    }
    return rejected;
}

bool np_site_config_allows(const struct np_site_config *cfg, enum np_policy policy)
{
    return (unsigned)policy < NP_POLICY_COUNT && (cfg->allowed_policies >> policy & 1u);
}

char *np_site_config_allowed_names(const struct np_site_config *cfg, char *buf, size_t len)
{
    size_t used = 0;

    if (len)
        buf[0] = '\0';
    for (unsigned p = 0; p < NP_POLICY_COUNT; p++) {
        if (!np_site_config_allows(cfg, (enum np_policy)p))
            continue;
        const int n = snprintf(buf + used, len > used ? len - used : 0, "%s%s", used ? "," : "",
                               np_policy_name((enum np_policy)p));
        if (n > 0)
            used += (size_t)n;
    }
    return buf;
}

static bool listed(char *const *list, const char *name)
{
    for (size_t i = 0; list && name && list[i]; i++)
        if (strcmp(list[i], name) == 0)
            return true;
    return false;
}

bool np_site_config_may_claim_high_names(const struct np_site_config *cfg, const char *user,
                                         const char *const groups[])
{
    if (user && strcmp(user, "root") == 0)
        return true;
    if (cfg->high_closed)
        return false;
    if (!cfg->high_users && !cfg->high_groups)
        return true; /* nothing configured: no restriction */
    if (listed(cfg->high_users, user))
        return true;
    for (size_t i = 0; groups && groups[i]; i++)
        if (listed(cfg->high_groups, groups[i]))
            return true;
    return false;
}

bool np_site_config_may_claim_high(const struct np_site_config *cfg, uid_t uid, gid_t gid)
{
    struct passwd pw, *pwp = NULL;
    char buf[4096];
    gid_t gids[256];
    int ngids = 256;
    char *names[257];
    int nnames = 0;
    bool ok;

    /* Decided without looking the user up, as np_site_config_may_claim_high_names decides it. */
    if (uid == 0 || cfg->high_closed || (!cfg->high_users && !cfg->high_groups))
        return uid == 0 || !cfg->high_closed;
    if (getpwuid_r(uid, &pw, buf, sizeof(buf), &pwp) != 0 || !pwp)
        return false; /* an unknown user cannot be shown to be listed */
    if (getgrouplist(pw.pw_name, gid, gids, &ngids) < 0)
        ngids = 0;
    for (int i = 0; i < ngids && nnames < 256; i++) {
        struct group gr, *grp = NULL;
        char gbuf[4096];
        if (getgrgid_r(gids[i], &gr, gbuf, sizeof(gbuf), &grp) == 0 && grp &&
            (names[nnames] = strdup(grp->gr_name)) != NULL)
            nnames++;
    }
    names[nnames] = NULL;
    ok = np_site_config_may_claim_high_names(cfg, pw.pw_name, (const char *const *)names);
    for (int i = 0; i < nnames; i++)
        free(names[i]);
    return ok;
}
