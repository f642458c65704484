/* Migration requests over the jobs of one node (see numaplace/engine.h). */
#include "numaplace/engine.h"
#include "numaplace/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *np_class_name(enum np_class c)
{
    return c == NP_CLASS_HIGH ? "high" : "low";
}

int np_class_from_name(const char *text, enum np_class *out, struct np_err *err)
{
    if (text && strcmp(text, "high") == 0) {
        *out = NP_CLASS_HIGH;
        return 0;
    }
    if (text && strcmp(text, "low") == 0) {
        *out = NP_CLASS_LOW;
        return 0;
    }
    return np_err_set(err, -EINVAL, "invalid class '%s': accepted values are high, low",
                      text ? text : "(null)");
}

const char *np_trigger_name(enum np_trigger_kind t)
{
    switch (t) {
    case NP_TRIGGER_ADMIN:
        return "admin";
    case NP_TRIGGER_PRESSURE:
        return "memory-pressure";
    case NP_TRIGGER_BANDWIDTH:
        return "bandwidth";
    case NP_TRIGGER_HOMECOMING:
        return "homecoming";
    case NP_TRIGGER_COUNT:
        break;
    }
    return "unknown";
}

double np_bandwidth_proxy(double cpu_cores_busy, uint64_t resident_bytes)
{
    /* cores busy x resident bytes: a ranking, in "bytes/s" only so it sorts with real figures. */
    return cpu_cores_busy > 0 ? cpu_cores_busy * (double)resident_bytes : 0.0;
}

void np_request_result_fini(struct np_request_result *r)
{
    if (!r)
        return;
    free(r->outcomes);
    r->outcomes = NULL;
    r->noutcomes = 0;
}

int np_job_home_node(const struct np_node_view *view, const struct np_job_view *job)
{
    int best = -1;

    for (unsigned n = 0; n < view->nnodes && n < NP_MAX_NODES; n++)
        if ((job->cpu_nodes >> n & 1u) &&
            (best < 0 || view->free_bytes[n] > view->free_bytes[best]))
            best = (int)n;
    return best;
}

static const char *group_name(enum np_move_group g)
{
    return g == NP_GROUP_GAIN ? "gains" : g == NP_GROUP_LOSE ? "loses" : "neutral";
}

/* Move @p pages of one job's memory from src to dst, process by process. */
static void move_job(const struct np_job_view *job, const struct np_request *req, uint64_t pages,
                     const struct np_engine_config *config, struct np_rate_limiter *rl,
                     const struct np_log *log, struct np_move_result *total)
{
    struct np_move_options options = {.dry_run = config->dry_run,
                                      .should_stop = config->should_stop,
                                      .stop_arg = config->stop_arg};
    /* The job's whole share of S: let each process go whole (migrate_pages when unlimited). */
    const bool whole = pages >= job->pages_on_node[req->src];
    uint64_t left = pages;

    memset(total, 0, sizeof(*total));
    for (size_t p = 0; p < job->npids && (whole || left > 0) && !total->stopped; p++) {
        struct np_move_result one;
        struct np_err err = {0};
        /* A failed move still says what it moved before it failed: that counts too. */
        if (np_move_process_pages(job->pids[p], req->src, req->dst, whole ? UINT64_MAX : left,
                                  &options, rl, &one, &err) < 0)
            np_logf(log, NP_LOG_WARNING,
                    "job %" PRIu32 ".%s pid %d: %s (%" PRIu64 " pages moved before)", job->job_id,
                    np_step_name(job->step_id), (int)job->pids[p], err.msg, one.pages_moved);
        np_move_result_add(total, &one);
        left = one.pages_moved >= left ? 0 : left - one.pages_moved;
    }
}

static int find_job(const struct np_node_view *view, uint64_t id)
{
    for (size_t i = 0; i < view->njobs; i++)
        if (view->jobs[i].id == id)
            return (int)i;
    return -1;
}

int np_engine_run_request(const struct np_node_view *view, const struct np_engine_config *config,
                          const struct np_request *request, struct np_rate_limiter *rl,
                          const struct np_log *log, struct np_request_result *result,
                          struct np_err *err)
{
    const struct np_order_ops *order = config->order ? config->order : np_order_default();
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    struct np_candidate *cands = NULL;
    struct np_plan_step *steps = NULL;
    size_t ncands = 0, nsteps = 0;
    uint64_t wanted = request->pages;
    const char *trigger = np_trigger_name(request->trigger);

