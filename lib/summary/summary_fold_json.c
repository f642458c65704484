/* `nodes_folded` of a summary (docs/summary-schema.md, "Folded nodes") described by tables
 * (record.h), strict like the rest of the summary, then checked for what the types cannot say:
 * its names a hostlist of as many nodes as it says, its distributions and sums consistent. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "summary_priv.h"

/* ---- one figure's distribution over the folded nodes ---- */

static int dist_check(void *obj, const char *what, struct np_err *err)
{
    const struct np_sum_dist *d = obj;

    if (d->count < 1 || d->percentiles_of < 1 || d->percentiles_of > d->count ||
        d->count > NP_FOLD_MAX_NODES || !(d->min <= d->p50 && d->p50 <= d->p90 && d->p90 <= d->max))
        return np_err_set(err, -EINVAL,
                          "%s: expected 1 <= percentiles_of <= count <= %d and "
                          "min <= p50 <= p90 <= max",
                          what, NP_FOLD_MAX_NODES);
    return 0;
}

#define F(m, nm, ty)                                                                               \
    {                                                                                              \
        .name = (nm), .type = (ty), .required = true, .off = offsetof(struct np_sum_dist, m)       \
    }
static const struct np_field dist_fields[] = {
    F(count, "count", NP_F_INT),       F(min, "min", NP_F_REAL),
    F(min_node, "min_node", NP_F_STR), F(p50, "p50", NP_F_REAL),
    F(p90, "p90", NP_F_REAL),          F(max, "max", NP_F_REAL),
    F(max_node, "max_node", NP_F_STR), F(percentiles_of, "percentiles_of", NP_F_INT),
};
#undef F
static const struct np_record dist_rec = {.fields = dist_fields,
                                          .n = sizeof(dist_fields) / sizeof(dist_fields[0]),
                                          .keys_off = offsetof(struct np_sum_dist, keys),
                                          .present = np_rec_required_or_set,
                                          .check = dist_check};

/* ---- figures: a distribution per figure (enum np_sum_dist_figure) that any node had ---- */

static bool figure_present(const struct np_record *rec, const void *obj, unsigned id)
{
    (void)rec;
    return ((const struct np_sum_folded *)obj)->has_dist[id];
}

#define F(d, nm)                                                                                   \
    [d] = {.name = (nm),                                                                           \
           .type = NP_F_RECORD,                                                                    \
           .off = offsetof(struct np_sum_folded, dist) + (d) * sizeof(struct np_sum_dist),         \
           .rec = &dist_rec}
static const struct np_field figure_fields[NP_DIST_N] = {
    F(NP_DIST_LOCAL_SHARE, "local_share"),
    F(NP_DIST_CPI, "cpi"),
    F(NP_DIST_BANDWIDTH, "bandwidth_bytes_per_s"),
    F(NP_DIST_KERNEL_TIME_SHARE, "kernel_time_share"),
    F(NP_DIST_DURATION_S, "duration_s"),
    F(NP_DIST_STEP_COUNT, "step_count"),
    F(NP_DIST_PAGES_MOVED_BYTES, "pages_moved_bytes"),
};
#undef F
static const struct np_record figures_rec = {.fields = figure_fields,
                                             .n = NP_DIST_N,
                                             .keys_off =
                                                 offsetof(struct np_sum_folded, figure_keys),
                                             .present = figure_present};

/* ---- sums: the fold's share of the totals ---- */

#define F(m, nm, ty)                                                                               \
    {                                                                                              \
        .name = (nm), .type = (ty), .required = true, .off = offsetof(struct np_sum_folded, m)     \
    }
#define OPT(m, nm)                                                                                 \
    {                                                                                              \
        .name = (nm), .type = NP_F_STR, .off = offsetof(struct np_sum_folded, m)                   \
    }
static const struct np_field sums_fields[] = {
    F(steps, "steps", NP_F_INT),
    F(pages_moved_bytes, "pages_moved_bytes", NP_F_INT),
    F(migration_requests, "migration_requests", NP_F_INT),
    F(ls_nodes, "local_share_nodes", NP_F_INT),
    F(ls_seconds, "local_share_seconds", NP_F_REAL),
    F(ls_x_seconds, "local_share_x_seconds", NP_F_REAL),
    F(ls_byte_seconds, "local_share_byte_seconds", NP_F_REAL),
    F(ls_x_byte_seconds, "local_share_x_byte_seconds", NP_F_REAL),
    F(ls_all_bytes, "local_share_all_bytes", NP_F_BOOL),
    F(k_nodes, "kernel_time_share_nodes", NP_F_INT),
    F(k_seconds, "kernel_time_share_seconds", NP_F_REAL),
    F(k_x_seconds, "kernel_time_share_x_seconds", NP_F_REAL),
    F(policy_requested, "policy_requested", NP_F_STRS),
    F(policy_applied, "policy_applied", NP_F_MAP),
    OPT(sensitivity, "sensitivity"),
    OPT(start, "start"),
    OPT(end, "end"),
};
static const struct np_record sums_rec = {.fields = sums_fields,
                                          .n = sizeof(sums_fields) / sizeof(sums_fields[0]),
                                          .keys_off = offsetof(struct np_sum_folded, sums_keys),
                                          .present = np_rec_required_or_set};

