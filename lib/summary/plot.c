/* A job's timeline drawn with cairo (see numaplace/plot.h). */
#include "numaplace/plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cairo-svg.h>
#include <cairo.h>

#include "numaplace/output_file.h"

#define WIDTH  960.0
#define HEIGHT 640.0
#define LEFT   80.0
#define RIGHT  150.0 /* room for the legend */

/* Colour-blind-safe palette (Okabe-Ito), cycled past eight nodes. */
static const double palette[8][3] = {
    {0.90, 0.62, 0.00}, {0.34, 0.71, 0.91}, {0.00, 0.62, 0.45}, {0.94, 0.89, 0.26},
    {0.00, 0.45, 0.70}, {0.84, 0.37, 0.00}, {0.80, 0.47, 0.65}, {0.40, 0.40, 0.40},
};

struct panel {
    double top, height;
    double ymax;
    const char *label;
};

static double x_of(const struct np_timeline *tl, double t)
{
    const double t0 = tl->points[0].t, t1 = tl->points[tl->npoints - 1].t;
    const double span = t1 > t0 ? t1 - t0 : 1.0;
    return LEFT + (t - t0) / span * (WIDTH - LEFT - RIGHT);
}

static double y_of(const struct panel *p, double v)
{
    return p->top + p->height - (p->ymax > 0 ? v / p->ymax : 0) * p->height;
}

static void text(cairo_t *cr, double x, double y, double size, const char *s)
{
    cairo_set_font_size(cr, size);
    cairo_move_to(cr, x, y);
    cairo_show_text(cr, s);
}

/* The panel's box and label; the scale only where there is data to read against it. */
static void frame(cairo_t *cr, const struct panel *p, const char *unit, bool scaled)
{
    char tick[48];

    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 1.0);
    cairo_rectangle(cr, LEFT, p->top, WIDTH - LEFT - RIGHT, p->height);
    cairo_stroke(cr);
    text(cr, 8, p->top + 14, 12, p->label);
    if (!scaled)
        return;
    snprintf(tick, sizeof(tick), "%.3g %s", p->ymax, unit);
    text(cr, 8, p->top + 30, 10, tick);
    text(cr, 8, p->top + p->height, 10, "0");
}

static void unavailable(cairo_t *cr, const struct panel *p, const char *what, const char *why)
{
    char line[256];

    snprintf(line, sizeof(line), "%s unavailable: %s", what, why ? why : "not measured");
    cairo_set_source_rgb(cr, 0.55, 0.1, 0.1);
    text(cr, LEFT + 12, p->top + p->height / 2, 12, line);
}

/* One line series; gaps where the figure was not measured. */
static void series(cairo_t *cr, const struct np_timeline *tl, const struct panel *p, bool cpi)
{
    bool pen = false;

    cairo_set_source_rgb(cr, 0.0, 0.45, 0.70);
    cairo_set_line_width(cr, 1.5);
    for (size_t i = 0; i < tl->npoints; i++) {
        const struct np_timeline_point *pt = &tl->points[i];
        const bool ok = cpi ? pt->cpi_ok : pt->bandwidth_ok;
        const double v = cpi ? pt->cpi : pt->bandwidth / 1e6;
        if (!ok) {
            pen = false;
            continue;
        }
        if (pen)
            cairo_line_to(cr, x_of(tl, pt->t), y_of(p, v));
        else
            cairo_move_to(cr, x_of(tl, pt->t), y_of(p, v));
        pen = true;
    }
    cairo_stroke(cr);
}

