/* The simulator: migration requests over modelled jobs (see numaplace/sim.h), and the thesis's
 * experiment sets replayed over time in the model (see numaplace/replay.h). */
#include "numaplace/replay.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/penalty.h"
#include "numaplace/sim.h"

double np_sim_remote_share(const struct np_sim_job *job, unsigned nnodes)
{
    uint64_t total = 0;

    for (unsigned n = 0; n < nnodes; n++)
        total += job->pages[n];
    return total ? 1.0 - (double)job->pages[job->cpu_node] / (double)total : 0.0;
}

double np_sim_slowdown(const struct np_sim_job *job, unsigned nnodes)
{
    return np_model_slowdown(job->row, np_sim_remote_share(job, nnodes));
}

double np_sim_throughput(const struct np_sim_job *jobs, size_t count, unsigned nnodes)
{
    double sum = 0;

    for (size_t i = 0; i < count; i++)
        sum += 1.0 / np_sim_slowdown(&jobs[i], nnodes);
    return sum;
}

void np_sim_job_view(const struct np_sim_job *job, size_t id, struct np_job_view *v)
{
    memset(v, 0, sizeof(*v));
    v->id = id;
    v->job_class = job->job_class;
    v->cpu_nodes = 1ull << job->cpu_node;
    v->bandwidth = job->row->bw_mbps * 1e6;
    v->predicted_remote = job->predicted_remote;
    v->has_prediction = job->has_prediction;
    memcpy(v->pages_on_node, job->pages, sizeof(v->pages_on_node));
}

long long np_sim_request(struct np_sim_job *jobs, size_t count, unsigned nnodes,
                         const struct np_order_ops *order, uint64_t seed, unsigned src,
                         unsigned dst, uint64_t pages)
{
    /* The modelled jobs as the daemon's planner sees a node: same candidates, same order. */
    struct np_node_view view = {.nnodes = nnodes};
    struct np_request request = {.src = src, .dst = dst, .pages = pages, .target_job = -1};
    struct np_plan plan;
    int rc;

    if (nnodes > NP_MAX_NODES)
        return -EINVAL;
    view.jobs = calloc(count ? count : 1, sizeof(*view.jobs));
    if (!view.jobs)
        return -ENOMEM;
    view.njobs = count;
    for (size_t i = 0; i < count; i++)
        np_sim_job_view(&jobs[i], i, &view.jobs[i]);
    rc = np_plan_make(&view, &request, order, seed, pages, NP_PLAN_EXACT, &plan);
    for (size_t s = 0; rc == 0 && s < plan.nsteps; s++) {
        struct np_sim_job *job = &jobs[plan.cands[plan.steps[s].index].job_index];
        job->pages[src] -= plan.steps[s].pages;
        job->pages[dst] += plan.steps[s].pages;
    }
    free(view.jobs);
    if (rc < 0)
        return rc;
    const uint64_t planned = plan.planned;
    np_plan_fini(&plan);
    return (long long)planned;
}

static const char *const way_names[NP_REPLAY_WAY_COUNT] = {"thesis", "numaplace"};

const char *np_replay_way_name(enum np_replay_way way)
{
    return (unsigned)way < NP_REPLAY_WAY_COUNT ? way_names[way] : "unknown";
}

void np_replay_config_sandman(struct np_replay_config *config, enum np_replay_way way)
{
    struct np_contention_params sandman;

    np_contention_params_sandman(&sandman); /* for its SLIT */
    memset(config, 0, sizeof(*config));
    config->way = way;
    config->step_s = 1.0;
    config->node_pages = 64500ull * 1024 * 1024 / NP_REPLAY_PAGE_BYTES;
    config->free_floor_pages = 256ull * 1024 * 1024 / NP_REPLAY_PAGE_BYTES;
    config->rate_bytes_s = 200e6;
    memcpy(config->distance, sandman.distance, sizeof(config->distance));
}

