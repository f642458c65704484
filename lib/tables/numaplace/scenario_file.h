/*
 * numaplace/scenario_file.h - scenario files (docs/scenarios.md) read into the simulator's
 * struct np_scenario (numaplace/scenario.h), and printed as `numaplace scenario` shows them.
 */
#ifndef NUMAPLACE_SCENARIO_FILE_H
#define NUMAPLACE_SCENARIO_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "numaplace/common.h"
#include "numaplace/scenario.h"

/**
 * Decode a scenario from @p len bytes of JSON text (need not be NUL-terminated). On success @p out
 * owns what it points to (np_scenario_fini); on failure it is left empty (safe to fini).
 * @return 0, -EINVAL (bad input; @p err names the member and the accepted values), -ENOMEM
 */
NP_API int np_scenario_parse(const char *text, size_t len, struct np_scenario *out,
                             struct np_err *err);

/**
 * Read and decode the file at @p path (a regular file of at most NP_SCENARIO_MAX_BYTES).
 * @return as np_scenario_parse, or the -errno of opening or reading it (-EFBIG when too large);
 *         @p err names @p path.
 */
NP_API int np_scenario_load(const char *path, struct np_scenario *out, struct np_err *err);

/**
 * Read and decode all of @p in (a pipe or stdin too), refusing more than NP_SCENARIO_MAX_BYTES.
 * @p name (e.g. the path, or "-") starts every message. @p in is borrowed, read to its end.
 * @return as np_scenario_load
 */
NP_API int np_scenario_read(FILE *in, const char *name, struct np_scenario *out,
                            struct np_err *err);

/* ---- printing: what `numaplace scenario` shows ---- */

/** A readable summary: name, source, nodes, jobs per node, requests, runs. @return 0 or -EIO */
NP_API int np_scenario_print_summary(FILE *out, const struct np_scenario *s);

/** One line per job instance, copies expanded, tab-separated and in file order:
 *  "INDEX BENCHMARK INPUT NODE CLASS THREADS", INDEX from 0. @return 0 or -EIO */
NP_API int np_scenario_print_jobs(FILE *out, const struct np_scenario *s);

/** The run orders' names, one per line, in run order. @return 0 or -EIO */
NP_API int np_scenario_print_runs(FILE *out, const struct np_scenario *s);

#endif /* NUMAPLACE_SCENARIO_FILE_H */
