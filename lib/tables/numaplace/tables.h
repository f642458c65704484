/*
 * numaplace/tables.h - reading the measured tables the policies are fed from: the per-benchmark
 * slowdown table (data/sandman-spec2017.csv), footprints (data/spec2017-footprints.csv) and the
 * sensitivity model fitted on the installed table. The types are the policies' own
 * (numaplace/model.h, footprint.h, sensitivity.h): policies/ decides, this reads files.
 */
#ifndef NUMAPLACE_TABLES_H
#define NUMAPLACE_TABLES_H

#include "numaplace/common.h"
#include "numaplace/footprint.h"
#include "numaplace/model.h"
#include "numaplace/sensitivity.h"

/**
 * Load the CSV (comment lines start with '#'; the header names the columns; tlb_mpki and
 * total_time_s are optional, every other column of np_model_row is required).
 * @return 0, or -ENOENT / -EINVAL with @p err naming the file, line and column
 */
NP_API int np_model_load(const char *path, struct np_model *model, struct np_err *err);

/**
 * Load a footprint table ('#' comment lines, then a header naming at least benchmark, input
 * and footprint_pages; lines of at most 1022 bytes, benchmark names of 31, inputs of 7, pages
 * 1 to NP_FOOTPRINT_MAX_PAGES, all refused rather than cut). @return 0, or -ENOENT / -EINVAL /
 * -ENOMEM with @p err naming the file, line and column
 */
NP_API int np_footprints_load(const char *path, struct np_footprints *table, struct np_err *err);

/**
 * Load a table, choose its threshold by cross-validation and fit on all of it (the model the
 * product uses). @p path NULL: np_sensitivity_default_table().
 * @return 0, or as np_model_load / np_sensitivity_cv with @p err
 */
NP_API int np_sensitivity_load(struct np_sens_model *m, const char *path, struct np_err *err);
/** The installed table's path (/usr/share/numaplace/sandman-spec2017.csv). Borrowed, static. */
NP_API const char *np_sensitivity_default_table(void);

#endif /* NUMAPLACE_TABLES_H */
