/*
 * profile.c - the machine profile: its model, its JSON form (docs/machine-profile.md), its
 * printing and the scaling of the reference machine's slowdowns.
 */
#include "numaplace/profile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

struct np_profile *np_profile_new(size_t pairs)
{
    struct np_profile *p = calloc(1, sizeof(*p));

    if (!p)
        return NULL;
    p->schema = NP_PROFILE_SCHEMA;
    p->pairs = calloc(pairs ? pairs : 1, sizeof(*p->pairs));
    if (!p->pairs) {
        free(p);
        return NULL;
    }
    return p;
}

void np_profile_free(struct np_profile *p)
{
    if (!p)
        return;
    free(p->pairs);
    free(p);
}

const struct np_profile_pair *np_profile_pair(const struct np_profile *p, unsigned cpu_node,
                                              unsigned mem_node)
{
    for (size_t i = 0; p && i < p->pair_count; i++)
        if (p->pairs[i].cpu_node == cpu_node && p->pairs[i].mem_node == mem_node)
            return &p->pairs[i];
    return NULL;
}

void np_profile_derive(struct np_profile *p)
{
    for (size_t i = 0; i < p->pair_count; i++) {
        struct np_profile_pair *pair = &p->pairs[i];
        const struct np_profile_pair *local = np_profile_pair(p, pair->cpu_node, pair->cpu_node);
        bool ok = local && local->latency_ns > 0 && local->bandwidth_mb_s > 0;

        pair->remote_penalty = ok ? pair->latency_ns / local->latency_ns : NAN;
        pair->bandwidth_ratio =
            ok && pair->bandwidth_mb_s > 0 ? local->bandwidth_mb_s / pair->bandwidth_mb_s : NAN;
    }
}

/* ---- encoding: a figure that is NAN is JSON null ---------------------------------------- */

