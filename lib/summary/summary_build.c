/* A job summary's nodes and totals: an empty summary, its user, the job's expected nodes, and
 * the totals, policies, class and missing nodes recomputed from the nodes after every change
 * (docs/summary-schema.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/summary_model.h"
#include "summary_priv.h"

#define SRC_SUMMARY_LOCAL "summary: node local shares weighted by bytes (peak) x seconds"
#define SRC_SUMMARY_LOCAL_TIME                                                                     \
    "summary: node local shares weighted by seconds (a node's bytes were unknown)"
#define SRC_SUMMARY_KERNEL "summary: node kernel time shares weighted by seconds"

static bool skipped_has(const struct np_sum_skip *skipped, size_t n, const char *node)
{
    for (size_t i = 0; i < n; i++)
        if (skipped[i].node && strcmp(skipped[i].node, node) == 0)
            return true;
    return false;
}

bool np_sum_skipped_has(const struct np_sum *s, const char *node)
{
    return skipped_has(s->skipped, s->nskipped, node);
}

/* ---- totals ---- */

/* The expected nodes that neither reported nor were skipped, each once, into @p kept. */
static int still_missing(const struct np_sum *s, struct np_strs *kept)
{
    const char **still = malloc((s->missing_nodes.n + 1) * sizeof(*still));
    size_t n = 0;
    int rc;

    if (!still)
        return -ENOMEM;
    for (size_t i = 0; i < s->missing_nodes.n; i++) {
        const char *name = s->missing_nodes.v[i];
        if (!np_sum_node_reported(s, name) && !np_sum_skipped_has(s, name))
            still[n++] = name;
    }
    rc = np_strs_append_new(kept, still, n);
    free(still);
    return rc;
}

/* The job-wide local share and kernel time share over the nodes that measured them. */
static int totals_figures(const struct np_sum *s, struct np_sum_totals *t)
{
    const bool folded = np_keys_has(&s->keys, NP_SUM_NODES_FOLDED);
    const struct np_sum_folded *f = &s->folded;
    /* the folded nodes' share first: the nodes kept whole are in it already */
    double ls_sum = folded ? f->ls_x_seconds : 0, ls_w = folded ? f->ls_seconds : 0,
           ls_bsum = folded ? f->ls_x_byte_seconds : 0, ls_bw = folded ? f->ls_byte_seconds : 0,
           k_sum = folded ? f->k_x_seconds : 0, k_w = folded ? f->k_seconds : 0, x;
    int ls_nodes = folded ? (int)f->ls_nodes : 0, k_nodes = folded ? (int)f->k_nodes : 0, rc = 0;
    bool all_bytes = folded ? f->ls_all_bytes : true;
    char ls_why[NP_ERR_MSG_MAX] = "", k_why[NP_ERR_MSG_MAX] = "";

    for (size_t i = 0; i < s->nnodes; i++) {
        const struct np_sum_node *n = &s->nodes[i];
        if (np_sum_in_fold(s, n->name))
            continue;
        const struct np_figure *ls = &n->local_share;
        const struct np_figure *k = &n->os.fig[NP_OS_KERNEL_TIME_SHARE];
        const bool has_k = np_keys_has(&n->keys, NP_NODE_OS_INTERFERENCE) &&
                           np_keys_has(&n->os.keys, NP_OS_KERNEL_TIME_SHARE);

        if (np_node_fig(n, NP_NODE_LOCAL_SHARE, ls, &x)) {
            const double w = np_fig_member(ls, NP_FIG_SECONDS, ls->seconds, MIN_WEIGHT_S);
            const double bs = np_fig_member(ls, NP_FIG_BYTE_SECONDS, ls->byte_seconds, -1);
            ls_sum += x * w;
            ls_w += w;
            if (bs > 0) {
                ls_bsum += x * bs;
                ls_bw += bs;
            } else {
                all_bytes = false;
            }
            ls_nodes++;
        } else if (!ls_why[0] && np_keys_has(&n->keys, NP_NODE_LOCAL_SHARE) &&
                   np_keys_has(&ls->keys, NP_FIG_UNAVAILABLE)) {
            snprintf(ls_why, sizeof(ls_why), "no node measured it (%s: %s)", n->name, ls->reason);
        }
        if (has_k && np_figure_available(k)) {
            const double w = np_fig_member(k, NP_FIG_SECONDS, k->seconds, MIN_WEIGHT_S);
            k_sum += np_num_value(&k->value) * w;
            k_w += w;
            k_nodes++;
        } else if (!k_why[0] && has_k && np_keys_has(&k->keys, NP_FIG_UNAVAILABLE)) {
            snprintf(k_why, sizeof(k_why), "no node measured it (%s: %s)", n->name, k->reason);
        }
    }
    if (ls_nodes) {
        rc |= np_figure_set_value(&t->local_share, NP_FIGURE_PLAIN,
                                  np_num_real(all_bytes ? ls_bsum / ls_bw : ls_sum / ls_w),
                                  "fraction", NULL);
        rc |= np_str_set(&t->local_share.weighting, all_bytes ? "bytes x time" : "time");
        np_keys_set(&t->local_share.keys, NP_FIG_WEIGHTING);
        t->local_share.nodes = ls_nodes;
        np_keys_set(&t->local_share.keys, NP_FIG_NODES);
        rc |= np_str_set(&t->local_share.source,
                         all_bytes ? SRC_SUMMARY_LOCAL : SRC_SUMMARY_LOCAL_TIME);
        np_keys_set(&t->local_share.keys, NP_FIG_SOURCE);
    } else {
        rc |= np_figure_set_unavailable(&t->local_share, ls_why[0] ? ls_why : "no node reported it",
                                        "summary");
    }
    if (k_nodes) {
        rc |= np_figure_set_value(&t->kernel_time_share, NP_FIGURE_PLAIN, np_num_real(k_sum / k_w),
                                  "fraction", NULL);
        t->kernel_time_share.nodes = k_nodes;
        np_keys_set(&t->kernel_time_share.keys, NP_FIG_NODES);
        rc |= np_str_set(&t->kernel_time_share.source, SRC_SUMMARY_KERNEL);
        np_keys_set(&t->kernel_time_share.keys, NP_FIG_SOURCE);
    } else {
        rc |= np_figure_set_unavailable(&t->kernel_time_share,
                                        k_why[0] ? k_why : "no node reported it", "summary");
    }
    return rc ? -ENOMEM : 0;
}

