/* Figures as C data (numaplace/figure.h): their one decoder, encoder and printer. */
#include "numaplace/figure.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

/* ---- figures ---- */

/* A figure's members, named as its kind names them (NULL: a figure of that kind has none); every
 * kind holds the same fields, so any table frees any figure. */
#define FIGURE_FIELDS(value_name, peak_name, median_name, count_name, per_node_name)               \
    {                                                                                              \
        [NP_FIG_VALUE] = {.name = (value_name),                                                    \
                          .type = NP_F_NUM,                                                        \
                          .off = offsetof(struct np_figure, value)},                               \
        [NP_FIG_UNIT] = NP_FIELD(struct np_figure, unit, "unit", NP_F_STR),                        \
        [NP_FIG_SOURCE] = NP_FIELD(struct np_figure, source, "source", NP_F_STR),                  \
        [NP_FIG_UNAVAILABLE] = NP_FIELD(struct np_figure, reason, "unavailable", NP_F_STR),        \
        [NP_FIG_SECONDS] = NP_FIELD(struct np_figure, seconds, "seconds", NP_F_REAL),              \
        [NP_FIG_STEPS] = NP_FIELD(struct np_figure, steps, "steps", NP_F_INT),                     \
        [NP_FIG_BYTE_SECONDS] =                                                                    \
            NP_FIELD(struct np_figure, byte_seconds, "byte_seconds", NP_F_REAL),                   \
        [NP_FIG_WEIGHTING] = NP_FIELD(struct np_figure, weighting, "weighting", NP_F_STR),         \
        [NP_FIG_NODES] = NP_FIELD(struct np_figure, nodes, "nodes", NP_F_INT),                     \
        [NP_FIG_PEAK] = NP_FIELD(struct np_figure, peak, peak_name, NP_F_REAL),                    \
        [NP_FIG_INTERVALS] = NP_FIELD(struct np_figure, intervals, "intervals", NP_F_INT),         \
        [NP_FIG_MEDIAN] = NP_FIELD(struct np_figure, median, median_name, NP_F_REAL),              \
        [NP_FIG_COUNT] = NP_FIELD(struct np_figure, count, count_name, NP_F_INT),                  \
        [NP_FIG_PER_NODE] = {                                                                      \
            .name = (per_node_name),                                                               \
            AS_OBJECT(per_node, nper_node, &node_elem, struct np_figure_node, node)},              \
    }

/* A report's bandwidth of one NUMA node: both members always. */
static const struct np_field node_fields[] = {
    {.name = "mean_bytes_per_s",
     .type = NP_F_REAL,
     .required = true,
     .off = offsetof(struct np_figure_node, mean)},
    {.name = "peak_bytes_per_s",
     .type = NP_F_REAL,
     .required = true,
     .off = offsetof(struct np_figure_node, peak)},
};
static const struct np_record node_rec = {.fields = node_fields,
                                          .n = sizeof(node_fields) / sizeof(node_fields[0]),
                                          .keys_off = offsetof(struct np_figure_node, keys),
                                          .present = np_rec_required_or_set};
static const struct np_field node_elem = {.type = NP_F_RECORD, .rec = &node_rec};

#define T struct np_figure
static const struct np_field plain_fields[] = FIGURE_FIELDS("value", NULL, NULL, NULL, NULL);
static const struct np_field cpi_fields[] = FIGURE_FIELDS("mean", "p95", "median", NULL, NULL);
static const struct np_field bandwidth_fields[] =
    FIGURE_FIELDS("mean_bytes_per_s", "peak_bytes_per_s", NULL, NULL, "per_node");
static const struct np_field rate_fields[] = FIGURE_FIELDS("per_s", NULL, NULL, "count", NULL);
#undef T

/* by enum np_figure_kind */
static const struct np_record figure_recs[] = {
    NP_RECORD(struct np_figure, plain_fields),
    NP_RECORD(struct np_figure, cpi_fields),
    NP_RECORD(struct np_figure, bandwidth_fields),
    NP_RECORD(struct np_figure, rate_fields),
};

bool np_figure_available(const struct np_figure *f)
{
    return f && np_keys_has(&f->keys, NP_FIG_VALUE) && !np_keys_has(&f->keys, NP_FIG_UNAVAILABLE);
}

