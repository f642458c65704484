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

/** Root. */
bool auth_is_root(const struct ucred *peer);

/** Root, or a member of @p admin_group ("" = no group): its primary or a supplementary group. */
bool auth_is_admin(const struct ucred *peer, const char *admin_group);

/** Root, or the user who owns the job. */
bool auth_owns(const struct ucred *peer, uid_t owner);

/** Root, or the process @p pid itself (a task speaks for itself only). */
bool auth_speaks_for(const struct ucred *peer, pid_t pid);

#endif /* NUMAPLACED_AUTH_H */