void np_replay_config_thesis_loop(struct np_replay_config *config,
                                  const struct np_contention_params *contention)
{
    config->contention = contention;
    config->poll_s = NP_REPLAY_LOOP_POLL_S;
    config->pass_work_s = NP_REPLAY_LOOP_PASS_WORK_S;
    config->mover_rate_bytes_s = NP_REPLAY_LOOP_MOVER_BPS;
    config->cpus_per_node = contention ? contention->cpus_per_node : 0;
}

void np_replay_result_fini(struct np_replay_result *result)
{
    if (!result)
        return;
    free(result->job_time_s);
    memset(result, 0, sizeof(*result));
}

/* A job's slowdown with @p pages[n] on node n and its CPUs on @p cpu_node: the model's curve at its
 * remote share, the excess scaled from the near node's distance to the remote pages' mean one. */
static double np_replay_slowdown(const struct np_model_row *row, const uint64_t *pages,
                                 unsigned nnodes, unsigned cpu_node,
                                 const uint8_t (*distance)[NP_MAX_NODES])
{
    double total = 0, remote = 0, weighted = 0, slowdown;

    for (unsigned n = 0; n < nnodes; n++) {
        const double p = (double)pages[n];
        const unsigned d = distance ? distance[cpu_node][n] : 0;
        total += p;
        if (n == cpu_node)
            continue;
        remote += p;
        /* an unknown distance counts as the near node the table was measured on */
        weighted += p * (d ? d / 10.0 : NP_REFERENCE_REMOTE_PENALTY);
    }
    if (total <= 0)
        return 1.0;
    slowdown = np_model_slowdown(row, remote / total);
    if (remote <= 0)
        return slowdown;
    return np_penalty_scale_slowdown(slowdown, NP_REFERENCE_REMOTE_PENALTY, weighted / remote);
}

double np_replay_growth_at(const struct np_replay_growth *g, double x)
{
    double best = 0;

    if (!g || g->n == 0)
        return 1.0;
    for (unsigned i = 0; i < g->n; i++) {
        double y = g->share[i];
        if (g->progress[i] > x) {
            /* between the previous point and this one, linear; before the first, flat */
            if (i > 0)
                y = g->share[i - 1] + (g->share[i] - g->share[i - 1]) * (x - g->progress[i - 1]) /
                                          (g->progress[i] - g->progress[i - 1]);
            else
                y = g->share[0];
            return fmax(best, y);
        }
        best = fmax(best, y);
    }
    return best;
}

double np_replay_figure(const double *times, const double *reference, size_t n)
{
    double sum = 0;

    if (n == 0)
        return NAN;
    for (size_t i = 0; i < n; i++) {
        if (!(times[i] > 0) || !(reference[i] > 0))
            return NAN;
        sum += log(times[i] / reference[i]);
    }
    return exp(sum / (double)n);
}

/* ---- one replay ---- */

/* A numaplace-way request being carried out: its plan's steps, moved in order at the rate. */
struct in_flight {
    bool active;
    unsigned src, dst;
    struct np_plan_step *steps; /* .index = job index; .pages = pages still to move */
    size_t nsteps, next;
    double carry; /* fractional pages the rate allowed but a step boundary cut off */
};

/* Where each job of a replay is. */
struct job_state {
    double progress; /* alone-seconds of work done */
    bool done;
    double mshare, rate; /* contention model: its memory-bound share, its solved rate */
    double stall_until;  /* thesis loop: a moved job waits until its pages are copied */
};

struct replay {
    const struct np_replay_set *set;
    const struct np_replay_config *config;
    const struct np_order_ops *order;
    uint64_t seed;
    uint64_t *pages; /* njobs x nnodes */
    uint64_t *hot;   /* of those, hot pages (numaplace/contention.h); all of them without it */
    struct job_state *jobs;
    struct np_job_view *views;
    size_t running;
    struct in_flight move;
    struct np_replay_result *result;
    /* contention model: a scratch job list, and which job each entry is */
    struct np_contention_job *cjobs;
    size_t *cindex;
    double last_issue; /* thesis loop: for the spacing */
    bool dirty;        /* pages moved or a job ended since the rates were solved */
};