double np_figure_value(const struct np_figure *f)
{
    return np_figure_available(f) ? np_num_value(&f->value) : 0;
}

void np_figure_free(struct np_figure *f)
{
    if (!f)
        return;
    np_rec_free(&figure_recs[NP_FIGURE_PLAIN], f);
    memset(f, 0, sizeof(*f));
}

int np_figure_set_value(struct np_figure *f, enum np_figure_kind kind, struct np_num value,
                        const char *unit, const char *source)
{
    bool ok = true;

    np_figure_free(f);
    f->kind = kind;
    f->value = value;
    np_keys_set(&f->keys, NP_FIG_VALUE);
    if (unit) {
        f->unit = np_strdup_or_null(unit, &ok);
        np_keys_set(&f->keys, NP_FIG_UNIT);
    }
    if (source) {
        f->source = np_strdup_or_null(source, &ok);
        np_keys_set(&f->keys, NP_FIG_SOURCE);
    }
    return ok ? 0 : -ENOMEM;
}

int np_figure_set_unavailable(struct np_figure *f, const char *why, const char *source)
{
    bool ok = true;

    np_figure_free(f);
    f->reason = np_strdup_or_null(why && *why ? why : "not measured", &ok);
    np_keys_set(&f->keys, NP_FIG_UNAVAILABLE);
    if (source) {
        f->source = np_strdup_or_null(source, &ok);
        np_keys_set(&f->keys, NP_FIG_SOURCE);
    }
    return ok ? 0 : -ENOMEM;
}

int np_figure_decode(const json_t *obj, enum np_figure_kind kind, struct np_figure *f,
                     const char *what, struct np_err *err)
{
    int rc;

    memset(f, 0, sizeof(*f));
    if ((unsigned)kind >= sizeof(figure_recs) / sizeof(figure_recs[0]))
        return np_err_set(err, -EINVAL, "%s: not a kind of figure", what);
    f->kind = kind;
    /* Every member optional: a trimmed summary keeps some, an unavailable figure has no number */
    rc = np_rec_decode(&figure_recs[kind], obj, f, what, err);
    if (rc)
        np_figure_free(f);
    return rc;
}

json_t *np_figure_json(const struct np_figure *f)
{
    return (unsigned)f->kind < sizeof(figure_recs) / sizeof(figure_recs[0])
               ? np_rec_encode(&figure_recs[f->kind], f)
               : NULL;
}

#define KIND_DECODE(fn, kind)                                                                      \
    static int fn(const json_t *j, void *field, const char *what, struct np_err *err)              \
    {                                                                                              \
        return np_figure_decode(j, kind, field, what, err);                                        \
    }
KIND_DECODE(plain_decode, NP_FIGURE_PLAIN)
KIND_DECODE(cpi_decode, NP_FIGURE_CPI)
KIND_DECODE(bandwidth_decode, NP_FIGURE_BANDWIDTH)
KIND_DECODE(rate_decode, NP_FIGURE_RATE)

static json_t *figure_encode(const void *field)
{
    return np_figure_json(field);
}

static void figure_free(void *field)
{
    np_figure_free(field);
}

const struct np_field_ops np_figure_ops[4] = {
    [NP_FIGURE_PLAIN] = {plain_decode, figure_encode, figure_free},
    [NP_FIGURE_CPI] = {cpi_decode, figure_encode, figure_free},
    [NP_FIGURE_BANDWIDTH] = {bandwidth_decode, figure_encode, figure_free},
    [NP_FIGURE_RATE] = {rate_decode, figure_encode, figure_free},
};

int np_figure_check(const json_t *fig, struct np_err *err)
{
    struct np_figure f;
    const int rc = np_figure_decode(fig, NP_FIGURE_PLAIN, &f, "figure", err);

    np_figure_free(&f);
    return rc;
}

int np_figure_print(FILE *out, const json_t *f, const struct np_figure_style *st)
{
    const char *unit = st->unit ? st->unit : "",
               *why = json_string_value(json_object_get(f, "unavailable"));
    double v;

    if (!json_object_get(f, "unavailable") && json_is_number(json_object_get(f, "value"))) {
        v = json_number_value(json_object_get(f, "value")) * st->scale;
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
