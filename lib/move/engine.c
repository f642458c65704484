/* Migration requests over the jobs of one node (see numaplace/engine.h). */
#include "numaplace/engine.h"
#include "numaplace/names.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void np_request_result_fini(struct np_request_result *r)
{
    if (!r)
        return;
    free(r->outcomes);
    r->outcomes = NULL;
    r->noutcomes = 0;
}

static const char *const outcome_names[NP_OUTCOME_COUNT] = {
    [NP_OUTCOME_DONE] = "done",
    [NP_OUTCOME_SHORT] = "short",
    [NP_OUTCOME_FAILED] = "failed",
    [NP_OUTCOME_DRY_RUN] = "dry_run",
};
static const struct np_name_table outcomes = {"request outcome", outcome_names, NP_OUTCOME_COUNT,
                                              NULL};

enum np_request_outcome np_request_outcome_of(int rc, const struct np_request_result *result)
{
    if (rc < 0)
        return NP_OUTCOME_FAILED;
    if (result->dry_run)
        return NP_OUTCOME_DRY_RUN;
    return result->moved < result->request.pages ? NP_OUTCOME_SHORT : NP_OUTCOME_DONE;
}

const char *np_request_outcome_name(enum np_request_outcome o)
{
    return np_name_of(&outcomes, (unsigned)o);
}

/* Move @p pages of one job's memory from src to dst, process by process. */
static void move_job(const struct np_job_view *job, const struct np_request *req, uint64_t pages,
                     const struct np_engine_config *config, struct np_rate_limiter *rl,
                     const struct np_log *log, struct np_move_result *total)
{
    struct np_move_options options = {.dry_run = config->dry_run,
                                      .should_stop = config->should_stop,
                                      .stop_arg = config->stop_arg,
                                      .move_shared = config->move_shared,
                                      .uid = job->uid};
    /* The job's whole share of S: each process moves all it has there. */
    const bool whole = pages >= job->pages_on_node[req->src];
    uint64_t left = pages;

    memset(total, 0, sizeof(*total));
    for (size_t p = 0; p < job->npids && (whole || left > 0) && !total->stopped; p++) {
        struct np_move_result one;
        struct np_err err = {0};
        options.starttime_ticks = job->starttimes ? job->starttimes[p] : 0;
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

/* Never push D below its free floor: the pages the request may still move there. */
static uint64_t pages_above_floor(const struct np_node_view *view, unsigned dst,
                                  uint64_t floor_bytes)
{
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    const uint64_t free_d = view->free_bytes[dst];

    return free_d > floor_bytes ? (free_d - floor_bytes) / page : 0;
}

static void log_outcome(const struct np_log *log, const char *trigger, const struct np_request *req,
                        const struct np_job_view *job, const struct np_candidate *cand,
                        const struct np_job_outcome *o, bool dry_run)
{
    np_logf(log, NP_LOG_INFO,
            "%s: job %" PRIu32 ".%s (%s, %s bandwidth %.3g B/s) node %u -> %u: "
            "planned %" PRIu64 " pages, %s %" PRIu64 "%s%s%s",
            trigger, job->job_id, np_step_name(job->step_id), np_move_group_name(cand->group),
            job->bandwidth_is_proxy ? "proxy" : "measured", job->bandwidth, req->src, req->dst,
            o->planned, dry_run ? "would move" : "moved", o->moved.pages_moved,
            o->moved.process_gone ? " (a process exited mid-move)" : "",
            o->moved.replaced ? " (a pid went to another process: not touched)" : "",
            o->moved.stopped ? " (stopped early)" : "");
}

int np_engine_run_request(const struct np_node_view *view, const struct np_engine_config *config,
                          const struct np_request *request, struct np_rate_limiter *rl,
                          const struct np_log *log, struct np_request_result *result,
                          struct np_err *err)
{
    const struct np_order_ops *order = config->order ? config->order : np_order_default();
    const char *trigger = np_trigger_name(request->trigger);
    uint64_t wanted = request->pages;
    char unpredicted[96] = "";
    struct np_plan plan;
    int rc;

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
    {
        const uint64_t room = pages_above_floor(view, request->dst, config->free_floor_bytes);
        if (room < wanted) {
            result->capped_by_floor = wanted - room;
            wanted = room;
        }
    }
    rc = np_plan_make(view, request, order, config->seed, wanted, NP_PLAN_EXACT, &plan);
    result->outcomes =
        rc == 0 ? calloc(plan.nsteps ? plan.nsteps : 1, sizeof(*result->outcomes)) : NULL;
    if (!result->outcomes) {
        np_plan_fini(&plan);
        return np_err_set(err, rc < 0 ? rc : -ENOMEM, "out of memory planning a request");
    }
    result->candidates = plan.ncands;
    result->used_proxy = plan.used_proxy;
    result->unpredicted = plan.unpredicted;
    result->planned = plan.planned;
    for (size_t s = 0; s < plan.nsteps && !result->stopped; s++) {
        const struct np_candidate *cand = &plan.cands[plan.steps[s].index];
        const struct np_job_view *job = &view->jobs[cand->job_index];
        struct np_job_outcome *o = &result->outcomes[result->noutcomes++];

        o->job_index = cand->job_index;
        o->planned = plan.steps[s].pages;
        move_job(job, request, o->planned, config, rl, log, &o->moved);
        result->moved += o->moved.pages_moved;
        result->stopped = o->moved.stopped;
        log_outcome(log, trigger, request, job, cand, o, config->dry_run);
    }
    if (result->unpredicted)
        snprintf(unpredicted, sizeof(unpredicted),
                 " (%" PRIu64 " candidate%s without a predicted effect: best-plus's rule for "
                 "them)",
                 result->unpredicted, result->unpredicted == 1 ? "" : "s");
    snprintf(result->summary, sizeof(result->summary),
             "%s request node %u -> %u for %" PRIu64 " pages (%s): order %s%s%s, %" PRIu64
             " candidates, planned %" PRIu64 ", %s %" PRIu64 "%s%s",
             trigger, request->src, request->dst, request->pages,
             request->reason[0] ? request->reason : "no reason given", result->order,
             result->used_proxy ? " on proxy bandwidth (no memory counter)" : "", unpredicted,
             result->candidates, result->planned, config->dry_run ? "would move" : "moved",
             result->moved,
             result->capped_by_floor ? ", capped to keep the destination's free floor" : "",
             result->stopped                    ? "; stopped before its end"
             : result->planned < request->pages ? "; ended short"
                                                : "");
    np_logf(log, NP_LOG_INFO, "%s", result->summary);
    np_plan_fini(&plan);
    return 0;
}
