/*
 * order_cv --tiered SEEDS: the orders on a tiered machine, judged by the calibrated contention
 * model (numaplace/contention.h) with each node's own latency and capacity.
 *
 * The machine: two of Sandman's sockets (nodes 0 and 1, DRAM, the CPUs; SLIT 21 between them)
 * and a CXL-like memory-only node on each (node 2 on socket 0, node 3 on socket 1), with the
 * latency and bandwidth of published expanders over local DRAM (docs/migration.md, "Tiers": two
 * points of the published range). A mix: 8 low jobs drawn from the table, CPUs on socket 0 or 1,
 * memory on node 0 and sometimes partly at home. One request demotes a quarter, half or three
 * quarters of node 0's pages to node 2, carried out by the daemon's planner (numaplace's way:
 * the last job in part). A case's figure is the geometric mean of the jobs' modelled slowdowns
 * after it; an order's, the geometric mean over a seed's cases of its figure over best-plus's;
 * the table gives the mean over seeds and their 95% percentile interval (np_interval_percentile).
 *
 * What the orders see is what numaplaced's view holds: each pair's unloaded latency ratio and
 * each node's capacity (a machine profile's or HMAT's figures) and the traffic each node serves.
 * Ablations of `predicted`: every job predicted 2.0x, the predictions shuffled, none; and the
 * view without the tier figures (SLIT only: CXL at 17 from its socket, 28 from the other), so
 * what the tier law adds is seen beside what the predictions add.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/contention.h"
#include "numaplace/draw.h"
#include "numaplace/sim.h"

#include "order_cv.h"

#define TJOBS          8
#define TNODES         4
#define MIXES_PER_SEED 40
#define TIER_RANDOM    5
#define CXL_SLIT_OWN   17
#define CXL_SLIT_OTHER 28

/* Two points of the published range for a CXL expander against local DDR. */
static const struct tier_machine {
    const char *name;
    double latency;         /* unloaded, over local DRAM */
    double bandwidth_share; /* its capacity over one socket's DRAM */
} machines[] = {
    {"CXL-like node: 2x local latency, 1/4 of a socket's bandwidth", 2.0, 0.25},
    {"CXL-like node: 3x local latency, 1/8 of a socket's bandwidth", 3.0, 0.125},
};

static void machine_params(const struct tier_machine *m, struct np_contention_params *p)
{
    np_contention_params_sandman(p);
    memset(p->distance, 0, sizeof(p->distance));
    for (unsigned a = 0; a < TNODES; a++)
        for (unsigned b = 0; b < TNODES; b++) {
            const bool cxl = a >= 2 || b >= 2, same_socket = a % 2 == b % 2;
            p->distance[a][b] = a == b        ? 10
                                : !cxl        ? 21
                                : same_socket ? CXL_SLIT_OWN
                                              : CXL_SLIT_OTHER;
        }
    /* the other socket's expander: its latency times the near socket's (the model gives a pair
     * of its own latency no link queueing: a simplification, numaplace/contention.h) */
    for (unsigned c = 0; c < 2; c++)
        for (unsigned n = 2; n < TNODES; n++)
            p->latency[c][n] = (float)(m->latency * (c == n % 2 ? 1.0 : NP_NEAR_LATENCY));
    p->node_capacity_mbps[2] = p->node_capacity_mbps[3] = p->mc_capacity_mbps * m->bandwidth_share;
}

/* Every job's slowdown now, all of them solved together. @return 0, or -1 */
static int solve(const struct np_contention_params *p, const struct np_sim_job *jobs,
                 const double *memory_share, double *slowdown)
{
    struct np_contention_job cj[TJOBS];

    memset(cj, 0, sizeof(cj));
    for (size_t i = 0; i < TJOBS; i++) {
        uint64_t total = 0;
        for (unsigned n = 0; n < TNODES; n++)
            total += jobs[i].pages[n];
        for (unsigned n = 0; n < TNODES; n++)
            cj[i].share[n] = total ? (double)jobs[i].pages[n] / (double)total : 0;
        cj[i].cpu_node = jobs[i].cpu_node;
        cj[i].bw_mbps = jobs[i].row->bw_mbps;
        cj[i].memory_share = memory_share[i];
        cj[i].threads = 1;
    }
    return np_contention_solve(p, TNODES, cj, TJOBS, NULL, slowdown, NULL);
}

/* numaplaced's view of the machine: tier figures unless @p slit_only, and each node's traffic
 * (the jobs' demand at their current speed, as the daemon's memory counters would show it). */
