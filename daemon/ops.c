/* The protocol's ops (ops.h): a request line decoded and dispatched, and each op's reply. */
#include "ops.h"

#include <limits.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

json_t *handlers_dispatch(struct np_daemon *d, const struct np_peer *peer, uint64_t *pending,
                          const char *buf, size_t len)
{
    struct np_proto_request req;
    struct np_err err = {0};

    if (np_proto_decode(buf, len, &req, &err) < 0) {
        NPD_LOG(d, WARNING, "bad request from pid %d uid %u: %s", (int)peer->pid,
                (unsigned)peer->uid, err.msg);
        return np_proto_reply_error("%s", err.msg);
    }
    switch (req.op) {
    case NP_OP_REGISTER:
        return op_register(d, peer, &req.reg);
    case NP_OP_APPLIED:
        return op_applied(d, peer, &req.applied);
    case NP_OP_STEP_END:
        return op_step_end(d, peer, pending, req.job_id, req.step_id, req.answer_at_end);
    case NP_OP_STATUS:
        return op_status(d, peer, req.job_id);
    case NP_OP_PING: {
        json_t *r = np_proto_reply_ok();
        json_object_set_new(r, "version", json_integer(NP_PROTO_VERSION));
        return r;
    }
    case NP_OP_SET_CLASS:
        return op_set_class(d, peer, req.job_id, req.job_class);
    case NP_OP_MIGRATE:
        return op_migrate(d, peer, pending, &req);
    case NP_OP_ADVISE:
        return op_advise(d, peer, req.advise.job_id, req.advise.step_id, req.advise.uid,
                         req.advise.name);
    }
    return np_proto_reply_error("unhandled op");
}

/* Whether task @p pid runs another program than @p parent (slurmstepd): nobody waits for
 * register's answer, so the task may have started its program before its counters opened. */
static bool exec_came_first(const char *proc_root, pid_t pid, pid_t parent)
{
    char path[PATH_MAX], image[2][PATH_MAX];
    ssize_t len[2];

    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/proc/%d/exe", proc_root, (int)(i ? parent : pid));
        len[i] = readlink(path, image[i], sizeof(image[i]));
    }
    return len[0] > 0 && len[1] > 0 &&
           (len[0] != len[1] || memcmp(image[0], image[1], (size_t)len[0]) != 0);
}

json_t *op_register(struct np_daemon *d, const struct np_peer *peer, const struct np_task_reg *r)
{
    struct np_err err = {0};
    const double cpu0 = np_clock_s(CLOCK_THREAD_CPUTIME_ID);
    struct np_daemon_job *j;
    json_t *task, *reply;
    bool first = false;

    if (!auth_is_root(peer))
        return np_proto_reply_error("only root (slurmstepd) may register tasks; uid %u may not",
                                    (unsigned)peer->uid);
    j = registry_find(&d->registry, r->job_id, r->step_id);
    if (j && j->finishing)
        return np_proto_reply_error("job %u.%s has ended; its report is being written", r->job_id,
                                    np_step_name(r->step_id));
    if (!j) {
        j = job_new(d, r->job_id, r->step_id, r->uid, r->cpus, r->policy_requested, r->sensitivity,
                    &err);
        if (!j)
            return np_proto_reply_error("%s", err.msg);
        hint_claim_name(d, j);
        first = true;
        if (r->unlabelled) { /* the site's default label, not the user's */
            j->unlabelled = true;
            job_set_class_source(j, "default");
        }
        NPD_LOG(d, INFO, "job %u.%s: registered (uid %u, class %s, policy %s, CPUs %s)", r->job_id,
                np_step_name(r->step_id), (unsigned)r->uid, r->sensitivity,
                r->policy_requested[0] ? r->policy_requested : "-", r->cpus[0] ? r->cpus : "-");
    } else if (j->meta.uid != r->uid) {
        return np_proto_reply_error("job %u.%s is registered for uid %u, not %u", r->job_id,
                                    np_step_name(r->step_id), (unsigned)j->meta.uid,
                                    (unsigned)r->uid);
    } else {
        /* job_new checked the first task; each later one's counters must fit the budget too. */
        job_keep_perf_for_task(d, j);
    }
    /* Ended before this was read (nobody waits for the answer): listed, nothing of it counted. */
    const int added = np_sampler_add_task(&j->sampler, r->pid, &err);
    const bool gone = added < 0 && err.code == -ESRCH;
    if (added < 0 && !gone) {
        if (j->sampler.ntasks == 0)
            job_finish(d, j, false);
        return np_proto_reply_error("task pid %d: %s", (int)r->pid, err.msg);
    }
    if (!(task = job_task_entry(j, r->pid))) {
        task = json_pack("{s:i, s:I}", "task", r->task_id, "pid", (json_int_t)r->pid);
        if (task && (gone || exec_came_first(d->cfg.proc_root, r->pid, peer->pid)))
            json_object_set_new(task, gone ? "ended_before_read" : "counters_late", json_true());
        json_array_append_new(j->tasks, task);
    }
    j->stats.helper_cpu_s += np_clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    /* The step's first task: its whole entry; a later one: that task's alone (n small lines). */
    if (first || !task)
        registry_note(d, j);
    else
        registry_note_task_added(d, j, task);
    reply = np_proto_reply_ok();
    if (gone)
        json_object_set_new(reply, "gone", json_true());
    return reply;
}

