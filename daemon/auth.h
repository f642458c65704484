/*
 * auth.h - who may do what, from the peer's credentials (SO_PEERCRED): root (slurmstepd)
 * registers and ends steps; root and members of admin_group change classes and request
 * migrations; a user sees and reports on their own jobs only. Tests pass a made-up credential.
 */
#ifndef NUMAPLACED_AUTH_H
#define NUMAPLACED_AUTH_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <jansson.h>

/** Root. */
bool auth_is_root(const struct ucred *peer);

/** Whether a peer has administrator's rights; AUTH_NOT_YET is not a yes. */
enum auth_answer {
    AUTH_NO,
    AUTH_YES,
    AUTH_NOT_YET, /**< admin_group's members are being looked up: ask again in a moment */
};

/** Root, or a member of @p admin_group ("" = no group): a process whose gid is the group's, or a
 *  user the group lists. Never waits on the name service (user_names.h, admin_group_has). */
enum auth_answer auth_admin_rights(const struct ucred *peer, const char *admin_group);

/** NULL when @p peer has administrator's rights, else the refusal to send (new): it names
 *  @p what was asked ("change a job's class") and whether to ask again. */
json_t *auth_refuse_unless_admin(const struct ucred *peer, const char *admin_group,
                                 const char *what);

/** Root, or the user who owns the job. */
bool auth_owns(const struct ucred *peer, uid_t owner);

/** Root, or the process @p pid itself (a task speaks for itself only). */
bool auth_speaks_for(const struct ucred *peer, pid_t pid);

#endif /* NUMAPLACED_AUTH_H */
