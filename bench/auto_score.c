/*
 * auto_score: --numa-policy=auto against always-local, always-interleave and the per-case best
 * (oracle) on the thesis's measured characterization runs (docs/auto.md).
 *
 *   auto_score [--json] [--labels thesis|history|high] CHARACTERIZATION.csv SWEEPS.csv TABLE.csv
 *   auto_score [--json] [--labels thesis|history|high] --held-out DATA_DIR CHARACTERIZATION.csv ...
 *   auto_score [--json] [--labels thesis|history|high] --mixes DATA_DIR
 *
 * The second scores the static mixes under models refit with each mix held out
 * (auto_score_mixes.c); what follows is the first.
 *
 * Cases: every benchmark and input of scenarios 1 (alone), 3 (one memory hog on the CPUs' node 0)
 * and 5 (ten hogs there), and the 520.omnetpp_r sweep with 0-10 hogs on node 0, where both local
 * and interleave were measured. Auto decides each case with np_auto_choose as the plugin would:
 * the task on node 0 of four, node 0 loaded when the hogs' demand is above the break-even
 * utilisation 1 - 1/remote_latency of its controller (np_auto_threshold); the other nodes idle.
 * Its interleave-all is scored with the measured interleave over nodes 0 and 1 (the thesis
 * interleaved over two nodes only). The contention figures (controller capacity, a hog's demand,
 * the remote latency) are the calibrated model's (bench/contention_fit), whose fit used the
 * characterization scenarios and the sweep besides the static mixes (docs/replay.md): the
 * threshold is not independent of the cases scored here, though their scored times are the
 * measured ones; --capacity, --hog and --latency change them. --held-out DATA_DIR takes them from
 * a refit on DATA_DIR's static runs without the cases scored here (auto_score_refit.c).
 *
 * Slowdowns are per case time / the case's best measured time (the oracle is 1); figures are
 * geometric means.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auto_score_mixes.h"
#include "auto_score_refit.h"
#include "numaplace/auto.h"

#define MAX_CASES 512

struct score_case {
    char bench[32], group[16];
    int input, hogs;
    double local_s, interleave_s;
    bool sensitive_known, sensitive;
};

static struct score_case cases[MAX_CASES];
static size_t ncases;

/* Default contention figures: the calibrated model's Sandman fit (bench/contention_fit). */
static double capacity_mbps = 195679, hog_mbps = 12401, remote_latency = 1.374;

static struct score_case *find(const char *bench, int input, const char *group, int hogs)
{
    for (size_t i = 0; i < ncases; i++)
        if (!strcmp(cases[i].bench, bench) && cases[i].input == input && cases[i].hogs == hogs &&
            !strcmp(cases[i].group, group))
            return &cases[i];
    if (ncases == MAX_CASES)
        return NULL;
    memset(&cases[ncases], 0, sizeof(cases[ncases]));
    snprintf(cases[ncases].bench, sizeof(cases[ncases].bench), "%s", bench);
    snprintf(cases[ncases].group, sizeof(cases[ncases].group), "%s", group);
    cases[ncases].input = input;
    cases[ncases].hogs = hogs;
    return &cases[ncases++];
}

static void book(struct score_case *c, const char *placement, double t)
{
    if (!c || !(t > 0))
        return;
    if (!strcmp(placement, "local"))
        c->local_s = t;
    else if (!strcmp(placement, "interleave"))
        c->interleave_s = t;
}

static FILE *open_csv(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fprintf(stderr, "auto_score: %s: %s\n", path, strerror(errno));
    return f;
}

/* benchmark,input,scenario,placement,corunner_node,corunners,time_s,... */
static int read_characterization(const char *path)
{
    char line[512], bench[32], placement[16], node[16];
    int input, scenario, hogs;
    double t;
    FILE *f = open_csv(path);

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (line[0] != '#' &&
            sscanf(line, "%31[^,],%d,%d,%15[^,],%15[^,],%d,%lf", bench, &input, &scenario,
                   placement, node, &hogs, &t) == 7 &&
            (scenario == 1 || scenario == 3 || scenario == 5))
            book(find(bench, input,
                      scenario == 1   ? "alone"
                      : scenario == 3 ? "1 hog"
                                      : "10 hogs",
                      hogs),
                 placement, t);
    fclose(f);
    return 0;
}

