/* A job's timeline drawn with cairo (see numaplace/summary.h), and a summary node's drawn so
 * (docs/summary-schema.md, "Plot"). Every string is drawn through plot_text(), which records
 * where its ink went, so a check can see that no text leaves the picture. */
#include <unistd.h>

#include <cairo-svg.h>
#include <cairo.h>

#include "numaplace/output_file.h"
#include "summary_priv.h"

#define PLOT_WIDTH  1000.0
#define PLOT_HEIGHT 720.0
#define PLOT_LEFT   84.0  /* room for the scales */
#define PLOT_RIGHT  190.0 /* room for the legend */
#define PLOT_X1     (PLOT_WIDTH - PLOT_RIGHT)

/* Where the drawing goes, and the record of its strings (texts NULL: none kept). */
struct plot_pen {
    cairo_t *cr;
    struct np_plot_text *texts;
    size_t max, n;
};

/* ---- text and the time axis: they know nothing of a timeline ---- */

static double plot_text_width(struct plot_pen *p, double size, const char *s)
{
    cairo_text_extents_t e;

    cairo_set_font_size(p->cr, size);
    cairo_text_extents(p->cr, s, &e);
    return e.x_advance;
}

/* Draw @p s with its reference point at (x, y): @p align 0 left, 0.5 centre, 1 right of x.
 * @return its advance width */
static double plot_text(struct plot_pen *p, double x, double y, double size, double align,
                        const char *s)
{
    cairo_text_extents_t e;

    cairo_set_font_size(p->cr, size);
    cairo_text_extents(p->cr, s, &e);
    x -= align * e.x_advance;
    cairo_move_to(p->cr, x, y);
    cairo_show_text(p->cr, s);
    if (p->texts && p->n < p->max) {
        struct np_plot_text *t = &p->texts[p->n];
        t->x0 = x + e.x_bearing;
        t->y0 = y + e.y_bearing;
        t->x1 = t->x0 + e.width;
        t->y1 = t->y0 + e.height;
        snprintf(t->text, sizeof(t->text), "%s", s);
    }
    p->n++;
    return e.x_advance;
}

/* The longest prefix of @p s (at most @p len bytes) that fits @p width, preferring to end at a
 * space; at least one character. */
static size_t fitting(struct plot_pen *p, double size, double width, const char *s, size_t len)
{
    char line[512];
    size_t fit = 0, space = 0;

    for (size_t k = 1; k <= len && k < sizeof(line); k++) {
        if ((s[k - 1] & 0xc0) == 0x80 && k < len) /* never cut inside a UTF-8 character */
            continue;
        memcpy(line, s, k);
        line[k] = '\0';
        if (plot_text_width(p, size, line) > width)
            break;
        fit = k;
        if (k < len && s[k] == ' ')
            space = k;
    }
    if (fit == len)
        return fit;
    return space ? space : (fit ? fit : 1);
}

/* @p s wrapped at spaces (a word wider than @p width cut) into at most @p max_lines lines from
 * baseline @p y, the last ending in "..." when the text goes on. @return the lines drawn */
static int plot_wrapped(struct plot_pen *p, double x, double y, double width, double size,
                        int max_lines, const char *s)
{
    int lines = 0;

    while (*s && lines < max_lines) {
        const size_t len = strlen(s);
        size_t n = fitting(p, size, width, s, len);
        char line[512];

        if (lines + 1 == max_lines && n < len) { /* the last line: cut, with "..." */
            char probe[520];
            n = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
            while (n > 1) {
                snprintf(probe, sizeof(probe), "%.*s...", (int)n, s);
                if (plot_text_width(p, size, probe) <= width)
                    break;
                n--;
            }
            plot_text(p, x, y, size, 0, probe);
            return lines + 1;
        }
        snprintf(line, sizeof(line), "%.*s", (int)n, s);
        plot_text(p, x, y, size, 0, line);
        lines++;
        y += size * 1.3;
        s += n;
        while (*s == ' ')
            s++;
    }
    return lines;
}

/* Ticks for 0..@p max: about @p n steps of 1, 2 or 5 times a power of ten. @return the step */
static double plot_nice_step(double max, int n)
{
    const double raw = max > 0 ? max / n : 1;
    const double power = pow(10, floor(log10(raw)));
    const double f = raw / power;

    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power;
}

static double plot_x_of(double t0, double t1, double t)
{
    const double span = t1 > t0 ? t1 - t0 : 1.0;

    return PLOT_LEFT + (t - t0) / span * (PLOT_X1 - PLOT_LEFT);
}

