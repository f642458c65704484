/* Which nodes a summary holds: those listed whole, those folded (summary_fold_nodes.c), their
 * names in order, the worst local share of them all. Small readers below every summary file. */
#include <stdlib.h>
#include <string.h>

#include "summary_priv.h"

bool np_sum_in_fold(const struct np_sum *s, const char *name)
{
    return np_keys_has(&s->keys, NP_SUM_NODES_FOLDED) &&
           np_strs_sorted_has(&s->folded.sorted, name);
}

bool np_sum_node_reported(const struct np_sum *s, const char *name)
{
    return np_sum_node_get(s, name) || np_sum_in_fold(s, name);
}

size_t np_sum_node_count(const struct np_sum *s)
{
    size_t n = 0;

    if (!np_keys_has(&s->keys, NP_SUM_NODES_FOLDED))
        return s->nnodes;
    for (size_t i = 0; i < s->nnodes; i++)
        n += !np_sum_in_fold(s, s->nodes[i].name);
    return n + (size_t)s->folded.nodes;
}

struct np_sum_node *np_sum_node_append(struct np_sum *s)
{
    size_t cap = s->nodes_cap > s->nnodes ? s->nodes_cap : s->nnodes;

    if (s->nnodes == cap) {
        size_t grown_cap = cap ? 2 * cap : 4;
        struct np_sum_node *grown = realloc(s->nodes, grown_cap * sizeof(*grown));

        if (!grown)
            return NULL;
        s->nodes = grown;
        s->nodes_cap = grown_cap;
    }
    memset(&s->nodes[s->nnodes], 0, sizeof(s->nodes[0]));
    return &s->nodes[s->nnodes++];
}

const struct np_sum_node *np_sum_node_get(const struct np_sum *s, const char *name)
{
    for (size_t i = 0; name && i < s->nnodes; i++)
        if (strcmp(s->nodes[i].name, name) == 0)
            return &s->nodes[i];
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char **np_sum_sorted_nodes(const struct np_sum *s, size_t *n)
{
    const char **names = malloc((s->nnodes ? s->nnodes : 1) * sizeof(*names));

    *n = 0;
    if (!names)
        return NULL;
    for (size_t i = 0; i < s->nnodes; i++)
        names[i] = s->nodes[i].name;
    qsort(names, s->nnodes, sizeof(*names), cmp_str);
    *n = s->nnodes;
    return names;
}

bool np_sum_worst_local_share(const struct np_sum *s, double *share)
{
    const struct np_sum_dist *folded = &s->folded.dist[NP_DIST_LOCAL_SHARE];
    bool have =
        np_keys_has(&s->keys, NP_SUM_NODES_FOLDED) && s->folded.has_dist[NP_DIST_LOCAL_SHARE];

    if (have) /* the lowest of every node folded */
        *share = folded->min;

    for (size_t i = 0; i < s->nnodes; i++) {
        const struct np_figure *f = &s->nodes[i].local_share;
        /* any number counts, as `numaplace jobs` always read it */
        if (np_keys_has(&s->nodes[i].keys, NP_NODE_LOCAL_SHARE) &&
            np_keys_has(&f->keys, NP_FIG_VALUE) && (!have || np_num_value(&f->value) < *share)) {
            *share = np_num_value(&f->value);
            have = true;
        }
    }
    return have;
}
