/*
 * wi_exec: set weighted interleave over NODES as the task's memory policy, then exec CMD, which
 * inherits it:
 *   wi_exec NODES CMD [ARG...]      (NODES: node numbers separated by commas, e.g. 0,2)
 * The tiered guest suite's stand-in for numactl 2.0.19's --weighted-interleave, which Debian 12's
 * numactl lacks. The policy goes straight to the kernel (the raw system call, no libnuma), so a
 * kernel without it answers for itself: exit 3 with the errno on stderr (EINVAL before 6.9).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MPOL_WEIGHTED_INTERLEAVE_MODE 6 /* linux/mempolicy.h since 6.9 */
#define MAX_NODES                     1024
#define WORD_BITS                     (8 * sizeof(unsigned long))

int main(int argc, char **argv)
{
    unsigned long mask[MAX_NODES / WORD_BITS] = {0};
    const char *p;
    char *end;

    if (argc < 3) {
        fprintf(stderr, "usage: wi_exec NODES CMD [ARG...]\n");
        return 2;
    }
    for (p = argv[1];; p = end + 1) {
        errno = 0;
        unsigned long node = strtoul(p, &end, 10);
        if (errno || end == p || *p == '-' || node >= MAX_NODES || (*end && *end != ',')) {
            fprintf(stderr, "wi_exec: invalid node list '%s' (accepted: e.g. 0,2)\n", argv[1]);
            return 2;
        }
        mask[node / WORD_BITS] |= 1UL << (node % WORD_BITS);
        if (!*end)
            break;
    }
    /* The kernel reads maxnode - 1 bits: MAX_NODES covers every node below 1023. */
    if (syscall(SYS_set_mempolicy, MPOL_WEIGHTED_INTERLEAVE_MODE, mask, (unsigned long)MAX_NODES) !=
        0) {
        int e = errno;
        fprintf(stderr, "wi_exec: set_mempolicy(MPOL_WEIGHTED_INTERLEAVE, %s): errno=%d (%s)\n",
                argv[1], e, strerror(e));
        return 3;
    }
    execvp(argv[2], argv + 2);
    fprintf(stderr, "wi_exec: %s: %s\n", argv[2], strerror(errno));
    return 127;
}