json_t *op_applied(struct np_daemon *d, const struct np_peer *peer, const struct np_task_applied *a)
{
    struct np_daemon_job *j = registry_find(&d->registry, a->job_id, a->step_id);
    json_t *t;

    /* The task speaks for itself only: its own pid, and the job's uid. */
    if (!auth_speaks_for(peer, a->pid))
        return np_proto_reply_error("a task may report only itself (peer pid %d, claimed %d)",
                                    (int)peer->pid, (int)a->pid);
    if (!j || !(t = job_task_entry(j, a->pid)))
        return np_proto_reply_error("job %u.%s has no registered task with pid %d", a->job_id,
                                    np_step_name(a->step_id), (int)a->pid);
    if (!auth_owns(peer, j->meta.uid))
        return np_proto_reply_error("job %u is not yours", a->job_id);
    /* Sent once, before exec: a second would be the task's program speaking, in a loop maybe. */
    if (json_object_get(t, "policy"))
        return np_proto_reply_error("task pid %d of job %u.%s said what it applied already; a task "
                                    "says it once, before its program starts",
                                    (int)a->pid, a->job_id, np_step_name(a->step_id));
    json_object_set_new(t, "policy", json_string(a->policy));
    json_object_set_new(t, "mode", json_string(a->mode));
    json_object_set_new(t, "nodes", json_string(a->nodes));
    if (a->reason[0]) /* auto's choice: absent for the other policies, as before */
        json_object_set_new(t, "reason", json_string(a->reason));
    if (a->auto_facts.given) /* the facts auto's choice rested on, for readers */
        json_object_set_new(t, "auto", np_proto_applied_auto_json(&a->auto_facts));
    json_object_set_new(t, "cpus", json_string(a->cpus));
    /* Its binding is set by now (task/affinity): read the tasks' affinity at the next interval */
    j->last_detail_mono = -1e9;
    registry_note_task(d, j, t); /* this task's entry, not the whole step's */
    return np_proto_reply_ok();
}