/* Steps a time axis may take, in its unit: seconds and minutes by 1, 2, 5, 10, 15, 30; hours by
 * 1, 2, 3, 6, 12, 24 (a day reads in quarters, not tenths). */
static double time_step(double span, int n, bool hours)
{
    static const double sixty[] = {1, 2, 5, 10, 15, 20, 30, 60};
    static const double day[] = {1, 2, 3, 6, 12, 24, 48, 96, 168};
    const double *steps = hours ? day : sixty;
    const size_t count = hours ? sizeof(day) / sizeof(day[0]) : sizeof(sixty) / sizeof(sixty[0]);

    for (size_t i = 0; i < count; i++)
        if (span / steps[i] <= n)
            return steps[i];
    return plot_nice_step(span, n);
}

/* The time axis under the panels from @p top to @p bottom for times @p t0 to @p t1: elapsed ticks
 * in s, min or h by the span, grid lines across, and the wall-clock times @p start and @p end
 * (NULL: not shown) at its ends. */
static void plot_time_axis(struct plot_pen *p, double t0, double t1, const char *start,
                           const char *end, double top, double bottom)
{
    const double span = t1 > t0 ? t1 - t0 : 1.0;
    /* seconds up to 5 min, minutes up to 5 h, hours beyond */
    const double unit = span <= 300 ? 1 : span <= 5 * 3600 ? 60 : 3600;
    const char *name = unit == 1 ? "s" : unit == 60 ? "min" : "h";
    const double step = time_step(span / unit, 8, unit == 3600) * unit;
    char label[64];

    for (int k = 0; k * step <= span + 1e-9; k++) {
        const double e = k * step, x = plot_x_of(t0, t1, t0 + e);
        cairo_set_source_rgba(p->cr, 0, 0, 0, 0.12);
        cairo_set_line_width(p->cr, 1.0);
        cairo_move_to(p->cr, x, top);
        cairo_line_to(p->cr, x, bottom + 4);
        cairo_stroke(p->cr);
        cairo_set_source_rgb(p->cr, 0.15, 0.15, 0.15);
        snprintf(label, sizeof(label), "%g", e / unit);
        plot_text(p, x, bottom + 16, 10, 0.5, label);
    }
    snprintf(label, sizeof(label), "elapsed (%s), %g %s in all", name, span / unit, name);
    plot_text(p, (PLOT_LEFT + PLOT_X1) / 2, bottom + 32, 11, 0.5, label);
    if (start) {
        snprintf(label, sizeof(label), "start %.50s", start);
        plot_text(p, PLOT_LEFT, bottom + 50, 10, 0, label);
    }
    if (end) {
        snprintf(label, sizeof(label), "end %.50s", end);
        plot_text(p, PLOT_X1, bottom + 50, 10, 1, label);
    }
}

/* ---- the panels ---- */

/* Colour-blind-safe palette (Okabe-Ito) for up to eight nodes, each named in the legend. */
static const double palette[8][3] = {
    {0.90, 0.62, 0.00}, {0.34, 0.71, 0.91}, {0.00, 0.62, 0.45}, {0.94, 0.89, 0.26},
    {0.00, 0.45, 0.70}, {0.84, 0.37, 0.00}, {0.80, 0.47, 0.65}, {0.40, 0.40, 0.40},
};
/* Past eight nodes, colour says the distance the summary knows: local (orange) or not (blue),
 * in two alternating shades so neighbouring bands stay apart. */
static const double local_shades[2][3] = {{0.90, 0.62, 0.00}, {0.84, 0.45, 0.05}};
static const double other_shades[2][3] = {{0.34, 0.62, 0.85}, {0.18, 0.40, 0.65}};
#define MANY_NODES 8

struct panel {
    double top, height;
    double ymax;
    const char *label;
};

static bool is_local(const struct np_timeline *tl, unsigned node)
{
    for (size_t i = 0; tl->local_nodes && i < tl->nlocal_nodes; i++)
        if (tl->local_nodes[i] == node)
            return true;
    return false;
}

static const double *node_colour(const struct np_timeline *tl, unsigned n)
{
    if (tl->nnodes <= MANY_NODES)
        return palette[n % 8];
    return is_local(tl, n) ? local_shades[n % 2] : other_shades[n % 2];
}

static double x_at(const struct np_timeline *tl, double t)
{
    return plot_x_of(tl->points[0].t, tl->points[tl->npoints - 1].t, t);
}

