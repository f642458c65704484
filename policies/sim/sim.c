/* Replaying migration requests over modelled jobs (see numaplace/sim.h). */
#include "numaplace/sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

void np_sim_job_view(const struct np_sim_job *job, size_t id, struct np_job_view *v)
{
    memset(v, 0, sizeof(*v));
    v->id = id;
    v->job_class = job->job_class;
    v->cpu_nodes = 1ull << job->cpu_node;
    v->bandwidth = job->row->bw_mbps * 1e6;
    v->predicted_remote = job->predicted_remote;
    v->has_prediction = job->has_prediction;
    memcpy(v->pages_on_node, job->pages, sizeof(v->pages_on_node));
}

long long np_sim_request(struct np_sim_job *jobs, size_t count, unsigned nnodes,
                         const struct np_order_ops *order, uint64_t seed, unsigned src,
                         unsigned dst, uint64_t pages)
{
    /* The modelled jobs as the daemon's planner sees a node: same candidates, same order. */
    struct np_node_view view = {.nnodes = nnodes};
    struct np_request request = {.src = src, .dst = dst, .pages = pages, .target_job = -1};
    struct np_plan plan;
    int rc;

    if (nnodes > NP_MAX_NODES)
        return -EINVAL;
    view.jobs = calloc(count ? count : 1, sizeof(*view.jobs));
    if (!view.jobs)
        return -ENOMEM;
    view.njobs = count;
    for (size_t i = 0; i < count; i++)
        np_sim_job_view(&jobs[i], i, &view.jobs[i]);
    rc = np_plan_make(&view, &request, order, seed, pages, NP_PLAN_EXACT, &plan);
    for (size_t s = 0; rc == 0 && s < plan.nsteps; s++) {
        struct np_sim_job *job = &jobs[plan.cands[plan.steps[s].index].job_index];
        job->pages[src] -= plan.steps[s].pages;
        job->pages[dst] += plan.steps[s].pages;
    }
    free(view.jobs);
    if (rc < 0)
        return rc;
    const uint64_t planned = plan.planned;
    np_plan_fini(&plan);
    return (long long)planned;
}
