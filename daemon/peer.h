/*
 * peer.h - who may read the metrics page. It names every job's user and id on the node, while
 * `numaplace status` shows a user only their own jobs: so a peer on this host (over loopback,
 * or through one of the host's own addresses) may read it only as root or as a user of
 * metrics_users (its uid is the kernel's, found with NETLINK_SOCK_DIAG), and other hosts only
 * from the networks of metrics_allow. A local peer is never let in by a network: any local user
 * could otherwise read the page through 127.0.0.1 or the node's own address.
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

/**
 * May this peer read the page? A peer whose socket was found on this host (@p local_uid_known):
 * when @p uid is root's or in mc->uids, whatever its address. A loopback peer not found: never.
 * Another host: when its address is inside one of mc->nets. Pure: no lookup, no log.
 * @param why on refusal, why (for the log)
 */
bool peer_allowed(const struct peer_address *remote, bool local_uid_known, uid_t uid,
                  const struct np_metrics_config *mc, char *why, size_t why_size);

/** Who holds (or asks for) one of the endpoint's connections, as its admission counts them. */
struct peer_holder {
    bool local; /**< its socket was found on this host: counted by uid, else by address */
    uid_t uid;
    struct peer_address addr;
};

/**
 * May @p who take one more of @p max connection slots, @p held[0..nheld) being taken? Root on
 * this host takes any free slot; anyone else only outside the @p reserved slots kept for root and
 * while holding fewer than @p per_peer (a local user by uid, another host by address), so a peer
 * holding half-sent requests keeps neither root nor the other scrapers out. Pure.
 */
bool peer_slot_admit(const struct peer_holder *held, unsigned nheld, unsigned max,
                     unsigned reserved, unsigned per_peer, const struct peer_holder *who);

/**
 * The uid owning the TCP socket at the other end of our connection @p local <- @p remote
 * (both on this host): the kernel's exact 4-tuple lookup (inet_diag, SOCK_DIAG_BY_FAMILY).
 * @return 0, or -errno (-ENOENT: no such socket here; -ESTALE: only its TIME_WAIT remains)
 */
int peer_uid(const struct peer_address *local, const struct peer_address *remote, uid_t *uid);

#endif /* NUMAPLACED_PEER_H */
