/*
 * numaplace/protocol.h - the plugin <-> numaplaced protocol (docs/protocol.md).
 *
 * One request and one reply per connection over a Unix stream socket, each a single JSON object
 * on one line (terminated by '\n'), at most NP_PROTO_MAX_MSG bytes. Every message carries
 * "v": NP_PROTO_VERSION; a peer speaking another version gets an error naming both. Requests
 * are the ops below (who may send each: docs/protocol.md). Replies: {"v":1,"ok":true,...} or
 * {"v":1,"ok":false,"error":"one line"}.
 */
#ifndef NUMAPLACE_PROTOCOL_H
#define NUMAPLACE_PROTOCOL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "numaplace/common.h"

#define NP_PROTO_VERSION 1
/** migrate's "to" when absent (the request names a tier instead). */
#define NP_PROTO_NO_NODE UINT32_MAX
#define NP_PROTO_MAX_MSG 65536
/** A reply may be larger (status of thousands of steps): it is read whole up to this. */
#define NP_PROTO_MAX_REPLY (256u << 20)

enum np_proto_op {
    NP_OP_REGISTER,  /**< slurmstepd (root) registers one task before it execs */
    NP_OP_APPLIED,   /**< the task itself (its own pid only) says which memory policy it got */
    NP_OP_STEP_END,  /**< slurmstepd (root) says a step ended on this node */
    NP_OP_STATUS,    /**< anyone: the jobs numaplaced tracks (users see their own only) */
    NP_OP_PING,      /**< anyone: is numaplaced alive, which version */
    NP_OP_SET_CLASS, /**< root or the admin group: change a running job's priority class */
    NP_OP_MIGRATE,   /**< root or the admin group: move at least N pages from node S to D */
    NP_OP_ADVISE,    /**< slurmstepd (root), a step with --numa-policy=auto: the nodes' memory
                      *   traffic and what earlier runs of the job said about its sensitivity */
};

/** Name of an op as it appears on the wire ("register", ...). Borrowed. */
NP_API const char *np_proto_op_name(enum np_proto_op op);

/** One task, registered by slurmstepd. Strings are NUL-terminated, cut to fit. */
struct np_task_reg {
    uint32_t job_id, step_id;
    uid_t uid;
    gid_t gid;
    pid_t pid;
    int task_id;               /**< global task id, -1 when unknown */
    char cpus[256];            /**< the step's CPUs on this node, list form ("0-3,8") or "" */
    char policy_requested[32]; /**< what the user (or site default) asked for */
    char sensitivity[8];       /**< "high" or "low" */
    /** the user gave no --numa-sensitivity: the label is the site's default (wire: "labelled":
     * false; absent, from plugins before it, means labelled) */
    bool unlabelled;
};

/** Nodes an "applied" names (wire: arrays of node numbers below this). */
#define NP_PROTO_APPLIED_MAX_NODES 64

/** --numa-policy=auto: the facts the choice rested on, as fields (wire: "auto", an object;
 *  absent for the other policies and from plugins before it). Bit n = node n. */
struct np_applied_auto {
    bool given;
    char sensitivity[8];    /**< the one the rule used: "high", "low" or "unknown" */
    uint64_t task_nodes;    /**< the task's CPUs' nodes */
    uint64_t allowed_nodes; /**< the nodes with memory the task may use */
    uint64_t loaded_nodes;  /**< those measured loaded when the step started */
};

/** What a task got, reported by the task itself before exec. */
struct np_task_applied {
    uint32_t job_id, step_id;
    pid_t pid;
    char policy[32], mode[32], nodes[128], cpus[256];
    char reason[512]; /**< --numa-policy=auto: why this policy (wire: absent when "") */
    struct np_applied_auto auto_facts;
};

/** A decoded request. Only the member of the request's op is filled. */
struct np_proto_request {
    int version;
    enum np_proto_op op;
    struct np_task_reg reg;         /**< NP_OP_REGISTER */
    struct np_task_applied applied; /**< NP_OP_APPLIED */
    uint32_t job_id, step_id;       /**< NP_OP_STEP_END; NP_OP_STATUS (job_id 0 = all); SET_CLASS */
    /** NP_OP_STEP_END: answer once the step is ended, not once its report is durable (wire:
     * "wait_report": false; absent, from plugins before it, means wait) */
    bool answer_at_end;
    char job_class[8]; /**< NP_OP_SET_CLASS: "high" or "low" */
    struct {
        unsigned from;
        unsigned to; /**< NP_PROTO_NO_NODE when @c tier names the destination instead */
        uint64_t pages;
        char tier[8];   /**< "down" or "up": to the nearest node one tier away; "" = @c to */
        char order[32]; /**< "" = the helper's configured order */
        bool dry_run;
    } migrate; /**< NP_OP_MIGRATE */
    struct {
        uint32_t job_id, step_id;
        uid_t uid;
        char name[128]; /**< the job's name (SLURM_JOB_NAME), "" when unknown */
    } advise;           /**< NP_OP_ADVISE */
};

/** Nodes a placement hint may describe (OS indexes below this). */
#define NP_PROTO_ADVICE_MAX_NODES 64

/** A placement hint node's "load_from" when its load is the busy share of its CPUs (auto_load). */
#define NP_PROTO_LOAD_CPU_BUSY "cpu-busy"