json_t *op_step_end(struct np_daemon *d, const struct np_peer *peer, uint64_t *pending,
                    uint32_t job_id, uint32_t step_id, bool answer_at_end)
{
    struct np_daemon_job *j = registry_find(&d->registry, job_id, step_id);

    if (!auth_is_root(peer))
        return np_proto_reply_error("only root (slurmstepd) may end steps; uid %u may not",
                                    (unsigned)peer->uid);
    if (!j)
        return np_proto_reply_error("job %u.%s is not tracked here", job_id, np_step_name(step_id));
    /* numaplace_task.so is answered after the final sample, so slurmstepd need not wait for the
     * report's flushes (status lists the step "ending" until it is written, or while held). */
    if ((answer_at_end && j->finishing) || j->report_held)
        return np_proto_reply_ok();
    if (j->finishing && j->reply_tag)
        return np_proto_reply_error("job %u.%s has ended already; its report is being written",
                                    job_id, np_step_name(step_id));
    if (j->finishing) { /* a tick found its processes gone first: wait for the same report */
        j->reply_tag = ++d->migration.next_tag;
        *pending = j->reply_tag;
        return NULL;
    }
    NPD_LOG(d, INFO, "job %u.%s: step ended", job_id, np_step_name(step_id));
    if (!answer_at_end)
        j->reply_tag = ++d->migration.next_tag;
    /* The final sample is taken before the answer: no later request sees the step running. */
    job_finish(d, j, true); /* j is freed unless it is finishing */
    j = registry_find(&d->registry, job_id, step_id);
    if (answer_at_end || !j || j->report_held) { /* held at once: no writer */
        if (j)
            j->reply_tag = 0;
        return np_proto_reply_ok();
    }
    /* The epilog reads the report right after the reply: it comes once that is durable. */
    *pending = d->migration.next_tag;
    return NULL;
}

/* Whether any task the step registered is still there: slurmstepd tells numaplaced last, so a
 * step whose tasks are all gone has ended, whether or not its step_end has come yet. */
static bool tasks_left(const struct np_daemon *d, const struct np_daemon_job *j)
{
    json_t *task;
    size_t i;

    json_array_foreach(j->tasks, i, task)
    {
        char path[4200];
        snprintf(path, sizeof(path), "%s/proc/%lld", d->cfg.proc_root,
                 (long long)json_integer_value(json_object_get(task, "pid")));
        if (access(path, F_OK) == 0)
            return true;
    }
    return false;
}

/* For json_pack's "o*": an empty text, or one cut inside a UTF-8 sequence, is no member (the
 * step's other members stay). */
static json_t *text_member(const char *s)
{
    return s[0] ? json_string(s) : NULL;
}

static json_t *job_status(const struct np_daemon *d, const struct np_daemon_job *j)
{
    const struct np_job_meta *m = &j->meta;
    unsigned tier[NP_SAMPLE_MAX_NODES];
    /* ended, its report not yet written (docs/protocol.md): `numaplace report` waits for it */
    const bool ending = j->finishing || j->ended || !tasks_left(d, j);

    report_node_tiers(d, tier);
    /* processes_cut: the latest sample saw only part of it; backends_reason: why /proc alone */
    return json_pack(
        "{s:I, s:I, s:s, s:I, s:s, s:s, s:s, s:f, s:O, s:o, s:f, s:o*, s:o*, s:o*, s:o*, s:o*, "
        "s:o*, s:o*, s:o*, s:o*}",
        "job", (json_int_t)m->job_id, "step", (json_int_t)m->step_id, "step_name",
        np_step_name(m->step_id), "uid", (json_int_t)m->uid, "class", np_class_name(j->job_class),
        "policy", m->policy_requested, "cpus", m->cpus, "running_s",
        np_monotonic_s() - j->registered_mono, "tasks", j->tasks, "latest",
        np_step_figures_latest(&j->stats), "helper_cpu_s", j->stats.helper_cpu_s, "effective_cpus",
        text_member(m->effective_cpus), "local_nodes",
        m->local_nodes ? np_node_list_json(m->local_nodes) : NULL, "registered_nodes",
        m->registered_nodes ? np_node_list_json(m->registered_nodes) : NULL, "processes_cut",
        j->stats.last.processes_cut ? text_member(j->stats.last.proc_reason) : NULL, "backends",
        text_member(m->backends), "backends_reason", text_member(m->backends_reason), "ending",
        ending ? json_true() : NULL, "class_source", text_member(m->class_source), "pages_by_tier",
        np_bytes_by_tier(j->stats.pages_end, tier));
}

