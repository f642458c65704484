/* numaplace/replay_scenario.h - a replay set from a scenario, the model and footprint tables. */
#ifndef NUMAPLACE_REPLAY_SCENARIO_H
#define NUMAPLACE_REPLAY_SCENARIO_H

#include "numaplace/footprint.h"
#include "numaplace/replay.h"
#include "numaplace/scenario.h"

/** A set that owns its arrays. Free with np_replay_owned_fini. */
struct np_replay_owned {
    struct np_replay_set set;           /**< points into the arrays below */
    struct np_replay_job *jobs;         /**< owned: copies expanded, in file order */
    struct np_replay_request *requests; /**< owned */
    size_t *from_job;                   /**< owned: each instance's index in the file's jobs */
};

/** Options of np_replay_set_from_scenario, as bits. */
enum np_replay_build_flag {
    /** Each job's corun factor from the footprint table; else none. */
    NP_REPLAY_WITH_CORUN = 1u << 0,
};

/**
 * Build the set of @p scenario: every copy one job, its row from @p model (benchmark and input; a
 * benchmark's only row matches input 0; borrowed: keep @p model), its work the row's
 * total_time_s, its footprint from @p footprints times @p footprint_scale (> 0; a page at least).
 * @return 0, or -EINVAL with @p err naming the job ("jobs[2].benchmark") and what is missing,
 *         -ENOMEM
 */
NP_API int np_replay_set_from_scenario(const struct np_scenario *scenario,
                                       const struct np_model *model,
                                       const struct np_footprints *footprints,
                                       double footprint_scale, unsigned flags,
                                       struct np_replay_owned *out, struct np_err *err);
/** Accepts NULL. */
NP_API void np_replay_owned_fini(struct np_replay_owned *owned);

#endif /* NUMAPLACE_REPLAY_SCENARIO_H */
