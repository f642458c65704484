/*
 * numaplace/plot.h - a job's timeline as a picture (PNG or SVG, drawn with cairo).
 *
 * Three panels over the job's run time: memory per NUMA node (stacked), memory bandwidth and CPI.
 * A figure that was not measured is not drawn: its panel says "unavailable" and why. Migrations
 * are marked across all panels.
 */
#ifndef NUMAPLACE_PLOT_H
#define NUMAPLACE_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "numaplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NP_PLOT_MAX_NODES 16

struct np_timeline_point {
    double t; /**< seconds since the step started */
    uint64_t bytes_on_node[NP_PLOT_MAX_NODES];
    double bandwidth; /**< bytes/s, if bandwidth_ok */
    bool bandwidth_ok;
    double cpi; /**< if cpi_ok */
    bool cpi_ok;
};

struct np_timeline_event {
    double t;
    char label[48]; /**< e.g. "0->1 512 MiB" */
};

/** Everything borrowed. */
struct np_timeline {
    const char *title;
    unsigned nnodes;
    const struct np_timeline_point *points;
    size_t npoints;
    const struct np_timeline_event *events;
    size_t nevents;
    const char *bandwidth_note; /**< why bandwidth is missing (when no point has it) */
    const char *cpi_note;       /**< why CPI is missing */
};

/**
 * Draw @p tl into @p path; the format follows the extension (.png or .svg).
 * @return 0, or -EINVAL (unknown extension, too many nodes, no points) / -EIO with @p err
 */
NP_API int np_plot_timeline(const struct np_timeline *tl, const char *path, struct np_err *err);

#ifdef __cplusplus
}
#endif

#endif /* NUMAPLACE_PLOT_H */
