/* From a request line to its op (see ops.h); ping is answered here. */
#include "ops.h"

#include "placement_hint.h"

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
