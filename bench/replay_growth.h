/*
 * Footprint growth curves from the thesis's own logs, for bench/replay --growth: how much of its
 * largest footprint each benchmark held as its Best runs progressed (data/thesis-dynamic-*.csv,
 * extracted from the author's repository by scripts/extract-thesis-data.py).
 */
#ifndef NUMAPLACE_BENCH_REPLAY_GROWTH_H
#define NUMAPLACE_BENCH_REPLAY_GROWTH_H

#include <stddef.h>

#include "numaplace/replay.h"

#define GROWTH_MAX_BENCHMARKS 64

struct growth_table {
    size_t n;
    struct {
        char benchmark[32];
        unsigned instances; /* the Best-run instances the curve is the median of */
        struct np_replay_growth curve;
    } rows[GROWTH_MAX_BENCHMARKS];
};

/**
 * Build @p out from DIR/thesis-dynamic-{footprints,requests,ends}.csv: per benchmark, at each
 * progress point the median over its instances of the share of its peak it held at its last
 * snapshot by then (its first one before that). A snapshot's time is its request's pass, placed
 * between the passes that saw jobs end (their logged times). Returns 0, or -1 with @p why set.
 */
int growth_load(const char *dir, struct growth_table *out, char *why, size_t why_size);

/** The curve of @p benchmark, or NULL (no log of it: its footprint stays constant). */
const struct np_replay_growth *growth_find(const struct growth_table *table, const char *benchmark);

#endif /* NUMAPLACE_BENCH_REPLAY_GROWTH_H */
