/* Scaling a predicted slowdown between machines (see numaplace/penalty.h). */
#include "numaplace/penalty.h"

#include <math.h>

double np_penalty_scale_slowdown(double slowdown, double penalty_ref, double penalty_here)
{
    if (!isfinite(slowdown) || !isfinite(penalty_ref) || !isfinite(penalty_here) ||
        penalty_ref <= 1)
        return NAN;
    if (penalty_here < 1)
        penalty_here = 1;
    return 1 + (slowdown - 1) * (penalty_here - 1) / (penalty_ref - 1);
}
