/* set_class: an administrator makes every step of a job high or low priority. */
#include "auth.h"
#include "ops.h"
#include "jobs.h"
#include "registry.h"

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
