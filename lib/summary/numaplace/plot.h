/*
 * numaplace/plot.h - a job's timeline as a picture (PNG or SVG, drawn with cairo).
 *
 * Four panels over the step's run time: memory per NUMA node (stacked; many nodes coloured and
 * labelled as local or not), the local share, memory bandwidth and CPI, each with its scale, under
 * one time axis (elapsed time ticks, the wall-clock time at its ends). A figure that was not
 * measured is not drawn: its panel says "unavailable" and why, wrapped inside the panel.
 * Migrations are marked across all panels and labelled where their labels do not overlap.
 */
#ifndef NUMAPLACE_PLOT_H
#define NUMAPLACE_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "numaplace/common.h"

#define NP_PLOT_MAX_NODES 64

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
    /** The NUMA nodes of the step's CPUs, whose share of its memory is the local share; NULL
     *  when not known (the local share is then unavailable). */
    const unsigned *local_nodes;
    size_t nlocal_nodes;
    const char *start, *end; /**< wall-clock times of the first and last point, as written in
                                  the report; NULL: not shown */
};

/** A string the drawing wrote: its ink's box in the picture's pixels (cairo_text_extents). */
struct np_plot_text {
    double x0, y0, x1, y1;
    char text[96]; /**< its start */
};

/**
 * Draw @p tl into @p path; the format follows the extension (.png or .svg).
 * @return 0, or -EINVAL (unknown extension, too many nodes, no points) / -EIO with @p err
 */
NP_API int np_plot_timeline(const struct np_timeline *tl, const char *path, struct np_err *err);

/**
 * Draw @p tl as np_plot_timeline does, into an image in memory only, and say where every string
 * went: the first @p max in @p texts (may be NULL), their count in @p ntexts, the picture's size
 * in @p width and @p height. For checks that no text leaves the picture.
 * @return 0, or -EINVAL as np_plot_timeline
 */
NP_API int np_plot_timeline_texts(const struct np_timeline *tl, struct np_plot_text *texts,
                                  size_t max, size_t *ntexts, double *width, double *height,
                                  struct np_err *err);

#endif /* NUMAPLACE_PLOT_H */
