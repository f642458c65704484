/* A job summary as text, like seff (docs/summary-schema.md, "Text"). */
#include "summary_priv.h"

/* Width of the local-memory bar: `[##########----------]`. */
#define BAR_WIDTH 20

/* `<sep><label> <figure>`: the one figure printer with the summary's style. */
static void print_fig(FILE *out, const char *sep, const char *label, const json_t *fig,
                      double scale, const char *unit)
{
    const struct np_figure_style style = {
        .scale = scale, .conv = 'g', .precision = 3, .unit = unit, .none = "not kept"};

    fprintf(out, "%s%s ", sep, label);
    np_figure_print(out, fig, &style);
}

/* "<sep><label> 0: 1.0 GiB, 1: 64.0 MiB" of a bytes-per-NUMA-node map. */
static void print_map(FILE *out, const char *sep, const char *label, const json_t *map)
{
    size_t n;
    const char **keys = np_sorted_keys(map, &n);
    char human[32];

    if (!keys)
        return;
    fprintf(out, "%s%s", sep, label);
    for (size_t k = 0; k < n; k++) {
        np_human_bytes((double)jround(json_object_get(map, keys[k])), human, sizeof(human));
        fprintf(out, "%s%s: %s", k ? ", " : " ", keys[k], human);
    }
    if (n == 0)
        fprintf(out, " none");
    free(keys);
}

/* The same for pages_peak_bytes / pages_end_bytes, which may be unavailable. */
static void print_bytes(FILE *out, const char *sep, const char *label, const json_t *b)
{
    if (json_object_get(b, "unavailable"))
        fprintf(out, "%s%s unavailable (%s)", sep, label, jstr(b, "unavailable"));
    else
        print_map(out, sep, label, b);
}

/* How many tasks a map counts (an integer; a real one counts 0, as it always did). */
static long long count_of(const json_t *v)
{
    return (long long)json_integer_value(v);
}

static void print_step(FILE *out, size_t i, const json_t *e)
{
    const char *shared = jstr(e, "helper_shared_cpus"), *step = jstr(e, "step");
    const char *policy = jstr(e, "policy"), *key;
    char applied[128] = "";
    json_t *v;
    size_t o = 0;

    json_object_foreach(json_object_get(e, "applied"), key, v)
    {
        int w = snprintf(applied + o, sizeof(applied) - o, "%s%s x%lld", o ? ", " : "", key,
                         count_of(v));
        if (w < 0 || (size_t)w >= sizeof(applied) - o)
            break;
        o += (size_t)w;
    }
    fprintf(out, "%s %s (requested %s, applied %s, %.0f s%s%s%s)", i ? ";" : ":", step ? step : "?",
            policy ? policy : "?", applied[0] ? applied : "no tasks", jnum(e, "duration_s", 0),
            json_is_false(json_object_get(e, "complete")) ? ", incomplete" : "",
            shared && *shared ? ", shared CPUs with the helper: " : "",
            shared && *shared ? shared : "");
}

static void print_local_share(FILE *out, const char *name, int width, const json_t *n)
{
    const json_t *ls = json_object_get(n, "local_share"), *st;
    const long long steps = jint(ls, "steps"), count = jint(n, "step_count");
    double v;
    size_t i;

    if (jfig(ls, "value", &v)) {
        char bar[BAR_WIDTH + 1];
        const int fill = (int)lround(v * BAR_WIDTH);
        for (int b = 0; b < BAR_WIDTH; b++)
            bar[b] = b < fill ? '#' : '-';
        bar[BAR_WIDTH] = '\0';
        fprintf(out, "%-*s  local memory [%s] %3.0f%%", width, name, bar, v * 100);
        if (steps && steps < count)
            fprintf(out, " (%lld of %lld steps)", steps, count);
        fputc('\n', out);
    } else {
        fprintf(out, "%-*s  local memory unavailable (%s)\n", width, name,
                jstr_or(ls, "unavailable", "not kept"));
    }
    fprintf(out, "    steps (%lld, %.0f s)", count, jnum(n, "duration_s", 0));
    json_array_foreach(json_object_get(n, "steps"), i, st)
    {
        print_step(out, i, st);
    }
    fputc('\n', out);
}