static double y_of(const struct panel *p, double v)
{
    return p->top + p->height - (p->ymax > 0 ? v / p->ymax : 0) * p->height;
}

/* The panel's box and label; its scale (ticks, grid) only where there is data to read. */
static void frame(struct plot_pen *pen, const struct panel *p, const char *unit, bool scaled)
{
    cairo_t *cr = pen->cr;

    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 1.0);
    cairo_rectangle(cr, PLOT_LEFT, p->top, PLOT_X1 - PLOT_LEFT, p->height);
    cairo_stroke(cr);
    plot_text(pen, PLOT_LEFT, p->top - 5, 12, 0, p->label);
    if (!scaled)
        return;
    const double step = plot_nice_step(p->ymax, p->height > 120 ? 5 : 2);
    for (int k = 0; k * step <= p->ymax * 1.0001; k++) {
        const double v = k * step, y = y_of(p, v);
        char tick[48];
        if (v > 0) {
            cairo_set_source_rgba(cr, 0, 0, 0, 0.1);
            cairo_move_to(cr, PLOT_LEFT, y);
            cairo_line_to(cr, PLOT_X1, y);
            cairo_stroke(cr);
        }
        cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
        snprintf(tick, sizeof(tick), "%g%s%s", v, unit[0] ? " " : "", unit);
        plot_text(pen, PLOT_LEFT - 6, y + 4, 10, 1, tick);
    }
}

static void unavailable(struct plot_pen *pen, const struct panel *p, const char *what,
                        const char *why)
{
    char line[512];
    const double size = 12;
    const int lines = (int)((p->height - 8) / (size * 1.3));

    snprintf(line, sizeof(line), "%s unavailable: %s", what, why ? why : "not measured");
    cairo_set_source_rgb(pen->cr, 0.55, 0.1, 0.1);
    plot_wrapped(pen, PLOT_LEFT + 10, p->top + 6 + size, PLOT_X1 - PLOT_LEFT - 20, size,
                 lines > 0 ? lines : 1, line);
}

/* A point's value in a line panel; false where it was not measured (a gap). */
typedef bool (*value_fn)(const struct np_timeline *tl, size_t i, double *v);

static bool bandwidth_of(const struct np_timeline *tl, size_t i, double *v)
{
    *v = tl->points[i].bandwidth / 1e6;
    return tl->points[i].bandwidth_ok;
}

static bool cpi_of(const struct np_timeline *tl, size_t i, double *v)
{
    *v = tl->points[i].cpi;
    return tl->points[i].cpi_ok;
}

static bool local_share_of(const struct np_timeline *tl, size_t i, double *v)
{
    double local = 0, total = 0;

    for (unsigned n = 0; n < tl->nnodes; n++) {
        total += (double)tl->points[i].bytes_on_node[n];
        if (is_local(tl, n))
            local += (double)tl->points[i].bytes_on_node[n];
    }
    *v = total > 0 ? 100.0 * local / total : 0;
    return tl->local_nodes && total > 0; /* without the local nodes, no share: unavailable */
}

static void draw_series(cairo_t *cr, const struct np_timeline *tl, const struct panel *p,
                        value_fn of)
{
    bool pen = false;
    double v;

    cairo_set_source_rgb(cr, 0.0, 0.45, 0.70);
    cairo_set_line_width(cr, 1.5);
    for (size_t i = 0; i < tl->npoints; i++) {
        if (!of(tl, i, &v)) {
            pen = false;
            continue;
        }
        if (pen)
            cairo_line_to(cr, x_at(tl, tl->points[i].t), y_of(p, v));
        else
            cairo_move_to(cr, x_at(tl, tl->points[i].t), y_of(p, v));
        pen = true;
    }
    cairo_stroke(cr);
}

/* A line panel: scaled to its data, or "unavailable" and why. */
static void line_panel(struct plot_pen *pen, const struct np_timeline *tl, struct panel *p,
                       value_fn of, const char *unit, const char *why)
{
    bool any = false;
    double v;

    for (size_t i = 0; i < tl->npoints; i++)
        if (of(tl, i, &v)) {
            any = true;
            p->ymax = fmax(p->ymax, v);
        }
    p->ymax = p->ymax > 0 ? p->ymax * 1.1 : 1;
    if (of == local_share_of)
        p->ymax = 100;
    frame(pen, p, unit, any);
    if (any)
        draw_series(pen->cr, tl, p, of);
    else
        unavailable(pen, p, p->label, why);
}

