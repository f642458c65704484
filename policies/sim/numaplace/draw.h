/* numaplace/draw.h - seeded draws and the interval bench/order_cv judges orders with. Every draw
 * comes from splitmix64 over a caller's 64-bit state: a seed gives the same sequence everywhere. */
#ifndef NUMAPLACE_DRAW_H
#define NUMAPLACE_DRAW_H

#include <stddef.h>
#include <stdint.h>

#include "numaplace/common.h"

/** The next 64 bits of splitmix64 from @p state (advanced). */
NP_API uint64_t np_draw_next(uint64_t *state);

/** A uniform draw in (0, 1), never 0 or 1 (53 bits of np_draw_next). */
NP_API double np_draw_uniform(uint64_t *state);

/** A multiplicative lognormal factor exp(@p sigma x N(0, 1)): median 1, so a factor and its
 *  inverse are equally likely; exactly 1 for @p sigma 0 (the state still advances). */
NP_API double np_draw_lognormal(uint64_t *state, double sigma);

/** @p perm[0..n) := a permutation of 0..n-1, Fisher-Yates from @p seed (same seed, same). */
NP_API void np_draw_permutation(size_t *perm, size_t n, uint64_t seed);

/** The percentile interval of @p n values at @p level (0.95: the 2.5th and 97.5th), each
 *  interpolated between the sorted values at (n - 1) x p (R's and numpy's "type 7"); @p x stays.
 *  @return 0, -EINVAL (n == 0, a level outside (0, 1), a value not finite), -ENOMEM */
NP_API int np_interval_percentile(const double *x, size_t n, double level, double *lo, double *hi);

#endif /* NUMAPLACE_DRAW_H */
