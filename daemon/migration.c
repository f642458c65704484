/* numaplaced's side of migration (daemon.h). */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numaplace/engine.h"
#include "daemon.h"
#include "numaplace/procfs.h"

#define TRIGGER_MAX_REQUESTS 4 /* requests one trigger may propose per interval */

void migration_start(struct np_daemon *d)
{
    const struct np_helper_config *cfg = &d->cfg;
    struct np_err err = {0};
    char why[160];
    int rc;

    if (!cfg->migration || d->migration.migrator) {
        if (!cfg->migration)
            NPD_LOG(d, INFO, "migration: off (migration=off)");
        return;
    }
    rc = migrator_start(&d->migration.migrator, cfg->migration_rate_mb_s * 1e6, &d->log);
    if (rc < 0) {
        NPD_LOG(d, ERROR, "migration: cannot start its worker: %s; migration off", strerror(-rc));
        return;
    }
    NPD_LOG(d, INFO,
            "migration: on, order %s, rate %u MB/s%s, free floor %llu MiB, shared pages %s, "
            "triggers:%s%s%s%s%s%s",
            cfg->migration_order, cfg->migration_rate_mb_s,
            cfg->migration_rate_mb_s ? "" : " (no limit)", (unsigned long long)cfg->free_floor_mb,
            cfg->move_shared_pages ? "moved (move_shared_pages=yes)" : "left in place",
            cfg->trigger_homecoming ? " homecoming" : "", cfg->trigger_pressure ? " pressure" : "",
            cfg->trigger_bandwidth ? " bandwidth" : "", cfg->trigger_demotion ? " demotion" : "",
            cfg->trigger_promotion ? " promotion" : "", cfg->migration_dry_run ? " (dry run)" : "");
    /* Once, here; each interval the tier triggers stand aside and say so in status. */
    if (np_kernel_tiering(cfg->proc_root, why, sizeof(why)))
        NPD_LOG(d, WARNING,
                "migration: %s; numaplaced's demotion and promotion stand aside while it does "
                "(docs/migration.md)",
                why);
    if (np_numa_balancing_enabled(cfg->proc_root, NULL, &err) == 1)
        NPD_LOG(d, WARNING,
                "migration: the kernel's automatic NUMA balancing is on "
                "(/proc/sys/kernel/numa_balancing): it moves pages on its own and can undo "
                "numaplace's moves, and pages it has marked for NUMA hinting faults cannot be "
                "found or moved by move_pages on some kernels (seen on Debian 12's 6.1: "
                "-ENOENT while the job leaves them untouched), so partial moves leave them "
                "behind (whole moves use migrate_pages, which walks the page tables itself); "
                "nodes where numaplaced migrates usually run "
                "with sysctl kernel.numa_balancing=0 (docs/migration.md)");
}

void migration_stop(struct np_daemon *d)
{
    struct migrator *m = d->migration.migrator;

    if (m && migrator_busy(m)) {
        /* What it moved until now still goes into the reports; its client still gets an answer */
        struct pollfd done = {.fd = migrator_fd(m), .events = POLLIN};
        NPD_LOG(d, INFO, "stopping: the migration in progress ends after its current batch");
        migrator_cancel(m);
        while (poll(&done, 1, -1) < 0 && errno == EINTR)
            ;
        migration_collect(d);
    }
    migrator_stop(m);
    d->migration.migrator = NULL;
}

static bool is_fast_tier_policy(const char *name)
{
    enum np_policy policy;

    return name && np_policy_from_name(name, &policy, NULL) == 0 &&
           (policy == NP_POLICY_FAST_TIER || policy == NP_POLICY_FAST_TIER_STRICT);
}

/* Whether the step asked for fast-tier (or -strict), or a task of it was placed so. */
static bool job_wants_fast_tier(const struct np_daemon_job *j)
{
    size_t i;
    json_t *t;

    if (is_fast_tier_policy(j->meta.policy_requested))
        return true;
    json_array_foreach(j->tasks, i, t)
    {
        const char *name = NULL;
        if (json_unpack(t, "{s:s}", "policy", &name) == 0 && is_fast_tier_policy(name))
            return true;
    }
    return false;
}

/* One step as the engine sees it; false when it has no processes to move. */
static bool fill_job_view(const struct np_daemon *d, const struct np_daemon_job *j,
                          struct np_node_view *view, uint64_t page, double now,
                          struct np_job_view *v)
{
    const struct np_step_figures *st = &j->stats;
    struct np_sens_inputs in;
    double slowdown;
    pid_t *pids;
    uint64_t *starts;