/* sweep,benchmark,placement,count,time_s,... (stress_3_5 only: hogs on the CPUs' node) */
static int read_sweep(const char *path)
{
    char line[512], sweep[32], bench[32], placement[16];
    int hogs;
    double t;
    FILE *f = open_csv(path);

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (line[0] != '#' &&
            sscanf(line, "%31[^,],%31[^,],%15[^,],%d,%lf", sweep, bench, placement, &hogs, &t) ==
                5 &&
            !strcmp(sweep, "stress_3_5"))
            book(find(bench, 0, "sweep", hogs), placement, t);
    fclose(f);
    return 0;
}

/* The sensitivity auto is told: the thesis's label ("thesis"), the alone run's remote slowdown
 * at 110% or more ("history": what earlier runs would teach), or high for all ("high"). */
static int read_table(const char *path, const char *labels)
{
    char line[513], bench[32], sens[16];
    int input;
    double t, ipc, mpki, tlb, bw, remote, inter;
    FILE *f = open_csv(path);

    if (!f)
        return -1;
    while (fgets(line, sizeof(line) - 1, f)) {
        char *comma = strchr(line, ',');
        if (line[0] == '#' || !comma)
            continue;
        if (comma[1] == ',') { /* a benchmark with one input leaves it blank: input 0 */
            memmove(comma + 2, comma + 1, strlen(comma + 1) + 1);
            comma[1] = '0';
        }
        sens[0] = '\0';
        if (sscanf(line, "%31[^,],%d,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%15[^,\n]", bench, &input, &t,
                   &ipc, &mpki, &tlb, &bw, &remote, &inter, sens) < 9)
            continue;
        for (size_t i = 0; i < ncases; i++) {
            struct score_case *c = &cases[i];
            if (strcmp(c->bench, bench) || (c->input != input && strcmp(c->group, "sweep")))
                continue;
            if (!strcmp(labels, "high")) {
                c->sensitive_known = c->sensitive = true;
            } else if (!strcmp(labels, "history")) {
                c->sensitive_known = true;
                c->sensitive = remote >= 110.0;
            } else if (sens[0]) {
                c->sensitive_known = true;
                c->sensitive = !strcmp(sens, "high");
            }
        }
    }
    fclose(f);
    return 0;
}

static enum np_policy decide(const struct score_case *c)
{
    struct np_auto_input in = {0};
    struct np_auto_choice out;
    const double threshold = np_auto_threshold(remote_latency);

    in.user_given = c->sensitive_known;
    in.user = c->sensitive ? NP_SENSITIVITY_HIGH : NP_SENSITIVITY_LOW;
    in.task_nodes = 0x1;
    in.allowed_nodes = 0xf;
    in.advice = true;
    for (unsigned n = 0; n < 4; n++) {
        const double demand = n == 0 ? c->hogs * hog_mbps : 0;
        in.node[n].known = true;
        in.node[n].utilisation = demand / capacity_mbps;
        in.node[n].loaded = np_auto_loaded(demand * 1e6, capacity_mbps * 1e6, threshold);
    }
    np_auto_choose(&in, &out);
    return out.policy;
}

struct tally {
    double log_auto, log_local, log_inter;
    unsigned n, auto_best, auto_interleaved;
};

static void add(struct tally *t, const struct score_case *c, enum np_policy p)
{
    const double best = fmin(c->local_s, c->interleave_s);
    const double chosen = p == NP_POLICY_LOCAL ? c->local_s : c->interleave_s;

    t->log_auto += log(chosen / best);
    t->log_local += log(c->local_s / best);
    t->log_inter += log(c->interleave_s / best);
    t->auto_best += chosen == best;
    t->auto_interleaved += p != NP_POLICY_LOCAL;
    t->n++;
}

static void print(const char *name, const struct tally *t, bool json, bool last)
{
    const double n = t->n ? t->n : 1;
    if (json)
        printf("    \"%s\": {\"cases\": %u, \"auto\": %.4f, \"local\": %.4f, \"interleave\": "
               "%.4f, \"oracle\": 1.0, \"auto_best\": %u, \"auto_interleaved\": %u}%s\n",
               name, t->n, exp(t->log_auto / n), exp(t->log_local / n), exp(t->log_inter / n),
               t->auto_best, t->auto_interleaved, last ? "" : ",");
    else
        printf("%-10s %5u %8.4f %8.4f %10.4f %7.4f %5u/%-4u %5u\n", name, t->n,
               exp(t->log_auto / n), exp(t->log_local / n), exp(t->log_inter / n), 1.0,
               t->auto_best, t->n, t->auto_interleaved);
}

