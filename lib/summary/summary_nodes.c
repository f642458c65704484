/* Which nodes a summary holds: those listed whole, those folded (the fit's fold), their names in
 * order, the worst local share of them all. Small readers below every summary file. */
#include <stdlib.h>
#include <string.h>

#include "numaplace/summary.h"
#include "summary_priv.h"

const char *const np_dist_names[NP_DIST_N] = {
    "local_share", "cpi",        "bandwidth_bytes_per_s", "kernel_time_share",
    "duration_s",  "step_count", "pages_moved_bytes"};

int np_fold_names_get(const json_t *summary, struct np_fold_names *f)
{
    const json_t *fold = json_object_get(summary, "nodes_folded");
    const char *names = jstr(fold, "names");

    memset(f, 0, sizeof(*f));
    f->folded = fold != NULL;
    return names ? np_hostlist_expand(names, SIZE_MAX, &f->sorted, NULL) : 0;
}

size_t np_fold_names_count(const json_t *summary, const struct np_fold_names *f)
{
    const json_t *nodes = json_object_get(summary, "nodes");
    size_t n = 0;
    const char *name;
    json_t *v;

    if (!f->folded)
        return json_object_size(nodes);
    json_object_foreach((json_t *)nodes, name, v)
    {
        n += !np_fold_names_has(f, name);
    }
    return n + (size_t)jint(json_object_get(summary, "nodes_folded"), "nodes");
}

size_t np_summary_node_count(const json_t *summary)
{
    struct np_fold_names f;
    size_t n;

    np_fold_names_get(summary, &f);
    n = np_fold_names_count(summary, &f);
    np_strs_free(&f.sorted);
    return n;
}

bool np_summary_node_reported(const json_t *summary, const char *name)
{
    struct np_fold_names f;
    bool in;

    if (json_object_get(json_object_get(summary, "nodes"), name))
        return true;
    np_fold_names_get(summary, &f);
    in = np_fold_names_has(&f, name);
    np_strs_free(&f.sorted);
    return in;
}

const char **np_sorted_keys(const json_t *obj, size_t *n)
{
    const char **keys = malloc((json_object_size(obj) + 1) * sizeof(*keys)), *key;
    json_t *v;

    *n = 0;
    if (!keys)
        return NULL;
    json_object_foreach((json_t *)obj, key, v)
    {
        keys[(*n)++] = key;
    }
    qsort(keys, *n, sizeof(*keys), np_cmp_str);
    return keys;
}

bool np_summary_worst_local_share(const json_t *summary, double *share)
{
    const json_t *folded = json_object_get(
        json_object_get(json_object_get(summary, "nodes_folded"), "figures"), "local_share");
    const char *name;
    json_t *n;
    bool have = folded != NULL;

    if (have) /* the lowest of every node folded */
        *share = jnum(folded, "min", 0);
    json_object_foreach(json_object_get(summary, "nodes"), name, n)
    {
        /* any number counts, as `numaplace jobs` always read it */
        const json_t *v = json_object_get(json_object_get(n, "local_share"), "value");
        if (json_is_number(v) && (!have || json_number_value(v) < *share)) {
            *share = json_number_value(v);
            have = true;
        }
    }
    return have;
}
