/* --numa-policy=auto's rule (see numaplace/auto.h, docs/auto.md): a decision only. */
#include "numaplace/auto.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "numaplace/names.h"

static const char *const source_names[NP_AUTO_SOURCE_COUNT] = {
    [NP_AUTO_SOURCE_USER] = "user",
    [NP_AUTO_SOURCE_HISTORY] = "history",
    [NP_AUTO_SOURCE_SITE] = "site default",
    [NP_AUTO_SOURCE_NONE] = "unknown",
};
static const struct np_name_table sources = {"sensitivity source", source_names,
                                             NP_AUTO_SOURCE_COUNT, NULL};

const char *np_auto_source_name(enum np_auto_source source)
{
    return np_name_of(&sources, (unsigned)source);
}

double np_auto_threshold(double remote_latency)
{
    if (!isfinite(remote_latency) || remote_latency < 1.0)
        return NAN;
    return 1.0 - 1.0 / remote_latency;
}

bool np_auto_loaded(double traffic, double capacity, double threshold)
{
    return isfinite(traffic) && isfinite(capacity) && isfinite(threshold) && traffic >= 0 &&
           capacity > 0 && threshold > 0 && traffic / capacity > threshold;
}

/* "node 0 (62% busy)", "nodes 0,2" */
static void node_list(char *buf, size_t len, uint64_t mask)
{
    size_t used = 0;

    buf[0] = '\0';
    for (unsigned n = 0; n < NP_AUTO_MAX_NODES && used < len; n++)
        if (mask >> n & 1u)
            used += (size_t)snprintf(buf + used, len - used, "%s%u", used ? "," : "", n);
}

static uint64_t loaded_nodes(const struct np_auto_input *in, uint64_t among)
{
    uint64_t loaded = 0;

    for (unsigned n = 0; in->advice && n < NP_AUTO_MAX_NODES; n++)
        if ((among >> n & 1u) && in->node[n].known && in->node[n].loaded)
            loaded |= UINT64_C(1) << n;
    return loaded;
}

/* The load of the task's node, for the reason line. */
static void load_text(char *buf, size_t len, const struct np_auto_input *in, unsigned node)
{
    if (!in->advice)
        snprintf(buf, len, "node %u's load unknown (%.110s)", node,
                 in->no_advice[0] ? in->no_advice : "no advice from numaplaced");
    else if (!in->node[node].known)
        snprintf(buf, len, "node %u's traffic not measured", node);
    else if (in->node[node].cpu_busy && isfinite(in->node[node].utilisation))
        snprintf(buf, len, "node %u %s by proxy (its CPUs %.0f%% busy; no memory counter)", node,
                 in->node[node].loaded ? "loaded" : "not loaded",
                 100.0 * in->node[node].utilisation);
    else if (isfinite(in->node[node].utilisation))
        snprintf(buf, len, "node %u %s (%.0f%% of its bandwidth)", node,
                 in->node[node].loaded ? "loaded" : "not loaded",
                 100.0 * in->node[node].utilisation);
    else
        snprintf(buf, len, "node %u %s", node, in->node[node].loaded ? "loaded" : "not loaded");
}

int np_auto_choose(const struct np_auto_input *in, struct np_auto_choice *out)
{
    char sens[64], nodes[64], load[160];
    unsigned first = 0;

    if (!in || !out)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    out->policy = NP_POLICY_LOCAL;
    out->source = NP_AUTO_SOURCE_NONE;
    if (in->user_given) {
        out->source = NP_AUTO_SOURCE_USER;
        out->sensitive = in->user == NP_SENSITIVITY_HIGH;
    } else if (in->advice && in->history_known) {
        out->source = NP_AUTO_SOURCE_HISTORY;
        out->sensitive = in->history == NP_SENSITIVITY_HIGH;
    } else if (in->site_given) {
        out->source = NP_AUTO_SOURCE_SITE;
        out->sensitive = in->site == NP_SENSITIVITY_HIGH;
    }
    if (out->source == NP_AUTO_SOURCE_NONE)
        snprintf(sens, sizeof(sens), "sensitivity unknown");
    else
        snprintf(sens, sizeof(sens), "sensitivity %s (%s)", out->sensitive ? "high" : "low",
                 np_auto_source_name(out->source));
    out->task_nodes = in->task_nodes;
    out->allowed_nodes = in->allowed_nodes;
    out->loaded_nodes = loaded_nodes(in, in->task_nodes | in->allowed_nodes);
    while (first < NP_AUTO_MAX_NODES && !(in->task_nodes >> first & 1u))
        first++;
    node_list(nodes, sizeof(nodes), in->task_nodes);

    /* 2. Known insensitive: local. */
    if (out->source != NP_AUTO_SOURCE_NONE && !out->sensitive) {
        snprintf(out->reason, sizeof(out->reason), "auto: local: %s", sens);
        return 0;
    }
    /* 3. Threads on several nodes: their accesses are spread anyway; spread the pages alike. */
    if (__builtin_popcountll(in->task_nodes) > 1) {
        out->policy = NP_POLICY_INTERLEAVE;
        snprintf(out->reason, sizeof(out->reason), "auto: interleave: %.60s, CPUs span nodes %.60s",
                 sens, nodes);
        return 0;
    }
    if (first == NP_AUTO_MAX_NODES) {
        snprintf(out->reason, sizeof(out->reason), "auto: local: %s, CPUs' node unknown", sens);
        return 0;
    }
    load_text(load, sizeof(load), in, first);
    /* 4. Sensitive on a loaded node, with somewhere unloaded to spread to. */
    if (out->sensitive && loaded_nodes(in, in->task_nodes)) {
        const uint64_t others = in->allowed_nodes & ~in->task_nodes;
        const uint64_t busy = loaded_nodes(in, others);
        if (others & ~busy) {
            out->policy = NP_POLICY_INTERLEAVE_ALL;
            snprintf(out->reason, sizeof(out->reason), "auto: interleave-all: %.60s, %.150s", sens,
                     load);
        } else {
            snprintf(out->reason, sizeof(out->reason),
                     "auto: local: %.60s, %.120s but no other allowed node is less loaded", sens,
                     load);
        }
        return 0;
    }
    /* 5. Unknown, or sensitive on a node with room: local. */
    snprintf(out->reason, sizeof(out->reason), "auto: local: %.60s, %.150s", sens, load);
    return 0;
}
