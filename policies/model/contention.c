/* Jobs slowing each other down (see numaplace/contention.h). */
#include "numaplace/contention.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* The near distance the table's remote runs were measured at (node 0 to node 1 on Sandman). */
#define NEAR_DISTANCE 21.0
#define SOLVE_ROUNDS  400

/* Sandman's SLIT (docs/model.md): 21 for 0-1, 0-2, 1-3, 2-3; 30 for 0-3, 1-2. */
static const uint8_t sandman_distance[4][4] = {
    {10, 21, 21, 30}, {21, 10, 30, 21}, {21, 30, 10, 21}, {30, 21, 21, 10}};

void np_contention_params_sandman(struct np_contention_params *p)
{
    memset(p, 0, sizeof(*p));
    /* bench/contention_fit on the characterization and static-mix runs (docs/replay.md) */
    p->mc_capacity_mbps = 195679;
    p->link_capacity_mbps = 3266;
    p->remote_latency = NP_NEAR_LATENCY;
    p->max_utilisation = NP_MAX_UTILISATION;
    p->llc_gain = 5.239;
    p->llc_half_mbps = 64966;
    p->omp_exponent = 0.617;
    /* uniform: no run of the thesis's static data moved pages (docs/replay.md) */
    p->hot_fraction = 1.0;
    p->hot_share = 1.0;
    p->cpus_per_node = 16;
    for (unsigned a = 0; a < 4; a++)
        for (unsigned b = 0; b < 4; b++)
            p->distance[a][b] = sandman_distance[a][b];
}

bool np_contention_is_openmp(const char *name)
{
    static const char *const omp[] = {
        "603.bwaves_s",  "619.lbm_s", "621.wrf_s",       "627.cam4_s", "628.pop2_s",
        "638.imagick_s", "644.nab_s", "649.fotonik3d_s", "654.roms_s", "657.xz_s"};
    for (size_t i = 0; name && i < sizeof(omp) / sizeof(omp[0]); i++)
        if (!strcmp(name, omp[i]))
            return true;
    return false;
}

static double queue(const struct np_contention_params *p, double demand, double capacity)
{
    const double u = capacity > 0 ? fmin(demand / capacity, p->max_utilisation) : 0;
    return 1.0 / (1.0 - u);
}

static double distance_scale(const struct np_contention_params *p, unsigned a, unsigned b)
{
    const unsigned d = p->distance[a][b];
    return d ? d / NEAR_DISTANCE : 1.0;
}

struct state {
    double mc[NP_MAX_NODES];                 /* demand on each memory controller */
    double link[NP_MAX_NODES][NP_MAX_NODES]; /* traffic between two sockets (a < b) */
    double pressure[NP_MAX_NODES];           /* demand drawn by jobs with CPUs on each node */
    unsigned threads[NP_MAX_NODES];          /* runnable threads per CPUs' node */
};

static double llc_factor(const struct np_contention_params *p, double others)
{
    return others > 0 ? 1.0 + p->llc_gain * others / (others + p->llc_half_mbps) : 1.0;
}

/* The job's own demand at slowdown @p s with miss factor @p llc. */
static double job_demand(const struct np_contention_job *j, double s, double llc)
{
    return j->fixed_demand ? j->bw_mbps : j->bw_mbps * llc / s;
}

/* A pair given its own latency (a tier's node on the CPUs' socket) is not over the link. */
static bool over_link(const struct np_contention_params *p, unsigned cpu_node, unsigned n)
{
    return n != cpu_node && !(p->latency[cpu_node][n] > 0);
}

static void add_demand(const struct np_contention_params *p, struct state *st,
                       const struct np_contention_job *j, double demand, unsigned nnodes)
{
    st->pressure[j->cpu_node] += demand;
    for (unsigned n = 0; n < nnodes; n++) {
        const double d = demand * j->share[n];
        st->mc[n] += d;
        if (over_link(p, j->cpu_node, n))
            st->link[j->cpu_node < n ? j->cpu_node : n][j->cpu_node < n ? n : j->cpu_node] += d;
    }
}

static double slowdown_of(const struct np_contention_params *p, const struct state *st,
                          const struct np_contention_job *j, double own, unsigned nnodes,
                          double *llc_out)
{
    const unsigned t = st->threads[j->cpu_node];
    const double llc = llc_factor(p, st->pressure[j->cpu_node] - own);
    double cpu = 1.0, lat = 0, total = 0;

    if (t > p->cpus_per_node)
        cpu = pow((double)t / p->cpus_per_node, j->multi_threaded ? p->omp_exponent : 1.0);
    for (unsigned n = 0; n < nnodes; n++) {
        double l;
        if (j->share[n] <= 0)
            continue;
        total += j->share[n];
        l = queue(p, st->mc[n],
                  p->node_capacity_mbps[n] > 0 ? p->node_capacity_mbps[n] : p->mc_capacity_mbps);
        if (p->latency[j->cpu_node][n] > 0)
            l *= p->latency[j->cpu_node][n];
        else if (n != j->cpu_node) {
            const unsigned a = j->cpu_node < n ? j->cpu_node : n,
                           b = j->cpu_node < n ? n : j->cpu_node;
            l *= p->remote_latency * distance_scale(p, j->cpu_node, n) *
                 queue(p, st->link[a][b], p->link_capacity_mbps);
        }
        lat += j->share[n] * l;
    }
    *llc_out = llc;
    if (total <= 0)
        return cpu;
    return cpu * ((1.0 - j->memory_share) + j->memory_share * llc * lat / total);
}

