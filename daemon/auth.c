/* Who may do what (see auth.h). */
#include "auth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/protocol.h"
#include "user_names.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59 /* Linux 4.13; libc headers before it lack the name */
#endif

/* SO_PEERGROUPS into a new array: most peers have a few groups, so one try on the stack, then
 * the size the kernel says (ERANGE) on the heap. @return how many, or -errno */
static int peer_groups(int fd, gid_t **out)
{
    gid_t few[64];
    socklen_t len = sizeof(few);
    const bool fits = getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, few, &len) == 0;

    *out = NULL;
    if (!fits && errno != ERANGE)
        return -errno;
    if (len && !(*out = malloc(len))) /* len: what the kernel needs */
        return -ENOMEM;
    if (fits && len)
        memcpy(*out, few, len);
    else if (!fits && getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, *out, &len) < 0) {
        const int rc = -errno; /* ERANGE again: the peer gained groups? never from a socket */
        free(*out);
        *out = NULL;
        return rc;
    }
    return (int)(len / sizeof(gid_t));
}

int auth_peer_read(int fd, struct np_peer *out)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    int n;

    memset(out, 0, sizeof(*out));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
        return -errno;
    out->pid = cred.pid;
    out->uid = cred.uid;
    out->gid = cred.gid;
    /* The groups the peer process holds, whatever the name service lists for its user (sssd
     * with ignore_group_members lists none). Unknown on an older kernel: gid and listed members
     * still count. */
    if ((n = peer_groups(fd, &out->groups)) >= 0) {
        out->ngroups = (unsigned)n;
        out->groups_known = true;
    }
    return 0;
}

void auth_peer_release(struct np_peer *peer)
{
    if (!peer)
        return;
    free(peer->groups);
    peer->groups = NULL;
    peer->ngroups = 0;
    peer->groups_known = false;
}

bool auth_is_root(const struct np_peer *peer)
{
    return peer->uid == 0;
}

enum auth_answer auth_admin_rights(const struct np_peer *peer, const char *admin_group)
{
    int in;

    if (auth_is_root(peer))
        return AUTH_YES;
    if (!admin_group[0])
        return AUTH_NO;
    /* The name service answers on a thread of its own (user_names.h), never on the loop. */
    in = admin_group_has(admin_group, peer->uid, peer->gid, peer->groups, peer->ngroups);
    return in == -EAGAIN ? AUTH_NOT_YET : in > 0 ? AUTH_YES : AUTH_NO;
}

json_t *auth_refuse_unless_admin(const struct np_peer *peer, const char *admin_group,
                                 const char *what)
{
    switch (auth_admin_rights(peer, admin_group)) {
    case AUTH_YES:
        return NULL;
    case AUTH_NOT_YET:
        return np_proto_reply_error("admin_group %s's members are still being looked up (the name "
                                    "service is slow to answer); uid %u may ask again in a moment",
                                    admin_group, (unsigned)peer->uid);
    case AUTH_NO:
        break;
    }
    return np_proto_reply_error("only root or members of admin_group%s%s may %s; uid %u may not",
                                admin_group[0] ? " " : "", admin_group, what, (unsigned)peer->uid);
}

bool auth_owns(const struct np_peer *peer, uid_t owner)
{
    return auth_is_root(peer) || peer->uid == owner;
}

bool auth_speaks_for(const struct np_peer *peer, pid_t pid)
{
    return auth_is_root(peer) || peer->pid == pid;
}