/* @p steps: the steps the asker may count (every one for root and admin_group, else theirs). */
static json_t *helper_status(const struct np_daemon *d, unsigned steps)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    /* whether the memory controllers count node traffic, or why not (AMD: libpfm4 cannot) */
    return json_pack("{s:s, s:i, s:f, s:f, s:i, s:s, s:i, s:s}", "node", d->host, "pid",
                     (int)getpid(), "uptime_s", np_monotonic_s() - d->started_mono, "cpu_time_s",
                     (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
                     "interval_ms", (int)d->cfg.interval_ms, "backends",
                     d->perf_mask ? "perf,proc" : "proc", "jobs", (int)steps, "memory_controllers",
                     d->uncore.why[0] ? d->uncore.why : "counted");
}

/* The node's memory traffic for one who may not know of other users' steps: only what the
 * controllers count; an estimate from the steps' own figures would say that someone's runs. */
static json_t *node_traffic_for_a_user(json_t *nodes)
{
    json_t *o;
    size_t i;

    json_array_foreach(nodes, i, o)
    {
        const char *source = json_string_value(json_object_get(o, "source"));
        json_t *node;

        if (source && strcmp(source, np_bandwidth_source_name(NP_BW_SOURCE_UNCORE)) == 0)
            continue;
        node = json_incref(json_object_get(o, "node"));
        json_object_clear(o);
        json_object_update_new(
            o, json_pack("{s:o, s:s, s:s}", "node", node, "source",
                         np_bandwidth_source_name(NP_BW_SOURCE_UNAVAILABLE), "unavailable",
                         "estimated from every user's steps: shown to root and admin_group only"));
    }
    return nodes;
}

json_t *op_status(struct np_daemon *d, const struct np_peer *peer, uint32_t job_id)
{
    /* Whether other users' steps run here is an administrator's business only. */
    const bool sees_all = auth_admin_rights(peer, d->cfg.admin_group) == AUTH_YES;
    json_t *reply, *jobs = json_array(), *traffic;
    unsigned own = 0;

    for (unsigned i = 0; i < d->registry.count; i++) {
        const struct np_daemon_job *j = registry_at(&d->registry, i);
        if (!auth_owns(peer, j->meta.uid))
            continue; /* users see their own jobs only */
        own++;
        if (job_id && j->meta.job_id != job_id)
            continue;
        json_array_append_new(jobs, job_status(d, j));
    }
    if (job_id && json_array_size(jobs) == 0) {
        json_decref(jobs);
        /* Another user's job and no job get the same answer: that is not the asker's business. */
        return peer->uid == 0
                   ? np_proto_reply_error("job %u is not tracked on this node", job_id)
                   : np_proto_reply_error("no job %u of yours is tracked on this node", job_id);
    }
    reply = np_proto_reply_ok();
    json_object_set_new(reply, "jobs", jobs);
    json_object_set_new(reply, "helper", helper_status(d, sees_all ? d->registry.count : own));
    /* The whole node's memory traffic, every user's jobs together: no job is named in it. */
    traffic = migration_node_traffic_json(d);
    json_object_set_new(reply, "memory_nodes",
                        sees_all || !traffic ? traffic : node_traffic_for_a_user(traffic));
    return reply;
}

json_t *op_set_class(struct np_daemon *d, const struct np_peer *peer, uint32_t job_id,
                     const char *name)
{
    enum np_class cls;
    unsigned changed = 0;
    json_t *reply = auth_refuse_unless_admin(peer, d->cfg.admin_group, "change a job's class");

    if (reply)
        return reply;
    if (np_class_from_name(name, &cls, NULL) < 0)
        return np_proto_reply_error("class \"%s\": accepted: %s", name, np_class_names());
    for (unsigned i = 0; i < d->registry.count; i++) {
        struct np_daemon_job *j = registry_at(&d->registry, i);
        if (j->meta.job_id != job_id)
            continue;
        NPD_LOG(d, INFO, "job %u.%s: class %s -> %s (set by uid %u)", job_id,
                np_step_name(j->meta.step_id), np_class_name(j->job_class), np_class_name(cls),
                (unsigned)peer->uid);
        job_set_class(j, cls);
        job_set_class_source(j, "admin"); /* wins over the label and class_default=auto */
        registry_note(d, j);
        changed++;
    }
    if (!changed)
        return np_proto_reply_error("job %u is not tracked on this node", job_id);
    reply = np_proto_reply_ok();
    json_object_set_new(reply, "steps", json_integer(changed));
    json_object_set_new(reply, "class", json_string(np_class_name(cls)));
    return reply;
}

