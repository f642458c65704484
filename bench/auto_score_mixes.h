/* auto_score_mixes.h - --numa-policy=auto on the thesis's static mixes, each scored under a
 * contention model fit without it (auto_score --mixes). */
#ifndef NUMAPLACE_BENCH_AUTO_SCORE_MIXES_H
#define NUMAPLACE_BENCH_AUTO_SCORE_MIXES_H

#include <stdbool.h>

/* Reads DIR's sandman-spec2017.csv and the thesis's static data (contention_cases.h), prints
 * the table (or JSON); @p labels as auto_score's. 0, or 1 when the data is unreadable. */
int score_mixes(const char *dir, const char *labels, bool json);

#endif
