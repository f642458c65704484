/* A job summary trimmed to fit Slurm's AdminComment (docs/summary-schema.md, "Stored form"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/codec.h"
#include "numaplace/summary_model.h"
#include "summary_priv.h"

/* Drop member @p m of node @p n; whether it was there. */
static bool drop(struct np_sum_node *n, unsigned m)
{
    if (!np_keys_has(&n->keys, m))
        return false;
    np_sum_node_drop(n, m);
    return true;
}

/* Each drop returns whether it removed anything. */
static bool drop_member(struct np_sum *s, unsigned m)
{
    bool dropped = false;

    for (size_t i = 0; i < s->nnodes; i++)
        dropped |= drop(&s->nodes[i], m);
    return dropped;
}

static bool drop_timelines(struct np_sum *s)
{
    return drop_member(s, NP_NODE_TIMELINE);
}

static bool drop_steps(struct np_sum *s)
{
    return drop_member(s, NP_NODE_STEPS);
}

static bool drop_numa_pages(struct np_sum *s)
{
    bool dropped = false;

    dropped |= drop_member(s, NP_NODE_PAGES_PEAK_BYTES);
    dropped |= drop_member(s, NP_NODE_PAGES_END_BYTES);
    for (size_t i = 0; i < s->nnodes; i++) {
        struct np_sum_migrations *m = &s->nodes[i].migrations;
        if (!np_keys_has(&s->nodes[i].keys, NP_NODE_MIGRATIONS))
            continue;
        for (unsigned k = NP_MIGR_IN_BYTES; k <= NP_MIGR_OUT_BYTES; k++)
            if (np_keys_has(&m->keys, k)) {
                np_keys_del(&m->keys, k);
                dropped = true;
            }
        np_map_free(&m->in_bytes);
        np_map_free(&m->out_bytes);
    }
    return dropped;
}

static bool drop_os_details(struct np_sum *s)
{
    bool dropped = false;

    for (size_t i = 0; i < s->nnodes; i++) {
        struct np_sum_os *os = &s->nodes[i].os;
        if (!np_keys_has(&s->nodes[i].keys, NP_NODE_OS_INTERFERENCE))
            continue;
        for (unsigned k = 0; k < NP_OS_NMEMBERS; k++)
            if (k != NP_OS_KERNEL_TIME_SHARE && np_keys_has(&os->keys, k)) {
                np_keys_del(&os->keys, k);
                np_figure_free(&os->fig[k]);
                dropped = true;
            }
    }
    return dropped;
}

static bool drop_source(struct np_keys *parent, unsigned member, struct np_figure *f)
{
    if (!np_keys_has(parent, member) || !np_keys_has(&f->keys, NP_FIG_SOURCE))
        return false;
    np_keys_del(&f->keys, NP_FIG_SOURCE);
    free(f->source);
    f->source = NULL;
    return true;
}

/* The `source` of every figure under nodes (their reasons stay). */
static bool drop_sources(struct np_sum *s)
{
    bool dropped = false;

    for (size_t i = 0; i < s->nnodes; i++) {
        struct np_sum_node *n = &s->nodes[i];
        dropped |= drop_source(&n->keys, NP_NODE_LOCAL_SHARE, &n->local_share);
        dropped |= drop_source(&n->keys, NP_NODE_CPI, &n->cpi);
        dropped |= drop_source(&n->keys, NP_NODE_BANDWIDTH, &n->bandwidth);
        if (!n->pages_peak_bytes.is_map)
            dropped |=
                drop_source(&n->keys, NP_NODE_PAGES_PEAK_BYTES, &n->pages_peak_bytes.unavailable);
        if (!n->pages_end_bytes.is_map)
            dropped |=
                drop_source(&n->keys, NP_NODE_PAGES_END_BYTES, &n->pages_end_bytes.unavailable);
        if (np_keys_has(&n->keys, NP_NODE_OS_INTERFERENCE))
            for (unsigned k = 0; k < NP_OS_NMEMBERS; k++)
                dropped |= drop_source(&n->os.keys, k, &n->os.fig[k]);
        if (np_keys_has(&n->keys, NP_NODE_MIGRATIONS) &&
            np_keys_has(&n->migrations.keys, NP_MIGR_SOURCE)) {
            np_keys_del(&n->migrations.keys, NP_MIGR_SOURCE);
            free(n->migrations.source);
            n->migrations.source = NULL;
            dropped = true;
        }
    }
    return dropped;
}

static bool drop_node_details(struct np_sum *s)
{
    static const unsigned keep[] = {
        NP_NODE_LOCAL_SHARE,       NP_NODE_STEP_COUNT, NP_NODE_DURATION_S,
        NP_NODE_PAGES_MOVED_BYTES, NP_NODE_START,      NP_NODE_END,
        NP_NODE_POLICY_REQUESTED,  NP_NODE_SENSITIVITY};
    bool dropped = false;

    for (size_t i = 0; i < s->nnodes; i++)
        for (unsigned m = 0; m < NP_NODE_NMEMBERS; m++) {
            bool kept = false;
            for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
                kept |= keep[k] == m;
            if (!kept)
                dropped |= drop(&s->nodes[i], m);
        }
    return dropped;
}

