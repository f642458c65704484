/* numaplace/sim.h - migration requests over modelled jobs: the daemon's own orders and planner
 * (migration.h) over jobs slowed as the measured model says (model.h), so an order is scored
 * before it moves anything (the thesis's experiment, each order in turn, in microseconds). */
#ifndef NUMAPLACE_SIM_H
#define NUMAPLACE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "numaplace/migration.h"
#include "numaplace/model.h"

/** A modelled job: a measured benchmark, its CPUs' node, its pages per node. */
struct np_sim_job {
    const struct np_model_row *row; /**< borrowed from the model */
    unsigned cpu_node;
    enum np_class job_class;
    uint64_t pages[NP_MAX_NODES];
    /** What the orders are told (np_job_view); the row's measured figure only for an oracle. */
    double predicted_remote;
    bool has_prediction;
};

/** Share of the job's pages not on its CPUs' node. */
NP_API double np_sim_remote_share(const struct np_sim_job *job, unsigned nnodes);

/** The job's modelled slowdown at its current placement. */
NP_API double np_sim_slowdown(const struct np_sim_job *job, unsigned nnodes);

/** Node throughput: the sum over jobs of 1 / slowdown (jobs' worth of full-speed work). */
NP_API double np_sim_throughput(const struct np_sim_job *jobs, size_t count, unsigned nnodes);

/** @p job as the daemon's planner sees a job (np_job_view), with id @p id. */
NP_API void np_sim_job_view(const struct np_sim_job *job, size_t id, struct np_job_view *v);

/** Carry out "move at least @p pages from @p src to @p dst" over the LOW jobs in @p order (their
 *  bandwidth the benchmark's measured local one), updating the jobs' pages. @return the pages
 *  moved (fewer when candidates ran out), or -EINVAL / -ENOMEM */
NP_API long long np_sim_request(struct np_sim_job *jobs, size_t count, unsigned nnodes,
                                const struct np_order_ops *order, uint64_t seed, unsigned src,
                                unsigned dst, uint64_t pages);

#endif /* NUMAPLACE_SIM_H */