static uint64_t *job_pages(struct replay *r, size_t job)
{
    return &r->pages[job * r->set->nnodes];
}

static uint64_t *job_hot(struct replay *r, size_t job)
{
    return &r->hot[job * r->set->nnodes];
}

/* The pages @p node can still take while keeping @p floor of them free. */
static uint64_t node_room(struct replay *r, unsigned node, uint64_t floor)
{
    uint64_t used = floor;

    for (size_t j = 0; j < r->set->njobs; j++)
        used += job_pages(r, j)[node];
    return r->config->node_pages > used ? r->config->node_pages - used : 0;
}

/* Solve the running jobs' slowdowns together (contention model) into their rates. */
static void solve_rates(struct replay *r)
{
    const struct np_contention_params *p = r->config->contention;
    size_t n = 0;
    double s[NP_CONTENTION_MAX_JOBS];
    uint64_t cold[NP_MAX_NODES];

    for (size_t j = 0; j < r->set->njobs && n < NP_CONTENTION_MAX_JOBS; j++) {
        const struct np_replay_job *job = &r->set->jobs[j];
        struct np_contention_job *c = &r->cjobs[n];
        if (r->jobs[j].done)
            continue;
        memset(c, 0, sizeof(*c));
        c->cpu_node = job->node;
        for (unsigned k = 0; k < r->set->nnodes; k++)
            cold[k] = job_pages(r, j)[k] - job_hot(r, j)[k];
        np_contention_hot_shares(p, job_hot(r, j), cold, r->set->nnodes, c->share);
        c->bw_mbps = isfinite(job->row->bw_mbps) ? job->row->bw_mbps : 0;
        c->memory_share = r->jobs[j].mshare;
        c->threads = job->threads;
        c->multi_threaded = job->multi_threaded;
        r->cindex[n++] = j;
    }
    if (np_contention_solve(p, r->set->nnodes, r->cjobs, n, NULL, s, NULL) < 0)
        for (size_t k = 0; k < n; k++)
            s[k] = 1.0; /* checked at the start: not reached with the shipped parameters */
    for (size_t k = 0; k < n; k++)
        r->jobs[r->cindex[k]].rate = s[k] > 0 && isfinite(s[k]) ? 1.0 / s[k] : 1.0;
}

static double job_rate(struct replay *r, size_t j)
{
    const struct np_replay_job *job = &r->set->jobs[j];
    const double noise = job->noise > 0 ? job->noise : 1.0;

    if (r->config->contention)
        return r->jobs[j].rate / noise;

    const double s = np_replay_slowdown(job->row, job_pages(r, j), r->set->nnodes, job->node,
                                        r->config->distance);
    const double corun = (job->corun > 0 ? job->corun : 1.0) * noise;
    return s > 0 && isfinite(s) ? 1.0 / (s * corun) : 1.0 / corun;
}

/* Move up to @p want of job @p j's pages from @p src to @p dst, as far as @p dst has room. */
static uint64_t replay_move(struct replay *r, size_t j, unsigned src, unsigned dst, uint64_t want)
{
    uint64_t *p = job_pages(r, j), *hot = job_hot(r, j);
    const uint64_t room = node_room(r, dst, 0);
    uint64_t n = want < p[src] ? want : p[src], hot_moved = n, cold_moved = 0;

    if (n > room)
        n = room;
    /* pages keep their kind; a move of part of the share picks them as the model says */
    if (r->config->contention)
        np_contention_hot_split(r->config->contention, hot[src], p[src] - hot[src], n, &hot_moved,
                                &cold_moved);
    else
        hot_moved = n;
    p[src] -= n;
    p[dst] += n;
    hot[src] -= hot_moved;
    hot[dst] += hot_moved;
    r->dirty |= n > 0;
    r->result->pages_moved += n;
    return n;
}

