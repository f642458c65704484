/* step_end: slurmstepd (root) says a step ended; its report goes to the spool. */
#include "auth.h"
#include "ops.h"
#include "jobs.h"
#include "registry.h"
#include "job_life.h"

json_t *op_step_end(struct np_daemon *d, const struct np_peer *peer, uint64_t *pending,
                    uint32_t job_id, uint32_t step_id, bool answer_at_end)
{
    struct np_daemon_job *j = registry_find(&d->registry, job_id, step_id);

    if (!auth_is_root(peer))
        return np_proto_reply_error("only root (slurmstepd) may end steps; uid %u may not",
                                    (unsigned)peer->uid);
    if (!j)
        return np_proto_reply_error("job %u.%s is not tracked here", job_id, np_step_name(step_id));
    /* numaplace_task.so is answered after the final sample, so slurmstepd completes the step
     * without waiting for the report's flushes; status shows the step "ending" until the report
     * is written, and `numaplace report` and `store` wait for that. */
    /* held: the spool refuses its report; status lists it ending until the spool takes it */
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
    /* The epilog reads the report right after the reply: it comes once the report is durable
     * (job_report_done); the loop serves other clients meanwhile. */
    *pending = d->migration.next_tag;
    return NULL;
}