/* An administrator's destination is kept, but the reason and the log say when it is saturated */
static void warn_if_saturated(struct np_daemon *d, struct np_request *r)
{
    const double threshold = d->cfg.bandwidth_threshold_mb_s * 1e6;
    struct np_node_view *view = threshold > 0 ? migration_build_view(d) : NULL;
    if (!view)
        return;
    if (np_node_saturated(view, r->dst, threshold)) {
        const size_t len = strlen(r->reason);
        snprintf(r->reason + len, sizeof(r->reason) - len,
                 "; warning: destination node %u is saturated (%.0f MB/s, %s; threshold %.0f)",
                 r->dst, view->node_bandwidth[r->dst] / 1e6,
                 np_bandwidth_source_name(view->node_bandwidth_source[r->dst]), threshold / 1e6);
        NPD_LOG(d, WARNING, "migrate %u -> %u: %s", r->src, r->dst, r->reason);
    }
    migrator_view_free(view);
}

json_t *op_migrate(struct np_daemon *d, const struct np_peer *peer, uint64_t *pending,
                   const struct np_proto_request *req)
{
    const struct np_order_ops *order =
        np_order_lookup(req->migrate.order[0] ? req->migrate.order : d->cfg.migration_order);
    struct np_request r = {.src = req->migrate.from,
                           .dst = req->migrate.to,
                           .pages = req->migrate.pages,
                           .trigger = NP_TRIGGER_ADMIN,
                           .target_job = -1};

    json_t *refused = auth_refuse_unless_admin(peer, d->cfg.admin_group, "request migrations");
    char nodes[256];

    if (refused)
        return refused;
    if (!d->cfg.migration || !d->migration.migrator)
        return np_proto_reply_error("migration is off on this node (migration=off)");
    if (!order)
        return np_proto_reply_error("order \"%s\": accepted: %s", req->migrate.order,
                                    np_order_names());
    if (req->migrate.tier[0] && migration_node_exists(d, r.src)) {
        /* One tier down or up: the nearest node of that tier with room above the floor. */
        const bool down = strcmp(req->migrate.tier, "down") == 0;
        struct np_node_view *view = migration_build_view(d);
        const int dst =
            view ? np_tier_neighbour(view, r.src, down, d->cfg.free_floor_mb << 20) : -1;
        const unsigned tier = view ? np_view_tier(view, r.src) : 0;

        migrator_view_free(view);
        if (dst < 0)
            return np_proto_reply_error("node %u (tier %u): no node one tier %s has memory free "
                                        "above the floor (free_floor_mb=%llu)",
                                        r.src, tier, req->migrate.tier,
                                        (unsigned long long)d->cfg.free_floor_mb);
        r.dst = (unsigned)dst;
    }
    migration_node_list(d, nodes, sizeof(nodes));
    if (req->migrate.tier[0] && !migration_node_exists(d, r.src))
        return np_proto_reply_error("node %u: not a NUMA node of this machine (%s)", r.src, nodes);
    if (!migration_node_exists(d, r.src) || !migration_node_exists(d, r.dst) || r.src == r.dst)
        return np_proto_reply_error("nodes %u -> %u: they must be two different NUMA nodes of "
                                    "this machine (%s)",
                                    r.src, r.dst, nodes);
    snprintf(r.reason, sizeof(r.reason), "administrator (uid %u)%s%s%s", (unsigned)peer->uid,
             req->migrate.tier[0] ? ", one tier " : "", req->migrate.tier,
             req->migrate.dry_run ? ", dry run" : "");
    warn_if_saturated(d, &r);
    *pending = ++d->migration.next_tag;
    if (migration_enqueue(d, &r, order, req->migrate.dry_run, *pending) < 0) {
        *pending = 0;
        return np_proto_reply_error("%u migration requests are queued already; try again",
                                    d->migration.nqueued);
    }
    migration_submit_next(d);
    return NULL;
}
