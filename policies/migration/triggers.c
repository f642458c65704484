/*
 * Triggers: each proposes migration requests from the node's view (see migration.h); none sends
 * pages into a saturated memory node (np_pick_destination).
 * homecoming:      a high job's pages off its CPUs' nodes are brought to its home node.
 * memory-pressure: a high job's home node fell below the free-memory floor: low jobs' pages go
 *                  to the nearest node with room (then the one with most free).
 * bandwidth:       a memory node's measured traffic stayed above the threshold for K intervals:
 *                  half the low jobs' pages there go to the nearest unsaturated node (SLIT, then
 *                  least traffic); without measured bandwidth it says it is inactive and why.
 * demotion:        a node a high job needs (its CPUs' node, or under fast-tier the nearest of the
 *                  fastest tier), with a slower tier below it, fell below the floor while the job
 *                  has pages on a slower tier or asked for the fast one: low jobs' pages go one
 *                  tier down.
 * promotion:       a high job's pages on a tier slower than its own go up to the nearest node of
 *                  its tier with room above the floor.
 * Homecoming and memory-pressure stay within a tier (a machine of one tier is all tier 0), and
 * no trigger sends a low job's pages up a tier: on a tiered node the fast memory is the high
 * jobs'. While the kernel tiers memory itself (view->kernel_tiering) demotion and promotion
 * stand aside, saying why.
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

static void set_request(struct np_request *out, unsigned src, int dst, uint64_t pages,
                        enum np_trigger_kind trigger, long target_job)
{
    *out = (struct np_request){.src = src,
                               .dst = (unsigned)dst,
                               .pages = pages,
                               .trigger = trigger,
                               .target_job = target_job};
}

unsigned np_view_tier(const struct np_node_view *view, unsigned node)
{
    return node < NP_MAX_NODES ? view->tier[node] : 0;
}

/* The nodes with memory in @p tier, as a mask. */
static uint64_t tier_nodes(const struct np_node_view *view, unsigned tier)
{
    uint64_t mask = 0;

    for (unsigned n = 0; n < view->nnodes && n < NP_MAX_NODES; n++)
        if (view->total_bytes[n] && view->tier[n] == tier)
            mask |= 1ull << n;
    return mask;
}

/* The nearest tier below (@p down) or above @p tier that holds memory, or -1. */
static int next_tier(const struct np_node_view *view, unsigned tier, bool down)
{
    int best = -1;

    for (unsigned n = 0; n < view->nnodes && n < NP_MAX_NODES; n++) {
        const unsigned t = view->tier[n];
        if (view->total_bytes[n] && (down ? t > tier : t < tier) &&
            (best < 0 || (down ? t < (unsigned)best : t > (unsigned)best)))
            best = (int)t;
    }
    return best;
}

/* The nodes faster than @p tier, which a low job's pages never go to. */
static uint64_t faster_nodes(const struct np_node_view *view, unsigned tier)
{
    uint64_t mask = 0;

    for (int t = next_tier(view, tier, false); t >= 0; t = next_tier(view, (unsigned)t, false))
        mask |= tier_nodes(view, (unsigned)t);
    return mask;
}

/* The tier a high job's pages belong on: the fastest under fast-tier, else the fastest of its
 * CPUs' nodes. -1 when its CPUs' nodes are unknown. */
static int target_tier(const struct np_node_view *view, const struct np_job_view *job)
{
    int best = -1;

    if (!job->cpu_nodes)
        return -1;
    for (unsigned n = 0; n < view->nnodes && n < NP_MAX_NODES; n++)
        if (view->total_bytes[n] && (job->wants_fast_tier || (job->cpu_nodes >> n & 1u)) &&
            (best < 0 || view->tier[n] < (unsigned)best))
            best = (int)view->tier[n];
    return best;
}

/* The nodes of @p tier nearest the job's CPUs (by SLIT from any of its CPUs' nodes; all of the
 * tier when distances are unknown). */