static void make_view(const struct np_contention_params *p, const struct np_sim_job *jobs,
                      const double *slowdown, bool slit_only, struct np_node_view *view,
                      struct np_job_view *views)
{
    memset(view, 0, sizeof(*view));
    view->nnodes = TNODES;
    view->jobs = views;
    view->njobs = TJOBS;
    memcpy(view->distance, p->distance, sizeof(view->distance));
    for (unsigned n = 0; n < TNODES; n++) {
        view->tier[n] = n >= 2;
        view->node_bandwidth_source[n] = NP_BW_SOURCE_MISSES;
    }
    view->node_bandwidth_available = true;
    for (size_t i = 0; i < TJOBS; i++) {
        uint64_t total = 0;
        np_sim_job_view(&jobs[i], i, &views[i]);
        for (unsigned n = 0; n < TNODES; n++)
            total += jobs[i].pages[n];
        for (unsigned n = 0; n < TNODES && total; n++)
            view->node_bandwidth[n] +=
                jobs[i].row->bw_mbps * 1e6 / slowdown[i] * (double)jobs[i].pages[n] / (double)total;
    }
    if (slit_only)
        return;
    for (unsigned c = 0; c < 2; c++)
        for (unsigned n = 0; n < TNODES; n++)
            view->latency_ratio[c][n] = c == n                 ? 1.0f
                                        : p->latency[c][n] > 0 ? p->latency[c][n]
                                                               : (float)NP_NEAR_LATENCY;
    for (unsigned n = 0; n < TNODES; n++)
        view->capacity[n] =
            1e6 * (p->node_capacity_mbps[n] > 0 ? p->node_capacity_mbps[n] : p->mc_capacity_mbps);
}

static double geomean(const double *v, size_t n)
{
    double sum = 0;

    for (size_t i = 0; i < n; i++)
        sum += log(v[i]);
    return exp(sum / (double)n);
}

/* One case's figure under @p col: the jobs' geometric-mean slowdown after the demotion. */
static int demote(const struct np_contention_params *p, const struct np_model *table,
                  const struct np_sim_job *base, const double *memory_share, uint64_t want,
                  const struct column *col, bool slit_only, double *figure)
{
    const int reps = strcmp(col->ops->name, "random") == 0 ? TIER_RANDOM : 1;
    double log_sum = 0;

    for (int k = 0; k < reps; k++) {
        struct np_sim_job jobs[TJOBS];
        struct np_job_view views[TJOBS];
        struct np_node_view view;
        const struct np_request request = {.src = 0, .dst = 2, .pages = want, .target_job = -1};
        double slowdown[TJOBS];
        struct np_plan plan;

        memcpy(jobs, base, sizeof(jobs));
        if (col->ops->uses_prediction && order_cv_predict_jobs(jobs, TJOBS, table, col->cal) < 0)
            return -1;
        if (solve(p, jobs, memory_share, slowdown) < 0)
            return -1;
        make_view(p, jobs, slowdown, slit_only, &view, views);
        if (np_plan_make(&view, &request, col->ops, (uint64_t)k + 1, want, NP_PLAN_EXACT, &plan) <
            0)
            return -1;
        for (size_t s = 0; s < plan.nsteps; s++) {
            struct np_sim_job *job = &jobs[plan.cands[plan.steps[s].index].job_index];
            job->pages[0] -= plan.steps[s].pages;
            job->pages[2] += plan.steps[s].pages;
        }
        np_plan_fini(&plan);
        if (solve(p, jobs, memory_share, slowdown) < 0)
            return -1;
        log_sum += log(geomean(slowdown, TJOBS));
    }
    *figure = exp(log_sum / reps);
    return 0;
}

struct tier_column {
    struct column col;
    bool slit_only;
    double *per_seed; /* ln(geomean ratio to best-plus), one per seed */
    unsigned won, lost, cases;
};

static int score_machine(const struct tier_machine *m, const struct np_model *table, int seeds,
                         struct tier_column *tc, size_t ncols, size_t best_plus)
{
    static const double shares[] = {0.25, 0.5, 0.75};
    struct np_contention_params p;

