/* step_end: slurmstepd (root) says a step ended; its report goes to the spool. */
#include "auth.h"
#include "handlers.h"
#include "jobs.h"
#include "registry.h"

json_t *op_step_end(struct np_daemon *d, const struct ucred *peer, uint32_t job_id,
                    uint32_t step_id)
{
    struct np_daemon_job *j = registry_find(&d->registry, job_id, step_id);

    if (!auth_is_root(peer))
        return np_proto_reply_error("only root (slurmstepd) may end steps; uid %u may not",
                                    (unsigned)peer->uid);
    if (!j)
        return np_proto_reply_error("job %u.%s is not tracked here", job_id, np_step_name(step_id));
    NPD_LOG(d, INFO, "job %u.%s: step ended", job_id, np_step_name(step_id));
    job_finish(d, j, true);
    return np_proto_reply_ok();
}
