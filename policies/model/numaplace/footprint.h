/*
 * numaplace/footprint.h - per-benchmark memory footprints for the replay (numaplace/replay.h).
 * The thesis gives none: data/spec2017-footprints.csv holds them in 4-KiB pages, its source in its
 * header. Columns: benchmark, input (empty: any), footprint_pages, and optionally corun_factor
 * (the job's slowdown beside its thesis mix on one node, memory local, against its alone run).
 */
#ifndef NUMAPLACE_FOOTPRINT_H
#define NUMAPLACE_FOOTPRINT_H

#include <stddef.h>
#include <stdint.h>

#include "numaplace/common.h"

/** The most pages a row may give (4 PiB of base pages, as a scenario's request): sums over a
 *  set's jobs stay far from overflowing. */
#define NP_FOOTPRINT_MAX_PAGES (UINT64_C(1) << 40)

struct np_footprint {
    char benchmark[32];
    char input[8]; /**< "" matches any input */
    uint64_t pages;
    double corun; /**< co-location factor (>= 1); NAN when the table has none for it */
};

/** The table. Free with np_footprints_free. */
struct np_footprints {
    struct np_footprint *rows; /**< owned */
    size_t count;
};

/** Accepts NULL. */
NP_API void np_footprints_free(struct np_footprints *table);
/** The row of @p benchmark with @p input (an empty input matches any); borrowed, or NULL. */
NP_API const struct np_footprint *np_footprint_find(const struct np_footprints *table,
                                                    const char *benchmark, const char *input);
/** Pages of np_footprint_find's row, or 0 when the table has none. */
NP_API uint64_t np_footprint_pages(const struct np_footprints *table, const char *benchmark,
                                   const char *input);

#endif /* NUMAPLACE_FOOTPRINT_H */