static int check(const struct np_contention_params *p, unsigned nnodes,
                 const struct np_contention_job *jobs, size_t njobs, struct np_err *err)
{
    if (nnodes == 0 || nnodes > NP_MAX_NODES)
        return np_err_set(err, -EINVAL, "nodes: %u is out of range (1-%d)", nnodes, NP_MAX_NODES);
    if (!(p->mc_capacity_mbps > 0) || !(p->link_capacity_mbps > 0) || !(p->remote_latency >= 1) ||
        !(p->max_utilisation >= 0 && p->max_utilisation < 1) || !(p->llc_gain >= 0) ||
        !(p->llc_half_mbps > 0) || !(p->omp_exponent >= 0 && p->omp_exponent <= 1) ||
        !(p->hot_fraction > 0 && p->hot_fraction <= 1) ||
        !(p->hot_share >= 0 && p->hot_share <= 1) || p->cpus_per_node == 0)
        return np_err_set(err, -EINVAL,
                          "contention parameters: capacities and llc_half_mbps must be > 0, "
                          "remote_latency >= 1, max_utilisation in [0, 1), llc_gain >= 0, "
                          "omp_exponent in [0, 1], hot_fraction in (0, 1], hot_share in [0, 1], "
                          "cpus_per_node > 0");
    for (size_t i = 0; i < njobs; i++) {
        const struct np_contention_job *j = &jobs[i];
        double sum = 0;
        for (unsigned n = 0; n < nnodes; n++) {
            if (!(j->share[n] >= 0))
                return np_err_set(err, -EINVAL, "jobs[%zu].share[%u]: %g is not >= 0", i, n,
                                  j->share[n]);
            sum += j->share[n];
        }
        if (j->cpu_node >= nnodes)
            return np_err_set(err, -EINVAL, "jobs[%zu].cpu_node: %u is not a node (0-%u)", i,
                              j->cpu_node, nnodes - 1);
        if (!(j->bw_mbps >= 0) || !isfinite(j->bw_mbps) || !(j->memory_share >= 0) ||
            !(j->memory_share <= 1) || !(sum == 0 || fabs(sum - 1) < 1e-6))
            return np_err_set(err, -EINVAL,
                              "jobs[%zu]: bw_mbps must be >= 0, memory_share in [0, 1] and the "
                              "shares sum to 1 (or all be 0)",
                              i);
    }
    return 0;
}

int np_contention_solve(const struct np_contention_params *p, unsigned nnodes,
                        const struct np_contention_job *jobs, size_t njobs,
                        const double *extra_demand_mbps, double *slowdown, struct np_err *err)
{
    double llc[NP_CONTENTION_MAX_JOBS];
    int rc;

    if (njobs > NP_CONTENTION_MAX_JOBS)
        return np_err_set(err, -EINVAL, "jobs: %zu is more than %d", njobs, NP_CONTENTION_MAX_JOBS);
    if ((rc = check(p, nnodes, jobs, njobs, err)) < 0)
        return rc;
    for (size_t i = 0; i < njobs; i++) {
        slowdown[i] = 1.0;
        llc[i] = 1.0;
    }
    for (int round = 0; round < SOLVE_ROUNDS; round++) {
        struct state st;
        double change = 0;
        memset(&st, 0, sizeof(st));
        for (unsigned n = 0; extra_demand_mbps && n < nnodes; n++)
            st.mc[n] += extra_demand_mbps[n];
        for (size_t i = 0; i < njobs; i++) {
            /* a co-runner with no threads is a demand only; a job runs at least one */
            st.threads[jobs[i].cpu_node] +=
                jobs[i].threads || jobs[i].fixed_demand ? jobs[i].threads : 1;
            add_demand(p, &st, &jobs[i], job_demand(&jobs[i], slowdown[i], llc[i]), nnodes);
        }
        for (size_t i = 0; i < njobs; i++) {
            const double own = job_demand(&jobs[i], slowdown[i], llc[i]);
            double l, s;
            if (jobs[i].fixed_demand)
                continue;
            s = slowdown_of(p, &st, &jobs[i], own, nnodes, &l);
            /* damped: the demand falls as the slowdown rises, which would oscillate undamped */
            s = 0.5 * slowdown[i] + 0.5 * s;
            change = fmax(change, fabs(s - slowdown[i]) / slowdown[i]);
            slowdown[i] = s;
            llc[i] = 0.5 * llc[i] + 0.5 * l;
        }
        if (change < 1e-10)
            break;
    }
    return 0;
}

