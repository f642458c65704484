/* register: slurmstepd (root) registers each task of a step; the first creates the step. */
#include "placement_hint.h"
#include "auth.h"
#include "ops.h"
#include "jobs.h"
#include "registry.h"
#include "job_life.h"

json_t *op_register(struct np_daemon *d, const struct np_peer *peer, const struct np_task_reg *r)
{
    struct np_err err = {0};
    const double cpu0 = np_daemon_thread_cpu_s();
    struct np_daemon_job *j;
    json_t *task;
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
    if (np_sampler_add_task(&j->sampler, r->pid, &err) < 0) {
        if (j->sampler.ntasks == 0)
            job_finish(d, j, false);
        return np_proto_reply_error("task pid %d: %s", (int)r->pid, err.msg);
    }
    if (!(task = job_task_entry(j, r->pid))) {
        task = json_pack("{s:i, s:I}", "task", r->task_id, "pid", (json_int_t)r->pid);
        json_array_append_new(j->tasks, task);
    }
    j->stats.helper_cpu_s += np_daemon_thread_cpu_s() - cpu0;
    /* The step's first task: its whole entry; a later one: that task's alone (a step of n tasks
     * journals n small lines, not n copies of a growing step). */
    if (first || !task)
        registry_note(d, j);
    else
        registry_note_task_added(d, j, task);
    return np_proto_reply_ok();
}
