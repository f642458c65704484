/* A job summary as text, like seff (docs/summary-schema.md, "Text"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/summary_model.h"
#include "summary_priv.h"

/* `%s<label> <figure>`: the one figure printer with the summary's style. */
static void print_fig(FILE *out, const char *label, const struct np_figure *fig, double scale,
                      const char *unit)
{
    const struct np_figure_style style = {
        .scale = scale, .conv = 'g', .precision = 3, .unit = unit, .none = "not kept"};

    fprintf(out, "%s ", label);
    np_figure_print(out, fig, &style);
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct np_map_entry *)a)->key, ((const struct np_map_entry *)b)->key);
}

/* The entries of @p m in key order: a new array of shallow copies (free()), NULL on OOM. */
static struct np_map_entry *sorted_entries(const struct np_map *m)
{
    struct np_map_entry *v = malloc((m->n ? m->n : 1) * sizeof(*v));

    if (!v)
        return NULL;
    if (m->n)
        memcpy(v, m->e, m->n * sizeof(*v));
    qsort(v, m->n, sizeof(*v), cmp_entry);
    return v;
}

/* "<sep><label> 0: 1.0 GiB, 1: 64.0 MiB" of a bytes-per-NUMA-node map. */
static void print_map(FILE *out, const char *sep, const char *label, const struct np_map *map)
{
    struct np_map_entry *e = sorted_entries(map);
    char human[32];

    if (!e)
        return;
    fprintf(out, "%s%s", sep, label);
    for (size_t k = 0; k < map->n; k++) {
        np_human_bytes((double)np_num_int_value(&e[k].v), human, sizeof(human));
        fprintf(out, "%s%s: %s", k ? ", " : " ", e[k].key, human);
    }
    if (map->n == 0)
        fprintf(out, " none");
    free(e);
}

/* The same for pages_peak_bytes / pages_end_bytes, which may be unavailable. */
static void print_bytes(FILE *out, const char *sep, const char *label, const struct np_sum_bytes *b)
{
    if (b->is_map)
        print_map(out, sep, label, &b->map);
    else
        fprintf(out, "%s%s unavailable (%s)", sep, label, b->unavailable.reason);
}

/* How many tasks a map counts at @p e (an integer; a real one counts 0, as it always did). */
static long long count_of(const struct np_map_entry *e)
{
    return e->v.kind == NP_NUM_INT ? (long long)e->v.i : 0;
}

static void print_local_share(FILE *out, const char *name, int width, const struct np_sum_node *n)
{
    const struct np_figure *ls = &n->local_share;
    const long long steps = np_keys_has(&ls->keys, NP_FIG_STEPS) ? (long long)ls->steps : 0;
    const long long count =
        np_keys_has(&n->keys, NP_NODE_STEP_COUNT) ? (long long)n->step_count : 0;
    double v;

    if (np_node_fig(n, NP_NODE_LOCAL_SHARE, ls, &v)) {
        char bar[NP_SUMMARY_BAR_WIDTH + 1];
        const int fill = (int)lround(v * NP_SUMMARY_BAR_WIDTH);
        for (int b = 0; b < NP_SUMMARY_BAR_WIDTH; b++)
            bar[b] = b < fill ? '#' : '-';
        bar[NP_SUMMARY_BAR_WIDTH] = '\0';
        fprintf(out, "%-*s  local memory [%s] %3.0f%%", width, name, bar, v * 100);
        if (steps && steps < count)
            fprintf(out, " (%lld of %lld steps)", steps, count);
        fputc('\n', out);
    } else {
        fprintf(out, "%-*s  local memory unavailable (%s)\n", width, name,
                np_keys_has(&n->keys, NP_NODE_LOCAL_SHARE) &&
                        np_keys_has(&ls->keys, NP_FIG_UNAVAILABLE)
                    ? ls->reason
                    : "not kept");
    }
    fprintf(out, "    steps (%lld, %.0f s)", count,
            np_keys_has(&n->keys, NP_NODE_DURATION_S) ? n->duration_s : 0);
    for (size_t i = 0; i < n->nsteps; i++) {
        const struct np_sum_step *e = &n->steps[i];
        char applied[128] = "";
        size_t o = 0;
        for (size_t k = 0; k < e->applied.n; k++) {
            int w = snprintf(applied + o, sizeof(applied) - o, "%s%s x%lld", o ? ", " : "",
                             e->applied.e[k].key, count_of(&e->applied.e[k]));
            if (w < 0 || (size_t)w >= sizeof(applied) - o)
                break;
            o += (size_t)w;
        }
        fprintf(out, "%s %s (requested %s, applied %s, %.0f s%s%s%s)", i ? ";" : ":",
                e->step ? e->step : "?", e->policy ? e->policy : "?",
                applied[0] ? applied : "no tasks", e->duration_s,
                np_keys_has(&e->keys, NP_STEP_COMPLETE) && !e->complete ? ", incomplete" : "",
                e->helper_shared_cpus && *e->helper_shared_cpus ? ", shared CPUs with the helper: "
                                                                : "",
                e->helper_shared_cpus && *e->helper_shared_cpus ? e->helper_shared_cpus : "");
    }
    fputc('\n', out);
}