double np_contention_memory_share(const struct np_contention_params *p,
                                  const struct np_model_row *row)
{
    struct np_contention_job j = {.cpu_node = 0, .bw_mbps = row->bw_mbps, .threads = 1};
    struct np_contention_params near = *p;
    double lo = 0, hi = 1, s;

    if (!(row->remote > 1) || !isfinite(row->bw_mbps))
        return 0;
    j.share[1] = 1.0;
    /* node 1 counts as a near socket */
    memset(near.distance, 0, sizeof(near.distance));
    memset(near.latency, 0, sizeof(near.latency));
    memset(near.node_capacity_mbps, 0, sizeof(near.node_capacity_mbps));
    j.memory_share = 1.0;
    if (np_contention_solve(&near, 2, &j, 1, NULL, &s, NULL) < 0 || s <= row->remote)
        return 1.0;
    for (int k = 0; k < 50; k++) {
        j.memory_share = 0.5 * (lo + hi);
        np_contention_solve(&near, 2, &j, 1, NULL, &s, NULL);
        if (s < row->remote)
            lo = j.memory_share;
        else
            hi = j.memory_share;
    }
    return 0.5 * (lo + hi);
}

double np_contention_job_slowdown(const struct np_contention_params *p,
                                  const struct np_model_row *row, unsigned threads,
                                  bool multi_threaded, unsigned cpu_node, const double *share,
                                  unsigned nnodes, const double *corunner_demand_mbps,
                                  const unsigned *corunner_threads, struct np_err *err)
{
    struct np_contention_job jobs[1 + NP_MAX_NODES];
    double s[1 + NP_MAX_NODES];
    size_t n = 1;

    if (nnodes == 0 || nnodes > NP_MAX_NODES) {
        np_err_set(err, -EINVAL, "nodes: %u is out of range (1-%d)", nnodes, NP_MAX_NODES);
        return NAN;
    }
    memset(jobs, 0, sizeof(jobs));
    jobs[0] = (struct np_contention_job){.cpu_node = cpu_node,
                                         .bw_mbps = row->bw_mbps,
                                         .memory_share = np_contention_memory_share(p, row),
                                         .threads = threads,
                                         .multi_threaded = multi_threaded};
    memcpy(jobs[0].share, share, nnodes * sizeof(*share));
    /* each node's co-runners as one fixed-demand job: CPUs and memory on that node */
    for (unsigned k = 0; k < nnodes; k++) {
        const double d = corunner_demand_mbps ? corunner_demand_mbps[k] : 0;
        const unsigned t = corunner_threads ? corunner_threads[k] : 0;
        if (d <= 0 && t == 0)
            continue;
        jobs[n] = (struct np_contention_job){
            .cpu_node = k, .bw_mbps = d > 0 ? d : 0, .threads = t, .fixed_demand = true};
        jobs[n].share[k] = 1.0;
        n++;
    }
    if (np_contention_solve(p, nnodes, jobs, n, NULL, s, err) < 0)
        return NAN;
    return s[0];
}

bool np_contention_uniform(const struct np_contention_params *p)
{
    return p->hot_share == p->hot_fraction;
}

uint64_t np_contention_hot_pages(const struct np_contention_params *p, uint64_t pages)
{
    const double hot = round((double)pages * p->hot_fraction);

    return hot >= (double)pages ? pages : hot > 0 ? (uint64_t)hot : 0;
}

void np_contention_hot_shares(const struct np_contention_params *p, const uint64_t *hot,
                              const uint64_t *cold, unsigned nnodes, double *share)
{
    double h = 0, c = 0;

    for (unsigned n = 0; n < nnodes; n++) {
        h += (double)hot[n];
        c += (double)cold[n];
    }
    /* a kind the job holds none of passes its accesses to the other */
    const double weight_hot = c <= 0 ? 1.0 : p->hot_share,
                 weight_cold = h <= 0 ? 1.0 : 1.0 - p->hot_share;
    for (unsigned n = 0; n < nnodes; n++)
        share[n] = (h > 0 ? (double)hot[n] * weight_hot / h : 0) +
                   (c > 0 ? (double)cold[n] * weight_cold / c : 0);
}

void np_contention_hot_split(const struct np_contention_params *p, uint64_t hot, uint64_t cold,
                             uint64_t want, uint64_t *hot_out, uint64_t *cold_out)
{
    const uint64_t first = p->hot_moves_first ? hot : cold;
    const uint64_t a = want < first ? want : first;
    const uint64_t rest = want - a, second = p->hot_moves_first ? cold : hot;
    const uint64_t b = rest < second ? rest : second;

    *hot_out = p->hot_moves_first ? a : b;
    *cold_out = p->hot_moves_first ? b : a;
}
