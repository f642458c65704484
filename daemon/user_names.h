/*
 * user_names.h - user names for the metrics page, looked up off the loop. A name service (LDAP,
 * NIS) may take seconds to answer getpwuid_r; the loop must never wait on it. A step's
 * registration asks for its user's name (user_name_want), a thread of its own looks it up, and a
 * scrape takes what is known by then (user_name_get), the uid's number until it is.
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

#endif /* NUMAPLACED_USER_NAMES_H */
