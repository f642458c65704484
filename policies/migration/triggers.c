/*
 * Triggers: each proposes migration requests from the node's view (see migration.h); none sends
 * pages into a saturated memory node (np_pick_destination).
 * homecoming:      a high job's pages off its CPUs' nodes are brought to its home node.
 * memory-pressure: a high job's home node fell below the free-memory floor: low jobs' pages go
 *                  to the nearest node with room (then the one with most free).
 * bandwidth:       a memory node's measured traffic stayed above the threshold for K intervals:
 *                  half the low jobs' pages there go to the nearest unsaturated node (SLIT, then
 *                  least traffic); without measured bandwidth it says it is inactive and why.
 */
#include "numaplace/migration.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static uint64_t page_bytes(void)
{
    return (uint64_t)sysconf(_SC_PAGESIZE);
}

static int propose_homecoming(const struct np_node_view *view,
                              const struct np_trigger_config *config, void *state,
                              struct np_request *out, size_t max, char *why, size_t why_len)
{
    size_t n = 0;

    (void)config;
    (void)state;
    (void)why;
    (void)why_len;
    for (size_t j = 0; j < view->njobs && n < max; j++) {
        const struct np_job_view *job = &view->jobs[j];
        const int home = np_job_home_node(view, job);

        if (job->job_class != NP_CLASS_HIGH || home < 0 || job->homecoming_paused)
            continue;
        for (unsigned node = 0; node < view->nnodes && n < max; node++) {
            if ((job->cpu_nodes >> node & 1u) || job->pages_on_node[node] < NP_HOMECOMING_MIN_PAGES)
                continue;
            out[n] = (struct np_request){.src = node,
                                         .dst = (unsigned)home,
                                         .pages = job->pages_on_node[node],
                                         .trigger = NP_TRIGGER_HOMECOMING,
                                         .target_job = (long)j};
            snprintf(out[n].reason, sizeof(out[n].reason),
                     "high job %" PRIu32 ".%s has %" PRIu64 " pages on node %u, away from its CPUs",
                     job->job_id, np_step_name(job->step_id), job->pages_on_node[node], node);
            n++;
        }
    }
    return (int)n;
}

/* The node with room for @p need bytes above the floor, nearest to @p from (then least traffic,
 * then most free), never a saturated one. */
static int pick_destination(const struct np_node_view *view, unsigned from, uint64_t floor,
                            uint64_t need, uint64_t avoid_mask, double threshold)
{
    int best = np_pick_destination(view, from, avoid_mask, floor + need, threshold);

    if (best >= 0)
        return best;
    /* Nobody has room for all of it: the one with most free above the floor takes what fits. */
    for (unsigned d = 0; d < view->nnodes; d++)
        if (d != from && !(avoid_mask >> d & 1u) && view->free_bytes[d] > floor &&
            !np_node_saturated(view, d, threshold) &&
            (best < 0 || view->free_bytes[d] > view->free_bytes[best]))
            best = (int)d;
    return best;
}

static int propose_pressure(const struct np_node_view *view, const struct np_trigger_config *config,
                            void *state, struct np_request *out, size_t max, char *why,
                            size_t why_len)
{
    uint64_t high_homes = 0, done = 0;
    size_t n = 0;

    (void)state;
    (void)why;
    (void)why_len;
    for (size_t j = 0; j < view->njobs; j++)
        if (view->jobs[j].job_class == NP_CLASS_HIGH)
            high_homes |= view->jobs[j].cpu_nodes;
    for (unsigned node = 0; node < view->nnodes && n < max; node++) {
        uint64_t need;
        int dst;

        if (!(high_homes >> node & 1u) || (done >> node & 1u))
            continue;
        if (view->free_bytes[node] >= config->free_floor_bytes)
            continue;
        need = config->free_floor_bytes - view->free_bytes[node];
        /* Never move pressure onto another high job's home. */
        dst = pick_destination(view, node, config->free_floor_bytes, need, high_homes,
                               config->bandwidth_threshold);
        if (dst < 0)
            dst = pick_destination(view, node, config->free_floor_bytes, need, 0,
                                   config->bandwidth_threshold);
        if (dst < 0)
            continue;
        out[n] = (struct np_request){.src = node,
                                     .dst = (unsigned)dst,
                                     .pages = (need + page_bytes() - 1) / page_bytes(),
                                     .trigger = NP_TRIGGER_PRESSURE,
                                     .target_job = -1};
        snprintf(out[n].reason, sizeof(out[n].reason),
                 "node %u holds a high job and has %" PRIu64 " MiB free, below the %" PRIu64
                 " MiB floor",
                 node, view->free_bytes[node] >> 20, config->free_floor_bytes >> 20);
        done |= 1ull << node;
        n++;
    }
    return (int)n;
}

