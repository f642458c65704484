/*
 * profile_print.c - a machine profile as readable matrices: rows are the CPU's node, columns
 * the memory's node, as Intel's Memory Latency Checker prints them.
 */
#include <math.h>

#include "numaplace/profile.h"

enum column { LATENCY, BANDWIDTH, PENALTY, DISTANCE };

static bool is_row(const struct np_profile *p, unsigned node)
{
    for (size_t i = 0; i < p->pair_count; i++)
        if (p->pairs[i].cpu_node == node)
            return true;
    return false;
}

static bool is_column(const struct np_profile *p, unsigned node)
{
    for (size_t i = 0; i < p->pair_count; i++)
        if (p->pairs[i].mem_node == node)
            return true;
    return false;
}

static void cell(FILE *out, const struct np_profile_pair *pair, enum column what)
{
    double v = NAN;

    if (pair && what == DISTANCE) {
        if (pair->distance > 0)
            fprintf(out, " %9d", pair->distance);
        else
            fprintf(out, " %9s", "-");
        return;
    }
    if (pair)
        v = what == LATENCY     ? pair->latency_ns
            : what == BANDWIDTH ? pair->bandwidth_mb_s
                                : pair->remote_penalty;
    if (!isfinite(v))
        fprintf(out, " %9s", "-");
    else
        fprintf(out, what == PENALTY ? " %9.2f" : " %9.1f", v);
}

static void matrix(FILE *out, const struct np_profile *p, const char *title, enum column what)
{
    fprintf(out, "%s\n  cpu\\mem", title);
    for (unsigned c = 0; c < p->node_count; c++)
        if (is_column(p, p->nodes[c].os_index))
            fprintf(out, " %9u", p->nodes[c].os_index);
    fputc('\n', out);
    for (unsigned r = 0; r < p->node_count; r++) {
        unsigned row = p->nodes[r].os_index;
        if (!is_row(p, row))
            continue;
        fprintf(out, "  %7u", row);
        for (unsigned c = 0; c < p->node_count; c++)
            if (is_column(p, p->nodes[c].os_index))
                cell(out, np_profile_pair(p, row, p->nodes[c].os_index), what);
        fputc('\n', out);
    }
}

static void loaded(FILE *out, const struct np_profile *p)
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
    loaded(out, p);
}