/* The planner's view of the running jobs: each as the simulator's job (np_sim_job_view). */
static void fill_views(struct replay *r)
{
    for (size_t j = 0; j < r->set->njobs; j++) {
        const struct np_replay_job *job = &r->set->jobs[j];
        struct np_sim_job now = {.row = job->row,
                                 .cpu_node = job->node,
                                 .job_class = job->job_class,
                                 .predicted_remote = job->predicted_remote,
                                 .has_prediction = job->has_prediction};

        memcpy(now.pages, job_pages(r, j), r->set->nnodes * sizeof(uint64_t));
        np_sim_job_view(&now, j, &r->views[j]);
    }
}

static uint64_t request_seed(uint64_t seed, size_t index)
{
    /* a fresh shuffle per request, as the thesis's Random reshuffled its list each time */
    return seed ^ ((uint64_t)(index + 1) * 0x9e3779b97f4a7c15ULL);
}

static int issue(struct replay *r, size_t index, double copy_rate, double *copy_s)
{
    const struct np_replay_request *req = &r->set->requests[index];
    const bool thesis = r->config->way == NP_REPLAY_THESIS;
    struct np_node_view view = {.nnodes = r->set->nnodes, .jobs = r->views, .njobs = r->set->njobs};
    struct np_request request = {.src = req->from,
                                 .dst = req->to,
                                 .pages = req->pages,
                                 .trigger = NP_TRIGGER_ADMIN,
                                 .target_job = -1};
    uint64_t wanted = req->pages;
    struct np_plan plan;
    int rc;

    fill_views(r);
    /* the machine's SLIT, as the daemon's view has it (an order by prediction reads it) */
    memcpy(view.distance, r->config->distance, sizeof(view.distance));
    if (!thesis) {
        /* the engine's cap: the destination keeps its free floor */
        const uint64_t room = node_room(r, req->to, r->config->free_floor_pages);
        if (wanted > room)
            wanted = room;
    }
    rc = np_plan_make(&view, &request, r->order, request_seed(r->seed, index), wanted,
                      thesis ? NP_PLAN_WHOLE_SHARES : NP_PLAN_EXACT, &plan);
    if (rc < 0)
        return rc;
    r->result->requests_fired++;
    r->result->pages_asked += req->pages;
    r->result->requests_short += plan.planned < req->pages;
    r->result->requests_overshot += plan.planned > req->pages;
    if (thesis || r->config->rate_bytes_s <= 0) {
        for (size_t s = 0; s < plan.nsteps; s++) {
            const size_t j = plan.cands[plan.steps[s].index].job_index;
            const uint64_t moved = replay_move(r, j, req->from, req->to, plan.steps[s].pages);
            /* the thesis loop: jobs are copied one after another, each stalled for its own */
            if (copy_rate > 0 && moved > 0) {
                *copy_s += (double)moved * NP_REPLAY_PAGE_BYTES / copy_rate;
                r->jobs[j].stall_until = r->last_issue + *copy_s;
            }
        }
    } else {
        for (size_t s = 0; s < plan.nsteps; s++)
            r->move.steps[s] = (struct np_plan_step){plan.cands[plan.steps[s].index].job_index,
                                                     plan.steps[s].pages};
        r->move = (struct in_flight){.active = plan.nsteps > 0,
                                     .src = req->from,
                                     .dst = req->to,
                                     .steps = r->move.steps,
                                     .nsteps = plan.nsteps};
    }
    np_plan_fini(&plan);
    return 0;
}

static double rate_pages_s(const struct replay *r)
{
    return r->config->rate_bytes_s / NP_REPLAY_PAGE_BYTES;
}