    if (j->ended || j->sampler.npids == 0)
        return false;
    pids = malloc(j->sampler.npids * sizeof(pid_t));
    starts = malloc(j->sampler.npids * sizeof(uint64_t));
    if (!pids || !starts) {
        free(pids);
        free(starts);
        return false;
    }
    memcpy(pids, j->sampler.pids, j->sampler.npids * sizeof(pid_t));
    memcpy(starts, j->sampler.starttimes, j->sampler.npids * sizeof(uint64_t));
    v->pids = pids;
    v->starttimes = starts; /* the mover checks them, and the uid, before each batch */
    v->uid = j->meta.uid;
    v->npids = j->sampler.npids;
    v->job_id = j->meta.job_id;
    v->step_id = j->meta.step_id;
    v->id = (uint64_t)j->meta.job_id << 16 | (j->meta.step_id & 0xffffu);
    v->job_class = j->job_class;
    v->cpu_nodes = st->local_nodes;
    v->homecoming_paused = now < j->homecoming_quiet_until;
    v->wants_fast_tier = job_wants_fast_tier(j);
    for (unsigned n = 0; n < view->nnodes; n++)
        v->pages_on_node[n] = st->pages_end[n] / page;
    /* The job's whole traffic; np_node_traffic spreads it over the nodes holding its pages
     * (bw_last[] is by the CPUs' node, which is not the memory that serves the misses). */
    if (st->bw_intervals) {
        v->bandwidth = st->bw_last_total;
    } else {
        const struct np_sample *l = &st->last_proc, *p = &st->prev;
        const double dt = l->t - p->t;
        const double cores = dt > 0 && p->have_proc
                                 ? ((l->utime_s + l->stime_s) - (p->utime_s + p->stime_s)) / dt
                                 : 0;
        v->bandwidth = np_bandwidth_proxy(cores > 0 ? cores : 0, l->rss_bytes);
        v->bandwidth_is_proxy = true;
    }
    /* The model's, when loaded and the step has counters; else an order by it falls back. */
    v->has_prediction = auto_class_predict(d, &st->last, &in, &slowdown, NULL) == 0;
    v->predicted_remote = v->has_prediction ? slowdown : 0.0;
    return true;
}

void migration_read_tier_figures(struct np_daemon *d)
{
    const struct np_topology *topo = d->topology;
    const unsigned count = topo ? np_topology_node_count(topo) : 0;

    free(d->tier_latency);
    d->tier_latency = count ? calloc(NP_MAX_NODES, sizeof(*d->tier_latency)) : NULL;
    memset(d->tier_capacity, 0, sizeof(d->tier_capacity));
    for (unsigned n = 0; n < count; n++) {
        const unsigned os = np_topology_node(topo, n)->os_index;
        if (os >= NP_MAX_NODES)
            continue;
        d->tier_capacity[os] = 1e6 * np_topology_bandwidth_mbps(topo, os);
        for (unsigned m = 0; d->tier_latency && m < count; m++) {
            const unsigned to = np_topology_node(topo, m)->os_index;
            if (to < NP_MAX_NODES && to != os)
                d->tier_latency[os][to] = (float)np_topology_latency_ratio(topo, os, to);
        }
    }
}

struct np_node_view *migration_build_view(const struct np_daemon *d)
{
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    const struct np_topology *topo = d->topology;
    struct np_node_view *view = migrator_view_new(d->registry.count);
    const unsigned count = topo ? np_topology_node_count(topo) : 1;

    if (!view)
        return NULL;
    /* Indexed by the kernel's node numbers, as numa_maps, move_pages and the CPUs' nodes are;
     * a gap in the numbering is a slot with no memory, never a candidate or a destination. */
    for (unsigned n = 0; n < count; n++) {
        const unsigned os = topo ? np_topology_node(topo, n)->os_index : n;
        if (os >= NP_MAX_NODES)
            continue;
        if (os + 1 > view->nnodes)
            view->nnodes = os + 1;
        np_node_meminfo(d->cfg.proc_root, os, d->meminfo_files ? &d->meminfo_files[os] : NULL,
                        &view->total_bytes[os], &view->free_bytes[os], NULL);
        view->tier[os] = topo ? np_topology_node(topo, n)->tier : 0;
        /* HMAT's figures where the firmware gives them: predicted reads a tier by them */
        view->capacity[os] = d->tier_capacity[os];
        if (d->tier_latency)
            memcpy(view->latency_ratio[os], d->tier_latency[os], sizeof(view->latency_ratio[os]));
        for (unsigned m = 0; m < count; m++) {
            const unsigned os_to = topo ? np_topology_node(topo, m)->os_index : m;
            const int dist = topo ? np_topology_distance(topo, n, m) : 0;
            if (os_to < NP_MAX_NODES)
                view->distance[os][os_to] = (uint8_t)(dist > 0 && dist < 256 ? dist : 0);
        }
    }
    for (unsigned i = 0; i < d->registry.count; i++)
        if (fill_job_view(d, registry_at(&d->registry, i), view, page, np_monotonic_s(),
                          &view->jobs[view->njobs]))
            view->njobs++;
    np_kernel_tiering(d->cfg.proc_root, view->kernel_tiering, sizeof(view->kernel_tiering));
    np_node_traffic(view);
    uncore_bw_apply(d, view); /* the controllers' own figures where they count */
    return view;
}

