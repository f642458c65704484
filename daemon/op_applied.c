/* applied: a task says which policy it ended up with (numaplace_task.so, as the job's user). */
#include "auth.h"
#include "ops.h"
#include "jobs.h"
#include "registry.h"

#include <string.h>

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
    /* Its binding is set by now (task/affinity, before the plugin's task_init): read the tasks'
     * affinity at the next interval, not a detail interval later (sampling.c). */
    j->last_detail_mono = -1e9;
    registry_note_task(d, j, t); /* this task's entry, not the whole step's */
    return np_proto_reply_ok();
}