static uint64_t move_left(const struct replay *r)
{
    uint64_t left = 0;

    for (size_t s = r->move.next; s < r->move.nsteps; s++)
        left += r->move.steps[s].pages;
    return left;
}

/* Carry the in-flight move on for @p dt seconds (all of it when @p finish). */
static void advance_move(struct replay *r, double dt, bool finish)
{
    struct in_flight *m = &r->move;
    const double can = rate_pages_s(r) * dt + m->carry;
    uint64_t budget = finish ? UINT64_MAX : (uint64_t)can;

    m->carry = finish ? 0 : can - (double)budget;
    r->result->moving_s += dt;
    while (m->next < m->nsteps && budget > 0) {
        struct np_plan_step *step = &m->steps[m->next];
        const uint64_t want = step->pages < budget ? step->pages : budget;
        const uint64_t moved = replay_move(r, step->index, m->src, m->dst, want);
        budget -= want;
        step->pages -= want;
        /* a job that ended, or pages the kernel could not place, end that job's share */
        if (step->pages == 0 || moved < want)
            m->next++;
    }
    if (m->next >= m->nsteps)
        m->active = false;
}

/* The pages job @p j holds at its progress now (its footprint when it does not grow). */
static uint64_t pages_due(const struct replay *r, size_t j)
{
    const struct np_replay_job *job = &r->set->jobs[j];
    const double due = round((double)job->pages *
                             np_replay_growth_at(job->growth, r->jobs[j].progress / job->work_s));

    return due >= (double)job->pages ? job->pages : due >= 1 ? (uint64_t)due : 1;
}

/* A growing job allocates what its curve says it holds by now on its start node, as far as that
 * node has room (the rest later). Rounded to a hundredth of its footprint so the contention
 * model is not solved again every step. */
static void grow(struct replay *r, size_t j)
{
    const struct np_replay_job *job = &r->set->jobs[j];
    uint64_t *p = job_pages(r, j), *hot = job_hot(r, j), held = 0, hot_held = 0;
    const uint64_t due = pages_due(r, j), grain = job->pages / 100 + 1;

    for (unsigned n = 0; n < r->set->nnodes; n++) {
        held += p[n];
        hot_held += hot[n];
    }
    if (due <= held || (due - held < grain && due < job->pages))
        return;
    const uint64_t room = node_room(r, job->memory_node, 0);
    const uint64_t add = due - held < room ? due - held : room;
    /* the new pages' kind: what keeps the job's hot pages its hot fraction */
    const uint64_t hot_due = r->config->contention
                                 ? np_contention_hot_pages(r->config->contention, held + add)
                                 : held + add;
    const uint64_t hot_add =
        hot_due > hot_held ? (hot_due - hot_held < add ? hot_due - hot_held : add) : 0;

    p[job->memory_node] += add;
    hot[job->memory_node] += hot_add;
    r->dirty |= add > 0;
}

/* Run every job for @p dt seconds at its current rate; a job that ends frees its pages. */
static void advance_jobs(struct replay *r, double t, double dt)
{
    if (r->config->contention && r->dirty) {
        solve_rates(r);
        r->dirty = false;
    }
    for (size_t j = 0; j < r->set->njobs; j++) {
        if (r->jobs[j].done)
            continue;
        /* a job whose pages are being copied makes no progress until they are */
        const double stalled = fmin(dt, fmax(0, r->jobs[j].stall_until - t));
        const double rate = job_rate(r, j), need = r->set->jobs[j].work_s - r->jobs[j].progress;
        if (need <= rate * (dt - stalled)) {
            r->jobs[j].done = true;
            r->running--;
            r->dirty = true;
            r->result->job_time_s[j] = t + stalled + need / rate;
            if (r->result->first_end_s <= 0)
                r->result->first_end_s = r->result->job_time_s[j];
            memset(job_pages(r, j), 0, r->set->nnodes * sizeof(uint64_t));
            memset(job_hot(r, j), 0, r->set->nnodes * sizeof(uint64_t));
            for (size_t s = r->move.next; r->move.active && s < r->move.nsteps; s++)
                if (r->move.steps[s].index == j)
                    r->move.steps[s].pages = 0; /* the mover finds the process gone */
        } else {
            r->jobs[j].progress += rate * (dt - stalled);
            if (r->set->jobs[j].growth)
                grow(r, j);
        }
    }
}

