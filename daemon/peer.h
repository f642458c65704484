/*
 * peer.h - who may read the metrics page, which names every job's user and id on the node (status
 * shows a user only their own): a peer on this host, by loopback or the host's own addresses, only
 * as root or a user of metrics_users (its uid the kernel's, by NETLINK_SOCK_DIAG); other hosts
 * from the networks of metrics_allow. A network never lets a local peer in: any local user could
 * otherwise read the page through 127.0.0.1 or the node's own address.
 */
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

/** May this peer read the page? One whose socket was found here (@p local_uid_known): when @p uid
 *  is root's or in mc->uids. A loopback peer not found: never. Another host: when its address is
 *  in one of mc->nets. Pure: no lookup, no log; @p why: on refusal, why (for the log). */
bool peer_allowed(const struct peer_address *remote, bool local_uid_known, uid_t uid,
                  const struct np_metrics_config *mc, char *why, size_t why_size);

/** Who holds (or asks for) one of the endpoint's connections, as its admission counts them. */
struct peer_holder {
    bool local; /**< its socket was found on this host: counted by uid, else by address */
    uid_t uid;
    struct peer_address addr;
};

/** May @p who take one more of @p max slots, @p held[0..nheld) taken? Root here: any free one;
 *  others only outside the @p reserved for root and while holding fewer than @p per_peer (a local
 *  user by uid, another host by address), so half-sent requests keep no one out. Pure. */
bool peer_slot_admit(const struct peer_holder *held, unsigned nheld, unsigned max,
                     unsigned reserved, unsigned per_peer, const struct peer_holder *who);

/** The uid owning the TCP socket at the other end of @p local <- @p remote (both on this host),
 *  by the kernel's exact 4-tuple lookup (inet_diag). @return 0, or -errno (-ENOENT: no such
 *  socket here; -ESTALE: only its TIME_WAIT remains) */
int peer_uid(const struct peer_address *local, const struct peer_address *remote, uid_t *uid);

#endif /* NUMAPLACED_PEER_H */
