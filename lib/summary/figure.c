/* Figures as C data (numaplace/figure.h): their one decoder, encoder and printer. */
#include "numaplace/figure.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- figures ---- */

static const char *const plain_names[NP_FIG_NMEMBERS] = {
    [NP_FIG_VALUE] = "value",
    [NP_FIG_UNIT] = "unit",
    [NP_FIG_SOURCE] = "source",
    [NP_FIG_UNAVAILABLE] = "unavailable",
    [NP_FIG_SECONDS] = "seconds",
    [NP_FIG_STEPS] = "steps",
    [NP_FIG_BYTE_SECONDS] = "byte_seconds",
    [NP_FIG_WEIGHTING] = "weighting",
    [NP_FIG_NODES] = "nodes",
    [NP_FIG_INTERVALS] = "intervals",
};

/* The JSON name of member @p m in a figure of @p kind; NULL: a figure of that kind has none. */
static const char *member_name(enum np_figure_kind kind, unsigned m)
{
    switch (kind) {
    case NP_FIGURE_CPI:
        if (m == NP_FIG_VALUE)
            return "mean";
        if (m == NP_FIG_PEAK)
            return "p95";
        if (m == NP_FIG_MEDIAN)
            return "median";
        break;
    case NP_FIGURE_BANDWIDTH:
        if (m == NP_FIG_VALUE)
            return "mean_bytes_per_s";
        if (m == NP_FIG_PEAK)
            return "peak_bytes_per_s";
        if (m == NP_FIG_PER_NODE)
            return "per_node";
        break;
    case NP_FIGURE_RATE:
        if (m == NP_FIG_VALUE)
            return "per_s";
        if (m == NP_FIG_COUNT)
            return "count";
        break;
    case NP_FIGURE_PLAIN:
        break;
    }
    return m < NP_FIG_NMEMBERS ? plain_names[m] : NULL;
}

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
    free(f->unit);
    free(f->source);
    free(f->reason);
    free(f->weighting);
    for (size_t i = 0; i < f->nper_node; i++)
        free(f->per_node[i].node);
    free(f->per_node);
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

int np_figure_copy(struct np_figure *dst, const struct np_figure *src)
{
    bool ok = true;

    *dst = *src;
    dst->unit = np_strdup_or_null(src->unit, &ok);
    dst->source = np_strdup_or_null(src->source, &ok);
    dst->reason = np_strdup_or_null(src->reason, &ok);
    dst->weighting = np_strdup_or_null(src->weighting, &ok);
    dst->per_node = NULL;
    dst->nper_node = 0;
    if (src->nper_node) {
        dst->per_node = calloc(src->nper_node, sizeof(*dst->per_node));
        ok = ok && dst->per_node;
        for (size_t i = 0; dst->per_node && i < src->nper_node; i++) {
            dst->per_node[i] = src->per_node[i];
            dst->per_node[i].node = np_strdup_or_null(src->per_node[i].node, &ok);
            dst->nper_node++;
        }
    }
    if (!ok) {
        np_figure_free(dst);
        return -ENOMEM;
    }
    return 0;
}

static int decode_per_node(const json_t *obj, struct np_figure *f, const char *what,
                           struct np_err *err)
{
    const char *key;
    json_t *v;

    if (!json_is_object(obj))
        return np_err_set(err, -EINVAL, "%s.per_node: expected an object", what);
    f->per_node = calloc(json_object_size(obj) + 1, sizeof(*f->per_node));
    if (!f->per_node)
        return np_err_set(err, -ENOMEM, "%s: out of memory", what);
    json_object_foreach((json_t *)obj, key, v)
    {
        struct np_figure_node *n = &f->per_node[f->nper_node];
        json_error_t jerr;
        if (json_unpack_ex(v, &jerr, JSON_STRICT, "{s:F, s:F}", "mean_bytes_per_s", &n->mean,
                           "peak_bytes_per_s", &n->peak) != 0)
            return np_err_set(err, -EINVAL, "%s.per_node.%s: %s", what, key, jerr.text);
        n->node = strdup(key);
        if (!n->node)
            return np_err_set(err, -ENOMEM, "%s: out of memory", what);
        f->nper_node++;
    }
    return 0;
}

