/*
 * auth.h - who may do what, from the peer's credentials (SO_PEERCRED, SO_PEERGROUPS): root
 * (slurmstepd) registers and ends steps; root and members of admin_group change classes and request
 * migrations; a user sees and reports on their own jobs only. Tests pass a made-up credential.
 */
#ifndef NUMAPLACED_AUTH_H
#define NUMAPLACED_AUTH_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <jansson.h>

/** Who is asking, as the kernel said at accept: SO_PEERCRED's fields and the process's
 *  supplementary groups (SO_PEERGROUPS; no name service asked). Owned by the client's slot. */
struct np_peer {
    pid_t pid;
    uid_t uid;
    gid_t gid;
    gid_t *groups;     /**< owned: its supplementary groups, NULL when none or unknown */
    unsigned ngroups;  /**< how many */
    bool groups_known; /**< SO_PEERGROUPS answered (Linux 4.13 on) */
};

/** @p fd's peer into @p out (its groups new: auth_peer_release), the one place credentials are
 *  read. @return 0, or -errno when SO_PEERCRED fails (SO_PEERGROUPS failing: groups unknown) */
int auth_peer_read(int fd, struct np_peer *out);

/** Free @p peer's groups; NULL accepted. */
void auth_peer_release(struct np_peer *peer);

bool auth_is_root(const struct np_peer *peer);

/** Whether a peer has administrator's rights; AUTH_NOT_YET is not a yes. */
enum auth_answer {
    AUTH_NO,
    AUTH_YES,
    AUTH_NOT_YET, /**< admin_group's members are being looked up: ask again in a moment */
};

/** Root, or a member of @p admin_group ("" = none): by the process's gid or supplementary groups,
 *  or a user the group lists. Never waits on the name service: before its answer, AUTH_NOT_YET. */
enum auth_answer auth_admin_rights(const struct np_peer *peer, const char *admin_group);

/** NULL when @p peer has administrator's rights, else the refusal to send (new): it names
 *  @p what was asked ("change a job's class") and whether to ask again. */
json_t *auth_refuse_unless_admin(const struct np_peer *peer, const char *admin_group,
                                 const char *what);

/** Root, or the user who owns the job. */
bool auth_owns(const struct np_peer *peer, uid_t owner);

/** Root, or the process @p pid itself (a task speaks for itself only). */
bool auth_speaks_for(const struct np_peer *peer, pid_t pid);

#endif /* NUMAPLACED_AUTH_H */