/* "0-3,7": @p nodes (ascending) as ranges. */
static void ranges(const unsigned *nodes, size_t n, char *out, size_t size)
{
    size_t len = 0;

    out[0] = '\0';
    for (size_t i = 0; i < n && len < size; i++) {
        size_t j = i;
        while (j + 1 < n && nodes[j + 1] == nodes[j] + 1)
            j++;
        len += (size_t)snprintf(out + len, size - len, "%s%u", i ? "," : "", nodes[i]);
        if (j > i && len < size)
            len += (size_t)snprintf(out + len, size - len, "-%u", nodes[j]);
        i = j;
    }
}

static void swatch(struct plot_pen *pen, double y, const double *rgb)
{
    cairo_set_source_rgb(pen->cr, rgb[0], rgb[1], rgb[2]);
    cairo_rectangle(pen->cr, PLOT_X1 + 12, y - 10, 12, 12);
    cairo_fill(pen->cr);
    cairo_set_source_rgb(pen->cr, 0, 0, 0);
}

/* The legend: each node by name up to eight; past that, local and other nodes as groups, and
 * the three holding the most memory at the end. */
static double legend(struct plot_pen *pen, const struct np_timeline *tl, double y)
{
    const double x = PLOT_X1 + 30, width = PLOT_WIDTH - x - 6;
    unsigned local[NP_PLOT_MAX_NODES], other[NP_PLOT_MAX_NODES];
    size_t nl = 0, no = 0;
    char line[300], list[256];

    if (tl->nnodes <= MANY_NODES) {
        for (unsigned n = 0; n < tl->nnodes; n++, y += 18) {
            swatch(pen, y, node_colour(tl, n));
            snprintf(line, sizeof(line), "node %u%s", n, is_local(tl, n) ? " (local)" : "");
            plot_text(pen, x, y, 11, 0, line);
        }
        return y;
    }
    for (unsigned n = 0; n < tl->nnodes; n++)
        if (is_local(tl, n))
            local[nl++] = n;
        else
            other[no++] = n;
    plot_text(pen, PLOT_X1 + 12, y, 11, 0, "by distance:");
    y += 18;
    swatch(pen, y, local_shades[0]);
    ranges(local, nl, list, sizeof(list));
    snprintf(line, sizeof(line), "local: %s", nl ? list : "not known");
    y += 14 * plot_wrapped(pen, x, y, width, 11, 3, line) + 6;
    swatch(pen, y, other_shades[0]);
    ranges(other, no, list, sizeof(list));
    snprintf(line, sizeof(line), "other %zu: %s", no, list);
    y += 14 * plot_wrapped(pen, x, y, width, 11, 3, line) + 6;
    const struct np_timeline_point *last = &tl->points[tl->npoints - 1];
    bool taken[NP_PLOT_MAX_NODES] = {false};
    plot_text(pen, PLOT_X1 + 12, y, 11, 0, "most memory at the end:");
    y += 16;
    for (int k = 0; k < 3; k++, y += 16) { /* the three largest, by selection */
        unsigned best = 0;
        for (unsigned n = 1; n < tl->nnodes; n++)
            if (taken[best] || (!taken[n] && last->bytes_on_node[n] > last->bytes_on_node[best]))
                best = n;
        taken[best] = true;
        swatch(pen, y, node_colour(tl, best));
        snprintf(line, sizeof(line), "node %u: %.4g MiB", best,
                 (double)last->bytes_on_node[best] / (1 << 20));
        plot_text(pen, x, y, 10, 0, line);
    }
    return y;
}

/* Migrations: a dashed line across every panel; its label in the memory panel, in one of three
 * rows where it does not cover another, else left out (counted in the legend). */
