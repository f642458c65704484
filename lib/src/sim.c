/* Replaying migration requests over modelled jobs (see numaplace/sim.h). */
#include "numaplace/sim.h"

#include <errno.h>
#include <stdlib.h>

double np_sim_remote_share(const struct np_sim_job *job, unsigned nnodes)
{
    uint64_t total = 0;

    for (unsigned n = 0; n < nnodes; n++)
        total += job->pages[n];
    return total ? 1.0 - (double)job->pages[job->cpu_node] / (double)total : 0.0;
}

double np_sim_slowdown(const struct np_sim_job *job, unsigned nnodes)
{
    return np_model_slowdown(job->row, np_sim_remote_share(job, nnodes));
}

double np_sim_throughput(const struct np_sim_job *jobs, size_t count, unsigned nnodes)
{
    double sum = 0;

    for (size_t i = 0; i < count; i++)
        sum += 1.0 / np_sim_slowdown(&jobs[i], nnodes);
    return sum;
}

long long np_sim_request(struct np_sim_job *jobs, size_t count, unsigned nnodes,
                         const struct np_order_ops *order, uint64_t seed, unsigned src,
                         unsigned dst, uint64_t pages)
{
    struct np_candidate *cands;
    struct np_plan_step *steps;
    size_t ncands = 0, nsteps = 0;
    uint64_t moved;

    if (src >= nnodes || dst >= nnodes || src == dst || nnodes > NP_MAX_NODES)
        return -EINVAL;
    cands = calloc(count ? count : 1, sizeof(*cands));
    steps = calloc(count ? count : 1, sizeof(*steps));
    if (!cands || !steps) {
        free(cands);
        free(steps);
        return -ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        if (jobs[i].job_class != NP_CLASS_LOW || jobs[i].pages[src] == 0)
            continue;
        cands[ncands] = (struct np_candidate){
            .id = i,
            .group = np_move_group_of(1ull << jobs[i].cpu_node, src, dst),
            .bandwidth = jobs[i].row->bw_mbps * 1e6,
            .pages_on_src = jobs[i].pages[src],
        };
        ncands++;
    }
    order->sort(cands, ncands, seed);
    moved = np_plan_request(cands, ncands, pages, steps, &nsteps);
    for (size_t s = 0; s < nsteps; s++) {
        struct np_sim_job *job = &jobs[cands[steps[s].index].id];
        job->pages[src] -= steps[s].pages;
        job->pages[dst] += steps[s].pages;
    }
    free(cands);
    free(steps);
    return (long long)moved;
}