int main(int argc, char **argv)
{
    static const char *const groups[] = {"alone", "1 hog", "10 hogs", "sweep"};
    struct tally per[4] = {{0}}, all = {0}, saturated = {0};
    const char *labels = "thesis", *mixes_dir = NULL, *held_out_dir = NULL;
    bool json = false;
    int a = 1, kept = 0;

    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "--json"))
            json = true;
        else if (!strcmp(argv[a], "--labels") && a + 1 < argc)
            labels = argv[++a];
        else if (!strcmp(argv[a], "--mixes") && a + 1 < argc)
            mixes_dir = argv[++a];
        else if (!strcmp(argv[a], "--held-out") && a + 1 < argc)
            held_out_dir = argv[++a];
        else if (!strcmp(argv[a], "--capacity") && a + 1 < argc)
            capacity_mbps = atof(argv[++a]);
        else if (!strcmp(argv[a], "--hog") && a + 1 < argc)
            hog_mbps = atof(argv[++a]);
        else if (!strcmp(argv[a], "--latency") && a + 1 < argc)
            remote_latency = atof(argv[++a]);
        else
            break;
    }
    if (argc - a != (mixes_dir ? 0 : 3) ||
        (strcmp(labels, "thesis") && strcmp(labels, "history") && strcmp(labels, "high"))) {
        fprintf(stderr, "usage: auto_score [--json] [--labels thesis|history|high] [--capacity "
                        "MB/s] [--hog MB/s] [--latency R] CHARACTERIZATION.csv SWEEPS.csv "
                        "TABLE.csv\n       auto_score [--json] [--labels thesis|history|high] "
                        "--held-out DATA_DIR CHARACTERIZATION.csv SWEEPS.csv TABLE.csv\n"
                        "       auto_score [--json] [--labels thesis|history|high] "
                        "--mixes DATA_DIR\n");
        return 2;
    }
    if (mixes_dir)
        return score_mixes(mixes_dir, labels, json);
    if (held_out_dir &&
        refit_without_scored(held_out_dir, &capacity_mbps, &hog_mbps, &remote_latency, &kept))
        return 1;
    if (read_characterization(argv[a]) < 0 || read_sweep(argv[a + 1]) < 0 ||
        read_table(argv[a + 2], labels) < 0)
        return 1;
    for (size_t i = 0; i < ncases; i++) {
        const struct score_case *c = &cases[i];
        const enum np_policy p = decide(c);
        if (!(c->local_s > 0 && c->interleave_s > 0))
            continue;
        for (unsigned g = 0; g < 4; g++)
            if (!strcmp(c->group, groups[g]))
                add(&per[g], c, p);
        add(&all, c, p);
        /* neighbours saturate the node: its controller past the break-even */
        if (c->hogs * hog_mbps / capacity_mbps > np_auto_threshold(remote_latency))
            add(&saturated, c, p);
    }
    if (json) {
        printf("{\n  \"labels\": \"%s\", \"capacity_mbps\": %.0f, \"hog_mbps\": %.0f, "
               "\"remote_latency\": %.3f, \"threshold\": %.4f, \"fit_cases_without_scored\": "
               "%d,\n  \"groups\": {\n",
               labels, capacity_mbps, hog_mbps, remote_latency, np_auto_threshold(remote_latency),
               held_out_dir ? kept : -1);
    } else {
        if (held_out_dir)
            printf("figures from a fit on %d static cases without the ones scored here\n", kept);
        printf("labels %s; node loaded above %.1f%% of %.0f MB/s (a hog draws %.0f MB/s)\n", labels,
               100 * np_auto_threshold(remote_latency), capacity_mbps, hog_mbps);
        printf("%-10s %5s %8s %8s %10s %7s %10s %5s\n", "cases", "n", "auto", "local", "interleave",
               "oracle", "auto best", "inter");
    }
    for (unsigned g = 0; g < 4; g++)
        print(groups[g], &per[g], json, false);
    print("saturated", &saturated, json, false);
    print("overall", &all, json, true);
    if (json)
        printf("  }\n}\n");
    return 0;
}