static void migrations(struct plot_pen *pen, const struct np_timeline *tl, double top,
                       double bottom, double legend_y)
{
    const double dash[] = {4.0, 3.0};
    double row_end[3] = {0, 0, 0};
    size_t unlabelled = 0;
    char line[96];

    for (size_t e = 0; e < tl->nevents; e++) {
        const double x = x_at(tl, tl->events[e].t);
        const double w = plot_text_width(pen, 10, tl->events[e].label);
        const bool left = x + 4 + w > PLOT_X1 - 2; /* label to the line's left near the end */
        const double x0 = left ? x - 4 - w : x + 4;
        int row = 0;

        cairo_set_source_rgb(pen->cr, 0.8, 0.1, 0.1);
        cairo_set_dash(pen->cr, dash, 2, 0);
        cairo_move_to(pen->cr, x, top);
        cairo_line_to(pen->cr, x, bottom);
        cairo_stroke(pen->cr);
        cairo_set_dash(pen->cr, NULL, 0, 0);
        cairo_move_to(pen->cr, x - 5, top - 1);
        cairo_line_to(pen->cr, x + 5, top - 1);
        cairo_line_to(pen->cr, x, top + 7);
        cairo_close_path(pen->cr);
        cairo_fill(pen->cr);
        while (row < 3 && x0 < row_end[row] + 6)
            row++;
        if (row == 3 || x0 < PLOT_LEFT + 2) {
            unlabelled++;
            continue;
        }
        cairo_set_source_rgba(pen->cr, 1, 1, 1, 0.8);
        cairo_rectangle(pen->cr, x0 - 1, top + 10 + 14.0 * row, w + 2, 13);
        cairo_fill(pen->cr);
        cairo_set_source_rgb(pen->cr, 0.6, 0.05, 0.05);
        plot_text(pen, x0, top + 20 + 14.0 * row, 10, 0, tl->events[e].label);
        row_end[row] = x0 + w;
    }
    if (!tl->nevents)
        return;
    cairo_set_source_rgb(pen->cr, 0.8, 0.1, 0.1);
    cairo_rectangle(pen->cr, PLOT_X1 + 12, legend_y - 6, 12, 2);
    cairo_fill(pen->cr);
    cairo_set_source_rgb(pen->cr, 0, 0, 0);
    snprintf(line, sizeof(line), "%zu migration%s", tl->nevents, tl->nevents == 1 ? "" : "s");
    plot_text(pen, PLOT_X1 + 30, legend_y, 11, 0, line);
    if (unlabelled) {
        snprintf(line, sizeof(line), "(%zu not labelled: no room)", unlabelled);
        plot_wrapped(pen, PLOT_X1 + 30, legend_y + 14, PLOT_WIDTH - PLOT_X1 - 36, 10, 2, line);
    }
}

static void memory(struct plot_pen *pen, const struct np_timeline *tl, struct panel *mem)
{
    cairo_t *cr = pen->cr;
    double scale = 1 << 20;
    const char *unit = "MiB";

    for (size_t i = 0; i < tl->npoints; i++) {
        double total = 0;
        for (unsigned n = 0; n < tl->nnodes; n++)
            total += (double)tl->points[i].bytes_on_node[n];
        mem->ymax = fmax(mem->ymax, total);
    }
    mem->ymax = mem->ymax > 0 ? mem->ymax * 1.05 : scale;
    if (mem->ymax >= 4.0 * (1 << 30)) {
        scale = 1 << 30;
        unit = "GiB";
    }
    /* Stacked areas, node 0 at the bottom. */
    for (unsigned n = tl->nnodes; n-- > 0;) {
        const double *rgb = node_colour(tl, n);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_move_to(cr, x_at(tl, tl->points[0].t), y_of(mem, 0));
        for (size_t i = 0; i < tl->npoints; i++) {
            double upto = 0;
            for (unsigned k = 0; k <= n; k++)
                upto += (double)tl->points[i].bytes_on_node[k];
            cairo_line_to(cr, x_at(tl, tl->points[i].t), y_of(mem, upto));
        }
        cairo_line_to(cr, x_at(tl, tl->points[tl->npoints - 1].t), y_of(mem, 0));
        cairo_close_path(cr);
        cairo_fill(cr);
    }
    /* the scale in MiB or GiB: the same panel, its top in that unit */
    frame(pen, &(struct panel){mem->top, mem->height, mem->ymax / scale, mem->label}, unit, true);
}

static void draw(struct plot_pen *pen, const struct np_timeline *tl)
{
    struct panel mem = {84, 250, 0, "memory per NUMA node"};
    struct panel share = {362, 70, 0, "local share (%)"};
    struct panel bw = {460, 80, 0, "bandwidth (MB/s)"};
    struct panel cpi = {568, 70, 0, "CPI"};
    cairo_t *cr = pen->cr;
    double y;

    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_source_rgb(cr, 0, 0, 0);
    plot_wrapped(pen, 16, 24, PLOT_WIDTH - 32, 16, 2, tl->title ? tl->title : "numaplace timeline");

    memory(pen, tl, &mem);
    line_panel(pen, tl, &share, local_share_of, "",
               "the NUMA nodes of the step's CPUs are not known");
    line_panel(pen, tl, &bw, bandwidth_of, "", tl->bandwidth_note);
    line_panel(pen, tl, &cpi, cpi_of, "", tl->cpi_note);
    plot_time_axis(pen, tl->points[0].t, tl->points[tl->npoints - 1].t, tl->start, tl->end, mem.top,
                   cpi.top + cpi.height);
    cairo_set_source_rgb(cr, 0, 0, 0);
    y = legend(pen, tl, mem.top + 12);
    migrations(pen, tl, mem.top, cpi.top + cpi.height, y + 10);
}