int np_sum_recompute(struct np_sum *s)
{
    struct np_strs policies = {0}, kept = {0};
    struct np_map applied = {0};
    struct np_sum_totals totals = {0};
    const char *start = NULL, *end = NULL, *sens = NULL;
    const bool folded = np_keys_has(&s->keys, NP_SUM_NODES_FOLDED);
    const struct np_sum_folded *f = &s->folded;
    json_int_t steps = folded ? f->steps : 0, moved = folded ? f->pages_moved_bytes : 0,
               requests = folded ? f->migration_requests : 0;
    int rc = 0;

    if (folded) {
        rc |= np_strs_copy(&policies, &f->policy_requested);
        rc |= np_map_add(&applied, &f->policy_applied);
        sens = f->sensitivity;
        start = np_iso_ok(f->start) ? f->start : NULL;
        end = np_iso_ok(f->end) ? f->end : NULL;
    }
    for (size_t i = 0; i < s->nnodes; i++) {
        const struct np_sum_node *n = &s->nodes[i];
        if (np_sum_in_fold(s, n->name))
            continue; /* kept whole, counted in the fold */
        const char *ns = np_keys_has(&n->keys, NP_NODE_SENSITIVITY) ? n->sensitivity : NULL;
        const char *nstart = np_keys_has(&n->keys, NP_NODE_START) ? n->start : NULL;
        const char *nend = np_keys_has(&n->keys, NP_NODE_END) ? n->end : NULL;

        steps += np_keys_has(&n->keys, NP_NODE_STEP_COUNT) ? n->step_count : 0;
        moved += np_keys_has(&n->keys, NP_NODE_PAGES_MOVED_BYTES) ? n->pages_moved_bytes : 0;
        if (np_keys_has(&n->keys, NP_NODE_MIGRATIONS) &&
            np_keys_has(&n->migrations.keys, NP_MIGR_REQUESTS))
            requests += n->migrations.requests;
        for (size_t k = 0; k < n->policy_requested.n; k++)
            rc |= np_strs_add_sorted(&policies, n->policy_requested.v[k]);
        rc |= np_map_add(&applied, &n->policy_applied);
        if (ns && (!sens || strcmp(ns, "high") == 0 || strcmp(sens, "unknown") == 0))
            sens = ns;
        if (np_iso_ok(nstart) && (!start || strcmp(nstart, start) < 0))
            start = nstart;
        if (np_iso_ok(nend) && (!end || strcmp(nend, end) > 0))
            end = nend;
    }

    /* a node that reported (even a skipped report) is not missing */
    np_keys_set(&s->keys, NP_SUM_MISSING_NODES);
    rc |= still_missing(s, &kept);
    np_strs_free(&s->missing_nodes);
    s->missing_nodes = kept;
    np_strs_free(&s->policy_requested);
    s->policy_requested = policies;
    np_keys_set(&s->keys, NP_SUM_POLICY_REQUESTED);
    np_map_free(&s->policy_applied);
    s->policy_applied = applied;
    np_keys_set(&s->keys, NP_SUM_POLICY_APPLIED);
    /* sens, start and end point into the nodes: copy before freeing what they replace */
    if (sens) {
        rc |= np_str_set(&s->sensitivity, sens);
        np_keys_set(&s->keys, NP_SUM_SENSITIVITY);
    } else {
        np_keys_del(&s->keys, NP_SUM_SENSITIVITY);
        free(s->sensitivity);
        s->sensitivity = NULL;
    }
    if (start) {
        rc |= np_str_set(&s->start, start);
        np_keys_set(&s->keys, NP_SUM_START);
    }
    if (end) {
        rc |= np_str_set(&s->end, end);
        np_keys_set(&s->keys, NP_SUM_END);
    }

    totals.nodes = (json_int_t)np_sum_node_count(s);
    totals.steps = steps;
    totals.missing_nodes = (json_int_t)s->missing_nodes.n;
    totals.skipped = (json_int_t)s->nskipped;
    totals.pages_moved_bytes = moved;
    totals.migration_requests = requests;
    for (unsigned k = NP_TOT_NODES; k <= NP_TOT_KERNEL_TIME_SHARE; k++)
        np_keys_set(&totals.keys, k);
    rc |= totals_figures(s, &totals);
    np_figure_free(&s->totals.local_share);
    np_figure_free(&s->totals.kernel_time_share);
    s->totals = totals;
    np_keys_set(&s->keys, NP_SUM_TOTALS);
    return rc ? -ENOMEM : 0;
}