int np_figure_decode(const json_t *obj, enum np_figure_kind kind, struct np_figure *f,
                     const char *what, struct np_err *err)
{
    const char *names[NP_FIG_NMEMBERS];
    const char *unit = NULL, *source = NULL, *reason = NULL, *weighting = NULL;
    json_t *value = NULL, *per_node = NULL;
    json_error_t jerr;
    bool ok = true;
    int rc;

    memset(f, 0, sizeof(*f));
    f->kind = kind;
    for (unsigned m = 0; m < NP_FIG_NMEMBERS; m++)
        names[m] = member_name(kind, m);
    rc = np_keys_scan(obj, names, NP_FIG_NMEMBERS, &f->keys, what, err);
    if (rc)
        return rc;
    /* Every member optional: a trimmed summary keeps some, an unavailable figure has no number.
     * The names are the kind's, so unknown keys were refused above. */
    if (json_unpack_ex((json_t *)obj, &jerr, 0, "{s?o, s?s, s?s, s?s, s?s}", names[NP_FIG_VALUE],
                       &value, "unit", &unit, "source", &source, "unavailable", &reason,
                       "weighting", &weighting) != 0 ||
        json_unpack_ex((json_t *)obj, &jerr, 0, "{s?F, s?I, s?F, s?I, s?I}", "seconds", &f->seconds,
                       "steps", &f->steps, "byte_seconds", &f->byte_seconds, "nodes", &f->nodes,
                       "intervals", &f->intervals) != 0)
        return np_err_set(err, -EINVAL, "%s: %s", what, jerr.text);
    if (names[NP_FIG_PEAK] &&
        json_unpack_ex((json_t *)obj, &jerr, 0, "{s?F}", names[NP_FIG_PEAK], &f->peak) != 0)
        return np_err_set(err, -EINVAL, "%s: %s", what, jerr.text);
    if (names[NP_FIG_MEDIAN] &&
        json_unpack_ex((json_t *)obj, &jerr, 0, "{s?F}", names[NP_FIG_MEDIAN], &f->median) != 0)
        return np_err_set(err, -EINVAL, "%s: %s", what, jerr.text);
    if (names[NP_FIG_COUNT] &&
        json_unpack_ex((json_t *)obj, &jerr, 0, "{s?I}", names[NP_FIG_COUNT], &f->count) != 0)
        return np_err_set(err, -EINVAL, "%s: %s", what, jerr.text);
    if (names[NP_FIG_PER_NODE] &&
        json_unpack_ex((json_t *)obj, &jerr, 0, "{s?o}", names[NP_FIG_PER_NODE], &per_node) != 0)
        return np_err_set(err, -EINVAL, "%s: %s", what, jerr.text);
    if (value) {
        char path[256];
        snprintf(path, sizeof(path), "%s.%s", what, names[NP_FIG_VALUE]);
        if ((rc = np_num_decode(value, false, &f->value, path, err)) != 0)
            return rc;
    }
    f->unit = np_strdup_or_null(unit, &ok);
    f->source = np_strdup_or_null(source, &ok);
    f->reason = np_strdup_or_null(reason, &ok);
    f->weighting = np_strdup_or_null(weighting, &ok);
    if (!ok) {
        np_figure_free(f);
        return np_err_set(err, -ENOMEM, "%s: out of memory", what);
    }
    if (per_node && (rc = decode_per_node(per_node, f, what, err)) != 0) {
        np_figure_free(f);
        return rc;
    }
    return 0;
}

static json_t *per_node_json(const struct np_figure *f)
{
    json_t *obj = json_object();

    for (size_t i = 0; obj && i < f->nper_node; i++)
        json_object_set_new(obj, f->per_node[i].node,
                            json_pack("{s:f, s:f}", "mean_bytes_per_s", f->per_node[i].mean,
                                      "peak_bytes_per_s", f->per_node[i].peak));
    return obj;
}

json_t *np_figure_json(const struct np_figure *f)
{
    json_t *obj = json_object();

    for (unsigned i = 0; obj && i < f->keys.n; i++) {
        const unsigned m = f->keys.k[i];
        const char *name = member_name(f->kind, m);
        json_t *v = NULL;

        switch (m) {
        case NP_FIG_VALUE:
            v = np_num_json(&f->value);
            break;
        case NP_FIG_UNIT:
            v = json_string(f->unit);
            break;
        case NP_FIG_SOURCE:
            v = json_string(f->source);
            break;
        case NP_FIG_UNAVAILABLE:
            v = json_string(f->reason);
            break;
        case NP_FIG_WEIGHTING:
            v = json_string(f->weighting);
            break;
        case NP_FIG_SECONDS:
            v = json_real(f->seconds);
            break;
        case NP_FIG_BYTE_SECONDS:
            v = json_real(f->byte_seconds);
            break;
        case NP_FIG_PEAK:
            v = json_real(f->peak);
            break;
        case NP_FIG_MEDIAN:
            v = json_real(f->median);
            break;
        case NP_FIG_STEPS:
            v = json_integer(f->steps);
            break;
        case NP_FIG_NODES:
            v = json_integer(f->nodes);
            break;
        case NP_FIG_INTERVALS:
            v = json_integer(f->intervals);
            break;
        case NP_FIG_COUNT:
            v = json_integer(f->count);
            break;
        case NP_FIG_PER_NODE:
            v = per_node_json(f);
            break;
        default:
            break;
        }
        if (!name || !v || json_object_set_new(obj, name, v) != 0) {
            json_decref(obj);
            return NULL;
        }
    }
    return obj;
}

int np_figure_print(FILE *out, const struct np_figure *f, const struct np_figure_style *st)
{
    const char *unit = st->unit ? st->unit : "";

    if (np_figure_available(f)) {
        const double v = np_num_value(&f->value) * st->scale;
        if (st->conv == 'f')
            fprintf(out, "%-*.*f%s", st->width, st->precision, v, unit);
        else
            fprintf(out, "%-*.*g%s", st->width, st->precision, v, unit);
        return 1;
    }
    if (f && np_keys_has(&f->keys, NP_FIG_UNAVAILABLE) && f->reason) {
        if (st->brief)
            fprintf(out, "%-*s", st->width, "unavailable");
        else
            fprintf(out, "unavailable (%s)", f->reason);
        return 0;
    }
    if (st->none)
        fprintf(out, "%s", st->none);
    return -1;
}
