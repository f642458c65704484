/* Applying and reading memory policies with the kernel's calls (see numaplace/mempolicy.h). */
#include "numaplace/mempolicy.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Mode flags get_mempolicy may report (linux/mempolicy.h; numaif.h lacks them). */
#ifndef MPOL_F_STATIC_NODES
#define MPOL_F_STATIC_NODES (1 << 15)
#endif
#ifndef MPOL_F_RELATIVE_NODES
#define MPOL_F_RELATIVE_NODES (1 << 14)
#endif

#ifndef MPOL_WEIGHTED_INTERLEAVE
#define MPOL_WEIGHTED_INTERLEAVE 6 /* Linux 6.9; Debian 12's numaif.h lacks it */
#endif
#define WEIGHTS_DIR "/sys/kernel/mm/mempolicy/weighted_interleave"

/* The kernel's nodemask: an array of longs covering node 0 .. max. */
#define MASK_WORDS 16ul /* 1024 nodes */

static int to_mask(hwloc_const_bitmap_t nodes, unsigned long *mask, unsigned long *maxnode)
{
    int n, last = hwloc_bitmap_last(nodes);

    memset(mask, 0, MASK_WORDS * sizeof(*mask));
    if (last >= (int)(MASK_WORDS * 64))
        return -ERANGE;
    hwloc_bitmap_foreach_begin(n, nodes)
    {
        mask[n / 64] |= 1ul << (n % 64);
    }
    hwloc_bitmap_foreach_end();
    *maxnode = (unsigned long)last + 2; /* the kernel reads maxnode - 1 bits */
    return 0;
}

static void from_mask(const unsigned long *mask, hwloc_nodeset_t nodes)
{
    hwloc_bitmap_zero(nodes);
    for (unsigned n = 0; n < MASK_WORDS * 64; n++)
        if (mask[n / 64] >> (n % 64) & 1ul)
            hwloc_bitmap_set(nodes, n);
}

static int kernel_mode(enum np_mode mode)
{
    switch (mode) {
    case NP_MODE_PREFERRED:
        return MPOL_PREFERRED;
    case NP_MODE_PREFERRED_MANY:
        return MPOL_PREFERRED_MANY;
    case NP_MODE_BIND:
        return MPOL_BIND;
    case NP_MODE_INTERLEAVE:
        return MPOL_INTERLEAVE;
    case NP_MODE_WEIGHTED_INTERLEAVE:
        return MPOL_WEIGHTED_INTERLEAVE;
    case NP_MODE_DEFAULT:
        break;
    }
    return MPOL_DEFAULT;
}

int np_placement_apply(const struct np_placement *placement, struct np_err *err)
{
    unsigned long mask[MASK_WORDS], maxnode = 0;
    char nodes_text[128];

    if (placement->mode == NP_MODE_DEFAULT) {
        if (set_mempolicy(MPOL_DEFAULT, NULL, 0) < 0)
            return np_err_set(err, -errno, "set_mempolicy(MPOL_DEFAULT): %s", strerror(errno));
        return 0;
    }
    hwloc_bitmap_list_snprintf(nodes_text, sizeof(nodes_text), placement->nodes);
    if (to_mask(placement->nodes, mask, &maxnode) < 0)
        return np_err_set(err, -ERANGE, "node set %s is beyond %lu nodes", nodes_text,
                          MASK_WORDS * 64);
    if (set_mempolicy(kernel_mode(placement->mode), mask, maxnode) < 0) {
        const int saved = errno;

        /* Not retried as MPOL_PREFERRED behind the caller's back: it decides (and says so). */
        if ((placement->mode == NP_MODE_PREFERRED_MANY ||
             placement->mode == NP_MODE_WEIGHTED_INTERLEAVE) &&
            saved == EINVAL)
            return np_err_set(err, -EINVAL,
                              "set_mempolicy(%s, nodes %s): %s (this kernel may lack %s, Linux "
                              ">= %s; place again without it)",
                              np_mode_name(placement->mode), nodes_text, strerror(saved),
                              placement->mode == NP_MODE_PREFERRED_MANY
                                  ? "MPOL_PREFERRED_MANY"
                                  : "MPOL_WEIGHTED_INTERLEAVE",
                              placement->mode == NP_MODE_PREFERRED_MANY ? "5.15" : "6.9");
        return np_err_set(err, -saved, "set_mempolicy(%s, nodes %s): %s",
                          np_mode_name(placement->mode), nodes_text, strerror(saved));
    }
    return 0;
}

int np_mempolicy_get(enum np_mode *mode, hwloc_nodeset_t nodes, struct np_err *err)
{
    unsigned long mask[MASK_WORDS];
    int kmode = 0;

    memset(mask, 0, sizeof(mask));
    if (get_mempolicy(&kmode, mask, MASK_WORDS * 64, NULL, 0) < 0)
        return np_err_set(err, -errno, "get_mempolicy: %s", strerror(errno));
    from_mask(mask, nodes);
    switch (kmode & ~(MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES)) {
    case MPOL_PREFERRED:
        *mode = NP_MODE_PREFERRED;
        break;
    case MPOL_PREFERRED_MANY:
        *mode = NP_MODE_PREFERRED_MANY;
        break;
    case MPOL_BIND:
        *mode = NP_MODE_BIND;
        break;
    case MPOL_INTERLEAVE:
        *mode = NP_MODE_INTERLEAVE;
        break;
    case MPOL_WEIGHTED_INTERLEAVE:
        *mode = NP_MODE_WEIGHTED_INTERLEAVE;
        break;
    default:
        *mode = NP_MODE_DEFAULT;
        break;
    }
    return 0;
}

int np_mems_allowed(hwloc_nodeset_t nodes, struct np_err *err)
{
    unsigned long mask[MASK_WORDS];

    memset(mask, 0, sizeof(mask));
    if (get_mempolicy(NULL, mask, MASK_WORDS * 64, NULL, MPOL_F_MEMS_ALLOWED) < 0)
        return np_err_set(err, -errno, "get_mempolicy(MPOL_F_MEMS_ALLOWED): %s", strerror(errno));
    from_mask(mask, nodes);
    return 0;
}

bool np_kernel_has_preferred_many(void)
{
    return numa_available() >= 0 && numa_has_preferred_many() > 0;
}

int np_interleave_weights(unsigned char *weights, unsigned count)
{
    char path[sizeof(WEIGHTS_DIR) + 24];

    if (access(WEIGHTS_DIR, F_OK) < 0)
        return -errno;
    for (unsigned n = 0; n < count; n++) {
        FILE *f;
        unsigned w = 1;
        snprintf(path, sizeof(path), WEIGHTS_DIR "/node%u", n);
        if ((f = fopen(path, "r")) != NULL) {
            if (fscanf(f, "%u", &w) != 1 || w < 1 || w > 255)
                w = 1; /* as the kernel takes a node it has no weight for */
            fclose(f);
        }
        weights[n] = (unsigned char)w;
    }
    return 0;
}