static void print_counters(FILE *out, const json_t *n)
{
    const json_t *cpi = json_object_get(n, "cpi"), *bw = json_object_get(n, "bandwidth");
    double v;

    if (jfig(cpi, "mean", &v))
        fprintf(out, "    CPI: mean %.2f, p95 %.2f (%lld intervals)\n", v, jnum(cpi, "p95", v),
                (long long)jint(cpi, "intervals"));
    else if (cpi)
        fprintf(out, "    CPI: unavailable (%s)\n", jstr_or(cpi, "unavailable", "malformed"));
    if (jfig(bw, "mean_bytes_per_s", &v))
        fprintf(out, "    bandwidth: mean %.2f GB/s, peak %.2f GB/s\n", v / 1e9,
                jnum(bw, "peak_bytes_per_s", v) / 1e9);
    else if (bw)
        fprintf(out, "    bandwidth: unavailable (%s)\n", jstr_or(bw, "unavailable", "malformed"));
}

static void print_migrations(FILE *out, const json_t *n)
{
    const json_t *m = json_object_get(n, "migrations");
    char human[32];

    np_human_bytes((double)jint(n, "pages_moved_bytes"), human, sizeof(human));
    fprintf(out, "    migrations: %s moved", human);
    if (m) {
        const long long requests = jint(m, "requests"), dry = jint(m, "dry_run_requests");
        const char *key;
        json_t *v;
        fprintf(out, " in %lld request%s", requests, requests == 1 ? "" : "s");
        if (dry)
            fprintf(out, " (%lld dry run)", dry);
        fprintf(out, ", %.2f s moving", jnum(m, "moving_s", 0));
        json_object_foreach(json_object_get(m, "failed_pages"), key, v)
        {
            if (count_of(v) > 0)
                fprintf(out, ", %lld pages failed (%s)", count_of(v), key);
        }
        if (json_object_get(m, "in_bytes"))
            print_map(out, "; ", "into", json_object_get(m, "in_bytes"));
        if (json_object_get(m, "out_bytes"))
            print_map(out, "; ", "out of", json_object_get(m, "out_bytes"));
        if (jstr(m, "source"))
            fprintf(out, " [%s]", jstr(m, "source"));
    }
    fputc('\n', out);
}

static void print_node(FILE *out, const char *name, int width, const json_t *n)
{
    const json_t *os = json_object_get(n, "os_interference");
    const json_t *peak = json_object_get(n, "pages_peak_bytes");
    const json_t *end = json_object_get(n, "pages_end_bytes");

    print_local_share(out, name, width, n);
    print_counters(out, n);
    if (peak || end) {
        fprintf(out, "    memory per NUMA node");
        if (peak)
            print_bytes(out, ": ", "peak", peak);
        if (end)
            print_bytes(out, "; ", "end", end);
        fputc('\n', out);
    }
    print_migrations(out, n);
    static const struct {
        const char *label, *key, *unit;
        double scale;
    } figs[] = {{"kernel time share", "kernel_time_share", "%", 100},
                {"involuntary switches", "involuntary_cs_per_s", "/s", 1},
                {"interrupts", "interrupts_per_s", "/s", 1},
                {"softirqs", "softirqs_per_s", "/s", 1},
                {"other CPU time", "other_cpu_time_s", " s", 1}};

    /* the kernel time share alone when the details were trimmed */
    for (size_t k = 0; os && k < (json_object_size(os) > 1 ? sizeof(figs) / sizeof(figs[0]) : 1);
         k++)
        print_fig(out, k ? "; " : "    OS interference: ", figs[k].label,
                  json_object_get(os, figs[k].key), figs[k].scale, figs[k].unit);
    if (os)
        fputc('\n', out);
}

static void print_strings(FILE *out, const json_t *arr)
{
    const json_t *v;
    size_t i;

    json_array_foreach(arr, i, v)
    {
        fprintf(out, "%s%s", i ? ", " : "", json_string_value(v));
    }
}