static void print_counters(FILE *out, const struct np_sum_node *n)
{
    const struct np_figure *cpi = &n->cpi, *bw = &n->bandwidth;
    double v;

    if (np_node_fig(n, NP_NODE_CPI, cpi, &v))
        fprintf(out, "    CPI: mean %.2f, p95 %.2f (%lld intervals)\n", v,
                np_fig_member(cpi, NP_FIG_PEAK, cpi->peak, v),
                np_keys_has(&cpi->keys, NP_FIG_INTERVALS) ? (long long)cpi->intervals : 0);
    else if (np_keys_has(&n->keys, NP_NODE_CPI))
        fprintf(out, "    CPI: unavailable (%s)\n", cpi->reason ? cpi->reason : "malformed");
    if (np_node_fig(n, NP_NODE_BANDWIDTH, bw, &v))
        fprintf(out, "    bandwidth: mean %.2f GB/s, peak %.2f GB/s\n", v / 1e9,
                np_fig_member(bw, NP_FIG_PEAK, bw->peak, v) / 1e9);
    else if (np_keys_has(&n->keys, NP_NODE_BANDWIDTH))
        fprintf(out, "    bandwidth: unavailable (%s)\n", bw->reason ? bw->reason : "malformed");
}

static void print_migrations(FILE *out, const struct np_sum_node *n)
{
    const struct np_sum_migrations *m = &n->migrations;
    char human[32];

    np_human_bytes(np_keys_has(&n->keys, NP_NODE_PAGES_MOVED_BYTES) ? (double)n->pages_moved_bytes
                                                                    : 0,
                   human, sizeof(human));
    fprintf(out, "    migrations: %s moved", human);
    if (np_keys_has(&n->keys, NP_NODE_MIGRATIONS)) {
        const long long requests =
            np_keys_has(&m->keys, NP_MIGR_REQUESTS) ? (long long)m->requests : 0;
        const long long dry =
            np_keys_has(&m->keys, NP_MIGR_DRY_RUN_REQUESTS) ? (long long)m->dry_run_requests : 0;
        fprintf(out, " in %lld request%s", requests, requests == 1 ? "" : "s");
        if (dry)
            fprintf(out, " (%lld dry run)", dry);
        fprintf(out, ", %.2f s moving", np_keys_has(&m->keys, NP_MIGR_MOVING_S) ? m->moving_s : 0);
        for (size_t k = 0; k < m->failed_pages.n; k++)
            if (count_of(&m->failed_pages.e[k]) > 0)
                fprintf(out, ", %lld pages failed (%s)", count_of(&m->failed_pages.e[k]),
                        m->failed_pages.e[k].key);
        if (np_keys_has(&m->keys, NP_MIGR_IN_BYTES))
            print_map(out, "; ", "into", &m->in_bytes);
        if (np_keys_has(&m->keys, NP_MIGR_OUT_BYTES))
            print_map(out, "; ", "out of", &m->out_bytes);
        if (np_keys_has(&m->keys, NP_MIGR_SOURCE))
            fprintf(out, " [%s]", m->source);
    }
    fputc('\n', out);
}

