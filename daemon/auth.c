/* Who may do what (see auth.h). */
#include "auth.h"

#include <errno.h>

#include "numaplace/protocol.h"
#include "user_names.h"

bool auth_is_root(const struct ucred *peer)
{
    return peer->uid == 0;
}

enum auth_answer auth_admin_rights(const struct ucred *peer, const char *admin_group)
{
    int in;

    if (auth_is_root(peer))
        return AUTH_YES;
    if (!admin_group[0])
        return AUTH_NO;
    /* The name service answers on a thread of its own (user_names.h), never on the loop. */
    in = admin_group_has(admin_group, peer->uid, peer->gid);
    return in == -EAGAIN ? AUTH_NOT_YET : in > 0 ? AUTH_YES : AUTH_NO;
}

json_t *auth_refuse_unless_admin(const struct ucred *peer, const char *admin_group,
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

bool auth_owns(const struct ucred *peer, uid_t owner)
{
    return auth_is_root(peer) || peer->uid == owner;
}

bool auth_speaks_for(const struct ucred *peer, pid_t pid)
{
    return auth_is_root(peer) || peer->pid == pid;
}