    machine_params(m, &p);
    for (int seed = 0; seed < seeds; seed++) {
        uint64_t state = 2026 + (uint64_t)seed;
        double log_sum[MAXCOLS + 1] = {0};
        unsigned cases = 0;
        for (int mix = 0; mix < MIXES_PER_SEED; mix++) {
            struct np_sim_job base[TJOBS];
            double memory_share[TJOBS];
            uint64_t on_src = 0;
            memset(base, 0, sizeof(base));
            for (int j = 0; j < TJOBS; j++) {
                base[j].row = &table->rows[np_draw_next(&state) % table->count];
                base[j].cpu_node = (unsigned)(np_draw_next(&state) % 2);
                base[j].job_class = NP_CLASS_LOW;
                base[j].pages[0] = 50 + np_draw_next(&state) % 200;
                if (np_draw_next(&state) % 2)
                    base[j].pages[base[j].cpu_node] += 50 + np_draw_next(&state) % 100;
                on_src += base[j].pages[0];
                memory_share[j] = np_contention_memory_share(&p, base[j].row);
            }
            for (size_t r = 0; r < sizeof(shares) / sizeof(shares[0]); r++) {
                const uint64_t want = (uint64_t)(shares[r] * (double)on_src);
                double fig[MAXCOLS + 1];
                for (size_t c = 0; c < ncols; c++)
                    if (demote(&p, table, base, memory_share, want, &tc[c].col, tc[c].slit_only,
                               &fig[c]) < 0)
                        return -1;
                for (size_t c = 0; c < ncols; c++) {
                    log_sum[c] += log(fig[c] / fig[best_plus]);
                    tc[c].won += fig[c] < fig[best_plus] - 1e-12;
                    tc[c].lost += fig[c] > fig[best_plus] + 1e-12;
                    tc[c].cases++;
                }
                cases++;
            }
        }
        for (size_t c = 0; c < ncols; c++)
            tc[c].per_seed[seed] = log_sum[c] / cases;
    }
    printf("\n%s: geometric-mean slowdown after the demotion relative to best-plus (below 1: "
           "better), %d seeds x %d mixes x 3 request sizes\n",
           m->name, seeds, MIXES_PER_SEED);
    printf("| order, predictions from | vs best-plus | 95%% interval over seeds | cases better | "
           "cases worse |\n|---|---|---|---|---|\n");
    for (size_t c = 0; c < ncols; c++) {
        double mean = 0, lo = 0, hi = 0;
        for (int s = 0; s < seeds; s++)
            mean += tc[c].per_seed[s] / seeds;
        if (seeds > 1 && np_interval_percentile(tc[c].per_seed, (size_t)seeds, 0.95, &lo, &hi) < 0)
            return -1;
        printf("| %s | %.4f | %.4f-%.4f | %.1f%% | %.1f%% |\n", tc[c].col.name, exp(mean),
               exp(seeds > 1 ? lo : mean), exp(seeds > 1 ? hi : mean),
               100.0 * tc[c].won / tc[c].cases, 100.0 * tc[c].lost / tc[c].cases);
    }
    return 0;
}

int order_cv_tiers(const struct np_model *table, int seeds)
{
    struct column cols[MAXCOLS];
    struct tier_column tc[MAXCOLS + 1];
    size_t best_plus = 0, ncols = order_cv_make_columns(cols, &best_plus), n = 0;
    int rc = 0;

    memset(tc, 0, sizeof(tc));
    for (size_t c = 0; c < ncols; c++) {
        tc[n++].col = cols[c];
        if (cols[c].ops->uses_prediction && cols[c].cal == CAL_CV &&
            !strcmp(cols[c].ops->name, "predicted")) {
            tc[n].col = cols[c];
            tc[n].slit_only = true;
            snprintf(tc[n].col.name, sizeof(tc[n].col.name), "%s, CV, SLIT only (ablation)",
                     cols[c].ops->name);
            n++;
        }
    }
    for (size_t c = 0; c < n; c++) {
        if (!(tc[c].per_seed = calloc((size_t)seeds, sizeof(double))))
            rc = -1;
        if (!tc[c].col.ops->uses_prediction && !strcmp(tc[c].col.ops->name, "best-plus"))
            best_plus = c;
    }
    printf("order_cv --tiered: %d jobs on two sockets with a CXL-like node each, model %zu rows\n",
           TJOBS, table->count);
    for (size_t m = 0; rc == 0 && m < sizeof(machines) / sizeof(machines[0]); m++) {
        for (size_t c = 0; c < n; c++)
            tc[c].won = tc[c].lost = tc[c].cases = 0;
        rc = score_machine(&machines[m], table, seeds, tc, n, best_plus);
    }
    for (size_t c = 0; c < n; c++)
        free(tc[c].per_seed);
    return rc < 0 ? 1 : 0;
}