/* The OS figure @p which of the node, or NULL when it has none. */
static const struct np_figure *os_fig(const struct np_sum_node *n, unsigned which)
{
    return np_keys_has(&n->os.keys, which) ? &n->os.fig[which] : NULL;
}

static void print_node(FILE *out, const char *name, int width, const struct np_sum_node *n)
{
    print_local_share(out, name, width, n);
    print_counters(out, n);
    if (np_keys_has(&n->keys, NP_NODE_PAGES_PEAK_BYTES) ||
        np_keys_has(&n->keys, NP_NODE_PAGES_END_BYTES)) {
        fprintf(out, "    memory per NUMA node");
        if (np_keys_has(&n->keys, NP_NODE_PAGES_PEAK_BYTES))
            print_bytes(out, ": ", "peak", &n->pages_peak_bytes);
        if (np_keys_has(&n->keys, NP_NODE_PAGES_END_BYTES))
            print_bytes(out, "; ", "end", &n->pages_end_bytes);
        fputc('\n', out);
    }
    print_migrations(out, n);
    if (np_keys_has(&n->keys, NP_NODE_OS_INTERFERENCE)) {
        fprintf(out, "    OS interference: ");
        print_fig(out, "kernel time share", os_fig(n, NP_OS_KERNEL_TIME_SHARE), 100, "%");
        if (n->os.keys.n > 1) {
            fprintf(out, "; ");
            print_fig(out, "involuntary switches", os_fig(n, NP_OS_INVOLUNTARY_CS_PER_S), 1, "/s");
            fprintf(out, "; ");
            print_fig(out, "interrupts", os_fig(n, NP_OS_INTERRUPTS_PER_S), 1, "/s");
            fprintf(out, "; ");
            print_fig(out, "softirqs", os_fig(n, NP_OS_SOFTIRQS_PER_S), 1, "/s");
            fprintf(out, "; ");
            print_fig(out, "other CPU time", os_fig(n, NP_OS_OTHER_CPU_TIME_S), 1, " s");
        }
        fputc('\n', out);
    }
}

static void print_strings(FILE *out, const struct np_strs *s)
{
    for (size_t i = 0; i < s->n; i++)
        fprintf(out, "%s%s", i ? ", " : "", s->v[i]);
}

