/*
 * user_names.h - what the name service says, looked up off the loop: user names for the metrics
 * page, and who is in admin_group. A name service (LDAP, NIS) may take seconds to answer
 * getpwuid_r or getgrnam_r; the loop must never wait on it. A step's registration asks for its
 * user's name (user_name_want), a thread of its own looks it up, and a scrape takes what is known
 * by then (user_name_get), the uid's number until it is. The configuration asks for admin_group
 * (admin_group_want, at start and at each reload); a thread reads its gid and its members, and
 * set-class and migrate check a peer against that answer and the groups its process holds
 * (admin_group_has), asking for a fresh one once it is NPD_ADMIN_GROUP_REFRESH_S old.
 */
#ifndef NUMAPLACED_USER_NAMES_H
#define NUMAPLACED_USER_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* uids remembered at once; past that, a new one is looked up only after a known one is dropped */
#define NPD_USER_NAMES_MAX 1024

/** Look @p uid's name up on a thread of its own, unless it is known or being looked up. Never
 *  blocks on the name service. */
void user_name_want(uid_t uid);

/** Copy @p uid's name into @p buf when it is known. @return whether it was */
bool user_name_get(uid_t uid, char *buf, size_t len);

/* An answer about admin_group older than this is looked up again (the old one serves meanwhile):
 * a user taken out of the group loses the rights within about this long, or at once on SIGHUP. */
#define NPD_ADMIN_GROUP_REFRESH_S 60.0

/** Look @p group's gid and members up again on a thread of its own ("" forgets the answer): at
 *  start and at each reload, so a change to the group counts from the next SIGHUP; the answer
 *  there is serves until the new one comes. Never blocks on the name service. */
void admin_group_want(const char *group);

/**
 * Whether a peer of @p uid and @p gid, holding the @p ngroups supplementary @p groups (borrowed;
 * the process's own, from its socket), is in @p group by the latest answer: its gid or one of
 * its groups is the group's, or the group lists the user (getent group). Never blocks: an answer
 * older than NPD_ADMIN_GROUP_REFRESH_S still serves while a new one is looked up.
 * @return 1 in it, 0 not (or no such group), -EAGAIN: not answered yet (being looked up)
 */
int admin_group_has(const char *group, uid_t uid, gid_t gid, const gid_t *groups, unsigned ngroups);

/** The name service as the lookups see it; tests put a slow or failing one in its place. */
struct user_resolver {
    /** @p uid's name into @p buf. @return 0 or -errno (no such user, the service failed) */
    int (*user_name)(uid_t uid, char *buf, size_t len);
    /** @p group's gid, and the uids of the users it lists (new array into *@p members, freed by
     *  the caller). @return how many, or -errno (no such group, the service failed) */
    int (*group_members)(const char *group, gid_t *gid, uid_t **members);
};

/** Look up through @p r (borrowed, outliving every lookup) from now on; NULL: the name
 *  service. Forgets every answer. For tests. */
void user_names_set_resolver(const struct user_resolver *r);

#endif /* NUMAPLACED_USER_NAMES_H */
