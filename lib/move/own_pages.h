/*
 * own_pages.h - migrate_pages(2) that moves only the pages a process alone maps (private to
 * np_move: see migrate.c).
 */
#ifndef NUMAPLACE_OWN_PAGES_H
#define NUMAPLACE_OWN_PAGES_H

#include <stdbool.h>
#include <sys/types.h>

/**
 * migrate_pages(2) of @p pid from the nodes in @p from to those in @p to (@p maxnode bits).
 * Unless @p move_shared, the call runs with CAP_SYS_NICE out of the calling thread's effective
 * set, so the kernel treats it as MPOL_MF_MOVE (pages mapped by other processes stay) instead
 * of MPOL_MF_MOVE_ALL; it is back in the set before this returns.
 * @return what migrate_pages returns (pages that failed, or -1 with errno); -1 with errno from
 *         capset when the capability could not be dropped (nothing was moved then)
 */
long np_migrate_own_pages(pid_t pid, unsigned long maxnode, const unsigned long *from,
                          const unsigned long *to, bool move_shared);

#endif /* NUMAPLACE_OWN_PAGES_H */