struct bandwidth_state {
    unsigned above[NP_MAX_NODES]; /* consecutive intervals above the threshold */
};

static int propose_bandwidth(const struct np_node_view *view,
                             const struct np_trigger_config *config, void *state,
                             struct np_request *out, size_t max, char *why, size_t why_len)
{
    struct bandwidth_state *st = state;
    size_t n = 0;

    _Static_assert(sizeof(struct bandwidth_state) <= NP_TRIGGER_STATE_SIZE, "state too large");
    if (!view->node_bandwidth_available) {
        snprintf(why, why_len,
                 "no per-node memory bandwidth is measured here (no memory-controller "
                 "or LLC-miss counters)");
        return 0;
    }
    for (unsigned node = 0; node < view->nnodes && n < max; node++) {
        uint64_t low_pages = 0;
        int dst = -1;

        /* The memory node's own traffic (np_node_traffic), only where it is measured. */
        st->above[node] =
            np_node_saturated(view, node, config->bandwidth_threshold) ? st->above[node] + 1 : 0;
        if (st->above[node] < (config->bandwidth_intervals ? config->bandwidth_intervals : 1))
            continue;
        for (size_t j = 0; j < view->njobs; j++)
            if (view->jobs[j].job_class == NP_CLASS_LOW)
                low_pages += view->jobs[j].pages_on_node[node];
        /* Nearest by SLIT, then least traffic; never a saturated controller. */
        dst = np_pick_destination(view, node, 0, config->free_floor_bytes,
                                  config->bandwidth_threshold);
        if (low_pages == 0 || dst < 0)
            continue;
        out[n] = (struct np_request){.src = node,
                                     .dst = (unsigned)dst,
                                     .pages = low_pages / 2,
                                     .trigger = NP_TRIGGER_BANDWIDTH,
                                     .target_job = -1};
        snprintf(out[n].reason, sizeof(out[n].reason),
                 "memory node %u serves %.0f MB/s (%s), above %.0f MB/s for %u intervals; "
                 "node %d is the nearest unsaturated",
                 node, view->node_bandwidth[node] / 1e6,
                 np_bandwidth_source_name(view->node_bandwidth_source[node]),
                 config->bandwidth_threshold / 1e6, st->above[node], dst);
        st->above[node] = 0;
        n++;
    }
    return (int)n;
}

/* In the order the daemon runs them; "admin" proposes nothing, named here as every trigger is. */
static const struct np_trigger_ops triggers[] = {
    {"admin", NP_TRIGGER_ADMIN, NULL},
    {"homecoming", NP_TRIGGER_HOMECOMING, propose_homecoming},
    {"memory-pressure", NP_TRIGGER_PRESSURE, propose_pressure},
    {"bandwidth", NP_TRIGGER_BANDWIDTH, propose_bandwidth},
};
#define NTRIGGERS (sizeof(triggers) / sizeof(triggers[0]))
_Static_assert(NTRIGGERS == NP_TRIGGER_COUNT, "every trigger kind has one entry");

const char *np_trigger_name(enum np_trigger_kind t)
{
    for (size_t i = 0; i < NTRIGGERS; i++)
        if (triggers[i].kind == t)
            return triggers[i].name;
    return "unknown";
}

const struct np_trigger_ops *np_trigger_at(size_t i)
{
    for (size_t k = 0; k < NTRIGGERS; k++)
        if (triggers[k].propose && i-- == 0)
            return &triggers[k];
    return NULL;
}

const struct np_trigger_ops *np_trigger_lookup(const char *name)
{
    for (size_t i = 0; name && i < NTRIGGERS; i++)
        if (triggers[i].propose && strcmp(triggers[i].name, name) == 0)
            return &triggers[i];
    return NULL;
}
