/* What the policies know of a node and its jobs (see numaplace/migration.h). */
#include "numaplace/migration.h"

#include "numaplace/names.h"

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