static uint64_t nearest_of_tier(const struct np_node_view *view, const struct np_job_view *job,
                                unsigned tier)
{
    const uint64_t nodes = tier_nodes(view, tier);
    unsigned best = 256;
    uint64_t mask = 0;

    for (unsigned n = 0; n < view->nnodes && n < NP_MAX_NODES; n++) {
        unsigned d = 255;
        if (!(nodes >> n & 1u))
            continue;
        for (unsigned c = 0; c < view->nnodes && c < NP_MAX_NODES; c++)
            if ((job->cpu_nodes >> c & 1u) && view->distance[c][n] && view->distance[c][n] < d)
                d = view->distance[c][n];
        if (d < best)
            best = d, mask = 0;
        if (d == best)
            mask |= 1ull << n;
    }
    return mask;
}

/* The pages @p job has on tiers slower than @p tier. */
static uint64_t pages_below(const struct np_node_view *view, const struct np_job_view *job,
                            unsigned tier)
{
    uint64_t pages = 0;

    for (unsigned n = 0; n < view->nnodes && n < NP_MAX_NODES; n++)
        if (view->tier[n] > tier)
            pages += job->pages_on_node[n];
    return pages;
}

int np_tier_neighbour(const struct np_node_view *view, unsigned from, bool down,
                      uint64_t min_free_bytes)
{
    const int tier = from < NP_MAX_NODES ? next_tier(view, view->tier[from], down) : -1;

    return tier < 0 ? -1
                    : np_pick_destination(view, from, ~tier_nodes(view, (unsigned)tier),
                                          min_free_bytes, 0);
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
            if ((job->cpu_nodes >> node & 1u) ||
                job->pages_on_node[node] < NP_HOMECOMING_MIN_PAGES ||
                view->tier[node] != view->tier[home]) /* another tier: promotion's, or kept */
                continue;
            set_request(&out[n], node, home, job->pages_on_node[node], NP_TRIGGER_HOMECOMING,
                        (long)j);
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

        uint64_t other_tiers;

        if (!(high_homes >> node & 1u) || (done >> node & 1u))
            continue;
        /* With a slower tier below, making room is demotion's. */
        if (view->free_bytes[node] >= config->free_floor_bytes ||
            next_tier(view, view->tier[node], true) >= 0)
            continue;
        need = config->free_floor_bytes - view->free_bytes[node];
        other_tiers = ~tier_nodes(view, view->tier[node]);
        /* Never move pressure onto another high job's home. */
        dst = pick_destination(view, node, config->free_floor_bytes, need, high_homes | other_tiers,
                               config->bandwidth_threshold);
        if (dst < 0)
            dst = pick_destination(view, node, config->free_floor_bytes, need, other_tiers,
                                   config->bandwidth_threshold);
        if (dst < 0)
            continue;
        set_request(&out[n], node, dst, (need + page_bytes() - 1) / page_bytes(),
                    NP_TRIGGER_PRESSURE, -1);
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
        dst = np_pick_destination(view, node, faster_nodes(view, view->tier[node]),
                                  config->free_floor_bytes, config->bandwidth_threshold);
        if (low_pages == 0 || dst < 0)
            continue;
        set_request(&out[n], node, dst, low_pages / 2, NP_TRIGGER_BANDWIDTH, -1);
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

/* Whether high @p job needs @p node's memory now: the node is of its tier and nearest its CPUs,
 * and the job asked for the fast tier or already has pages on a slower one. */
static bool needs_node(const struct np_node_view *view, const struct np_job_view *job,
                       unsigned node)
{
    const int tier = target_tier(view, job);

    return job->job_class == NP_CLASS_HIGH && tier >= 0 && view->tier[node] == (unsigned)tier &&
           (nearest_of_tier(view, job, (unsigned)tier) >> node & 1u) &&
           (job->wants_fast_tier ||
            pages_below(view, job, (unsigned)tier) >= NP_HOMECOMING_MIN_PAGES);
}

static int propose_demotion(const struct np_node_view *view, const struct np_trigger_config *config,
                            void *state, struct np_request *out, size_t max, char *why,
                            size_t why_len)
{
    size_t n = 0;

    (void)state;
    if (view->kernel_tiering[0]) {
        snprintf(why, why_len, "%s", view->kernel_tiering);
        return 0;
    }
    for (unsigned node = 0; node < view->nnodes && n < max; node++) {
        const int down = next_tier(view, view->tier[node], true);
        const struct np_job_view *high = NULL;
        uint64_t need;
        int dst;

        if (down < 0 || !view->total_bytes[node] ||
            view->free_bytes[node] >= config->free_floor_bytes)
            continue;
        for (size_t j = 0; j < view->njobs && !high; j++)
            if (needs_node(view, &view->jobs[j], node))
                high = &view->jobs[j];
        if (!high)
            continue;
        need = config->free_floor_bytes - view->free_bytes[node];
        dst = pick_destination(view, node, config->free_floor_bytes, need,
                               ~tier_nodes(view, (unsigned)down), config->bandwidth_threshold);
        if (dst < 0)
            continue;
        set_request(&out[n], node, dst, (need + page_bytes() - 1) / page_bytes(),
                    NP_TRIGGER_DEMOTION, -1);
        snprintf(out[n].reason, sizeof(out[n].reason),
                 "node %u (tier %u) has %" PRIu64 " MiB free, below the %" PRIu64
                 " MiB floor, and high job %" PRIu32 ".%s needs it: low jobs' pages go to tier %d",
                 node, view->tier[node], view->free_bytes[node] >> 20,
                 config->free_floor_bytes >> 20, high->job_id, np_step_name(high->step_id), down);
        n++;
    }
    return (int)n;
}

static int propose_promotion(const struct np_node_view *view,
                             const struct np_trigger_config *config, void *state,
                             struct np_request *out, size_t max, char *why, size_t why_len)
{
    const uint64_t page = page_bytes();
    size_t n = 0;

    (void)state;
    if (view->kernel_tiering[0]) {
        snprintf(why, why_len, "%s", view->kernel_tiering);
        return 0;
    }
    for (size_t j = 0; j < view->njobs && n < max; j++) {
        const struct np_job_view *job = &view->jobs[j];
        const int tier = target_tier(view, job);
        uint64_t near;

        if (job->job_class != NP_CLASS_HIGH || tier < 0 || job->homecoming_paused)
            continue;
        near = nearest_of_tier(view, job, (unsigned)tier);
        for (unsigned node = 0; node < view->nnodes && n < max; node++) {
            uint64_t room, pages = job->pages_on_node[node];
            int dst;

            if (view->tier[node] <= (unsigned)tier || pages < NP_HOMECOMING_MIN_PAGES)
                continue;
            dst = np_pick_destination(view, node, ~near, config->free_floor_bytes,
                                      config->bandwidth_threshold);
            if (dst < 0)
                continue;
            /* Up to the floor: what goes up never makes demotion's room again. */
            room = (view->free_bytes[dst] - config->free_floor_bytes) / page;
            if (pages > room)
                pages = room;
            if (pages < NP_HOMECOMING_MIN_PAGES)
                continue;
            set_request(&out[n], node, dst, pages, NP_TRIGGER_PROMOTION, (long)j);
            snprintf(out[n].reason, sizeof(out[n].reason),
                     "high job %" PRIu32 ".%s has %" PRIu64
                     " pages on node %u (tier %u), below its tier %d; node %d has room",
                     job->job_id, np_step_name(job->step_id), job->pages_on_node[node], node,
                     view->tier[node], tier, dst);
            n++;
        }
    }
    return (int)n;
}

/* In the order the daemon runs them; "admin" proposes nothing, named here as every trigger is. */
static const struct np_trigger_ops triggers[] = {
    {"admin", NP_TRIGGER_ADMIN, NULL},
    {"homecoming", NP_TRIGGER_HOMECOMING, propose_homecoming},
    {"memory-pressure", NP_TRIGGER_PRESSURE, propose_pressure},
    {"bandwidth", NP_TRIGGER_BANDWIDTH, propose_bandwidth},
    {"demotion", NP_TRIGGER_DEMOTION, propose_demotion},
    {"promotion", NP_TRIGGER_PROMOTION, propose_promotion},
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
