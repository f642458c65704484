/* peer.h - who may read the metrics page, which names every job's user: a local peer as root or
 * a user of metrics_users (its uid by NETLINK_SOCK_DIAG), other hosts by metrics_allow's networks,
 * which never let a local peer in (any local user could come through 127.0.0.1). */
#ifndef NUMAPLACED_PEER_H
#define NUMAPLACED_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "numaplace/helperconf.h"

/** An address as the decision sees it: IPv4-mapped IPv6 addresses become IPv4. */
struct peer_address {
    int family; /**< AF_INET or AF_INET6; 0: neither */
    unsigned char addr[16];
    uint16_t port; /**< host order */
};

/** @p sa (AF_INET or AF_INET6) as a peer_address. */
struct peer_address peer_address_of(const struct sockaddr *sa);

/** 127.0.0.0/8 or ::1. */
bool peer_is_loopback(const struct peer_address *a);

/** May this peer read the page? A local one (@p local_uid_known) by @p uid, a loopback one not
 *  found never, another host by mc->nets. Pure; @p why: on refusal, why (for the log). */
bool peer_allowed(const struct peer_address *remote, bool local_uid_known, uid_t uid,
                  const struct np_metrics_config *mc, char *why, size_t why_size);

/** Who holds (or asks for) one of the endpoint's connections, as its admission counts them. */
struct peer_holder {
    bool local; /**< its socket was found on this host: counted by uid, else by address */
    uid_t uid;
    struct peer_address addr;
};

/** May @p who take one more of @p max slots, @p held[0..nheld) taken? Root here: any free one;
 *  others outside the @p reserved for root, fewer than @p per_peer (by uid or address). Pure. */
bool peer_slot_admit(const struct peer_holder *held, unsigned nheld, unsigned max,
                     unsigned reserved, unsigned per_peer, const struct peer_holder *who);

/** The uid owning the TCP socket at the other end of @p local <- @p remote, by inet_diag.
 *  @return 0, or -errno (-ENOENT: no such socket here; -ESTALE: only its TIME_WAIT remains) */
int peer_uid(const struct peer_address *local, const struct peer_address *remote, uid_t *uid);

#endif /* NUMAPLACED_PEER_H */