json_t *migration_node_traffic_json(const struct np_daemon *d)
{
    struct np_node_view *view = migration_build_view(d);
    json_t *nodes = view ? json_array() : NULL;

    for (unsigned n = 0; nodes && n < view->nnodes; n++) {
        const enum np_bandwidth_source src = view->node_bandwidth_source[n];
        json_t *o;

        if (!migration_node_exists(d, n))
            continue; /* a gap in the kernel's numbering */
        o = json_pack("{s:i, s:s}", "node", (int)n, "source", np_bandwidth_source_name(src));
        if (!o)
            continue;
        if (np_bandwidth_source_measured(src))
            json_object_set_new(o, "bytes_per_s", json_real(view->node_bandwidth[n]));
        else if (src == NP_BW_SOURCE_PROXY)
            json_object_set_new(o, "proxy_rank", json_real(view->node_bandwidth[n]));
        else
            json_object_set_new(o, "unavailable",
                                json_string(view->njobs ? "no job's pages read yet, or the node's "
                                                          "memory size unknown"
                                                        : "no job steps running on this node"));
        json_array_append_new(nodes, o);
    }
    migrator_view_free(view);
    return nodes;
}

static struct np_daemon_job *job_of_view(const struct np_daemon *d, const struct np_node_view *view,
                                         size_t index)
{
    return view && index < view->njobs
               ? registry_find(&d->registry, view->jobs[index].job_id, view->jobs[index].step_id)
               : NULL;
}

int migration_enqueue(struct np_daemon *d, const struct np_request *req,
                      const struct np_order_ops *order, bool dry_run, uint64_t tag)
{
    struct np_migration_state *ms = &d->migration;

    if (ms->nqueued == NPD_QUEUE_MAX)
        return -EBUSY;
    ms->queue[ms->nqueued++] = (struct np_queued_request){*req, order, dry_run, tag};
    return 0;
}

void migration_submit_next(struct np_daemon *d)
{
    struct np_migration_state *ms = &d->migration;
    struct np_queued_request q;
    struct np_node_view *view;

    if (!ms->migrator || ms->nqueued == 0 || migrator_busy(ms->migrator))
        return;
    q = ms->queue[0];
    memmove(&ms->queue[0], &ms->queue[1], --ms->nqueued * sizeof(ms->queue[0]));
    view = migration_build_view(d);
    if (!view) {
        NPD_LOG(d, ERROR, "migration: out of memory building the node view");
        return;
    }
    const struct np_engine_config cfg = {.order = q.order,
                                         .seed = (uint64_t)time(NULL),
                                         .free_floor_bytes = d->cfg.free_floor_mb << 20,
                                         .dry_run = q.dry_run || d->cfg.migration_dry_run,
                                         .move_shared = d->cfg.move_shared_pages};
    migrator_set_rate(ms->migrator, d->cfg.migration_rate_mb_s * 1e6);
    if (migrator_submit(ms->migrator, view, &cfg, &q.request, q.tag) < 0) {
        migrator_view_free(view);
        migration_enqueue(d, &q.request, q.order, q.dry_run, q.tag);
    }
}

