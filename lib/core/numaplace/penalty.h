/*
 * numaplace/penalty.h - a slowdown predicted on the reference machine, scaled to another machine
 * by the two machines' remote-memory penalties. The sensitivity model predicts on the reference
 * (the table's "Sandman"); `numaplace characterize` measures this machine's penalty.
 */
#ifndef NUMAPLACE_PENALTY_H
#define NUMAPLACE_PENALTY_H

#include "numaplace/common.h"

/**
 * The reference machine's remote penalty: the near-node (0 -> 1) distance of the thesis's
 * machine "Sandman", 21/10 (docs/model.md, the firmware's SLIT).
 * The thesis measured slowdowns, not latencies, so its SLIT ratio is the one remote-to-local
 * latency figure it gives for the pair its "remote" placement used.
 */
#define NP_REFERENCE_REMOTE_PENALTY 2.1

/**
 * Scale a slowdown predicted on the reference machine to this machine:
 * 1 + (s - 1) * (penalty_here - 1) / (penalty_ref - 1). A penalty_here below 1 (remote
 * measured faster than local: noise) counts as 1, so no slowdown is predicted.
 * @return the scaled slowdown, or NAN when an input is not finite or penalty_ref <= 1
 */
NP_API double np_penalty_scale_slowdown(double slowdown, double penalty_ref, double penalty_here);

#endif /* NUMAPLACE_PENALTY_H */
