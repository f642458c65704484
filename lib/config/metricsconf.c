/* numaplaced's Prometheus endpoint settings (see metricsconf.h). */
#include "numaplace/metricsconf.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_listen(struct np_metrics_config *mc, const char *value, struct np_err *err)
{
    char host[64];
    const char *colon;
    char *end;
    unsigned long port;
    size_t hlen;

    if (!*value) {
        mc->listen[0] = '\0';
        return 0;
    }
    colon = strrchr(value, ':');
    if (!colon || colon == value || strlen(value) >= sizeof(mc->listen))
        goto bad;
    hlen = (size_t)(colon - value);
    if (value[0] == '[') {
        if (hlen < 3 || value[hlen - 1] != ']')
            goto bad;
        snprintf(host, sizeof(host), "%.*s", (int)(hlen - 2), value + 1);
        if (inet_pton(AF_INET6, host, mc->addr) != 1)
            goto bad;
        mc->family = AF_INET6;
    } else {
        snprintf(host, sizeof(host), "%.*s", (int)hlen, value);
        if (inet_pton(AF_INET, host, mc->addr) != 1)
            goto bad;
        mc->family = AF_INET;
    }
    errno = 0;
    port = strtoul(colon + 1, &end, 10);
    if (!isdigit((unsigned char)colon[1]) || *end || errno || port < 1 || port > 65535)
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
        char *end;
        unsigned long v;
        errno = 0;
        v = strtoul(item, &end, 10);
        if (*end || errno || v >= (uid_t)-1)
            return -EINVAL;
        *out = (uid_t)v;
        return 0;
    }
    if (getpwnam_r(item, &pw, buf, sizeof(buf), &found) != 0 || !found)
        return -ENOENT;
    *out = found->pw_uid;
    return 0;
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
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *end;
        int rc;
        while (isspace((unsigned char)*item))
            item++;
        end = item + strlen(item);
        while (end > item && isspace((unsigned char)end[-1]))
            *--end = '\0';
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
    char host[64], *end;
    const char *slash = strchr(text, '/');
    const size_t hlen = slash ? (size_t)(slash - text) : strlen(text);
    unsigned long prefix;

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
    prefix = out->family == AF_INET ? 32 : 128;
    if (slash) {
        errno = 0;
        const unsigned long max = prefix;
        prefix = strtoul(slash + 1, &end, 10);
        if (!isdigit((unsigned char)slash[1]) || *end || errno || prefix > max)
            return -EINVAL;
    }
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
    char *end;
    unsigned long n;

    if (strcmp(value, "on") == 0 || strcmp(value, "off") == 0) {
        mc->step_series_off = value[1] == 'f';
        mc->step_series_max = 0;
        return 0;
    }
    errno = 0;
    n = strtoul(value, &end, 10);
    if (!isdigit((unsigned char)value[0]) || *end || errno || n < 1 ||
        n > NP_METRICS_MAX_STEP_SERIES)
        return np_err_set(err, -EINVAL,
                          "metrics_step_series=\"%s\": accepted: on (every step), off (no per-step "
                          "series), or the most steps with series, from 1 to %d",
                          value, NP_METRICS_MAX_STEP_SERIES);
    mc->step_series_off = false;
    mc->step_series_max = (unsigned)n;
    return 0;
}

int np_metrics_config_set(struct np_metrics_config *mc, const char *key, const char *value,
                          struct np_err *err)
{
    struct np_metrics_config next = *mc;
    char bad[128] = "";
    int rc;

    if (strcmp(key, "metrics_step_series") == 0)
        return parse_step_series(mc, value, err);
    if (strcmp(key, "metrics_listen") == 0) {
        if ((rc = parse_listen(&next, value, err)) == 0)
            *mc = next;
        return rc;
    }
    if (strcmp(key, "metrics_users") == 0) {
        next.nuids = 0;
        rc = each_item(value, bad, sizeof(bad), add_user, &next);
        if (rc == -E2BIG)
            return np_err_set(err, -EINVAL, "metrics_users: at most %d users",
                              NP_METRICS_MAX_USERS);
        if (rc < 0)
            return np_err_set(err, -EINVAL,
                              "metrics_users=\"%s\": %s\"%s\"; accepted: user names of this node "
                              "or uids, comma-separated (root may always read)",
                              value, rc == -ENOENT ? "no such user " : "bad uid ", bad);
        *mc = next;
        return 0;
    }
    if (strcmp(key, "metrics_allow") == 0) {
        next.nnets = 0;
        rc = each_item(value, bad, sizeof(bad), add_net, &next);
        if (rc == -E2BIG)
            return np_err_set(err, -EINVAL, "metrics_allow: at most %d networks",
                              NP_METRICS_MAX_NETS);
        if (rc < 0)
            return np_err_set(err, -EINVAL,
                              "metrics_allow=\"%s\": \"%s\" is not a network; accepted: CIDRs "
                              "like 10.1.0.0/16 or fd00::/8 (or one address), comma-separated",
                              value, bad);
        *mc = next;
        return 0;
    }
    return np_err_set(err, -EINVAL, "\"%s\" is not a metrics key", key);
}