/** The reply to a `migrate` request. New reference. */
static json_t *migration_result_json(const struct migrator_done *done)
{
    const struct np_request_result *r = &done->result;
    json_t *obj, *jobs;

    if (done->rc < 0)
        return np_proto_reply_error("%s", done->err.msg);
    jobs = json_array();
    for (size_t i = 0; jobs && i < r->noutcomes; i++) {
        const struct np_job_outcome *o = &r->outcomes[i];
        const struct np_job_view *v = &done->view->jobs[o->job_index];
        json_t *failed = json_object();
        for (int f = 0; failed && f < NP_MOVE_FAIL_COUNT; f++)
            if (o->moved.pages_failed[f])
                json_object_set_new(failed, np_move_failure_name((enum np_move_failure)f),
                                    json_integer((json_int_t)o->moved.pages_failed[f]));
        json_array_append_new(
            jobs, json_pack("{s:I, s:I, s:s, s:I, s:I, s:o, s:b, s:b, s:f}", "job",
                            (json_int_t)v->job_id, "step", (json_int_t)v->step_id, "class",
                            np_class_name(v->job_class), "planned_pages", (json_int_t)o->planned,
                            "moved_pages", (json_int_t)o->moved.pages_moved, "failed_pages", failed,
                            "process_gone", o->moved.process_gone, "whole", o->moved.whole,
                            "moving_s", o->moved.ns_moving / 1e9));
    }
    obj = np_proto_reply_ok();
    json_object_set_new(
        obj, "result",
        json_pack("{s:s, s:i, s:i, s:I, s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:b, s:o, s:s}",
                  "trigger", np_trigger_name(r->request.trigger), "from", (int)r->request.src, "to",
                  (int)r->request.dst, "requested_pages", (json_int_t)r->request.pages, "order",
                  r->order ? r->order : "?", "reason", r->request.reason, "used_proxy",
                  r->used_proxy, "candidates", (json_int_t)r->candidates, "planned_pages",
                  (json_int_t)r->planned, "moved_pages", (json_int_t)r->moved,
                  "capped_by_floor_pages", (json_int_t)r->capped_by_floor, "stopped", r->stopped,
                  "jobs", jobs, "summary", r->summary));
    if (r->src_tier != r->dst_tier) /* a move between tiers says which, as the report does */
        json_object_update_new(
            json_object_get(obj, "result"),
            json_pack("{s:i, s:i}", "from_tier", (int)r->src_tier, "to_tier", (int)r->dst_tier));
    return obj;
}

int migration_order_index(const char *name)
{
    for (int i = 0; name && i < NPD_MAX_ORDERS && np_order_at((size_t)i); i++)
        if (strcmp(np_order_at((size_t)i)->name, name) == 0)
            return i;
    return -1;
}

/* The daemon-wide counters of the Prometheus page. */
static void book_totals(struct np_daemon_totals *t, const struct migrator_done *done)
{
    const struct np_request_result *r = &done->result;
    const unsigned trigger = (unsigned)done->trigger < NP_TRIGGER_COUNT ? done->trigger : 0;
    int order;

    t->requests[trigger][np_request_outcome_of(done->rc, r)]++;
    if (done->rc < 0 || r->dry_run)
        return;
    order = migration_order_index(r->order);
    if (order >= 0)
        t->pages_moved[trigger][order] += r->moved;
    if (r->src_tier != r->dst_tier)
        t->tier_pages[r->src_tier < NPD_MAX_TIERS ? r->src_tier : NPD_MAX_TIERS - 1]
                     [r->dst_tier < NPD_MAX_TIERS ? r->dst_tier : NPD_MAX_TIERS - 1] += r->moved;
    for (size_t i = 0; i < r->noutcomes; i++)
        for (int f = 0; f < NP_MOVE_FAIL_COUNT; f++)
            t->failed_pages[f] += r->outcomes[i].moved.pages_failed[f];
}

void migration_book(struct np_daemon *d, const struct migrator_done *done, double now)
{
    const struct np_request_result *r = &done->result;

    book_totals(&d->totals, done);
    if (done->rc < 0) {
        NPD_LOG(d, ERROR, "migration: %s", done->err.msg);
        return;
    }
    for (size_t i = 0; i < r->noutcomes; i++) {
        struct np_daemon_job *j = job_of_view(d, done->view, r->outcomes[i].job_index);
        if (!j)
            continue; /* ended meanwhile */
        if (np_step_figures_book_migration(&j->stats, r, &r->outcomes[i],
                                           now - j->registered_mono) < 0)
            NPD_LOG(d, ERROR, "job %u: out of memory", j->meta.job_id);
        if (!r->dry_run)
            j->last_pages_mono = -1e9; /* read its pages again at the next sample */
    }
    /* A trigger whose request moved nothing would ask again at once: it waits 30 s; a homecoming
     * or promotion per job, so one stuck high job does not hold back the others. */
    if (r->moved == 0 && (r->request.trigger == NP_TRIGGER_HOMECOMING ||
                          r->request.trigger == NP_TRIGGER_PROMOTION)) {
        struct np_daemon_job *j = r->request.target_job >= 0
                                      ? job_of_view(d, done->view, (size_t)r->request.target_job)
                                      : NULL;
        if (j)
            j->homecoming_quiet_until = now + NPD_TRIGGER_BACKOFF_S;
    } else if (r->moved == 0 && r->request.trigger != NP_TRIGGER_ADMIN &&
               r->request.trigger < NP_TRIGGER_COUNT) {
        d->migration.trigger_quiet_until[r->request.trigger] = now + NPD_TRIGGER_BACKOFF_S;
    }
}