/* 4096 as "4,096". */
static const char *thousands(long long v, char *buf, size_t len)
{
    char digits[32];
    size_t n = (size_t)snprintf(digits, sizeof(digits), "%lld", v < 0 ? -v : v), o = 0;

    if (v < 0 && o + 1 < len)
        buf[o++] = '-';
    for (size_t i = 0; i < n && o + 1 < len; i++) {
        if (i && (n - i) % 3 == 0 && o + 1 < len)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

/* "Nodes: 4,096 reported (node[0001-4096]); per-node figures as distributions; worst nodes: ..."
 * @p names: the nodes kept whole or merged after the fold. */
static void print_folded_nodes(FILE *out, const struct np_sum *s, const char **names, size_t n)
{
    const struct np_sum_folded *f = &s->folded;
    size_t late = 0;
    char count[32];

    fprintf(out, "Nodes: %s reported (%s",
            thousands((long long)np_sum_node_count(s), count, sizeof(count)), f->names);
    for (size_t i = 0; i < n; i++)
        if (!np_sum_in_fold(s, names[i]))
            fprintf(out, ",%s", names[i]);
    fprintf(out, "); per-node figures as distributions; worst nodes:");
    for (size_t i = 0; i < n; i++)
        if (np_sum_in_fold(s, names[i]))
            fprintf(out, " %s", names[i]);
        else
            late++;
    if (late)
        fprintf(out, "; %zu merged after the fold, kept whole", late);
}

/* A distribution's number as its figure is printed. */
static void print_dist_value(FILE *out, unsigned d, double v)
{
    char human[32];

    if (d == NP_DIST_LOCAL_SHARE || d == NP_DIST_KERNEL_TIME_SHARE) {
        fprintf(out, "%.0f%%", v * 100);
    } else if (d == NP_DIST_BANDWIDTH) {
        fprintf(out, "%.2f GB/s", v / 1e9);
    } else if (d == NP_DIST_PAGES_MOVED_BYTES) {
        np_human_bytes(v, human, sizeof(human));
        fprintf(out, "%s", human);
    } else if (d == NP_DIST_DURATION_S) {
        fprintf(out, "%.0f s", v);
    } else {
        fprintf(out, "%.3g", v);
    }
}

/* "Per-node figures (nodes, min, p50, p90, max):" one line per figure of the fold. */
static void print_distributions(FILE *out, const struct np_sum *s)
{
    static const char *const labels[NP_DIST_N] = {"local memory",      "CPI",      "bandwidth",
                                                  "kernel time share", "duration", "steps",
                                                  "pages moved"};
    const struct np_sum_folded *f = &s->folded;

    fprintf(out,
            "\nPer-node figures over the %lld nodes folded (nodes with the figure: min, p50, "
            "p90, max):\n",
            (long long)f->nodes);
    for (unsigned d = 0; d < NP_DIST_N; d++) {
        const struct np_sum_dist *x = &f->dist[d];
        if (!f->has_dist[d]) {
            fprintf(out, "  %-18s unavailable (no folded node measured it)\n", labels[d]);
            continue;
        }
        fprintf(out, "  %-18s %lld: ", labels[d], (long long)x->count);
        print_dist_value(out, d, x->min);
        fprintf(out, " (%s), ", x->min_node);
        print_dist_value(out, d, x->p50);
        fprintf(out, ", ");
        print_dist_value(out, d, x->p90);
        fprintf(out, ", ");
        print_dist_value(out, d, x->max);
        fprintf(out, " (%s)", x->max_node);
        if (x->percentiles_of != x->count)
            fprintf(out,
                    "; p50 and p90 of the first %lld (nodes folded in later are in the "
                    "count, min and max only)",
                    (long long)x->percentiles_of);
        fputc('\n', out);
    }
    if (f->not_updated)
        fprintf(out,
                "  not updated: later parts of %s came after their nodes were folded; their "
                "figures are those of the parts folded\n",
                f->not_updated);
}

/* The job-wide lines above the nodes. */
static void print_job(FILE *out, const struct np_sum *s, const char **names, size_t n)
{
    const struct np_sum_totals *t = &s->totals;
    const bool totals = np_keys_has(&s->keys, NP_SUM_TOTALS);
    /* zeroed (no number, no reason) when the summary has no totals */
    const struct np_figure *ls = &t->local_share, *k = &t->kernel_time_share;
    struct np_map_entry *pols;
    long long requests;
    char human[32];

    fprintf(out, "Job ID: %lld\n", (long long)s->job_id);
    fprintf(out, "User: %s", np_keys_has(&s->keys, NP_SUM_USER) ? s->user : "unknown");
    if (np_keys_has(&s->keys, NP_SUM_UID))
        fprintf(out, " (uid %lld)", (long long)s->uid);
    fputc('\n', out);
    if (np_keys_has(&s->keys, NP_SUM_NODES_FOLDED)) {
        print_folded_nodes(out, s, names, n);
    } else {
        fprintf(out, "Nodes: %zu reported (", n);
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%s", i ? ", " : "", names[i]);
        fprintf(out, ")");
    }
    if (s->missing_nodes.n)
        fprintf(out, ", %zu missing", s->missing_nodes.n);
    fprintf(out, "; %lld steps\n",
            totals && np_keys_has(&t->keys, NP_TOT_STEPS) ? (long long)t->steps : 0);
    if (s->start || s->end)
        fprintf(out, "Run: %s to %s\n", s->start ? s->start : "?", s->end ? s->end : "?");
    fprintf(out, "Policy requested: ");
    print_strings(out, &s->policy_requested);
    fprintf(out, "\nPolicy applied per task: ");
    pols = sorted_entries(&s->policy_applied);
    for (size_t i = 0; pols && i < s->policy_applied.n; i++)
        fprintf(out, "%s%s x%lld", i ? ", " : "", pols[i].key,
                (long long)np_num_int_value(&pols[i].v));
    if (s->policy_applied.n == 0)
        fprintf(out, "not known");
    free(pols);
    fprintf(out, "\nSensitivity class: %s\n", s->sensitivity ? s->sensitivity : "unknown");
    if (np_figure_available(ls))
        fprintf(out, "Local memory (job): %.0f%% (weighted by %s over %lld node%s)\n",
                np_figure_value(ls) * 100, ls->weighting ? ls->weighting : "time",
                np_keys_has(&ls->keys, NP_FIG_NODES) ? (long long)ls->nodes : 0,
                np_keys_has(&ls->keys, NP_FIG_NODES) && ls->nodes == 1 ? "" : "s");
    else
        fprintf(out, "Local memory (job): unavailable (%s)\n",
                ls->reason ? ls->reason : "not kept");
    np_human_bytes(totals && np_keys_has(&t->keys, NP_TOT_PAGES_MOVED_BYTES)
                       ? (double)t->pages_moved_bytes
                       : 0,
                   human, sizeof(human));
    requests = totals && np_keys_has(&t->keys, NP_TOT_MIGRATION_REQUESTS)
                   ? (long long)t->migration_requests
                   : 0;
    fprintf(out, "Pages moved: %s in %lld migration request%s\n", human, requests,
            requests == 1 ? "" : "s");
    if (np_figure_available(k))
        fprintf(out, "Kernel time share: %.1f%%\n", np_figure_value(k) * 100);
    else
        fprintf(out, "Kernel time share: unavailable (%s)\n", k->reason ? k->reason : "not kept");
}

/* The job's predicted sensitivity beside its label and class (docs/sensitivity.md). */
static void print_prediction(FILE *out, const struct np_sum *s, const struct np_sens_model *model)
{
    struct np_sum_prediction p;

    np_sum_predict(s, model, &p);
    if (!p.available)
        fprintf(out, "Predicted sensitivity: %s\n", p.why);
    else
        fprintf(out,
                "Predicted sensitivity: %.2fx with remote memory (%s step %s): %s (threshold "
                "%.2fx)\n",
                p.slowdown, p.node, p.step ? p.step : "?",
                p.sensitive ? "placement-sensitive" : "not placement-sensitive", model->threshold);
}

int np_sum_print(FILE *out, const struct np_sum *s)
{
    return np_sum_print_with(out, s, NULL, false);
}

int np_sum_print_with(FILE *out, const struct np_sum *s, const struct np_sens_model *model,
                      bool prediction)
{
    struct np_advice *advice = NULL;
    const char **names;
    size_t n = 0;
    int width = 4, nadvice;

    names = np_sum_sorted_nodes(s, &n);
    nadvice = np_sum_advice_with(s, model, &advice);
    if (!names || nadvice < 0) {
        free(names);
        free(advice);
        return -ENOMEM;
    }
    print_job(out, s, names, n);
    for (size_t k = 0; k < n; k++)
        if ((int)strlen(names[k]) > width)
            width = (int)strlen(names[k]);
    if (np_keys_has(&s->keys, NP_SUM_NODES_FOLDED))
        print_distributions(out, s);
    if (n)
        fputc('\n', out);
    for (size_t k = 0; k < n; k++)
        print_node(out, names[k], width, np_sum_node_get(s, names[k]));
    free(names);

    if (prediction)
        print_prediction(out, s, model);
    fprintf(out, "\nAdvice:\n");
    for (int i = 0; i < nadvice; i++)
        fprintf(out, "  [%s] %s\n", advice[i].rule, advice[i].text);
    free(advice);
    if (s->missing_nodes.n) {
        fprintf(out, "Missing (no report from these nodes): ");
        print_strings(out, &s->missing_nodes);
        fputc('\n', out);
    }
    for (size_t i = 0; i < s->nskipped; i++)
        fprintf(out, "Skipped: node %s step %s: %s\n",
                s->skipped[i].node ? s->skipped[i].node : "?",
                s->skipped[i].step ? s->skipped[i].step : "?",
                s->skipped[i].reason ? s->skipped[i].reason : "?");
    if (s->ntrimmed) {
        fprintf(out, "Trimmed to fit AdminComment: ");
        for (size_t i = 0; i < s->ntrimmed; i++)
            fprintf(out, "%s%s", i ? ", " : "", s->trimmed[i].what ? s->trimmed[i].what : "?");
        fputc('\n', out);
    }
    return ferror(out) ? -EIO : 0;
}