/** numaplaced's placement hint, its answer to advise (the reply's "advice" member), as the plugin
 * decodes it (np_proto_hint_decode). */
struct np_proto_hint {
    double threshold; /**< the utilisation above which a node is loaded; NAN when unknown */
    struct {
        bool present;       /**< the reply named this node */
        bool measured;      /**< its traffic is measured (uncore or misses), not a proxy */
        bool cpu_busy;      /**< not measured: its load is its CPUs' busy share, the proxy a
                                 site opts into with auto_load=cpu-busy ("load_from") */
        bool loaded;        /**< numaplaced counts it loaded */
        double utilisation; /**< traffic / capacity; NAN when either is unknown */
        char source[16];    /**< "uncore", "misses", "proxy", "unavailable" */
    } node[NP_PROTO_ADVICE_MAX_NODES];
    bool history_known;     /**< earlier runs of this user's job of this name on this node */
    char history[8];        /**< their sensitivity: "high" or "low" */
    unsigned history_runs;  /**< how many runs it rests on */
    char capacity_from[64]; /**< where the nodes' capacities came from, or why none */
};

/**
 * Decode the placement hint in an advise reply that passed np_proto_reply_check. Every member is
 * checked (types, ranges, node numbers, names); @p reply is borrowed.
 * @return 0, or -EPROTO with @p err naming the bad member
 */
NP_API int np_proto_hint_decode(json_t *reply, struct np_proto_hint *out, struct np_err *err);

/**
 * Decode and validate one request of @p len bytes (a trailing newline is allowed).
 * @return 0, or -EMSGSIZE (too long), -EPROTO (wrong version), -EINVAL (not JSON, unknown op,
 *         missing or mistyped field) with @p err naming the field and what is accepted
 */
NP_API int np_proto_decode(const char *buf, size_t len, struct np_proto_request *out,
                           struct np_err *err);

/**
 * Encode a request as one line with its newline. @return a new string (free()), or NULL on
 * out-of-memory.
 */
NP_API char *np_proto_encode(const struct np_proto_request *req);

/** Whether @p s is text a person may read: no C0 or C1 control character and no DEL. Free text
 *  from users (applied's "reason", advise's "name") must be. */
NP_API bool np_proto_printable(const char *s);

/** An "applied" request's "auto" object from @p facts: new reference, NULL on ENOMEM. The
 *  daemon keeps it as the report's task member; np_proto_applied_auto_from_json reads it back
 *  (0, or -EINVAL naming the member and what it accepts). */
NP_API json_t *np_proto_applied_auto_json(const struct np_applied_auto *facts);
NP_API int np_proto_applied_auto_from_json(json_t *obj, struct np_applied_auto *out,
                                           struct np_err *err);

/** A new reply {"v":1,"ok":true}; the caller adds members. New reference. */
NP_API json_t *np_proto_reply_ok(void);

/** A new reply {"v":1,"ok":false,"error":...}. New reference. */
NP_API json_t *np_proto_reply_error(const char *fmt, ...) NP_PRINTF(1, 2);

/**
 * Check a reply: version, and "ok". @return 0 when ok; -EPROTO (wrong version or malformed);
 * -EREMOTEIO when numaplaced refused, with its error line in @p err. @p reply is borrowed.
 */
NP_API int np_proto_reply_check(json_t *reply, struct np_err *err);

/**
 * Send @p line (one encoded request) to numaplaced at @p socket_path and read its reply, never
 * taking longer than @p timeout_ms in all (connect, send, receive).
 * @param reply receives a new reference on success
 * @return 0, -ENOENT / -ECONNREFUSED (helper not running), -ETIMEDOUT, -EPROTO (bad reply),
 *         -EREMOTEIO (numaplaced refused; its reason in @p err) or -errno, always with @p err
 */
NP_API int np_proto_call(const char *socket_path, const char *line, unsigned timeout_ms,
                         json_t **reply, struct np_err *err);

/**
 * Send @p line without waiting for the reply (numaplaced's answer to a note nobody waits for is
 * dropped): for a task just before exec, where every microsecond is launch time. Bounded by
 * @p timeout_ms like np_proto_call.
 * @return 0 once the whole line is in the socket, or the errors of np_proto_call's connect and
 *         send, with @p err
 */
NP_API int np_proto_send(const char *socket_path, const char *line, unsigned timeout_ms,
                         struct np_err *err);

/*
 * np_proto_call in three parts, for a request whose answer is awaited later or by another
 * process: slurmstepd connects before the tasks fork (each task inherits the socket), sends a
 * task's registration after the fork, and the task reads the answer before it execs. Each part
 * is bounded by its own @p timeout_ms; the errors are np_proto_call's.
 */
/** Connect to numaplaced. @return the socket (non-blocking, close-on-exec), or -errno with @p err
 */
NP_API int np_proto_connect(const char *socket_path, unsigned timeout_ms, struct np_err *err);

/** Send @p line whole on @p fd (from np_proto_connect). @return 0, or -errno with @p err */
NP_API int np_proto_send_on(int fd, const char *line, unsigned timeout_ms, struct np_err *err);

/**
 * Read and check the reply to the request sent on @p fd, which stays open (the caller closes it).
 * @param reply receives a new reference on success
 * @return as np_proto_call
 */
NP_API int np_proto_receive(int fd, unsigned timeout_ms, json_t **reply, struct np_err *err);

#endif /* NUMAPLACE_PROTOCOL_H */