static void draw(cairo_t *cr, const struct np_timeline *tl)
{
    struct panel mem = {40, 300, 0, "memory per node"};
    struct panel bw = {370, 110, 0, "bandwidth"};
    struct panel cpi = {510, 100, 0, "CPI"};
    bool have_bw = false, have_cpi = false;
    char line[128];

    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text(cr, LEFT, 24, 16, tl->title ? tl->title : "numaplace job timeline");

    for (size_t i = 0; i < tl->npoints; i++) {
        const struct np_timeline_point *pt = &tl->points[i];
        double total = 0;
        for (unsigned n = 0; n < tl->nnodes; n++)
            total += (double)pt->bytes_on_node[n] / (1 << 20);
        mem.ymax = fmax(mem.ymax, total);
        if (pt->bandwidth_ok) {
            have_bw = true;
            bw.ymax = fmax(bw.ymax, pt->bandwidth / 1e6);
        }
        if (pt->cpi_ok) {
            have_cpi = true;
            cpi.ymax = fmax(cpi.ymax, pt->cpi);
        }
    }
    mem.ymax = mem.ymax > 0 ? mem.ymax * 1.05 : 1;
    bw.ymax = bw.ymax > 0 ? bw.ymax * 1.1 : 1;
    cpi.ymax = cpi.ymax > 0 ? cpi.ymax * 1.1 : 1;

    /* Stacked areas, node 0 at the bottom. */
    for (unsigned n = tl->nnodes; n-- > 0;) {
        const double *rgb = palette[n % 8];
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_move_to(cr, x_of(tl, tl->points[0].t), y_of(&mem, 0));
        for (size_t i = 0; i < tl->npoints; i++) {
            double upto = 0;
            for (unsigned k = 0; k <= n; k++)
                upto += (double)tl->points[i].bytes_on_node[k] / (1 << 20);
            cairo_line_to(cr, x_of(tl, tl->points[i].t), y_of(&mem, upto));
        }
        cairo_line_to(cr, x_of(tl, tl->points[tl->npoints - 1].t), y_of(&mem, 0));
        cairo_close_path(cr);
        cairo_fill(cr);
        cairo_rectangle(cr, WIDTH - RIGHT + 12, mem.top + 10 + 18.0 * n, 12, 12);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        snprintf(line, sizeof(line), "node %u", n);
        text(cr, WIDTH - RIGHT + 30, mem.top + 21 + 18.0 * n, 11, line);
    }
    frame(cr, &mem, "MiB", true);
    frame(cr, &bw, "MB/s", have_bw);
    frame(cr, &cpi, "", have_cpi);
    if (have_bw)
        series(cr, tl, &bw, false);
    else
        unavailable(cr, &bw, "bandwidth", tl->bandwidth_note);
    if (have_cpi)
        series(cr, tl, &cpi, true);
    else
        unavailable(cr, &cpi, "CPI", tl->cpi_note);

    /* Migrations across every panel. */
    for (size_t e = 0; e < tl->nevents; e++) {
        const double x = x_of(tl, tl->events[e].t);
        const double dash[] = {4.0, 3.0};
        cairo_set_source_rgb(cr, 0.8, 0.1, 0.1);
        cairo_set_dash(cr, dash, 2, 0);
        cairo_move_to(cr, x, mem.top);
        cairo_line_to(cr, x, cpi.top + cpi.height);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
        text(cr, x + 3, mem.top + 12 + 12.0 * (double)(e % 4), 10, tl->events[e].label);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    snprintf(line, sizeof(line), "time (s): %.0f to %.0f", tl->points[0].t,
             tl->points[tl->npoints - 1].t);
    text(cr, LEFT, HEIGHT - 10, 11, line);
}

static cairo_status_t write_all(void *closure, const unsigned char *data, unsigned int len)
{
    const int fd = *(const int *)closure;

    while (len > 0) {
        const ssize_t n = write(fd, data, len);
        if (n <= 0)
            return CAIRO_STATUS_WRITE_ERROR;
        data += n;
        len -= (unsigned)n;
    }
    return CAIRO_STATUS_SUCCESS;
}

int np_plot_timeline(const struct np_timeline *tl, const char *path, struct np_err *err)
{
    const char *dot = path ? strrchr(path, '.') : NULL;
    const bool svg = dot && strcmp(dot, ".svg") == 0;
    struct np_output_file out;
    cairo_surface_t *surface;
    cairo_t *cr;
    cairo_status_t status;
    int rc;

    if (!dot || (!svg && strcmp(dot, ".png") != 0))
        return np_err_set(err, -EINVAL,
                          "cannot tell the picture format of '%s': accepted extensions are .png "
                          "and .svg",
                          path ? path : "(null)");
    if (!tl || tl->npoints == 0)
        return np_err_set(err, -EINVAL, "no samples to plot");
    if (tl->nnodes == 0 || tl->nnodes > NP_PLOT_MAX_NODES)
        return np_err_set(err, -EINVAL, "cannot plot %u NUMA nodes (1 to %d)", tl->nnodes,
                          NP_PLOT_MAX_NODES);
    /* cairo would fopen the path and follow a link planted there: it gets our file instead */
    if ((rc = np_output_file_open(&out, path, err)) < 0)
        return rc;
    surface = svg ? cairo_svg_surface_create_for_stream(write_all, &out.fd, WIDTH, HEIGHT)
                  : cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)WIDTH, (int)HEIGHT);
    cr = cairo_create(surface);
    draw(cr, tl);
    cairo_destroy(cr);
    if (!svg)
        status = cairo_surface_write_to_png_stream(surface, write_all, &out.fd);
    else {
        cairo_surface_finish(surface);
        status = cairo_surface_status(surface);
    }
    cairo_surface_destroy(surface);
    if (status != CAIRO_STATUS_SUCCESS) {
        np_output_file_abort(&out);
        return np_err_set(err, -EIO, "cannot write '%s': %s", path, cairo_status_to_string(status));
    }
    if ((rc = np_output_file_commit(&out, err)) < 0)
        return rc;
    return 0;
}
