/*
 * numaplace/metricsconf.h - numaplaced's Prometheus endpoint settings (numaplaced(8), METRICS):
 * where it listens, which local users and which networks may read the page.
 *
 * The page names every job's user and id on the node, while `numaplace status` shows a user only
 * their own jobs: so it is off unless metrics_listen is set, and then readable only by root, the
 * users named in metrics_users (over loopback) and the networks named in metrics_allow.
 */
#ifndef NUMAPLACE_METRICSCONF_H
#define NUMAPLACE_METRICSCONF_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "numaplace/common.h"

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

/**
 * Set one metrics key (np_helper_config_set calls it). metrics_listen: "" or HOST:PORT with an
 * IPv4 address or [IPv6]; metrics_users: "" or user names or uids, comma-separated (names must
 * exist on this node); metrics_allow: "" or CIDRs (a.b.c.d/n, ipv6/n; no /n = one address);
 * metrics_step_series: on, off, or a number of steps from 1 to NP_METRICS_MAX_STEP_SERIES.
 * @return 0, or -EINVAL with @p err naming the key, the value and what is accepted
 */
NP_API int np_metrics_config_set(struct np_metrics_config *mc, const char *key, const char *value,
                                 struct np_err *err);

/** Parse one CIDR ("10.0.0.0/8", "fd00::/8", "192.0.2.7"). @return 0 or -EINVAL */
NP_API int np_cidr_parse(const char *text, struct np_cidr *out);

/** Is @p addr (@p family's bytes, network order) inside @p net? */
NP_API bool np_cidr_contains(const struct np_cidr *net, int family, const unsigned char *addr);

#endif /* NUMAPLACE_METRICSCONF_H */