/* The manager's share of a CPU: it and its mover are unbound, so the scheduler puts them on the
 * least loaded node, where they compete with that node's runnable threads. */
static double loop_cpu_share(struct replay *r)
{
    const unsigned cpus = r->config->cpus_per_node ? r->config->cpus_per_node : 16;
    unsigned threads[NP_MAX_NODES] = {0}, least = UINT_MAX;

    for (size_t j = 0; j < r->set->njobs; j++)
        if (!r->jobs[j].done)
            threads[r->set->jobs[j].node] += r->set->jobs[j].threads ? r->set->jobs[j].threads : 1;
    for (unsigned n = 0; n < r->set->nnodes; n++)
        least = threads[n] < least ? threads[n] : least;
    return fmin(1.0, cpus / (double)(least + 1));
}

/* The thesis's manager loop (poll_s): passes, each carrying out at most one request. */
static int run_loop(struct replay *r)
{
    const struct np_replay_set *set = r->set;
    double t = 0, pass = 0, last = 0;
    size_t next = 0, steps = 0;
    int rc;

    while (r->running > 0) {
        if (++steps > NP_REPLAY_MAX_STEPS)
            return -E2BIG;
        if (t >= pass) {
            const double share = loop_cpu_share(r);
            double copy_s = 0;
            if (next < set->nrequests && t - last >= set->requests[next].delay_s) {
                if (r->result->first_end_s <= 0 && r->result->requests_fired > 0) {
                    r->result->spacing_sum_s += t - last;
                    r->result->spacing_n++;
                }
                last = r->last_issue = t;
                if ((rc = issue(r, next++, r->config->mover_rate_bytes_s * share, &copy_s)) < 0)
                    return rc;
            }
            pass = t + r->config->poll_s + r->config->pass_work_s / share + copy_s;
        }
        const double t_next = fmin(t + r->config->step_s, pass);
        advance_jobs(r, t, t_next - t);
        t = t_next;
    }
    return 0;
}

static int run(struct replay *r)
{
    const struct np_replay_set *set = r->set;
    double t = 0, last = 0; /* last: the previous request's issue (thesis) or answer */
    size_t next = 0, steps = 0;
    int rc;

    while (r->running > 0) {
        /* jobs slowed past any end (a corun of 1e300), a step too small for t: never forever */
        if (++steps > NP_REPLAY_MAX_STEPS)
            return -E2BIG;
        while (next < set->nrequests && !r->move.active &&
               last + set->requests[next].delay_s <= t) {
            last = r->config->way == NP_REPLAY_THESIS ? last + set->requests[next].delay_s : t;
            double copy_s = 0;
            if ((rc = issue(r, next++, 0, &copy_s)) < 0)
                return rc;
            if (r->move.active)
                break;
        }
        double t_next = t + r->config->step_s;
        bool finish = false;
        if (next < set->nrequests && !r->move.active && last + set->requests[next].delay_s < t_next)
            t_next = last + set->requests[next].delay_s;
        if (r->move.active) {
            const double end = t + (double)move_left(r) / rate_pages_s(r);
            if (end <= t_next) {
                t_next = end;
                finish = true;
            }
        }
        advance_jobs(r, t, t_next - t);
        if (r->move.active) {
            advance_move(r, t_next - t, finish);
            if (!r->move.active)
                last = t_next; /* numaplace: the next delay counts from this answer */
        }
        t = t_next;
    }
    return 0;
}