static int check(const struct np_timeline *tl, struct np_err *err)
{
    if (!tl || tl->npoints == 0)
        return np_err_set(err, -EINVAL, "no samples to plot");
    if (tl->nnodes == 0 || tl->nnodes > NP_PLOT_MAX_NODES)
        return np_err_set(err, -EINVAL, "cannot plot %u NUMA nodes (1 to %d)", tl->nnodes,
                          NP_PLOT_MAX_NODES);
    return 0;
}

int np_plot_timeline_texts(const struct np_timeline *tl, struct np_plot_text *texts, size_t max,
                           size_t *ntexts, double *width, double *height, struct np_err *err)
{
    cairo_surface_t *surface;
    struct plot_pen pen = {.texts = texts, .max = max}; /* texts NULL or max 0: none kept */
    int rc = check(tl, err);

    if (rc)
        return rc;
    surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)PLOT_WIDTH, (int)PLOT_HEIGHT);
    pen.cr = cairo_create(surface);
    draw(&pen, tl);
    cairo_destroy(pen.cr);
    cairo_surface_destroy(surface);
    *ntexts = pen.n;
    *width = PLOT_WIDTH;
    *height = PLOT_HEIGHT;
    return 0;
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
    struct plot_pen pen = {0};
    cairo_status_t status;
    int rc;

    if (!dot || (!svg && strcmp(dot, ".png") != 0))
        return np_err_set(err, -EINVAL,
                          "cannot tell the picture format of '%s': accepted extensions are .png "
                          "and .svg",
                          path ? path : "(null)");
    if ((rc = check(tl, err)) != 0)
        return rc;
    /* cairo would fopen the path and follow a link planted there: it gets our file instead */
    if ((rc = np_output_file_open(&out, path, err)) < 0)
        return rc;
    surface =
        svg ? cairo_svg_surface_create_for_stream(write_all, &out.fd, PLOT_WIDTH, PLOT_HEIGHT)
            : cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)PLOT_WIDTH, (int)PLOT_HEIGHT);
    pen.cr = cairo_create(surface);
    draw(&pen, tl);
    cairo_destroy(pen.cr);
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
    rc = np_output_file_commit(&out, err);
    return rc < 0 ? rc : 0;
}

/* ---- a summary node's timeline ---- */

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
    const json_t *n, *tl, *events, *step, *st;
    struct np_timeline_point *pts = NULL;
    struct np_timeline_event *evs = NULL;
    struct np_timeline timeline = {0};
    unsigned local[NP_PLOT_MAX_NODES], nnodes = 0;
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
    rc = build_points(tl, name, pts, npoints, &nnodes, err);
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
    step = jfind(json_object_get(n, "steps"), "step", tl_step);
    json_array_foreach(json_object_get(step, "local_nodes"), i, st)
    {
        const double v = json_number_value(st);
        if (nlocal < NP_PLOT_MAX_NODES && v >= 0 && v < nnodes)
            local[nlocal++] = (unsigned)v;
    }
    snprintf(title, sizeof(title), "job %lld on %s, step %s", (long long)jint(s, "job_id"), name,
             tl_step ? tl_step : "?");
    timeline.title = title;
    timeline.nnodes = nnodes;
    timeline.points = pts;
    timeline.npoints = npoints;
    timeline.events = evs;
    timeline.nevents = nevents;
    timeline.bandwidth_note = jstr(tl, "bandwidth_note");
    timeline.cpi_note = jstr(tl, "cpi_note");
    timeline.local_nodes = nlocal ? local : NULL;
    timeline.nlocal_nodes = nlocal;
    timeline.start = jstr(step, "start");
    timeline.end = jstr(step, "end");
    if (!rc)
        rc = np_plot_timeline(&timeline, path, err);
    free(pts);
    free(evs);
    return rc;
}
