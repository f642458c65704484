/* Who may read the metrics page (see peer.h). */
#include "peer.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

struct peer_address peer_address_of(const struct sockaddr *sa)
{
    static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    struct peer_address a = {0};

    if (sa && sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        a.family = AF_INET;
        memcpy(a.addr, &in->sin_addr, 4);
        a.port = ntohs(in->sin_port);
    } else if (sa && sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        a.port = ntohs(in6->sin6_port);
        if (memcmp(in6->sin6_addr.s6_addr, v4_mapped, sizeof(v4_mapped)) == 0) {
            a.family = AF_INET;
            memcpy(a.addr, in6->sin6_addr.s6_addr + 12, 4);
        } else {
            a.family = AF_INET6;
            memcpy(a.addr, in6->sin6_addr.s6_addr, 16);
        }
    }
    return a;
}

bool peer_is_loopback(const struct peer_address *a)
{
    static const unsigned char v6_loopback[16] = {[15] = 1};

    return (a->family == AF_INET && a->addr[0] == 127) ||
           (a->family == AF_INET6 && memcmp(a->addr, v6_loopback, 16) == 0);
}

bool peer_allowed(const struct peer_address *remote, bool local_uid_known, uid_t uid,
                  const struct np_metrics_config *mc, char *why, size_t why_size)
{
    if (remote->family != AF_INET && remote->family != AF_INET6) {
        snprintf(why, why_size, "not an IP peer");
        return false;
    }
    if (local_uid_known) {
        if (uid == 0)
            return true;
        for (unsigned i = 0; i < mc->nuids; i++)
            if (mc->uids[i] == uid)
                return true;
        snprintf(why, why_size, "local peer of uid %u, neither root nor in metrics_users",
                 (unsigned)uid);
        return false;
    }
    if (peer_is_loopback(remote)) {
        snprintf(why, why_size, "loopback peer whose user could not be found");
        return false;
    }
    for (unsigned i = 0; i < mc->nnets; i++)
        if (np_cidr_contains(&mc->nets[i], remote->family, remote->addr))
            return true;
    snprintf(why, why_size, "address outside metrics_allow");
    return false;
}

static bool same_holder(const struct peer_holder *a, const struct peer_holder *b)
{
    if (a->local != b->local)
        return false;
    if (a->local)
        return a->uid == b->uid;
    return a->addr.family == b->addr.family &&
           memcmp(a->addr.addr, b->addr.addr, a->addr.family == AF_INET ? 4 : 16) == 0;
}

bool peer_slot_admit(const struct peer_holder *held, unsigned nheld, unsigned max,
                     unsigned reserved, unsigned per_peer, const struct peer_holder *who)
{
    unsigned mine = 0;

    if (nheld >= max)
        return false;
    if (who->local && who->uid == 0)
        return true;
    for (unsigned i = 0; i < nheld; i++)
        if (same_holder(&held[i], who))
            mine++;
    return max - nheld > reserved && mine < per_peer;
}

static void fill_id(struct inet_diag_sockid *id, const struct peer_address *local,
                    const struct peer_address *remote)
{
    /* The socket we look for is the client's: its source is the remote end of ours. */
    id->idiag_sport = htons(remote->port);
    id->idiag_dport = htons(local->port);
    memcpy(id->idiag_src, remote->addr, remote->family == AF_INET ? 4 : 16);
    memcpy(id->idiag_dst, local->addr, local->family == AF_INET ? 4 : 16);
    id->idiag_cookie[0] = id->idiag_cookie[1] = INET_DIAG_NOCOOKIE;
}

int peer_uid(const struct peer_address *local, const struct peer_address *remote, uid_t *uid)
{
    struct {
        struct nlmsghdr nlh;
        struct inet_diag_req_v2 req;
    } msg;
    struct nlmsghdr reply[8192 / sizeof(struct nlmsghdr)]; /* aligned for NLMSG_NEXT */
    struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};
    ssize_t n;
    int fd, rc = -ENOENT;

    if (local->family != remote->family ||
        (remote->family != AF_INET && remote->family != AF_INET6))
        return -EAFNOSUPPORT;
    fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0)
        return -errno;
    /* The kernel answers at once; the bound only guards against the unexpected. */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    memset(&msg, 0, sizeof(msg));
    msg.nlh.nlmsg_len = sizeof(msg);
    msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    msg.nlh.nlmsg_flags = NLM_F_REQUEST;
    msg.req.sdiag_family = (__u8)remote->family;
    msg.req.sdiag_protocol = IPPROTO_TCP;
    msg.req.idiag_states = ~0u;
    fill_id(&msg.req.id, local, remote);
    n = send(fd, &msg, sizeof(msg), 0) < 0 ? -1 : recv(fd, reply, sizeof(reply), 0);
    if (n < 0)
        rc = -errno;
    for (struct nlmsghdr *h = reply; n > 0 && NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
        if (h->nlmsg_type == NLMSG_ERROR) {
            const struct nlmsgerr *e = NLMSG_DATA(h);
            rc = h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ? e->error : -EPROTO;
            break;
        }
        if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
            h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
            const struct inet_diag_msg *m = NLMSG_DATA(h);
            if (m->id.idiag_sport != htons(remote->port) || m->id.idiag_dport != htons(local->port))
                break; /* not the socket asked for: never guess whose it is */
            /* A closed socket the kernel keeps as TIME_WAIT (a client that closed at once
             * leaves one) reports uid 0 and no inode: it is nobody's, never root's. */
            if (m->idiag_inode == 0) {
                rc = -ESTALE;
                break;
            }
            *uid = (uid_t)m->idiag_uid;
            rc = 0;
            break;
        }
    }
    close(fd);
    return rc;
}
