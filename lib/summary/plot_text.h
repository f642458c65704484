/*
 * plot_text.h - the timeline picture's text and time axis (plot_text.c), below its panels (plot.c):
 * it knows nothing of a timeline, only times, strings and where they go.
 * Every string is drawn through plot_text(), which records where its ink went, so a check can see
 * that no text leaves the picture. Private to the summary component.
 */
#ifndef NUMAPLACE_PLOT_TEXT_H
#define NUMAPLACE_PLOT_TEXT_H

#include <cairo.h>
#include <stddef.h>

#define PLOT_WIDTH  1000.0
#define PLOT_HEIGHT 720.0
#define PLOT_LEFT   84.0  /* room for the scales */
#define PLOT_RIGHT  190.0 /* room for the legend */
#define PLOT_X1     (PLOT_WIDTH - PLOT_RIGHT)

/** A string drawn: its ink's box (as struct np_plot_text, which plot.c fills from it). */
struct plot_box {
    double x0, y0, x1, y1;
    char text[96];
};

/** Where the drawing goes, and the record of its strings (texts NULL: none kept). */
struct plot_pen {
    cairo_t *cr;
    struct plot_box *texts;
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

/** The time axis under the panels from @p top to @p bottom for times @p t0 to @p t1: elapsed
 *  ticks in s, min or h by the span, grid lines across, and the wall-clock times @p start and
 *  @p end (NULL: not shown) at its ends. */
void plot_time_axis(struct plot_pen *p, double t0, double t1, const char *start, const char *end,
                    double top, double bottom);

/** x of time @p t on an axis from @p t0 to @p t1. */
double plot_x_of(double t0, double t1, double t);

#endif /* NUMAPLACE_PLOT_TEXT_H */
