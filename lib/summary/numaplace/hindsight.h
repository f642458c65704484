/*
 * numaplace/hindsight.h - `numaplace report`'s hindsight on --numa-policy=auto (docs/auto.md):
 * the choice a step's tasks got, and the one np_auto_choose gives when the sensitivity the
 * model measured on this run (the report's class_prediction, class_default=auto) replaces the
 * one auto used, with the task's shape and the nodes' load as the task's "auto" facts recorded
 * them at launch (never the reason or class_source lines, which are for people). Derived when
 * the report is read; nothing is stored.
 */
#ifndef NUMAPLACE_HINDSIGHT_H
#define NUMAPLACE_HINDSIGHT_H

#include <stdbool.h>

#include <jansson.h>

#include "numaplace/common.h"

struct np_auto_hindsight {
    char made[24];  /**< the policy auto chose (the first task's) */
    char used[16];  /**< the sensitivity it used: "high", "low", "unknown" */
    bool measured;  /**< the model classed this run from its counters */
    char would[24]; /**< measured: the choice with that sensitivity; else "" */
    bool differs;   /**< would is not made: a later run should choose differently */
    char why[320];  /**< one line: the verdict and what it rests on, or why none */
};

/**
 * The hindsight of report @p r (borrowed). @return 1 and @p out filled for a step launched
 * with auto (policy.requested; its verdict unavailable when no task has "auto" facts, as in
 * reports before them); 0 for any other step.
 */
NP_API int np_auto_hindsight(json_t *r, struct np_auto_hindsight *out);

#endif /* NUMAPLACE_HINDSIGHT_H */