static json_t *figure(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *encode_pair(const struct np_profile_pair *pair)
{
    json_t *loaded = json_array();

    for (size_t k = 0; loaded && k < pair->loaded_count; k++)
        json_array_append_new(
            loaded, json_pack("{s:I, s:o, s:o}", "loaders", (json_int_t)pair->loaded[k].loaders,
                              "bandwidth_mb_s", figure(pair->loaded[k].bandwidth_mb_s),
                              "latency_ns", figure(pair->loaded[k].latency_ns)));
    return json_pack("{s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:s}", "cpu_node",
                     (json_int_t)pair->cpu_node, "mem_node", (json_int_t)pair->mem_node, "distance",
                     (json_int_t)pair->distance, "bandwidth_mb_s", figure(pair->bandwidth_mb_s),
                     "latency_ns", figure(pair->latency_ns), "remote_penalty",
                     figure(pair->remote_penalty), "bandwidth_ratio", figure(pair->bandwidth_ratio),
                     "loaded", loaded, "loaded_unavailable", pair->loaded_unavailable);
}

char *np_profile_encode(const struct np_profile *p)
{
    json_t *nodes = json_array(), *pairs = json_array(), *interleave = json_array(), *root;
    char *text = NULL;

    for (unsigned n = 0; n < NP_PROFILE_MAX_NODES && interleave; n++)
        if (p->interleave_nodes & (UINT64_C(1) << n))
            json_array_append_new(interleave, json_integer(n));
    for (unsigned i = 0; nodes && i < p->node_count; i++)
        json_array_append_new(
            nodes, json_pack("{s:I, s:I, s:I, s:o}", "node", (json_int_t)p->nodes[i].os_index,
                             "cpus", (json_int_t)p->nodes[i].cpus, "memory_bytes",
                             (json_int_t)p->nodes[i].memory_bytes, "interleaved_bandwidth_mb_s",
                             figure(p->nodes[i].interleaved_bandwidth_mb_s)));
    for (size_t i = 0; pairs && i < p->pair_count; i++)
        json_array_append_new(pairs, encode_pair(&p->pairs[i]));
    root = json_pack("{s:i, s:{s:s, s:s, s:o}, s:{s:f, s:I, s:o}, s:o}", "schema", p->schema,
                     "machine", "hostname", p->hostname, "created", p->created, "nodes", nodes,
                     "method", "measure_s", p->seconds, "buffer_bytes", (json_int_t)p->buffer_bytes,
                     "interleave_nodes", interleave, "pairs", pairs);
    if (root)
        text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(root);
    return text;
}

/* ---- decoding --------------------------------------------------------------------------- */

/* A figure: a number >= 0, or null (unavailable). */
static int unfigure(json_t *v, double *out, const char *where, const char *key, struct np_err *err)
{
    if (json_is_null(v)) {
        *out = NAN;
        return 0;
    }
    if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
        return np_err_set(err, -EINVAL, "machine profile: %s: \"%s\" must be a number >= 0 or null",
                          where, key);
    *out = json_number_value(v);
    return 0;
}

static int unpack_error(const json_error_t *je, const char *where, struct np_err *err)
{
    return np_err_set(err, -EINVAL, "machine profile: %s: %s", where, je->text);
}

static int decode_node(json_t *v, struct np_profile_node *node, size_t i, struct np_err *err)
{
    json_error_t je;
    json_int_t index, cpus, memory;
    json_t *bw;
    char where[48];

    snprintf(where, sizeof(where), "machine.nodes[%zu]", i);
    if (json_unpack_ex(v, &je, JSON_STRICT, "{s:I, s:I, s:I, s:o}", "node", &index, "cpus", &cpus,
                       "memory_bytes", &memory, "interleaved_bandwidth_mb_s", &bw) < 0)
        return unpack_error(&je, where, err);
    if (index < 0 || index >= NP_PROFILE_MAX_NODES || cpus < 0 || cpus > UINT32_MAX || memory < 0)
        return np_err_set(err, -EINVAL,
                          "machine profile: %s: \"node\" must be 0..%d, \"cpus\" and "
                          "\"memory_bytes\" >= 0",
                          where, NP_PROFILE_MAX_NODES - 1);
    node->os_index = (unsigned)index;
    node->cpus = (unsigned)cpus;
    node->memory_bytes = (uint64_t)memory;
    return unfigure(bw, &node->interleaved_bandwidth_mb_s, where, "interleaved_bandwidth_mb_s",
                    err);
}

static int decode_loaded(json_t *loaded, struct np_profile_pair *pair, const char *where,
                         struct np_err *err)
{
    size_t k;
    json_t *v;

    if (!json_is_array(loaded) || json_array_size(loaded) > NP_PROFILE_MAX_LOADS)
        return np_err_set(err, -EINVAL,
                          "machine profile: %s: \"loaded\" must be an array of at most %d", where,
                          NP_PROFILE_MAX_LOADS);
    json_array_foreach(loaded, k, v)
    {
        json_error_t je;
        json_int_t loaders;
        json_t *bw, *lat;
        char at[80];
        int rc;

        snprintf(at, sizeof(at), "%s.loaded[%zu]", where, k);
        if (json_unpack_ex(v, &je, JSON_STRICT, "{s:I, s:o, s:o}", "loaders", &loaders,
                           "bandwidth_mb_s", &bw, "latency_ns", &lat) < 0)
            return unpack_error(&je, at, err);
        if (loaders < 1 || loaders > 4096)
            return np_err_set(err, -EINVAL, "machine profile: %s: \"loaders\" must be 1..4096", at);
        pair->loaded[k].loaders = (unsigned)loaders;
        if ((rc = unfigure(bw, &pair->loaded[k].bandwidth_mb_s, at, "bandwidth_mb_s", err)) < 0 ||
            (rc = unfigure(lat, &pair->loaded[k].latency_ns, at, "latency_ns", err)) < 0)
            return rc;
    }
    pair->loaded_count = json_array_size(loaded);
    return 0;
}

static int decode_pair(json_t *v, struct np_profile_pair *pair, size_t i, struct np_err *err)
{
    json_error_t je;
    json_int_t cpu, mem, distance;
    json_t *bw, *lat, *penalty, *ratio, *loaded;
    const char *why;
    char where[48];
    int rc;

    snprintf(where, sizeof(where), "pairs[%zu]", i);
    if (json_unpack_ex(v, &je, JSON_STRICT, "{s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:s}",
                       "cpu_node", &cpu, "mem_node", &mem, "distance", &distance, "bandwidth_mb_s",
                       &bw, "latency_ns", &lat, "remote_penalty", &penalty, "bandwidth_ratio",
                       &ratio, "loaded", &loaded, "loaded_unavailable", &why) < 0)
        return unpack_error(&je, where, err);
    if (cpu < 0 || cpu >= NP_PROFILE_MAX_NODES || mem < 0 || mem >= NP_PROFILE_MAX_NODES ||
        distance < 0 || distance > 255)
        return np_err_set(err, -EINVAL,
                          "machine profile: %s: \"cpu_node\" and \"mem_node\" must be 0..%d, "
                          "\"distance\" 0..255",
                          where, NP_PROFILE_MAX_NODES - 1);
    pair->cpu_node = (unsigned)cpu;
    pair->mem_node = (unsigned)mem;
    pair->distance = (int)distance;
    snprintf(pair->loaded_unavailable, sizeof(pair->loaded_unavailable), "%s", why);
    if ((rc = unfigure(bw, &pair->bandwidth_mb_s, where, "bandwidth_mb_s", err)) < 0 ||
        (rc = unfigure(lat, &pair->latency_ns, where, "latency_ns", err)) < 0 ||
        (rc = unfigure(penalty, &pair->remote_penalty, where, "remote_penalty", err)) < 0 ||
        (rc = unfigure(ratio, &pair->bandwidth_ratio, where, "bandwidth_ratio", err)) < 0)
        return rc;
    return decode_loaded(loaded, pair, where, err);
}

static int decode_root(json_t *root, struct np_profile **out, struct np_err *err)
{
    json_error_t je;
    json_int_t schema = 0, buffer;
    json_t *nodes, *pairs, *interleave, *v;
    const char *host, *created;
    double seconds;
    struct np_profile *p;
    size_t i;
    int rc = 0;

    /* The schema first, alone: a newer file fails on its number, not on a key it added. */
    if (json_unpack_ex(root, &je, 0, "{s:I}", "schema", &schema) < 0 || schema != NP_PROFILE_SCHEMA)
        return np_err_set(err, -EINVAL,
                          "machine profile: \"schema\" is %s; accepted: %d (rerun numaplace "
                          "characterize with this version)",
                          schema ? "unknown" : "missing or not a number", NP_PROFILE_SCHEMA);
    if (json_unpack_ex(root, &je, JSON_STRICT, "{s:I, s:{s:s, s:s, s:o}, s:{s:F, s:I, s:o}, s:o}",
                       "schema", &schema, "machine", "hostname", &host, "created", &created,
                       "nodes", &nodes, "method", "measure_s", &seconds, "buffer_bytes", &buffer,
                       "interleave_nodes", &interleave, "pairs", &pairs) < 0)
        return unpack_error(&je, "top level", err);
    if (!json_is_array(nodes) || json_array_size(nodes) > NP_PROFILE_MAX_NODES ||
        !json_is_array(pairs) || !json_is_array(interleave) || seconds <= 0 || buffer <= 0)
        return np_err_set(err, -EINVAL,
                          "machine profile: \"machine.nodes\" (at most %d), \"pairs\" and "
                          "\"method.interleave_nodes\" must be arrays, \"method.measure_s\" and "
                          "\"method.buffer_bytes\" above 0",
                          NP_PROFILE_MAX_NODES);
    p = np_profile_new(json_array_size(pairs));
    if (!p)
        return -ENOMEM;
    snprintf(p->hostname, sizeof(p->hostname), "%s", host);
    snprintf(p->created, sizeof(p->created), "%s", created);
    p->seconds = seconds;
    p->buffer_bytes = (uint64_t)buffer;
    json_array_foreach(interleave, i, v)
    {
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) >= NP_PROFILE_MAX_NODES) {
            rc = np_err_set(err, -EINVAL,
                            "machine profile: method.interleave_nodes[%zu] must be a node 0..%d", i,
                            NP_PROFILE_MAX_NODES - 1);
            break;
        }
        p->interleave_nodes |= UINT64_C(1) << json_integer_value(v);
    }
    json_array_foreach(nodes, i, v)
    {
        if (rc < 0 || (rc = decode_node(v, &p->nodes[i], i, err)) < 0)
            break;
        p->node_count++;
    }
    json_array_foreach(pairs, i, v)
    {
        if (rc < 0 || (rc = decode_pair(v, &p->pairs[i], i, err)) < 0)
            break;
        p->pair_count++;
    }
    if (rc < 0) {
        np_profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int np_profile_decode(const char *text, struct np_profile **out, struct np_err *err)
{
    json_error_t je;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    int rc;

    if (!root)
        return np_err_set(err, -EINVAL, "machine profile: not JSON (line %d: %s)", je.line,
                          je.text);
    rc = decode_root(root, out, err);
    json_decref(root);
    return rc;
}

int np_profile_load(const char *path, struct np_profile **out, struct np_err *err)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    int rc;

    if (!root) {
        FILE *f = fopen(path, "r");
        if (!f)
            return np_err_set(err, -errno, "machine profile %s: %s", path, strerror(errno));
        fclose(f);
        return np_err_set(err, -EINVAL, "machine profile %s: not JSON (line %d: %s)", path, je.line,
                          je.text);
    }
    rc = decode_root(root, out, err);
    json_decref(root);
    if (rc < 0 && err) {
        char msg[NP_ERR_MSG_MAX];
        snprintf(msg, sizeof(msg), "%s", err->msg);
        np_err_set(err, rc, "%s: %s", path, msg);
    }
    return rc;
}

