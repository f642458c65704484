/* Who may do what (see auth.h). */
#include "auth.h"

#include <grp.h>
#include <pwd.h>

#define MAX_GROUPS 256

bool auth_is_root(const struct ucred *peer)
{
    return peer->uid == 0;
}

bool auth_is_admin(const struct ucred *peer, const char *admin_group)
{
    const struct group *gr;
    const struct passwd *pw;
    gid_t groups[MAX_GROUPS], gid;
    int ngroups = MAX_GROUPS;

    if (auth_is_root(peer))
        return true;
    if (!admin_group[0] || !(gr = getgrnam(admin_group)))
        return false;
    gid = gr->gr_gid; /* getpwuid may reuse getgrnam's storage */
    if (peer->gid == gid)
        return true;
    pw = getpwuid(peer->uid);
    if (!pw || getgrouplist(pw->pw_name, pw->pw_gid, groups, &ngroups) < 0)
        return false;
    for (int i = 0; i < ngroups; i++)
        if (groups[i] == gid)
            return true;
    return false;
}

bool auth_owns(const struct ucred *peer, uid_t owner)
{
    return auth_is_root(peer) || peer->uid == owner;
}

bool auth_speaks_for(const struct ucred *peer, pid_t pid)
{
    return auth_is_root(peer) || peer->pid == pid;
}
