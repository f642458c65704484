/* A summary node's timeline drawn with np_plot_timeline (docs/summary-schema.md, "Plot"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/plot.h"
#include "numaplace/summary.h"
#include "summary_priv.h"

/* Point @p i of a series: a number, or none (null, past its end). */
static bool point(const json_t *series, size_t i, double *v)
{
    const json_t *x = json_array_get(series, i);

    if (!json_is_number(x))
        return false;
    *v = json_number_value(x);
    return true;
}

static int build_points(const json_t *tl, const char *name, struct np_timeline_point *pts,
                        size_t npoints, unsigned *nnodes, struct np_err *err)
{
    const json_t *node_bytes = json_object_get(tl, "node_bytes"), *series;
    const char *numa;

    *nnodes = 0;
    json_object_foreach((json_t *)node_bytes, numa, series)
    {
        char *end;
        long n = strtol(numa, &end, 10);
        if (!*numa || *end || n < 0 || n >= NP_PLOT_MAX_NODES)
            return np_err_set(err, -EINVAL,
                              "%s's timeline has node_bytes for NUMA node '%s': accepted are 0 to "
                              "%d",
                              name, numa, NP_PLOT_MAX_NODES - 1);
        if (json_array_size(series) != npoints)
            return np_err_set(err, -EINVAL, "%s's timeline node_bytes.%s has %zu points; t has %zu",
                              name, numa, json_array_size(series), npoints);
        if ((unsigned)n + 1 > *nnodes)
            *nnodes = (unsigned)n + 1;
    }
    if (*nnodes == 0)
        return np_err_set(err, -ENODATA,
                          "the report has no timeline: %s's timeline has no memory per NUMA node",
                          name);
    for (size_t i = 0; i < npoints; i++) {
        double v;
        if (!point(json_object_get(tl, "t"), i, &pts[i].t))
            return np_err_set(err, -EINVAL, "%s's timeline t[%zu] is not a number", name, i);
        json_object_foreach((json_t *)node_bytes, numa, series)
        {
            if (point(series, i, &v) && v > 0)
                pts[i].bytes_on_node[strtol(numa, NULL, 10)] = (uint64_t)v;
        }
        pts[i].bandwidth_ok =
            point(json_object_get(tl, "bandwidth_bytes_per_s"), i, &pts[i].bandwidth);
        pts[i].cpi_ok = point(json_object_get(tl, "cpi"), i, &pts[i].cpi);
    }
    return 0;
}

/* The node to plot: @p node, or the first by name. */
static int pick_node(const json_t *s, const char *node, const char **name, struct np_err *err)
{
    size_t count = 0, o = 0;
    const char **names = np_sorted_keys(json_object_get(s, "nodes"), &count);
    char list[256] = "";

    if (!names)
        return np_err_set(err, -ENOMEM, "out of memory");
    if (!node && count == 0) {
        free(names);
        return np_err_set(err, -ENODATA,
                          "the report has no timeline: the summary of job %lld has no node "
                          "reports",
                          (long long)jint(s, "job_id"));
    }
    *name = node ? node : names[0];
    if (json_object_get(json_object_get(s, "nodes"), *name)) {
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
                      (long long)jint(s, "job_id"), list[0] ? list : "no nodes");
}

int np_summary_plot(const json_t *s, const char *node, const char *path, struct np_err *err)
{
    const char *name = NULL, *tl_step;
    const json_t *n, *tl, *events, *step = NULL, *st;
    struct np_timeline_point *pts = NULL;
    struct np_timeline_event *evs = NULL;
    struct np_timeline timeline = {0};
    unsigned local[NP_PLOT_MAX_NODES];
    size_t npoints, nevents = 0, nlocal = 0, i;
    char title[160];
    int rc = np_summary_validate(s, err);

    if (rc || (rc = pick_node(s, node, &name, err)) != 0)
        return rc;
    n = json_object_get(json_object_get(s, "nodes"), name);
    if (!(tl = json_object_get(n, "timeline")))
        return np_err_set(err, -ENODATA, "the report has no timeline: %s",
                          jfind(json_object_get(s, "trimmed"), "what", "timeline")
                              ? "timelines were trimmed to fit the summary into AdminComment"
                              : "the node's reports were written without one (an older numaplace)");
    npoints = json_array_size(json_object_get(tl, "t"));
    if (npoints == 0)
        return np_err_set(err, -ENODATA, "the report has no timeline: %s's timeline has no points",
                          name);
    pts = calloc(npoints, sizeof(*pts));
    if (!pts)
        return np_err_set(err, -ENOMEM, "out of memory plotting %zu points", npoints);
    rc = build_points(tl, name, pts, npoints, &timeline.nnodes, err);
    events = json_object_get(tl, "events");
    if (!rc && json_array_size(events) && !(evs = calloc(json_array_size(events), sizeof(*evs))))
        rc = np_err_set(err, -ENOMEM, "out of memory plotting events");
    for (i = 0; evs && i < json_array_size(events); i++) {
        const json_t *ev = json_array_get(events, i);
        if (!json_object_get(ev, "t"))
            continue;
        evs[nevents].t = jnum(ev, "t", 0);
        snprintf(evs[nevents].label, sizeof(evs[nevents].label), "%s",
                 jstr_or(ev, "label", "migration"));
        nevents++;
    }
    /* The plotted step's CPUs' nodes (the local share) and its wall-clock start and end. */
    tl_step = jstr(tl, "step");
    json_array_foreach(tl_step ? json_object_get(n, "steps") : NULL, i, st)
    {
        if (jstr(st, "step") && strcmp(jstr(st, "step"), tl_step) == 0)
            step = st;
    }
    json_array_foreach(json_object_get(step, "local_nodes"), i, st)
    {
        const double v = json_number_value(st);
        if (nlocal < NP_PLOT_MAX_NODES && v >= 0 && v < timeline.nnodes)
            local[nlocal++] = (unsigned)v;
    }
    snprintf(title, sizeof(title), "job %lld on %s, step %s", (long long)jint(s, "job_id"), name,
             tl_step ? tl_step : "?");
    timeline.local_nodes = nlocal ? local : NULL;
    timeline.nlocal_nodes = nlocal;
    timeline.start = jstr(step, "start");
    timeline.end = jstr(step, "end");
    timeline.title = title;
    timeline.points = pts;
    timeline.npoints = npoints;
    timeline.events = evs;
    timeline.nevents = nevents;
    timeline.bandwidth_note = jstr(tl, "bandwidth_note");
    timeline.cpi_note = jstr(tl, "cpi_note");
    if (!rc)
        rc = np_plot_timeline(&timeline, path, err);
    free(pts);
    free(evs);
    return rc;
}