/* ---- scaling ---------------------------------------------------------------------------- */

/* A pair whose memory is another socket's: remote, on a node with CPUs (the reference's "remote"
 * placement; a CPU-less HBM or CXL node is another kind of memory). */
static bool socket_remote(const struct np_profile *p, const struct np_profile_pair *q)
{
    for (unsigned n = 0; n < p->node_count; n++)
        if (p->nodes[n].os_index == q->mem_node && p->nodes[n].cpus == 0)
            return false;
    return q->cpu_node != q->mem_node && isfinite(q->remote_penalty);
}

double np_profile_near_penalty(const struct np_profile *p)
{
    int nearest = 0;
    double sum = 0;
    unsigned n = 0;

    for (size_t i = 0; i < p->pair_count; i++) {
        const struct np_profile_pair *q = &p->pairs[i];
        if (socket_remote(p, q) && q->distance > 10 && (nearest == 0 || q->distance < nearest))
            nearest = q->distance;
    }
    for (size_t i = 0; i < p->pair_count; i++) {
        const struct np_profile_pair *q = &p->pairs[i];
        if (socket_remote(p, q) && (nearest == 0 || q->distance == nearest)) {
            sum += q->remote_penalty;
            n++;
        }
    }
    return n ? sum / n : NAN;
}

