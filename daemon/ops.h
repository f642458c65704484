/* ops.h - one function per protocol op (docs/protocol.md): the peer's credentials and the decoded
 * request in, the reply (new reference) out, so tests need no socket. */
#ifndef NUMAPLACED_OPS_H
#define NUMAPLACED_OPS_H

#include "daemon.h"

/** register (root only): a task of a step; the first registers the step. */
json_t *op_register(struct np_daemon *d, const struct np_peer *peer, const struct np_task_reg *r);

/** applied: the policy a task ended up with; the task itself (or root) only. */
json_t *op_applied(struct np_daemon *d, const struct np_peer *peer,
                   const struct np_task_applied *a);

/** step_end (root only): the step's report is written and it is forgotten. With a writer: NULL,
 *  *@p pending set, the reply once it is durable (@p answer_at_end: after the final sample). */
json_t *op_step_end(struct np_daemon *d, const struct np_peer *peer, uint64_t *pending,
                    uint32_t job_id, uint32_t step_id, bool answer_at_end);

/** status: the steps (of @p job_id, 0 = all) the peer may see, and numaplaced itself. */
json_t *op_status(struct np_daemon *d, const struct np_peer *peer, uint32_t job_id);

/** set_class (admin only): every step of @p job_id becomes @p name ("high" or "low"). */
json_t *op_set_class(struct np_daemon *d, const struct np_peer *peer, uint32_t job_id,
                     const char *name);

/** migrate (admin only): queue a request; NULL when queued (*pending then holds its tag). */
json_t *op_migrate(struct np_daemon *d, const struct np_peer *peer, uint64_t *pending,
                   const struct np_proto_request *req);

/** Decode one request line and run its op. NULL with *@p pending set: the reply comes later
 *  (client_answer_tag), a migrate queued or a step_end whose report is with the writer. */
json_t *handlers_dispatch(struct np_daemon *d, const struct np_peer *peer, uint64_t *pending,
                          const char *buf, size_t len);

#endif /* NUMAPLACED_OPS_H */