static int check(const struct np_replay_set *set, const struct np_replay_config *config,
                 struct np_err *err)
{
    if (set->nnodes == 0 || set->nnodes > NP_MAX_NODES)
        return np_err_set(err, -EINVAL, "nodes: %u is out of range (1-%d)", set->nnodes,
                          NP_MAX_NODES);
    if (!(config->step_s > 0) || !isfinite(config->step_s) || !(config->rate_bytes_s >= 0) ||
        (unsigned)config->way >= NP_REPLAY_WAY_COUNT)
        return np_err_set(err, -EINVAL,
                          "replay config: step_s must be > 0, rate_bytes_s >= 0 and the way "
                          "thesis or numaplace");
    if (!(config->poll_s >= 0) || !(config->pass_work_s >= 0) ||
        !(config->mover_rate_bytes_s >= 0) || !isfinite(config->poll_s + config->pass_work_s))
        return np_err_set(err, -EINVAL,
                          "replay config: poll_s, pass_work_s and mover_rate_bytes_s must be >= 0");
    if (config->contention) {
        int rc =
            set->njobs > NP_CONTENTION_MAX_JOBS
                ? np_err_set(err, -EINVAL, "jobs: %zu is more than the contention model's %d",
                             set->njobs, NP_CONTENTION_MAX_JOBS)
                : np_contention_solve(config->contention, set->nnodes, NULL, 0, NULL, NULL, err);
        if (rc < 0)
            return rc;
    }
    for (size_t i = 0; i < set->njobs; i++) {
        const struct np_replay_job *job = &set->jobs[i];
        if (!job->row)
            return np_err_set(err, -EINVAL, "jobs[%zu]: no model row", i);
        if (!(job->corun == 0 || job->corun >= 1) || !isfinite(job->corun))
            return np_err_set(err, -EINVAL, "jobs[%zu].corun: %g is not a factor (0: none, >= 1)",
                              i, job->corun);
        if (!(job->noise >= 0) || !isfinite(job->noise))
            return np_err_set(err, -EINVAL, "jobs[%zu].noise: %g is not a factor (0: none, > 0)", i,
                              job->noise);
        if (job->growth) {
            const struct np_replay_growth *g = job->growth;
            bool ok = g->n >= 1 && g->n <= NP_REPLAY_GROWTH_POINTS;
            for (unsigned k = 0; ok && k < g->n; k++)
                ok = g->progress[k] >= 0 && g->progress[k] <= 1 && g->share[k] > 0 &&
                     g->share[k] <= 1 && (k == 0 || g->progress[k] > g->progress[k - 1]);
            if (!ok)
                return np_err_set(err, -EINVAL,
                                  "jobs[%zu].growth: 1 to %d points, progress ascending in [0, 1] "
                                  "and shares in (0, 1]",
                                  i, NP_REPLAY_GROWTH_POINTS);
        }
        if (!(job->work_s > 0) || !isfinite(job->work_s))
            return np_err_set(err, -EINVAL, "jobs[%zu].work_s: %g is not a time > 0 s", i,
                              job->work_s);
        if (job->node >= set->nnodes || job->memory_node >= set->nnodes) {
            const bool cpu = job->node >= set->nnodes;
            return np_err_set(err, -EINVAL, "jobs[%zu].%s: %u is not a node (0-%u)", i,
                              cpu ? "node" : "memory_node", cpu ? job->node : job->memory_node,
                              set->nnodes - 1);
        }
    }
    for (unsigned n = 0; n < set->nnodes; n++) {
        uint64_t start = 0; /* never above node_pages, so the sum cannot wrap */
        for (size_t i = 0; i < set->njobs; i++) {
            const uint64_t pages = set->jobs[i].memory_node == n ? set->jobs[i].pages : 0;
            if (pages > config->node_pages - start)
                return np_err_set(err, -EINVAL,
                                  "node %u: its jobs start with more pages than its memory "
                                  "(%llu pages; jobs[%zu] brings it past that)",
                                  n, (unsigned long long)config->node_pages, i);
            start += pages;
        }
    }
    for (size_t i = 0; i < set->nrequests; i++) {
        const struct np_replay_request *req = &set->requests[i];
        if (req->from >= set->nnodes || req->to >= set->nnodes || req->from == req->to)
            return np_err_set(err, -EINVAL,
                              "requests[%zu]: from %u to %u: nodes must differ and be 0-%u", i,
                              req->from, req->to, set->nnodes - 1);
        if (!(req->delay_s >= 0) || !isfinite(req->delay_s))
            return np_err_set(err, -EINVAL, "requests[%zu].delay_s: %g is not a delay >= 0 s", i,
                              req->delay_s);
    }
    return 0;
}

