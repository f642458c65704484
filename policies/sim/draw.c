/* Seeded draws and the percentile interval (see numaplace/draw.h). */
#include "numaplace/draw.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t np_draw_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double np_draw_uniform(uint64_t *state)
{
    return ((double)(np_draw_next(state) >> 11) + 0.5) * 0x1.0p-53;
}

/** A standard normal draw (Box-Muller, nothing cached: the state alone decides). */
static double np_draw_normal(uint64_t *state)
{
    const double u = np_draw_uniform(state), v = np_draw_uniform(state);
    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

double np_draw_lognormal(uint64_t *state, double sigma)
{
    return exp(sigma * np_draw_normal(state));
}

void np_draw_permutation(size_t *perm, size_t n, uint64_t seed)
{
    uint64_t state = seed;

    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    for (size_t i = n; i > 1; i--) {
        const size_t j = (size_t)(np_draw_next(&state) % i);
        const size_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
}

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *sorted, size_t n, double p)
{
    const double h = (double)(n - 1) * p;
    const size_t k = (size_t)floor(h);

    return k + 1 < n ? sorted[k] + (h - (double)k) * (sorted[k + 1] - sorted[k]) : sorted[n - 1];
}

int np_interval_percentile(const double *x, size_t n, double level, double *lo, double *hi)
{
    double *sorted;

    if (n == 0 || !(level > 0 && level < 1))
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return -EINVAL;
    sorted = malloc(n * sizeof(*sorted));
    if (!sorted)
        return -ENOMEM;
    memcpy(sorted, x, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), compare_double);
    *lo = quantile(sorted, n, (1 - level) / 2);
    *hi = quantile(sorted, n, 1 - (1 - level) / 2);
    free(sorted);
    return 0;
}
