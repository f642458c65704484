/*
 * numaplace/order.h - the model's migration orders (../shared/design/model.md, section 2).
 *
 * A request says "move at least N pages from node S to node D". The candidates are the
 * low-priority jobs with pages on S; an order sorts them, and the planner takes jobs in that
 * order until N pages are covered (the last one partially, so a small request never moves a
 * huge job whole). Orders are a static ops table in policies/: the daemon, the command's
 * dry-run and the tests all call the same code.
 */
#ifndef NUMAPLACE_ORDER_H
#define NUMAPLACE_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "numaplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Where a job's CPUs are relative to the move, which decides whether it gains or loses:
 * L: CPUs on D, none on S (its memory becomes local: it gains);
 * O: CPUs on neither S nor D, or on both (remote stays remote, or a wash: little change);
 * R: CPUs on S, none on D (local memory becomes remote: it loses).
 */
enum np_move_group {
    NP_GROUP_GAIN = 0,    /**< the model's L */
    NP_GROUP_NEUTRAL = 1, /**< the model's O */
    NP_GROUP_LOSE = 2,    /**< the model's R */
};

/** Classify a job from the nodes its CPUs are on (bit i set = CPUs on node i; nodes < 64). */
NP_API enum np_move_group np_move_group_of(uint64_t cpu_nodes_mask, unsigned src, unsigned dst);

/** One candidate job. The order reads bandwidth, group and id; the planner reads pages. */
struct np_candidate {
    uint64_t id;              /**< stable id (job id << 16 | step), the tie-breaker */
    enum np_move_group group; /**< from np_move_group_of */
    double bandwidth;         /**< bytes/s, measured or the documented proxy */
    bool bandwidth_is_proxy;  /**< true when no memory counter was available */
    uint64_t pages_on_src;    /**< base pages the job has on S */
};

/** An order: name plus one function, registered in one static table (policies/orders.c). */
struct np_order_ops {
    const char *name;        /**< "best-plus", "best", "random", "worst", "worst-plus" */
    const char *description; /**< one line for help and logs */
    /** Sort @p cands in place into the order jobs are taken. @p seed drives "random" only. */
    void (*sort)(struct np_candidate *cands, size_t count, uint64_t seed);
};

/** The order called @p name, or NULL. Borrowed, static. */
NP_API const struct np_order_ops *np_order_lookup(const char *name);
/** Like np_order_lookup, with an error naming @p name and listing the orders. */
NP_API int np_order_find(const char *name, const struct np_order_ops **out, struct np_err *err);
/** The @p i-th registered order, or NULL past the end. Borrowed, static. */
NP_API const struct np_order_ops *np_order_at(size_t i);
/** The default order ("best-plus": measured best in the model's experiments). */
NP_API const struct np_order_ops *np_order_default(void);

/** One step of a plan: move @p pages of candidate @p index (into the sorted array). */
struct np_plan_step {
    size_t index;
    uint64_t pages;
};

/**
 * Take sorted candidates until @p pages_wanted pages are covered, the last one partially.
 * @param steps  caller array of at least @p count entries
 * @param nsteps receives the number of steps
 * @return the pages planned (< pages_wanted when candidates ran out: the request ends short)
 */
NP_API uint64_t np_plan_request(const struct np_candidate *cands, size_t count,
                                uint64_t pages_wanted, struct np_plan_step *steps, size_t *nsteps);

#ifdef __cplusplus
}
#endif

#endif /* NUMAPLACE_ORDER_H */
