/* auth.h - who may do what, from the peer's credentials: root (slurmstepd) registers and ends
 * steps; root and admin_group change classes and migrate; a user sees only their own jobs. */
#ifndef NUMAPLACED_AUTH_H
#define NUMAPLACED_AUTH_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <jansson.h>

/** Who is asking, as the kernel said at accept (SO_PEERCRED, SO_PEERGROUPS). Owned by its slot. */
struct np_peer {
    pid_t pid;
    uid_t uid;
    gid_t gid;
    gid_t *groups;     /**< owned: its supplementary groups, NULL when none or unknown */
    unsigned ngroups;  /**< how many */
    bool groups_known; /**< SO_PEERGROUPS answered (Linux 4.13 on) */
};

/** @p fd's peer into @p out (its groups new: auth_peer_release). @return 0, or -errno when
 *  SO_PEERCRED fails (SO_PEERGROUPS failing: groups unknown) */
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

/** Root, or a member of @p admin_group ("" = none); AUTH_NOT_YET before the name service answers */
enum auth_answer auth_admin_rights(const struct np_peer *peer, const char *admin_group);

/** NULL when @p peer has administrator's rights, else the refusal naming @p what (new). */
json_t *auth_refuse_unless_admin(const struct np_peer *peer, const char *admin_group,
                                 const char *what);

/** Root, or the user who owns the job. */
bool auth_owns(const struct np_peer *peer, uid_t owner);

/** Root, or the process @p pid itself (a task speaks for itself only). */
bool auth_speaks_for(const struct np_peer *peer, pid_t pid);

#endif /* NUMAPLACED_AUTH_H */
