/* auto_score_refit.h - the contention figures auto_score decides with, refit without the cases it
 * scores (auto_score --held-out). */
#ifndef NUMAPLACE_BENCH_AUTO_SCORE_REFIT_H
#define NUMAPLACE_BENCH_AUTO_SCORE_REFIT_H

/* Fits the contention model (fit_search from np_contention_params_sandman) on DIR's static runs
 * without every case whose job ran next to hogs on its own node 0 or alone: characterization
 * scenarios 1, 3 and 5 and the node-0 sweep, the cases auto_score scores. What stays: scenarios 2
 * and 4 (hogs on node 1), the node-1 sweep and the static mixes. Sets the controller capacity,
 * a hog's demand and the remote latency, and the cases kept in @p kept. 0, or 1 when the data
 * is unreadable (said on stderr). */
int refit_without_scored(const char *dir, double *capacity_mbps, double *hog_mbps,
                         double *remote_latency, int *kept);

#endif
