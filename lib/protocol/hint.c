/* The advise reply as the plugin reads it (declared in numaplace/protocol.h): every member
 * checked, since a reply is input like any other. */
#include "numaplace/protocol.h"
#include "numaplace/names.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* The bandwidth sources a node may name (numaplace/migration.h's, by name: this layer does not
 * link the migration module). */
static const char *const sources[] = {"uncore", "misses", "proxy", "unavailable"};

static int decode_node(json_t *item, size_t index, struct np_proto_hint *out, struct np_err *err)
{
    json_error_t jerr;
    json_int_t node = -1;
    const char *source = NULL, *load_from = NULL;
    int loaded = 0;
    json_t *util = NULL;
    size_t s;

    if (json_unpack_ex(item, &jerr, JSON_STRICT, "{s:I, s:s, s:b, s?o, s?s}", "node", &node,
                       "source", &source, "loaded", &loaded, "utilisation", &util, "load_from",
                       &load_from) < 0)
        return np_err_set(err, -EPROTO, "advice node %zu: %s", index, jerr.text);
    if (load_from && strcmp(load_from, NP_PROTO_LOAD_CPU_BUSY) != 0)
        return np_err_set(err, -EPROTO, "advice node %lld: load_from \"%.32s\"; accepted: %s",
                          (long long)node, load_from, NP_PROTO_LOAD_CPU_BUSY);
    if (node < 0 || node >= NP_PROTO_ADVICE_MAX_NODES)
        return np_err_set(err, -EPROTO, "advice node %zu: node %lld is not from 0 to %d", index,
                          (long long)node, NP_PROTO_ADVICE_MAX_NODES - 1);
    if (out->node[node].present)
        return np_err_set(err, -EPROTO, "advice names node %lld twice", (long long)node);
    for (s = 0; s < sizeof(sources) / sizeof(sources[0]) && strcmp(source, sources[s]) != 0; s++)
        ;
    if (s == sizeof(sources) / sizeof(sources[0]))
        return np_err_set(err, -EPROTO,
                          "advice node %lld: source \"%.32s\"; accepted: uncore, misses, proxy, "
                          "unavailable",
                          (long long)node, source);
    out->node[node].utilisation = NAN;
    if (util) {
        const double u = json_number_value(util);
        if (!json_is_number(util) || !isfinite(u) || u < 0 || u > 1000)
            return np_err_set(err, -EPROTO,
                              "advice node %lld: utilisation must be a number from 0 to 1000",
                              (long long)node);
        out->node[node].utilisation = u;
    }
    out->node[node].present = true;
    out->node[node].measured = s < 2;
    /* A proxy's figure loads a node only where the site chose it (auto_load=cpu-busy), and the
     * node says so: a task never mistakes it for measured traffic. */
    out->node[node].cpu_busy = load_from != NULL && !out->node[node].measured;
    out->node[node].loaded = loaded && (s < 2 || out->node[node].cpu_busy);
    snprintf(out->node[node].source, sizeof(out->node[node].source), "%s", sources[s]);
    return 0;
}

int np_proto_hint_decode(json_t *reply, struct np_proto_hint *out, struct np_err *err)
{
    json_error_t jerr;
    json_t *nodes = NULL, *threshold = NULL, *history = NULL, *item;
    const char *capacity_from = "";
    size_t i;

    memset(out, 0, sizeof(*out));
    out->threshold = NAN;
    if (json_unpack_ex(reply, &jerr, 0, "{s:{s:o, s?o, s?o, s?s}}", "advice", "nodes", &nodes,
                       "threshold", &threshold, "history", &history, "capacity_from",
                       &capacity_from) < 0)
        return np_err_set(err, -EPROTO, "advice: %s", jerr.text);
    if (!json_is_array(nodes) || json_array_size(nodes) > NP_PROTO_ADVICE_MAX_NODES)
        return np_err_set(err, -EPROTO, "advice: \"nodes\" must be an array of at most %d",
                          NP_PROTO_ADVICE_MAX_NODES);
    if (threshold) {
        const double t = json_number_value(threshold);
        if (!json_is_number(threshold) || !isfinite(t) || t <= 0 || t >= 1)
            return np_err_set(err, -EPROTO, "advice: \"threshold\" must be a number in (0, 1)");
        out->threshold = t;
    }
    snprintf(out->capacity_from, sizeof(out->capacity_from), "%s", capacity_from);
    json_array_foreach(nodes, i, item)
    {
        const int rc = decode_node(item, i, out, err);
        if (rc < 0)
            return rc;
    }
    if (history) {
        const char *sens = NULL;
        json_int_t runs = 0;
        if (json_unpack_ex(history, &jerr, JSON_STRICT, "{s:s, s:I}", "sensitivity", &sens, "runs",
                           &runs) < 0)
            return np_err_set(err, -EPROTO, "advice history: %s", jerr.text);
        if (np_sensitivity_from_name(sens, &(enum np_sensitivity){0}, NULL) < 0 || runs < 1 ||
            runs > 1000000)
            return np_err_set(err, -EPROTO,
                              "advice history: sensitivity must be one of %s and runs from 1 to "
                              "1000000",
                              np_sensitivity_names());
        snprintf(out->history, sizeof(out->history), "%s", sens);
        out->history_runs = (unsigned)runs;
        out->history_known = true;
    }
    return 0;
}