bool migration_trigger_ready(const struct np_daemon *d, enum np_trigger_kind kind, double now)
{
    return now >= d->migration.trigger_quiet_until[kind];
}

void migration_collect(struct np_daemon *d)
{
    struct migrator_done done;

    if (!d->migration.migrator || !migrator_collect(d->migration.migrator, &done))
        return;
    migration_book(d, &done, np_monotonic_s());
    if (done.tag)
        client_answer_tag(d, done.tag, migration_result_json(&done));
    migrator_done_fini(&done);
    migration_submit_next(d);
}

void migration_run_triggers(struct np_daemon *d)
{
    struct np_migration_state *ms = &d->migration;
    struct np_trigger_config tc = {0};
    struct np_node_view *view;

    if (!ms->migrator || ms->nqueued || migrator_busy(ms->migrator) || d->registry.count == 0)
        return;
    tc.enabled[NP_TRIGGER_PRESSURE] = d->cfg.trigger_pressure;
    tc.enabled[NP_TRIGGER_BANDWIDTH] = d->cfg.trigger_bandwidth;
    tc.enabled[NP_TRIGGER_HOMECOMING] = d->cfg.trigger_homecoming;
    tc.enabled[NP_TRIGGER_DEMOTION] = d->cfg.trigger_demotion;
    tc.enabled[NP_TRIGGER_PROMOTION] = d->cfg.trigger_promotion;
    tc.free_floor_bytes = d->cfg.free_floor_mb << 20;
    tc.bandwidth_threshold = d->cfg.bandwidth_threshold_mb_s * 1e6;
    tc.bandwidth_intervals = d->cfg.bandwidth_intervals;
    view = migration_build_view(d);
    if (!view)
        return;
    for (size_t i = 0; np_trigger_at(i); i++) {
        const struct np_trigger_ops *t = np_trigger_at(i);
        struct np_request reqs[TRIGGER_MAX_REQUESTS];
        char why[sizeof(ms->trigger_inactive[0])] = "";
        int n;

        if (t->kind == NP_TRIGGER_ADMIN || !tc.enabled[t->kind] ||
            !migration_trigger_ready(d, t->kind, np_monotonic_s()))
            continue;
        n = t->propose(view, &tc, ms->trigger_state[t->kind], reqs, TRIGGER_MAX_REQUESTS, why,
                       sizeof(why));
        if (strcmp(why, ms->trigger_inactive[t->kind]) != 0) {
            if (why[0])
                NPD_LOG(d, INFO, "trigger %s inactive: %s", t->name, why);
            snprintf(ms->trigger_inactive[t->kind], sizeof(ms->trigger_inactive[t->kind]), "%s",
                     why);
        }
        for (int k = 0; k < n; k++) {
            NPD_LOG(d, INFO, "trigger %s: %s", t->name, reqs[k].reason);
            migration_enqueue(d, &reqs[k], np_order_lookup(d->cfg.migration_order), false, 0);
        }
    }
    migrator_view_free(view);
    migration_submit_next(d);
}

bool migration_node_exists(const struct np_daemon *d, unsigned os)
{
    const unsigned count = d->topology ? np_topology_node_count(d->topology) : 1;

    for (unsigned n = 0; n < count; n++)
        if ((d->topology ? np_topology_node(d->topology, n)->os_index : n) == os)
            return true;
    return false;
}

void migration_node_list(const struct np_daemon *d, char *out, size_t size)
{
    const unsigned count = d->topology ? np_topology_node_count(d->topology) : 1;
    size_t len = (size_t)snprintf(out, size, "nodes ");

    for (unsigned n = 0; n < count && len < size; n++)
        len += (size_t)snprintf(out + len, size - len, "%s%u", n ? "," : "",
                                d->topology ? np_topology_node(d->topology, n)->os_index : n);
}
