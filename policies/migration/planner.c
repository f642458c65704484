/* The planner (numaplace/migration.h): the engine's and the simulator's, so they score alike. */
#include "numaplace/migration.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t np_plan_request(const struct np_candidate *cands, size_t count, uint64_t pages_wanted,
                         enum np_plan_cover cover, struct np_plan_step *steps, size_t *nsteps)
{
    uint64_t planned = 0;
    size_t n = 0;

    for (size_t i = 0; i < count && planned < pages_wanted; i++) {
        const uint64_t left = pages_wanted - planned;
        const uint64_t share = cands[i].pages_on_src;
        /* the thesis moved a chosen job's whole share (migratepages PID S D) */
        const uint64_t take = cover == NP_PLAN_WHOLE_SHARES || share < left ? share : left;

        if (take == 0)
            continue;
        steps[n].index = i;
        steps[n].pages = take;
        n++;
        planned += take;
    }
    *nsteps = n;
    return planned;
}

/* Is job @p i a candidate: pages on S, and low (or the request's own target)? */
static bool is_candidate(const struct np_node_view *view, size_t i,
                         const struct np_request *request)
{
    const struct np_job_view *job = &view->jobs[i];

    if (job->pages_on_node[request->src] == 0)
        return false;
    /* high jobs are never moved away; a homecoming moves only its job */
    return request->target_job >= 0 ? (long)i == request->target_job
                                    : job->job_class == NP_CLASS_LOW;
}

int np_plan_make(const struct np_node_view *view, const struct np_request *request,
                 const struct np_order_ops *order, uint64_t seed, uint64_t pages_wanted,
                 enum np_plan_cover cover, struct np_plan *plan)
{
    const size_t room = view->njobs ? view->njobs : 1;

    memset(plan, 0, sizeof(*plan));
    if (request->src >= view->nnodes || request->dst >= view->nnodes ||
        request->src == request->dst || view->nnodes > NP_MAX_NODES)
        return -EINVAL;
    plan->cands = calloc(room, sizeof(*plan->cands));
    plan->steps = calloc(room, sizeof(*plan->steps));
    if (!plan->cands || !plan->steps) {
        np_plan_fini(plan);
        return -ENOMEM;
    }
    for (size_t i = 0; i < view->njobs; i++) {
        const struct np_job_view *job = &view->jobs[i];

        if (!is_candidate(view, i, request))
            continue;
        plan->cands[plan->ncands++] = (struct np_candidate){
            .id = job->id,
            .job_index = i,
            .group = np_move_group_of(job->cpu_nodes, request->src, request->dst),
            .bandwidth = job->bandwidth,
            .bandwidth_is_proxy = job->bandwidth_is_proxy,
            .pages_on_src = job->pages_on_node[request->src],
        };
        plan->used_proxy |= job->bandwidth_is_proxy;
        if (order && order->uses_prediction) {
            struct np_candidate *c = &plan->cands[plan->ncands - 1];
            c->effect_per_page =
                np_predicted_effect_per_page(view, job, request->src, request->dst);
            c->predicted = !isnan(c->effect_per_page);
            plan->unpredicted += !c->predicted;
        }
    }
    if (request->target_job < 0)
        (order ? order : np_order_default())->sort(plan->cands, plan->ncands, seed);
    plan->planned =
        np_plan_request(plan->cands, plan->ncands, pages_wanted, cover, plan->steps, &plan->nsteps);
    return 0;
}

void np_plan_fini(struct np_plan *plan)
{
    if (!plan)
        return;
    free(plan->cands);
    free(plan->steps);
    memset(plan, 0, sizeof(*plan));
}
