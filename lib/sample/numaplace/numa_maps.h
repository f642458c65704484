/*
 * numaplace/numa_maps.h - reading /proc/<pid>/numa_maps: where a process's pages are.
 *
 * One line per mapping: "<start> <policy> [anon=N] [dirty=N] [N<node>=<pages>...]
 * [kernelpagesize_kB=K] [file=<path>] [heap] [stack] [huge] ...". Counts are in pages of the
 * mapping's own size (kernelpagesize_kB: 4 for base pages, 2048 or 1048576 for hugetlbfs);
 * transparent huge pages are counted in base pages. Reading streams line by line, so memory use
 * is bounded whatever the size of the process. Every reader takes a filesystem root (NULL or ""
 * = "/"), so tests read captured trees.
 */
#ifndef NUMAPLACE_NUMA_MAPS_H
#define NUMAPLACE_NUMA_MAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "numaplace/common.h"

#define NP_NUMA_MAPS_MAX_NODES 64

/** One mapping. The path is borrowed from the reader's line buffer: copy it to keep it. */
struct np_numa_mapping {
    uintptr_t start;
    char policy[48];                        /**< "default", "interleave:0-3", ... */
    uint64_t pages[NP_NUMA_MAPS_MAX_NODES]; /**< per node, in pages of page_kb */
    unsigned long page_kb;                  /**< kernelpagesize_kB (base page if absent) */
    bool anon, heap, stack, hugetlb;
    const char *path; /**< file=... with the kernel's octal escapes (\040) undone, or NULL */
};

/**
 * Parse one line (modified in place). Unknown tokens are ignored, as newer kernels add some.
 * @return 0, or -EINVAL for a line that does not start with a hex address
 */
NP_API int np_numa_maps_parse_line(char *line, struct np_numa_mapping *out);

/** Called per mapping; return non-zero to stop the walk (that value is returned). */
typedef int np_numa_maps_fn(const struct np_numa_mapping *mapping, void *arg);

/**
 * Walk /proc/<pid>/numa_maps under @p root. Malformed lines are skipped and counted.
 * @param skipped optional: receives the number of malformed lines
 * @return 0, the callback's non-zero value, -ESRCH (no such process) or -errno with @p err
 */
NP_API int np_numa_maps_each(const char *root, pid_t pid, np_numa_maps_fn *fn, void *arg,
                             unsigned *skipped, struct np_err *err);

/** A process's memory per node, split anonymous / file-backed, in bytes. */
struct np_numa_usage {
    uint64_t anon_bytes[NP_NUMA_MAPS_MAX_NODES];
    uint64_t file_bytes[NP_NUMA_MAPS_MAX_NODES];
    uint64_t total_bytes;
    int max_node; /**< highest node with pages, -1 when none */
    unsigned mappings, skipped_lines;
};

/** Sum a process's numa_maps into @p out (zeroed first). Errors as np_numa_maps_each. */
NP_API int np_numa_maps_usage(const char *root, pid_t pid, struct np_numa_usage *out,
                              struct np_err *err);

#endif /* NUMAPLACE_NUMA_MAPS_H */
