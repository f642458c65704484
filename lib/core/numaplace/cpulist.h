/*
 * numaplace/cpulist.h - a bound on CPU lists ("0-3,8") from outside, checked before hwloc reads
 * them: hwloc's list parser takes any number, reads "-1" as the largest, and sizes its bitmap
 * for the largest CPU named, so one typo ("0-4000000000") asks for 512 MB.
 */
#ifndef NUMAPLACE_CPULIST_H
#define NUMAPLACE_CPULIST_H

#include <stdbool.h>

#include "numaplace/common.h"

/** CPU numbers in a list are below this (Linux's NR_CPUS tops out at 8192). */
#define NP_CPU_LIST_LIMIT 65536u

/**
 * Whether @p text holds only decimal numbers below NP_CPU_LIST_LIMIT without leading zeros (hwloc
 * reads "08" as octal), '-', ',' and spaces, with every '-' after a number. It does not check the
 * list's syntax further: hwloc does.
 */
NP_API bool np_cpu_list_bounded(const char *text);

/** Called for each range of a list, @p first <= @p last. @return 0 to go on, or -errno to stop. */
typedef int np_cpu_range_fn(void *ctx, unsigned first, unsigned last);

/**
 * Read a CPU or core list from outside (Slurm's "0-3,8", a configuration's "0-3, 8"): decimal
 * numbers below NP_CPU_LIST_LIMIT without leading zeros, single or as ascending ranges, separated
 * by ',' that spaces may follow; "" is the empty list. Calls @p add per range, in order.
 * @return 0; -EINVAL with @p err naming @p what ("core list"), the list, where it went wrong and
 *         the form accepted; or what @p add returned
 */
NP_API int np_cpu_list_parse(const char *text, const char *what, np_cpu_range_fn *add, void *ctx,
                             struct np_err *err);

#endif /* NUMAPLACE_CPULIST_H */