/* ---- the fold ---- */

static int sums_check(const struct np_sum_folded *f, struct np_err *err)
{
    /* each x-weighted sum is a share (0 to 1) times its weight: a local share outside 0-100% */
    if (!(f->ls_x_seconds >= 0 && f->ls_x_seconds <= f->ls_seconds) ||
        !(f->ls_x_byte_seconds >= 0 && f->ls_x_byte_seconds <= f->ls_byte_seconds) ||
        !(f->k_x_seconds >= 0 && f->k_x_seconds <= f->k_seconds) || !isfinite(f->ls_seconds) ||
        !isfinite(f->ls_byte_seconds) || !isfinite(f->k_seconds))
        return np_err_set(err, -EINVAL,
                          "nodes_folded.sums: expected finite weights, each x_ sum between 0 "
                          "and its weight (shares from 0 to 1)");
    if (f->ls_nodes < 0 || f->ls_nodes > f->nodes || f->k_nodes < 0 || f->k_nodes > f->nodes ||
        (f->ls_nodes && !(f->ls_seconds > 0)) || (f->k_nodes && !(f->k_seconds > 0)) ||
        (f->ls_nodes && f->ls_all_bytes && !(f->ls_byte_seconds > 0)))
        return np_err_set(err, -EINVAL,
                          "nodes_folded.sums: expected node counts between 0 and nodes (%lld), "
                          "with positive weights (byte seconds too when all_bytes)",
                          (long long)f->nodes);
    return 0;
}

/* After every member is decoded, whatever their order: the names against the count, each
 * distribution against the names, the sums against the count. */
static int fold_check(void *obj, const char *what, struct np_err *err)
{
    struct np_sum_folded *f = obj;
    int rc;

    (void)what;
    if (f->nodes < 1 || f->nodes > NP_FOLD_MAX_NODES)
        return np_err_set(err, -EINVAL, "nodes_folded.nodes: %lld; expected 1 to %d",
                          (long long)f->nodes, NP_FOLD_MAX_NODES);
    if ((rc = np_hostlist_expand(f->names, (size_t)f->nodes, &f->sorted, err)) != 0)
        return rc;
    if ((json_int_t)f->sorted.n != f->nodes)
        return np_err_set(err, -EINVAL, "nodes_folded.names: %zu names for %lld nodes", f->sorted.n,
                          (long long)f->nodes);
    if (f->not_updated) { /* a hostlist too, of folded nodes: checked here, not at a later merge */
        struct np_strs late = {0};
        rc = np_hostlist_expand(f->not_updated, (size_t)f->nodes, &late, err);
        np_strs_free(&late);
        if (rc != 0)
            return rc;
    }
    for (unsigned d = 0; d < NP_DIST_N; d++) {
        const char *name = figure_fields[d].name;
        if (!(f->has_dist[d] = np_keys_has(&f->figure_keys, d)))
            continue;
        if (f->dist[d].count > f->nodes)
            return np_err_set(err, -EINVAL, "nodes_folded.figures.%s: count over nodes", name);
        if (!np_strs_sorted_has(&f->sorted, f->dist[d].min_node) ||
            !np_strs_sorted_has(&f->sorted, f->dist[d].max_node))
            return np_err_set(err, -EINVAL,
                              "nodes_folded.figures.%s: min_node and max_node must be in names",
                              name);
    }
    return sums_check(f, err);
}

static const struct np_field fold_fields[] = {
    F(nodes, "nodes", NP_F_INT),
    F(names, "names", NP_F_STR),
    {.name = "figures", .type = NP_F_RECORD, .required = true, .rec = &figures_rec},
    {.name = "sums", .type = NP_F_RECORD, .required = true, .rec = &sums_rec},
    OPT(not_updated, "not_updated"),
};
#undef F
#undef OPT
static const struct np_record fold_rec = {.fields = fold_fields,
                                          .n = sizeof(fold_fields) / sizeof(fold_fields[0]),
                                          .keys_off = offsetof(struct np_sum_folded, keys),
                                          .present = np_rec_required_or_set,
                                          .check = fold_check};

void np_sum_folded_free(struct np_sum_folded *f)
{
    np_rec_free(&fold_rec, f);
    np_strs_free(&f->sorted); /* not a member: built from names */
    memset(f, 0, sizeof(*f));
}

static int folded_decode(const json_t *j, void *field, const char *what, struct np_err *err)
{
    return np_rec_decode(&fold_rec, j, field, what, err);
}

static json_t *folded_encode(const void *field)
{
    return np_rec_encode(&fold_rec, field);
}

static void folded_free(void *field)
{
    np_sum_folded_free(field);
}

const struct np_field_ops np_sum_folded_ops = {folded_decode, folded_encode, folded_free};