int np_replay_run(const struct np_replay_set *set, const struct np_replay_config *config,
                  const struct np_order_ops *order, uint64_t seed, struct np_replay_result *result,
                  struct np_err *err)
{
    const size_t n = set->njobs ? set->njobs : 1;
    struct replay r = {.set = set, .config = config, .seed = seed, .result = result};
    int rc;

    memset(result, 0, sizeof(*result));
    if ((rc = check(set, config, err)) < 0)
        return rc;
    r.order = order ? order : np_order_default();
    r.pages = calloc(n * set->nnodes, sizeof(*r.pages));
    r.hot = calloc(n * set->nnodes, sizeof(*r.hot));
    r.jobs = calloc(n, sizeof(*r.jobs));
    r.views = calloc(n, sizeof(*r.views));
    r.move.steps = calloc(n, sizeof(*r.move.steps));
    result->job_time_s = calloc(n, sizeof(*result->job_time_s));
    r.cjobs = calloc(n, sizeof(*r.cjobs));
    r.cindex = calloc(n, sizeof(*r.cindex));
    rc = r.pages && r.hot && r.jobs && r.views && r.move.steps && result->job_time_s && r.cjobs &&
                 r.cindex
             ? 0
             : np_err_set(err, -ENOMEM, "out of memory replaying %zu jobs", set->njobs);
    if (rc == 0) {
        for (size_t j = 0; j < set->njobs; j++) {
            const uint64_t start = pages_due(&r, j);
            job_pages(&r, j)[set->jobs[j].memory_node] = start;
            job_hot(&r, j)[set->jobs[j].memory_node] =
                config->contention ? np_contention_hot_pages(config->contention, start) : start;
        }
        r.running = set->njobs;
        r.dirty = true;
        result->njobs = set->njobs;
        for (size_t j = 0; config->contention && j < set->njobs; j++)
            r.jobs[j].mshare = np_contention_memory_share(config->contention, set->jobs[j].row);
        rc = config->poll_s > 0 && config->way == NP_REPLAY_THESIS ? run_loop(&r) : run(&r);
        if (rc == -E2BIG)
            np_err_set(err, -EINVAL,
                       "replay: jobs still running after %u steps of at most %g s: a job's "
                       "work, slowdown and corun give no end in sight",
                       NP_REPLAY_MAX_STEPS, config->step_s);
        else if (rc < 0)
            np_err_set(err, rc, "replay: planning a request failed");
        rc = rc == -E2BIG ? -EINVAL : rc;
    }
    for (size_t j = 0; rc == 0 && j < set->njobs; j++) {
        result->total_job_s += result->job_time_s[j];
        if (result->job_time_s[j] > result->makespan_s)
            result->makespan_s = result->job_time_s[j];
    }
    free(r.pages);
    free(r.hot);
    free(r.jobs);
    free(r.views);
    free(r.move.steps);
    free(r.cjobs);
    free(r.cindex);
    if (rc < 0)
        np_replay_result_fini(result);
    return rc;
}
