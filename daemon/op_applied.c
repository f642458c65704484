/* applied: a task says which policy it ended up with (numaplace_task.so, as the job's user). */
#include "auth.h"
#include "ops.h"
#include "jobs.h"
#include "registry.h"

#include <string.h>

/* @return whether @p key of @p task changed to @p value */
static bool set_if_changed(json_t *task, const char *key, const char *value)
{
    const char *was = json_string_value(json_object_get(task, key));

    if (was && strcmp(was, value) == 0)
        return false;
    json_object_set_new(task, key, json_string(value));
    return true;
}

json_t *op_applied(struct np_daemon *d, const struct ucred *peer, const struct np_task_applied *a)
{
    struct np_daemon_job *j = registry_find(&d->registry, a->job_id, a->step_id);
    json_t *t;
    int changed = 0;

    /* The task speaks for itself only: its own pid, and the job's uid. */
    if (!auth_speaks_for(peer, a->pid))
        return np_proto_reply_error("a task may report only itself (peer pid %d, claimed %d)",
                                    (int)peer->pid, (int)a->pid);
    if (!j || !(t = job_task_entry(j, a->pid)))
        return np_proto_reply_error("job %u.%s has no registered task with pid %d", a->job_id,
                                    np_step_name(a->step_id), (int)a->pid);
    if (!auth_owns(peer, j->meta.uid))
        return np_proto_reply_error("job %u is not yours", a->job_id);
    changed += set_if_changed(t, "policy", a->policy);
    changed += set_if_changed(t, "mode", a->mode);
    changed += set_if_changed(t, "nodes", a->nodes);
    if (set_if_changed(t, "cpus", a->cpus)) {
        /* Its binding is set by now (task/affinity, before the plugin's task_init): read the
         * tasks' affinity at the next interval, not a detail interval later (sampling.c). */
        j->last_detail_mono = -1e9;
        changed++;
    }
    if (changed) /* a task repeating itself changes nothing, and writes nothing */
        registry_note(d, j);
    return np_proto_reply_ok();
}