double np_profile_scale_for_pair(const struct np_profile *p, unsigned cpu_node, unsigned mem_node,
                                 double slowdown)
{
    const struct np_profile_pair *pair = np_profile_pair(p, cpu_node, mem_node);

    if (!pair)
        return NAN;
    return np_penalty_scale_slowdown(slowdown, NP_REFERENCE_REMOTE_PENALTY, pair->remote_penalty);
}

/* ---- printing: readable matrices, rows the CPU's node, columns the memory's node, as Intel's
 * Memory Latency Checker prints them ---- */
enum column { LATENCY, BANDWIDTH, PENALTY, DISTANCE };

/* Whether some pair has @p node as its CPU node (a row) or, with @p column, its memory node. */
static bool has_pair(const struct np_profile *p, unsigned node, bool column)
{
    for (size_t i = 0; i < p->pair_count; i++)
        if ((column ? p->pairs[i].mem_node : p->pairs[i].cpu_node) == node)
            return true;
    return false;
}

static void cell(FILE *out, const struct np_profile_pair *pair, enum column what)
{
    double v = NAN;

    if (pair)
        v = what == LATENCY      ? pair->latency_ns
            : what == BANDWIDTH  ? pair->bandwidth_mb_s
            : what == PENALTY    ? pair->remote_penalty
            : pair->distance > 0 ? pair->distance
                                 : NAN; /* no SLIT */
    if (!isfinite(v))
        fprintf(out, " %9s", "-");
    else
        fprintf(out, what == PENALTY ? " %9.2f" : what == DISTANCE ? " %9.0f" : " %9.1f", v);
}

