/*
 * user_names.h - what the name service says, looked up off the loop (LDAP or NIS may take seconds
 * and the loop must never wait): user names for the metrics page, asked for at registration and
 * taken by a scrape as known by then (the uid's number until it is); and admin_group's gid and
 * members, asked for at start and each reload, against which set-class and migrate check a peer,
 * asking afresh once the answer is NPD_ADMIN_GROUP_REFRESH_S old.
 */
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

/** Look @p group's gid and members up again on a thread of its own ("" forgets the answer); the
 *  answer there is serves until the new one comes. Never blocks. */
void admin_group_want(const char *group);

/** Is a peer of @p uid and @p gid with the @p ngroups supplementary @p groups (its process's) in
 *  @p group by the latest answer: by its gid or groups, or listed (getent group)? Never blocks:
 *  an old answer serves while a new one is looked up. @return 1, 0 (or no such group), -EAGAIN:
 *  no answer yet */
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