    memset(result, 0, sizeof(*result));
    result->request = *request;
    result->dry_run = config->dry_run;
    result->order = request->target_job >= 0 ? "job" : order->name;
    if (request->src >= view->nnodes || request->dst >= view->nnodes ||
        request->src == request->dst)
        return np_err_set(err, -EINVAL,
                          "invalid migration request: from node %u to node %u on a machine with "
                          "nodes 0-%u (they must differ)",
                          request->src, request->dst, view->nnodes ? view->nnodes - 1 : 0);

    /* Never push D below its free floor. */
    {
        const uint64_t free_d = view->free_bytes[request->dst];
        const uint64_t room =
            free_d > config->free_floor_bytes ? (free_d - config->free_floor_bytes) / page : 0;
        if (room < wanted) {
            result->capped_by_floor = wanted - room;
            wanted = room;
        }
    }

    cands = calloc(view->njobs ? view->njobs : 1, sizeof(*cands));
    steps = calloc(view->njobs ? view->njobs : 1, sizeof(*steps));
    result->outcomes = calloc(view->njobs ? view->njobs : 1, sizeof(*result->outcomes));
    if (!cands || !steps || !result->outcomes) {
        free(cands);
        free(steps);
        np_request_result_fini(result);
        return np_err_set(err, -ENOMEM, "out of memory planning a request");
    }
    for (size_t i = 0; i < view->njobs; i++) {
        const struct np_job_view *job = &view->jobs[i];
        const bool targeted = request->target_job >= 0;

        if (job->pages_on_node[request->src] == 0)
            continue;
        if (targeted ? (long)i != request->target_job : job->job_class != NP_CLASS_LOW)
            continue; /* high jobs are never moved away; a homecoming moves only its job */
        cands[ncands].id = job->id;
        cands[ncands].group = np_move_group_of(job->cpu_nodes, request->src, request->dst);
        cands[ncands].bandwidth = job->bandwidth;
        cands[ncands].bandwidth_is_proxy = job->bandwidth_is_proxy;
        cands[ncands].pages_on_src = job->pages_on_node[request->src];
        result->used_proxy |= job->bandwidth_is_proxy;
        ncands++;
    }
    result->candidates = ncands;
    if (request->target_job < 0)
        order->sort(cands, ncands, config->seed);
    result->planned = np_plan_request(cands, ncands, wanted, steps, &nsteps);

    for (size_t s = 0; s < nsteps && !result->stopped; s++) {
        const int j = find_job(view, cands[steps[s].index].id);
        const struct np_job_view *job = &view->jobs[j];
        struct np_job_outcome *o = &result->outcomes[result->noutcomes++];

        o->job_index = (size_t)j;
        o->planned = steps[s].pages;
        move_job(job, request, steps[s].pages, config, rl, log, &o->moved);
        result->moved += o->moved.pages_moved;
        result->stopped = o->moved.stopped;
        np_logf(log, NP_LOG_INFO,
                "%s: job %" PRIu32 ".%s (%s, %s bandwidth %.3g B/s) node %u -> %u: "
                "planned %" PRIu64 " pages, %s %" PRIu64 "%s%s",
                trigger, job->job_id, np_step_name(job->step_id),
                group_name(cands[steps[s].index].group),
                job->bandwidth_is_proxy ? "proxy" : "measured", job->bandwidth, request->src,
                request->dst, o->planned, config->dry_run ? "would move" : "moved",
                o->moved.pages_moved, o->moved.process_gone ? " (a process exited mid-move)" : "",
                o->moved.stopped ? " (stopped early)" : "");
    }
    snprintf(result->summary, sizeof(result->summary),
             "%s request node %u -> %u for %" PRIu64 " pages (%s): order %s%s, %" PRIu64
             " candidates, planned %" PRIu64 ", %s %" PRIu64 "%s%s",
             trigger, request->src, request->dst, request->pages,
             request->reason[0] ? request->reason : "no reason given", result->order,
             result->used_proxy ? " on proxy bandwidth (no memory counter)" : "",
             result->candidates, result->planned, config->dry_run ? "would move" : "moved",
             result->moved,
             result->capped_by_floor ? ", capped to keep the destination's free floor" : "",
             result->stopped                    ? "; stopped before its end"
             : result->planned < request->pages ? "; ended short"
                                                : "");
    np_logf(log, NP_LOG_INFO, "%s", result->summary);
    free(cands);
    free(steps);
    return 0;
}