static const struct {
    const char *what;
    bool (*drop)(struct np_sum *s);
} trim_steps[] = {
    {"timeline", drop_timelines},
    {"steps", drop_steps},
    {"numa-node-pages", drop_numa_pages},
    {"os-interference-details", drop_os_details},
    {"sources", drop_sources},
    {"node-details", drop_node_details},
};

static int record_trim(struct np_sum *s, const char *what, long before)
{
    struct np_sum_trim *grown;

    for (size_t i = 0; i < s->ntrimmed; i++)
        if (s->trimmed[i].what && strcmp(s->trimmed[i].what, what) == 0) {
            s->trimmed[i].stored_bytes_before = before;
            np_keys_set(&s->trimmed[i].keys, NP_TRIM_STORED_BYTES_BEFORE);
            return 0;
        }
    grown = realloc(s->trimmed, (s->ntrimmed + 1) * sizeof(*grown));
    if (!grown)
        return -ENOMEM;
    s->trimmed = grown;
    memset(&grown[s->ntrimmed], 0, sizeof(*grown));
    grown[s->ntrimmed].what = strdup(what);
    if (!grown[s->ntrimmed].what)
        return -ENOMEM;
    grown[s->ntrimmed].stored_bytes_before = before;
    np_keys_set(&grown[s->ntrimmed].keys, NP_TRIM_WHAT);
    np_keys_set(&grown[s->ntrimmed].keys, NP_TRIM_STORED_BYTES_BEFORE);
    s->ntrimmed++;
    return 0;
}

/* The stored form of @p s as it is now. */
static long encode(const struct np_sum *s, char **text, struct np_err *err)
{
    json_t *j = np_sum_encode(s);
    long len;

    if (!j)
        return np_err_set(err, -ENOMEM, "out of memory encoding the summary");
    len = np_stored_encode(j, text, err);
    json_decref(j);
    return len;
}

/* Whether np_stored_decode takes @p text back: a summary of many alike nodes can compress past
 * the decoder's limits (NP_STORED_MAX_*) while fitting AdminComment; it is trimmed further. */
static bool decodes(const char *text)
{
    json_t *j = NULL;
    const int rc = np_stored_decode(text, &j, NULL);

    json_decref(j);
    return rc == 0;
}

/* Past the trims: the nodes folded into distributions (summary_fold_nodes.c), from their
 * figures as they were before trimming. 1: folded, 0: nothing left to fold, or -ENOMEM. */
static int fold_last(struct np_sum *s, const struct np_fold_snap *snap,
                     const struct np_map *applied, bool *done)
{
    if (*done)
        return 0;
    *done = true;
    return np_sum_fold_nodes(s, snap, applied);
}

long np_sum_fit(struct np_sum *s, size_t max_bytes, char **stored, struct np_err *err)
{
    struct np_fold_snap *snap = NULL;
    struct np_map applied = {0};
    size_t next = 0;
    bool folded = false;
    long ret;

    *stored = NULL;
    np_keys_set(&s->keys, NP_SUM_TRIMMED);
    if (np_fold_snapshot(s, &snap, &applied) != 0) {
        free(snap);
        np_map_free(&applied);
        return np_err_set(err, -ENOMEM, "out of memory fitting the summary");
    }
    for (;;) {
        char *text = NULL;
        long len = encode(s, &text, err);
        bool dropped = false;
        int rc = 0;

        if (len < 0) {
            ret = len;
            break;
        }
        if ((size_t)len <= max_bytes && decodes(text)) {
            *stored = text;
            ret = len;
            break;
        }
        free(text);
        while (!dropped && next < sizeof(trim_steps) / sizeof(trim_steps[0])) {
            dropped = trim_steps[next].drop(s);
            if (dropped && record_trim(s, trim_steps[next].what, len) != 0)
                rc = -ENOMEM;
            next++;
        }
        if (!dropped && !rc && (rc = fold_last(s, snap, &applied, &folded)) > 0) {
            dropped = true;
            rc = record_trim(s, "nodes-folded", len);
        }
        if (rc < 0) {
            ret = rc == -EINVAL ? np_err_set(err, -EINVAL,
                                             "job %lld: a node name has characters a hostlist "
                                             "cannot hold (accepted: letters, digits, '.', '-', "
                                             "'_'; at most 255 before its number)",
                                             (long long)s->job_id)
                                : np_err_set(err, -ENOMEM, "out of memory fitting the summary");
            break;
        }
        if (!dropped) {
            ret = np_err_set(err, -E2BIG,
                             "the minimal summary of job %lld (ids, totals, %s) is %ld bytes "
                             "stored; the limit given is %zu (AdminComment holds 65535, "
                             "NP_SUMMARY_STORED_MAX is %d)",
                             (long long)s->job_id,
                             np_keys_has(&s->keys, NP_SUM_NODES_FOLDED)
                                 ? "per-node figures as distributions, the node names as a "
                                   "hostlist"
                                 : "local share per node",
                             len, max_bytes, NP_SUMMARY_STORED_MAX);
            break;
        }
    }
    free(snap);
    np_map_free(&applied);
    return ret;
}
