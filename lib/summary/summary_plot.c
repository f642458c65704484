/* A summary node's timeline drawn with np_plot_timeline (docs/summary-schema.md, "Plot"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/plot.h"
#include "numaplace/summary_model.h"

static bool trimmed_has(const struct np_sum *s, const char *what)
{
    for (size_t i = 0; i < s->ntrimmed; i++)
        if (s->trimmed[i].what && strcmp(s->trimmed[i].what, what) == 0)
            return true;
    return false;
}

/* Point @p i of a series: a number, or none (null, past its end). */
static bool point(const struct np_nums *ns, size_t i, double *v)
{
    if (i >= ns->n || ns->v[i].kind == NP_NUM_NULL)
        return false;
    *v = np_num_value(&ns->v[i]);
    return true;
}

static int build_points(const struct np_sum_timeline *tl, const char *name,
                        struct np_timeline_point *pts, size_t npoints, unsigned *nnodes,
                        struct np_err *err)
{
    *nnodes = 0;
    for (size_t k = 0; k < tl->nnode_bytes; k++) {
        const struct np_sum_series *series = &tl->node_bytes[k];
        char *end;
        long n = strtol(series->node, &end, 10);
        if (!*series->node || *end || n < 0 || n >= NP_PLOT_MAX_NODES)
            return np_err_set(err, -EINVAL,
                              "%s's timeline has node_bytes for NUMA node '%s': accepted are 0 to "
                              "%d",
                              name, series->node, NP_PLOT_MAX_NODES - 1);
        if (series->bytes.n != npoints)
            return np_err_set(err, -EINVAL, "%s's timeline node_bytes.%s has %zu points; t has %zu",
                              name, series->node, series->bytes.n, npoints);
        if ((unsigned)n + 1 > *nnodes)
            *nnodes = (unsigned)n + 1;
    }
    if (*nnodes == 0)
        return np_err_set(err, -ENODATA,
                          "the report has no timeline: %s's timeline has no memory per NUMA node",
                          name);
    for (size_t i = 0; i < npoints; i++) {
        double v;
        if (!point(&tl->t, i, &pts[i].t))
            return np_err_set(err, -EINVAL, "%s's timeline t[%zu] is not a number", name, i);
        for (size_t k = 0; k < tl->nnode_bytes; k++)
            if (point(&tl->node_bytes[k].bytes, i, &v) && v > 0)
                pts[i].bytes_on_node[strtol(tl->node_bytes[k].node, NULL, 10)] = (uint64_t)v;
        pts[i].bandwidth_ok = point(&tl->bandwidth, i, &pts[i].bandwidth);
        pts[i].cpi_ok = point(&tl->cpi, i, &pts[i].cpi);
    }
    return 0;
}

/* The node to plot: @p node, or the first by name. */
static int pick_node(const struct np_sum *s, const char *node, const struct np_sum_node **out,
                     struct np_err *err)
{
    size_t count = 0, o = 0;
    const char **names = np_sum_sorted_nodes(s, &count);
    char list[256] = "";

    if (!names)
        return np_err_set(err, -ENOMEM, "out of memory");
    if (!node && count == 0) {
        free(names);
        return np_err_set(err, -ENODATA,
                          "the report has no timeline: the summary of job %lld has no node "
                          "reports",
                          (long long)s->job_id);
    }
    *out = np_sum_node_get(s, node ? node : names[0]);
    if (*out) {
        free(names);
        return 0;
    }
    for (size_t k = 0; k < count; k++) {
        int w = snprintf(list + o, sizeof(list) - o, "%s%s", k ? ", " : "", names[k]);
        if (w < 0 || (size_t)w >= sizeof(list) - o)
            break;
        o += (size_t)w;
    }
    free(names);
    return np_err_set(err, -ENOENT, "no node '%s' in the summary of job %lld: it has %s", node,
                      (long long)s->job_id, list[0] ? list : "no nodes");
}

int np_sum_plot(const struct np_sum *s, const char *node, const char *path, struct np_err *err)
{
    const struct np_sum_node *n = NULL;
    const struct np_sum_timeline *tl;
    struct np_timeline_point *pts = NULL;
    struct np_timeline_event *evs = NULL;
    struct np_timeline timeline = {0};
    const struct np_sum_step *step = NULL;
    unsigned local[NP_PLOT_MAX_NODES];
    size_t npoints, nevents = 0, nlocal = 0;
    char title[160];
    int rc = pick_node(s, node, &n, err);

    if (rc || !n)
        return rc ? rc : -ENOENT;
    tl = &n->timeline;
    if (!np_keys_has(&n->keys, NP_NODE_TIMELINE))
        return np_err_set(err, -ENODATA, "the report has no timeline: %s",
                          trimmed_has(s, "timeline")
                              ? "timelines were trimmed to fit the summary into AdminComment"
                              : "the node's reports were written without one (an older numaplace)");
    npoints = tl->t.n;
    if (npoints == 0)
        return np_err_set(err, -ENODATA, "the report has no timeline: %s's timeline has no points",
                          n->name);
    pts = calloc(npoints, sizeof(*pts));
    if (!pts)
        return np_err_set(err, -ENOMEM, "out of memory plotting %zu points", npoints);
    rc = build_points(tl, n->name, pts, npoints, &timeline.nnodes, err);
    if (rc)
        goto out;
    if (tl->nevents) {
        evs = calloc(tl->nevents, sizeof(*evs));
        if (!evs) {
            rc = np_err_set(err, -ENOMEM, "out of memory plotting events");
            goto out;
        }
        for (size_t i = 0; i < tl->nevents; i++) {
            const struct np_sum_event *ev = &tl->events[i];
            if (!np_keys_has(&ev->keys, 0))
                continue;
            evs[nevents].t = np_num_value(&ev->t);
            snprintf(evs[nevents].label, sizeof(evs[nevents].label), "%s",
                     ev->label ? ev->label : "migration");
            nevents++;
        }
    }
    /* The plotted step's CPUs' nodes (the local share) and its wall-clock start and end. */
    for (size_t k = 0; tl->step && k < n->nsteps; k++)
        if (n->steps[k].step && strcmp(n->steps[k].step, tl->step) == 0)
            step = &n->steps[k];
    for (size_t k = 0; step && k < step->nlocal_nodes && nlocal < NP_PLOT_MAX_NODES; k++) {
        const double v = np_num_value(&step->local_nodes[k]);
        if (v >= 0 && v < timeline.nnodes)
            local[nlocal++] = (unsigned)v;
    }
    snprintf(title, sizeof(title), "job %lld on %s, step %s", (long long)s->job_id, n->name,
             tl->step ? tl->step : "?");
    timeline.local_nodes = nlocal ? local : NULL;
    timeline.nlocal_nodes = nlocal;
    timeline.start = step ? step->start : NULL;
    timeline.end = step ? step->end : NULL;
    timeline.title = title;
    timeline.points = pts;
    timeline.npoints = npoints;
    timeline.events = evs;
    timeline.nevents = nevents;
    timeline.bandwidth_note = tl->bandwidth_note;
    timeline.cpi_note = tl->cpi_note;
    rc = np_plot_timeline(&timeline, path, err);
out:
    free(pts);
    free(evs);
    return rc;
}
