/* migrate_pages(2) without moving shared pages (see own_pages.h). */
#include "own_pages.h"

#include <errno.h>
#include <linux/capability.h>
#include <numaif.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The kernel's migrate_pages moves every page of the process, shared ones included, when the
 * caller is capable(CAP_SYS_NICE) (MPOL_MF_MOVE_ALL), and only the pages the process alone maps
 * otherwise (MPOL_MF_MOVE, mm/mempolicy.c). Root keeps the right to move another user's
 * process without it (CAP_SYS_PTRACE answers the kernel's ptrace_may_access check). Capabilities
 * are per thread: capset(2) changes the calling thread only, so the daemon's other threads
 * never see the change.
 */
long np_migrate_own_pages(pid_t pid, unsigned long maxnode, const unsigned long *from,
                          const unsigned long *to, bool move_shared)
{
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
    const uint32_t sys_nice = 1u << (CAP_SYS_NICE % 32);
    bool dropped = false;
    long left;
    int saved;

    if (!move_shared) {
        if (syscall(SYS_capget, &header, caps) < 0)
            return -1;
        if (caps[CAP_SYS_NICE / 32].effective & sys_nice) {
            caps[CAP_SYS_NICE / 32].effective &= ~sys_nice;
            /* Not dropped: nothing moves rather than shared pages with the rest. */
            if (syscall(SYS_capset, &header, caps) < 0)
                return -1;
            dropped = true;
        }
    }
    left = migrate_pages(pid, maxnode, from, to);
    saved = errno;
    if (dropped) {
        caps[CAP_SYS_NICE / 32].effective |= sys_nice;
        /* Raising an effective bit that is still permitted does not fail; if it did, later
         * moves would refuse shared pages all the more (MPOL_MF_MOVE_ALL: EPERM, logged). */
        (void)syscall(SYS_capset, &header, caps);
    }
    errno = saved;
    return left;
}