/* 4096 as "4,096". */
static const char *thousands(size_t v, char *buf, size_t len)
{
    char digits[32];
    size_t n = (size_t)snprintf(digits, sizeof(digits), "%zu", v), o = 0;

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
static void print_folded_nodes(FILE *out, const json_t *s, const struct np_fold_names *f,
                               const char **names, size_t n, np_hostlist_fn hostlist)
{
    size_t late = 0;
    char count[32], *list = NULL;

    if (hostlist) { /* the fold's names (decoded, bounded) and the others, in the reader's form */
        const char **all = malloc((f->sorted.n + n + 1) * sizeof(*all));
        size_t k = 0;
        for (size_t i = 0; all && i < f->sorted.n; i++)
            all[k++] = f->sorted.v[i];
        for (size_t i = 0; all && i < n; i++)
            if (!np_fold_names_has(f, names[i]))
                all[k++] = names[i];
        list = all ? hostlist(all, k) : NULL;
        free(all);
    }
    fprintf(out, "Nodes: %s reported (%s",
            thousands(np_fold_names_count(s, f), count, sizeof(count)),
            list ? list : jstr(json_object_get(s, "nodes_folded"), "names"));
    for (size_t i = 0; !list && i < n; i++)
        if (!np_fold_names_has(f, names[i]))
            fprintf(out, ",%s", names[i]);
    free(list);
    fprintf(out, "); per-node figures as distributions; worst nodes:");
    for (size_t i = 0; i < n; i++)
        if (np_fold_names_has(f, names[i]))
            fprintf(out, " %s", names[i]);
        else
            late++;
    if (late)
        fprintf(out, "; %zu merged after the fold, kept whole", late);
}

static void print_distributions(FILE *out, const json_t *fold)
{
    static const char *const labels[NP_DIST_N] = {"local memory",      "CPI",      "bandwidth",
                                                  "kernel time share", "duration", "steps",
                                                  "pages moved"};
    static const char *const stats[] = {"min", "p50", "p90", "max"};

    fprintf(out,
            "\nPer-node figures over the %lld nodes folded (nodes with the figure: min, p50, "
            "p90, max):\n",
            (long long)jint(fold, "nodes"));
    for (unsigned d = 0; d < NP_DIST_N; d++) {
        const json_t *x = json_object_get(json_object_get(fold, "figures"), np_dist_names[d]);
        if (!x) {
            fprintf(out, "  %-18s unavailable (no folded node measured it)\n", labels[d]);
            continue;
        }
        fprintf(out, "  %-18s %lld: ", labels[d], (long long)jint(x, "count"));
        for (int k = 0; k < 4; k++) { /* each number as its figure is printed */
            const double v = jnum(x, stats[k], 0);
            char human[32];
            if (d == NP_DIST_LOCAL_SHARE || d == NP_DIST_KERNEL_TIME_SHARE) {
                fprintf(out, "%.0f%%", v * 100);
            } else if (d == NP_DIST_BANDWIDTH) {
                fprintf(out, "%.2f GB/s", v / 1e9);
            } else if (d == NP_DIST_PAGES_MOVED_BYTES) {
                np_human_bytes(v, human, sizeof(human));
                fputs(human, out);
            } else {
                fprintf(out, d == NP_DIST_DURATION_S ? "%.0f s" : "%.3g", v);
            }
            if (k == 0 || k == 3)
                fprintf(out, " (%s)", jstr(x, k ? "max_node" : "min_node"));
            if (k < 3)
                fputs(", ", out);
        }
        if (jint(x, "percentiles_of") != jint(x, "count"))
            fprintf(out,
                    "; p50 and p90 of the first %lld (nodes folded in later are in the "
                    "count, min and max only)",
                    (long long)jint(x, "percentiles_of"));
        fputc('\n', out);
    }
    if (jstr(fold, "not_updated"))
        fprintf(out,
                "  not updated: later parts of %s came after their nodes were folded; their "
                "figures are those of the parts folded\n",
                jstr(fold, "not_updated"));
}

/* The job-wide lines above the nodes. */
static void print_job(FILE *out, const json_t *s, const struct np_fold_names *f, const char **names,
                      size_t n, np_hostlist_fn hostlist)
{
    const json_t *t = json_object_get(s, "totals"), *applied = json_object_get(s, "policy_applied");
    const json_t *ls = json_object_get(t, "local_share"),
                 *k = json_object_get(t, "kernel_time_share");
    const size_t missing = json_array_size(json_object_get(s, "missing_nodes"));
    const char *start = jstr(s, "start"), *end = jstr(s, "end"), **pols;
    size_t npols = 0;
    long long requests = jint(t, "migration_requests");
    char human[32];
    double v;

    fprintf(out, "Job ID: %lld\nUser: %s", (long long)jint(s, "job_id"),
            jstr_or(s, "user", "unknown"));
    if (json_object_get(s, "uid"))
        fprintf(out, " (uid %lld)", (long long)jint(s, "uid"));
    fputc('\n', out);
    if (f->folded) {
        print_folded_nodes(out, s, f, names, n, hostlist);
    } else {
        fprintf(out, "Nodes: %zu reported (", n);
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%s", i ? ", " : "", names[i]);
        fprintf(out, ")");
    }
    if (missing)
        fprintf(out, ", %zu missing", missing);
    fprintf(out, "; %lld steps\n", (long long)jint(t, "steps"));
    if (start || end)
        fprintf(out, "Run: %s to %s\n", start ? start : "?", end ? end : "?");
    fprintf(out, "Policy requested: ");
    print_strings(out, json_object_get(s, "policy_requested"));
    fprintf(out, "\nPolicy applied per task: ");
    pols = np_sorted_keys(applied, &npols);
    for (size_t i = 0; pols && i < npols; i++)
        fprintf(out, "%s%s x%lld", i ? ", " : "", pols[i],
                (long long)jround(json_object_get(applied, pols[i])));
    if (json_object_size(applied) == 0)
        fprintf(out, "not known");
    free(pols);
    fprintf(out, "\nSensitivity class: %s\n", jstr_or(s, "sensitivity", "unknown"));
    if (jfig(ls, "value", &v))
        fprintf(out, "Local memory (job): %.0f%% (weighted by %s over %lld node%s)\n", v * 100,
                jstr_or(ls, "weighting", "time"), (long long)jint(ls, "nodes"),
                jint(ls, "nodes") == 1 ? "" : "s");
    else
        fprintf(out, "Local memory (job): unavailable (%s)\n",
                jstr_or(ls, "unavailable", "not kept"));
    np_human_bytes((double)jint(t, "pages_moved_bytes"), human, sizeof(human));
    fprintf(out, "Pages moved: %s in %lld migration request%s\n", human, requests,
            requests == 1 ? "" : "s");
    if (jfig(k, "value", &v))
        fprintf(out, "Kernel time share: %.1f%%\n", v * 100);
    else
        fprintf(out, "Kernel time share: unavailable (%s)\n",
                jstr_or(k, "unavailable", "not kept"));
}

/* np_summary_print_hostlist, with the "Predicted sensitivity:" line only when @p prediction. */
static int print_as(FILE *out, const json_t *s, const struct np_sens_model *model, bool prediction,
                    np_hostlist_fn hostlist)
{
    json_t *advice = np_summary_advice_with(s, model), *e;
    struct np_fold_names f;
    size_t n = 0, i;
    const char **names = np_sorted_keys(json_object_get(s, "nodes"), &n);
    int width = 4;

    if (!names || !advice || np_fold_names_get(s, &f) != 0) {
        free(names);
        json_decref(advice);
        return -ENOMEM;
    }
    print_job(out, s, &f, names, n, hostlist);
    for (size_t k = 0; k < n; k++)
        if ((int)strlen(names[k]) > width)
            width = (int)strlen(names[k]);
    if (f.folded)
        print_distributions(out, json_object_get(s, "nodes_folded"));
    if (n)
        fputc('\n', out);
    for (size_t k = 0; k < n; k++)
        print_node(out, names[k], width, json_object_get(json_object_get(s, "nodes"), names[k]));
    free(names);
    np_strs_free(&f.sorted);

    if (prediction) { /* beside its label and class (docs/sensitivity.md) */
        struct np_summary_prediction p;
        np_summary_predict(s, model, &p);
        if (!p.available)
            fprintf(out, "Predicted sensitivity: %s\n", p.why);
        else
            fprintf(out,
                    "Predicted sensitivity: %.2fx with remote memory (%s step %s): %s (threshold "
                    "%.2fx)\n",
                    p.slowdown, p.node, p.step ? p.step : "?",
                    p.sensitive ? "placement-sensitive" : "not placement-sensitive",
                    model->threshold);
    }
    fprintf(out, "\nAdvice:\n");
    json_array_foreach(advice, i, e)
    {
        fprintf(out, "  [%s] %s\n", jstr(e, "rule"), jstr(e, "text"));
    }
    json_decref(advice);
    if (json_array_size(json_object_get(s, "missing_nodes"))) {
        fprintf(out, "Missing (no report from these nodes): ");
        print_strings(out, json_object_get(s, "missing_nodes"));
        fputc('\n', out);
    }
    json_array_foreach(json_object_get(s, "skipped"), i, e)
    {
        fprintf(out, "Skipped: node %s step %s: %s\n", jstr_or(e, "node", "?"),
                jstr_or(e, "step", "?"), jstr_or(e, "reason", "?"));
    }
    if (json_array_size(json_object_get(s, "trimmed"))) {
        fprintf(out, "Trimmed to fit AdminComment: ");
        json_array_foreach(json_object_get(s, "trimmed"), i, e)
        {
            fprintf(out, "%s%s", i ? ", " : "", jstr_or(e, "what", "?"));
        }
        fputc('\n', out);
    }
    return ferror(out) ? -EIO : 0;
}

int np_summary_print(FILE *out, const json_t *summary)
{
    if (!out || np_summary_validate(summary, NULL) != 0)
        return -EINVAL;
    return print_as(out, summary, NULL, false, NULL);
}

int np_summary_print_hostlist(FILE *out, const json_t *summary, const struct np_sens_model *model,
                              np_hostlist_fn hostlist)
{
    if (!out || np_summary_validate(summary, NULL) != 0)
        return -EINVAL;
    return print_as(out, summary, model, true, hostlist);
}
