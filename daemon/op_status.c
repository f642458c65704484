/* status: the steps a user may see (root: all), their latest figures, and numaplaced. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "auth.h"
#include "ops.h"
#include "migration.h"
#include "registry.h"

/* Whether any task the step registered is still there (in the daemon's /proc root). slurmstepd
 * reaps its tasks and tells srun before it tells numaplaced (its spank_exit comes last): a step
 * whose tasks are all gone has ended, whether or not its step_end has come yet. */
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

static json_t *job_status(const struct np_daemon *d, const struct np_daemon_job *j)
{
    json_t *obj =
        json_pack("{s:I, s:I, s:s, s:I, s:s, s:s, s:s, s:f, s:O, s:o}", "job",
                  (json_int_t)j->meta.job_id, "step", (json_int_t)j->meta.step_id, "step_name",
                  np_step_name(j->meta.step_id), "uid", (json_int_t)j->meta.uid, "class",
                  np_class_name(j->job_class), "policy", j->meta.policy_requested, "cpus",
                  j->meta.cpus, "running_s", np_monotonic_s() - j->registered_mono, "tasks",
                  j->tasks, "latest", np_step_figures_latest(&j->stats));
    if (obj)
        json_object_set_new(obj, "helper_cpu_s", json_real(j->stats.helper_cpu_s));
    if (obj && j->meta.effective_cpus[0]) /* where its tasks may run (their affinity) */
        json_object_set_new(obj, "effective_cpus", json_string(j->meta.effective_cpus));
    if (obj && j->meta.local_nodes)
        json_object_set_new(obj, "local_nodes", np_node_list_json(j->meta.local_nodes));
    if (obj && j->meta.registered_nodes)
        json_object_set_new(obj, "registered_nodes", np_node_list_json(j->meta.registered_nodes));
    if (obj && j->stats.last.processes_cut) /* the latest sample saw only part of the step */
        json_object_set_new(obj, "processes_cut", json_string(j->stats.last.proc_reason));
    if (obj && j->meta.backends[0])
        json_object_set_new(obj, "backends", json_string(j->meta.backends));
    if (obj && j->meta.backends_reason[0]) /* why /proc alone (the descriptor budget) */
        json_object_set_new(obj, "backends_reason", json_string(j->meta.backends_reason));
    /* ended, its report not yet written (docs/protocol.md): `numaplace report` waits for it */
    if (obj && (j->finishing || j->ended || !tasks_left(d, j)))
        json_object_set_new(obj, "ending", json_true());
    if (obj && j->meta.class_source[0]) /* what decided the class (docs/sensitivity.md) */
        json_object_set_new(obj, "class_source", json_string(j->meta.class_source));
    return obj;
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
 * memory controllers count, which is there with or without steps; an estimate from the steps'
 * own figures would say that someone's step runs. */
static json_t *node_traffic_for_a_user(json_t *nodes)
{
    json_t *o;
    size_t i;

    json_array_foreach(nodes, i, o)
    {
        const char *source = json_string_value(json_object_get(o, "source"));
        json_t *node = json_incref(json_object_get(o, "node"));

        if (source && strcmp(source, np_bandwidth_source_name(NP_BW_SOURCE_UNCORE)) == 0) {
            json_decref(node);
            continue;
        }
        json_object_clear(o);
        json_object_set_new(o, "node", node);
        json_object_set_new(o, "source",
                            json_string(np_bandwidth_source_name(NP_BW_SOURCE_UNAVAILABLE)));
        json_object_set_new(o, "unavailable",
                            json_string("estimated from every user's steps: shown to root and "
                                        "admin_group only"));
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
        /* Another user's job and no job at all get the same answer: whether someone else's
         * job runs here is not the asker's business. */
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
