/* user_names.h - the name service, asked off the loop (LDAP may take seconds): user names for the
 * metrics page, and admin_group's gid and members, against which set-class and migrate check. */
#ifndef NUMAPLACED_USER_NAMES_H
#define NUMAPLACED_USER_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* uids remembered at once; past that, a new one is looked up only after a known one is dropped */
#define NPD_USER_NAMES_MAX 1024

/** Look @p uid's name up on a thread of its own, unless known or under way. Never blocks. */
void user_name_want(uid_t uid);

/** Copy @p uid's name into @p buf when it is known. @return whether it was */
bool user_name_get(uid_t uid, char *buf, size_t len);

/* An answer about admin_group older than this is looked up again (the old one serves meanwhile):
 * a user taken out of the group loses the rights within about this long, or at once on SIGHUP. */
#define NPD_ADMIN_GROUP_REFRESH_S 60.0

/** Look @p group's gid and members up again on a thread ("" forgets them). Never blocks. */
void admin_group_want(const char *group);

/** Is a peer of @p uid, @p gid and supplementary @p groups in @p group by the latest answer (its
 *  gid, its groups, or listed)? Never blocks. @return 1, 0 (or no such group), -EAGAIN: no answer
 *  yet */
int admin_group_has(const char *group, uid_t uid, gid_t gid, const gid_t *groups, unsigned ngroups);

/** The name service as the lookups see it; tests put a slow or failing one in its place. */
struct user_resolver {
    /** @p uid's name into @p buf. @return 0 or -errno (no such user, the service failed) */
    int (*user_name)(uid_t uid, char *buf, size_t len);
    /** @p group's gid, and the uids of the users it lists (new array into *@p members, freed by
     *  the caller). @return how many, or -errno (no such group, the service failed) */
    int (*group_members)(const char *group, gid_t *gid, uid_t **members);
};

/** Tests: look up through @p r (borrowed, outliving every lookup; NULL: the name service). */
void user_names_set_resolver(const struct user_resolver *r);

#endif /* NUMAPLACED_USER_NAMES_H */
