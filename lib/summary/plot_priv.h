/*
 * plot_priv.h - the timeline picture's drawing parts (plot.c panels, plot_text.c text and scales).
 * Every string is drawn through plot_text(), which records where its ink went, so a check can see
 * that no text leaves the picture. Private to the summary component.
 */
#ifndef NUMAPLACE_PLOT_PRIV_H
#define NUMAPLACE_PLOT_PRIV_H

#include <cairo.h>

#include "numaplace/plot.h"

#define PLOT_WIDTH  1000.0
#define PLOT_HEIGHT 720.0
#define PLOT_LEFT   84.0  /* room for the scales */
#define PLOT_RIGHT  190.0 /* room for the legend */
#define PLOT_X1     (PLOT_WIDTH - PLOT_RIGHT)

/** Where the drawing goes, and the record of its strings (texts NULL: none kept). */
struct plot_pen {
    cairo_t *cr;
    struct np_plot_text *texts;
    size_t max, n;
};

/** Draw @p s with its reference point at (x, y): @p align 0 left, 0.5 centre, 1 right of x.
 *  @return its advance width */
double plot_text(struct plot_pen *p, double x, double y, double size, double align, const char *s);
/** The advance width @p s would have. */
double plot_text_width(struct plot_pen *p, double size, const char *s);
/**
 * @p s wrapped at spaces (a word wider than @p width cut) into at most @p max_lines lines from
 * baseline @p y, the last ending in "..." when the text goes on. @return the lines drawn
 */
int plot_wrapped(struct plot_pen *p, double x, double y, double width, double size, int max_lines,
                 const char *s);

/** Ticks for 0..@p max: about @p n steps of 1, 2 or 5 times a power of ten. @return the step */
double plot_nice_step(double max, int n);

/** The time axis under the panels from @p top to @p bottom: elapsed ticks from the first point,
 *  in s, min or h by the span, grid lines across, and the wall-clock times at its ends. */
void plot_time_axis(struct plot_pen *p, const struct np_timeline *tl, double top, double bottom);

/** x of time @p t. */
double plot_x_of(const struct np_timeline *tl, double t);

#endif