static void matrix(FILE *out, const struct np_profile *p, const char *title, enum column what)
{
    fprintf(out, "%s\n  cpu\\mem", title);
    for (unsigned c = 0; c < p->node_count; c++)
        if (has_pair(p, p->nodes[c].os_index, true))
            fprintf(out, " %9u", p->nodes[c].os_index);
    fputc('\n', out);
    for (unsigned r = 0; r < p->node_count; r++) {
        unsigned row = p->nodes[r].os_index;
        if (!has_pair(p, row, false))
            continue;
        fprintf(out, "  %7u", row);
        for (unsigned c = 0; c < p->node_count; c++)
            if (has_pair(p, p->nodes[c].os_index, true))
                cell(out, np_profile_pair(p, row, p->nodes[c].os_index), what);
        fputc('\n', out);
    }
}

static void print_loaded(FILE *out, const struct np_profile *p)
{
    fprintf(out,
            "Under load (k threads streaming on the memory node): latency ns, bandwidth MB/s\n");
    for (size_t i = 0; i < p->pair_count; i++) {
        const struct np_profile_pair *pair = &p->pairs[i];
        fprintf(out, "  cpu %u mem %u:", pair->cpu_node, pair->mem_node);
        for (size_t k = 0; k < pair->loaded_count; k++)
            fprintf(out, "  k=%u %.1f ns %.1f MB/s", pair->loaded[k].loaders,
                    pair->loaded[k].latency_ns, pair->loaded[k].bandwidth_mb_s);
        if (pair->loaded_unavailable[0])
            fprintf(out, "%s%s", pair->loaded_count ? "; " : "  ", pair->loaded_unavailable);
        fputc('\n', out);
    }
}

void np_profile_print(FILE *out, const struct np_profile *p)
{
    fprintf(out,
            "Machine profile of %s (schema %d, %s): %u NUMA nodes, %.2f s per measurement, "
            "%.0f MiB buffers\n",
            p->hostname, p->schema, p->created, p->node_count, p->seconds,
            (double)p->buffer_bytes / (1 << 20));
    matrix(out, p, "Load latency (ns)", LATENCY);
    matrix(out, p, "Read bandwidth, one thread (MB/s)", BANDWIDTH);
    matrix(out, p, "Remote penalty (latency / local latency)", PENALTY);
    matrix(out, p, "Distance (SLIT)", DISTANCE);
    fprintf(out, "Interleaved read bandwidth (MB/s), memory over nodes");
    for (unsigned n = 0; n < NP_PROFILE_MAX_NODES; n++)
        if (p->interleave_nodes & (UINT64_C(1) << n))
            fprintf(out, " %u", n);
    fputc('\n', out);
    for (unsigned r = 0; r < p->node_count; r++) {
        fprintf(out, "  cpu %u:", p->nodes[r].os_index);
        if (isfinite(p->nodes[r].interleaved_bandwidth_mb_s))
            fprintf(out, " %.1f\n", p->nodes[r].interleaved_bandwidth_mb_s);
        else
            fprintf(out, " unavailable (%s)\n",
                    !p->nodes[r].cpus                               ? "no CPUs"
                    : __builtin_popcountll(p->interleave_nodes) < 2 ? "one memory node"
                                                                    : "not measured");
    }
    print_loaded(out, p);
}
