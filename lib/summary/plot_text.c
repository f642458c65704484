/* The timeline picture's text, wrapping and time axis (plot_text.h). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "plot_text.h"

double plot_text_width(struct plot_pen *p, double size, const char *s)
{
    cairo_text_extents_t e;

    cairo_set_font_size(p->cr, size);
    cairo_text_extents(p->cr, s, &e);
    return e.x_advance;
}

double plot_text(struct plot_pen *p, double x, double y, double size, double align, const char *s)
{
    cairo_text_extents_t e;

    cairo_set_font_size(p->cr, size);
    cairo_text_extents(p->cr, s, &e);
    x -= align * e.x_advance;
    cairo_move_to(p->cr, x, y);
    cairo_show_text(p->cr, s);
    if (p->texts && p->n < p->max) {
        struct plot_box *t = &p->texts[p->n];
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

int plot_wrapped(struct plot_pen *p, double x, double y, double width, double size, int max_lines,
                 const char *s)
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

double plot_nice_step(double max, int n)
{
    const double raw = max > 0 ? max / n : 1;
    const double power = pow(10, floor(log10(raw)));
    const double f = raw / power;

    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power;
}

double plot_x_of(double t0, double t1, double t)
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

void plot_time_axis(struct plot_pen *p, double t0, double t1, const char *start, const char *end,
                    double top, double bottom)
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
