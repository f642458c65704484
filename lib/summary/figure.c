/* The one figure printer (numaplace/figure.h). */
#include "numaplace/figure.h"

int np_figure_print(FILE *out, const json_t *f, const struct np_figure_style *st)
{
    const char *unit = st->unit ? st->unit : "",
               *why = json_string_value(json_object_get(f, "unavailable"));

    if (!json_object_get(f, "unavailable") && json_is_number(json_object_get(f, "value"))) {
        const double v = json_number_value(json_object_get(f, "value")) * st->scale;
        if (st->conv == 'f')
            fprintf(out, "%-*.*f%s", st->width, st->precision, v, unit);
        else
            fprintf(out, "%-*.*g%s", st->width, st->precision, v, unit);
        return 1;
    }
    if (why) {
        if (st->brief)
            fprintf(out, "%-*s", st->width, "unavailable");
        else
            fprintf(out, "unavailable (%s)", why);
        return 0;
    }
    if (st->none)
        fprintf(out, "%s", st->none);
    return -1;
}
