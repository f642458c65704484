/* What the policies know of a node and its jobs (see numaplace/migration.h). */
#include "numaplace/migration.h"

#include <math.h>

static const char *const group_names[] = {
    [NP_GROUP_GAIN] = "gains",
    [NP_GROUP_NEUTRAL] = "neutral",
    [NP_GROUP_LOSE] = "loses",
};
static const struct np_name_table groups = {"move group", group_names,
                                            sizeof(group_names) / sizeof(group_names[0]), NULL};

enum np_move_group np_move_group_of(uint64_t cpu_nodes_mask, unsigned src, unsigned dst)
{
    const bool on_src = src < 64 && (cpu_nodes_mask >> src & 1u);
    const bool on_dst = dst < 64 && (cpu_nodes_mask >> dst & 1u);

    if (on_dst && !on_src)
        return NP_GROUP_GAIN;
    if (on_src && !on_dst)
        return NP_GROUP_LOSE;
    return NP_GROUP_NEUTRAL;
}

const char *np_move_group_name(enum np_move_group g)
{
    return np_name_of(&groups, (unsigned)g);
}

double np_bandwidth_proxy(double cpu_cores_busy, uint64_t resident_bytes)
{
    /* cores busy x resident bytes: a ranking, in "bytes/s" only so it sorts with real figures. */
    return cpu_cores_busy > 0 ? cpu_cores_busy * (double)resident_bytes : 0.0;
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

static const char *const source_names[] = {
    [NP_BW_SOURCE_UNAVAILABLE] = "unavailable",
    [NP_BW_SOURCE_PROXY] = "proxy",
    [NP_BW_SOURCE_MISSES] = "misses",
    [NP_BW_SOURCE_UNCORE] = "uncore",
};
_Static_assert(sizeof(source_names) / sizeof(source_names[0]) == NP_BW_SOURCE_COUNT,
               "every bandwidth source has a name");
static const struct np_name_table sources = {"bandwidth source", source_names,
                                             sizeof(source_names) / sizeof(source_names[0]), NULL};

const char *np_bandwidth_source_name(enum np_bandwidth_source s)
{
    return np_name_of(&sources, (unsigned)s);
}

bool np_bandwidth_source_measured(enum np_bandwidth_source s)
{
    return s == NP_BW_SOURCE_MISSES || s == NP_BW_SOURCE_UNCORE;
}

void np_node_traffic(struct np_node_view *view)
{
    enum np_bandwidth_source best = NP_BW_SOURCE_UNAVAILABLE;
    bool touched[NP_MAX_NODES] = {false};

    for (unsigned n = 0; n < NP_MAX_NODES; n++) {
        view->node_bandwidth[n] = 0;
        view->node_bandwidth_source[n] = NP_BW_SOURCE_UNAVAILABLE;
    }
    view->node_bandwidth_available = false;
    for (size_t j = 0; j < view->njobs; j++) {
        const struct np_job_view *job = &view->jobs[j];
        const enum np_bandwidth_source src =
            job->bandwidth_is_proxy ? NP_BW_SOURCE_PROXY : NP_BW_SOURCE_MISSES;
        uint64_t total = 0;

        for (unsigned n = 0; n < view->nnodes && n < NP_MAX_NODES; n++)
            total += job->pages_on_node[n];
        if (total == 0)
            continue; /* its pages were not read: nowhere to spread its traffic */
        if (src > best)
            best = src;
        for (unsigned n = 0; n < view->nnodes && n < NP_MAX_NODES; n++) {
            if (job->pages_on_node[n] == 0)
                continue;
            view->node_bandwidth[n] +=
                job->bandwidth * ((double)job->pages_on_node[n] / (double)total);
            /* The weakest source among the jobs there: a proxy taints the sum. */
            if (!touched[n] || src < view->node_bandwidth_source[n])
                view->node_bandwidth_source[n] = src;
            touched[n] = true;
        }
    }
    for (unsigned n = 0; n < view->nnodes && n < NP_MAX_NODES; n++) {
        if (!touched[n] && view->total_bytes[n] > 0)
            view->node_bandwidth_source[n] = best; /* no job's pages here: it serves them 0 */
        if (np_bandwidth_source_measured(view->node_bandwidth_source[n]))
            view->node_bandwidth_available = true;
    }
}

bool np_node_saturated(const struct np_node_view *view, unsigned node, double threshold)
{
    return threshold > 0 && node < view->nnodes && node < NP_MAX_NODES &&
           np_bandwidth_source_measured(view->node_bandwidth_source[node]) &&
           view->node_bandwidth[node] > threshold;
}

/* SLIT distance, unknown (0) ranked after every known one. */
static unsigned rank_distance(const struct np_node_view *view, unsigned from, unsigned to)
{
    const uint8_t d = view->distance[from][to];
    return d ? d : 256u;
}

int np_pick_destination(const struct np_node_view *view, unsigned from, uint64_t avoid_mask,
                        uint64_t min_free_bytes, double threshold)
{
    int best = -1;

    if (from >= view->nnodes || from >= NP_MAX_NODES)
        return -1;
    for (unsigned d = 0; d < view->nnodes && d < NP_MAX_NODES; d++) {
        unsigned dist, best_dist;

        if (d == from || (avoid_mask >> d & 1u) || view->total_bytes[d] == 0 ||
            view->free_bytes[d] <= min_free_bytes || np_node_saturated(view, d, threshold))
            continue;
        if (best < 0) {
            best = (int)d;
            continue;
        }
        dist = rank_distance(view, from, d);
        best_dist = rank_distance(view, from, (unsigned)best);
        if (dist != best_dist) {
            if (dist < best_dist)
                best = (int)d;
        } else if (view->node_bandwidth[d] != view->node_bandwidth[best]) {
            if (view->node_bandwidth[d] < view->node_bandwidth[best])
                best = (int)d;
        } else if (view->free_bytes[d] > view->free_bytes[best]) {
            best = (int)d;
        }
    }
    return best;
}

/* Node @p n's queueing factor 1 / (1 - traffic / capacity), the traffic measured and capped as
 * the contention model caps it; 1 when either figure is unknown. */
static double queueing(const struct np_node_view *view, unsigned n)
{
    const double capacity = n < NP_MAX_NODES ? view->capacity[n] : 0;
    double u;

    if (!(capacity > 0) || !np_bandwidth_source_measured(view->node_bandwidth_source[n]) ||
        !isfinite(view->node_bandwidth[n]))
        return 1.0;
    u = fmin(view->node_bandwidth[n] / capacity, NP_MAX_UTILISATION);
    return u > 0 ? 1.0 / (1.0 - u) : 1.0;
}

/* Node @p n from CPU node @p c by SLIT, in near-node units: (d - 10) / (the nearest other
 * distance - 10); 0 local, 1 for any other node when distances are unknown. */
static double slit_excess(const struct np_node_view *view, unsigned c, unsigned n)
{
    unsigned near = 0;

    if (c == n)
        return 0.0;
    for (unsigned m = 0; m < view->nnodes && m < NP_MAX_NODES; m++)
        if (m != c && view->distance[c][m] > 10 && (near == 0 || view->distance[c][m] < near))
            near = view->distance[c][m];
    if (near == 0 || view->distance[c][n] <= 10)
        return 1.0;
    return (double)(view->distance[c][n] - 10) / (double)(near - 10);
}

/* How much slower node @p n's memory is from CPU node @p c than c's own unloaded, in near-node
 * units: the contention model's law, (latency x queueing - 1) / (near latency - 1), the latency
 * the pair's own ratio (machine profile, HMAT) or else SLIT's read as near sockets. With no
 * queueing and no ratio it is SLIT's figure exactly. */
static double excess_from(const struct np_node_view *view, unsigned c, unsigned n)
{
    const double q = queueing(view, n), unit = NP_NEAR_LATENCY - 1.0;
    const double ratio =
        c == n || c >= NP_MAX_NODES || n >= NP_MAX_NODES ? 0 : view->latency_ratio[c][n];

    if (ratio > 0)
        return (ratio * q - 1.0) / unit;
    if (q == 1.0)
        return slit_excess(view, c, n);
    return ((1.0 + unit * slit_excess(view, c, n)) * q - 1.0) / unit;
}

/* The mean over the job's CPU nodes; NAN when it has none on this view. */
static double remote_excess(const struct np_node_view *view, uint64_t cpu_nodes, unsigned n)
{
    double sum = 0;
    unsigned count = 0;

    for (unsigned c = 0; c < view->nnodes && c < NP_MAX_NODES; c++)
        if (cpu_nodes >> c & 1u) {
            sum += excess_from(view, c, n);
            count++;
        }
    return count ? sum / count : NAN;
}

double np_predicted_effect_per_page(const struct np_node_view *view, const struct np_job_view *job,
                                    unsigned src, unsigned dst)
{
    /* A prediction below 1 (remote faster) is noise: no effect rather than a reversed one. */
    const double excess_slowdown = job->predicted_remote > 1.0 ? job->predicted_remote - 1.0 : 0.0;
    double total = 0, weighted = 0, now, delta;

    if (!job->has_prediction || !isfinite(job->predicted_remote) || src >= view->nnodes ||
        dst >= view->nnodes || view->nnodes > NP_MAX_NODES)
        return NAN;
    for (unsigned n = 0; n < view->nnodes; n++) {
        if (job->pages_on_node[n] == 0)
            continue;
        total += (double)job->pages_on_node[n];
        weighted += (double)job->pages_on_node[n] * remote_excess(view, job->cpu_nodes, n);
    }
    delta = remote_excess(view, job->cpu_nodes, dst) - remote_excess(view, job->cpu_nodes, src);
    if (total <= 0 || isnan(delta))
        return NAN;
    now = 1.0 + excess_slowdown * weighted / total;
    return excess_slowdown * delta / total / now;
}