/* ---- building ---- */

int np_sum_init(struct np_sum *s, uint32_t job_id)
{
    static const unsigned keys[] = {NP_SUM_SCHEMA,         NP_SUM_JOB_ID, NP_SUM_POLICY_REQUESTED,
                                    NP_SUM_POLICY_APPLIED, NP_SUM_NODES,  NP_SUM_MISSING_NODES,
                                    NP_SUM_SKIPPED,        NP_SUM_TRIMMED};

    memset(s, 0, sizeof(*s));
    s->schema = strdup(NP_SUMMARY_SCHEMA);
    s->job_id = job_id;
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        np_keys_set(&s->keys, keys[k]);
    if (!s->schema || np_sum_recompute(s) != 0) {
        np_sum_free(s);
        return -ENOMEM;
    }
    return 0;
}

int np_sum_set_user(struct np_sum *s, const char *user, struct np_err *err)
{
    if (!user || !*user)
        return np_err_set(err, -EINVAL, "empty user name: expected the job's user, e.g. alice");
    if (np_str_set(&s->user, user) != 0)
        return np_err_set(err, -ENOMEM, "out of memory naming the user");
    np_keys_set(&s->keys, NP_SUM_USER);
    return 0;
}

static bool node_char_ok(char c)
{
    return isalnum((unsigned char)c) || c == '.' || c == '-' || c == '_';
}

int np_sum_expect_nodes(struct np_sum *s, const char *hostlist, struct np_err *err)
{
    static const char *const seps = ", \t\r\n";
    const char *p, **names;
    char *copy;
    size_t n = 0;
    int count = 0, rc;

    /* check every name before changing anything */
    for (p = hostlist ? hostlist : ""; *p;) {
        size_t len = strcspn(p, seps);
        for (size_t k = 0; k < len; k++)
            if (!node_char_ok(p[k]))
                return np_err_set(err, -EINVAL,
                                  "node name '%.*s' has '%c': accepted are letters, digits, '.', "
                                  "'-' and '_', separated by commas (expand Slurm hostlists such "
                                  "as node[1-4] with `scontrol show hostnames`)",
                                  (int)len, p, p[k]);
        if (len >= 256)
            return np_err_set(err, -EINVAL, "node name '%.32s...' is longer than 255 characters",
                              p);
        count += len > 0;
        p += len;
        p += strspn(p, seps);
    }
    if (count == 0)
        return np_err_set(err, -EINVAL,
                          "empty node list: expected the job's nodes separated by commas, e.g. "
                          "node1,node2 (`scontrol show hostnames` expands Slurm hostlists)");
    copy = strdup(hostlist);
    names = malloc((size_t)count * sizeof(*names));
    for (char *q = copy, *save = NULL; copy && names && (q = strtok_r(q, seps, &save)); q = NULL)
        names[n++] = q;
    rc = copy && names ? np_strs_append_new(&s->missing_nodes, names, n) : -ENOMEM;
    free(names);
    free(copy);
    if (rc < 0)
        return np_err_set(err, -ENOMEM, "out of memory listing the expected nodes");
    np_keys_set(&s->keys, NP_SUM_MISSING_NODES);
    np_sum_recompute(s); /* drops the nodes that reported */
    return 0;
}
