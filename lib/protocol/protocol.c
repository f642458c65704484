/* The plugin <-> numaplaced wire format: one JSON object per line, validated field by field. */
#include "numaplace/protocol.h"
#include "numaplace/cpulist.h"
#include "numaplace/labels.h"
#include "numaplace/names.h"
#include "numaplace/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "numaplace/json_reals.h"

static const char *const op_names[] = {
    [NP_OP_REGISTER] = "register", [NP_OP_APPLIED] = "applied", [NP_OP_STEP_END] = "step_end",
    [NP_OP_STATUS] = "status",     [NP_OP_PING] = "ping",       [NP_OP_SET_CLASS] = "set_class",
    [NP_OP_MIGRATE] = "migrate",   [NP_OP_ADVISE] = "advise",
};
#define N_OPS (sizeof(op_names) / sizeof(op_names[0]))
static const struct np_name_table ops = {"op", op_names, N_OPS, NULL};
#define OP_LIST np_name_list_static(&ops, ", ")

const char *np_proto_op_name(enum np_proto_op op)
{
    return (unsigned)op < N_OPS ? op_names[op] : "?";
}

/* An unsigned integer member in [0, max]. Missing is an error unless @p optional. */
static int get_uint(json_t *obj, const char *key, uint64_t max, bool optional, uint64_t *out,
                    struct np_err *err)
{
    json_t *v = json_object_get(obj, key);

    if (!v) {
        if (optional)
            return 0;
        return np_err_set(err, -EINVAL, "request has no \"%s\" (an integer is required)", key);
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
        return np_err_set(err, -EINVAL, "request field \"%s\" must be an integer from 0 to %llu",
                          key, (unsigned long long)max);
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static int get_int(json_t *obj, const char *key, int *out, struct np_err *err)
{
    json_t *v = json_object_get(obj, key);

    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < -1 || json_integer_value(v) > INT32_MAX)
        return np_err_set(err, -EINVAL, "request field \"%s\" must be an integer from -1 to %d",
                          key, INT32_MAX);
    *out = (int)json_integer_value(v);
    return 0;
}

/* A string member copied into @p dst; too long is an error, not a silent cut. */
static int get_string(json_t *obj, const char *key, bool optional, char *dst, size_t size,
                      struct np_err *err)
{
    json_t *v = json_object_get(obj, key);

    dst[0] = '\0';
    if (!v) {
        if (optional)
            return 0;
        return np_err_set(err, -EINVAL, "request has no \"%s\" (a string is required)", key);
    }
    if (!json_is_string(v))
        return np_err_set(err, -EINVAL, "request field \"%s\" must be a string", key);
    if (json_string_length(v) >= size)
        return np_err_set(err, -EINVAL, "request field \"%s\" is longer than %zu bytes", key,
                          size - 1);
    memcpy(dst, json_string_value(v), json_string_length(v) + 1);
    return 0;
}

/* A JSON string is valid UTF-8 already, so C1 is the two bytes C2 80 to C2 9F. */
bool np_proto_printable(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            return false;
    return true;
}

/* Free text a person reads, or root's files keep: printable (np_proto_printable). */
static int check_printable(const char *key, const char *value, size_t size, struct np_err *err)
{
    if (np_proto_printable(value))
        return 0;
    return np_err_set(err, -EINVAL,
                      "request field \"%s\" has a control character; accepted: printable text "
                      "of at most %zu bytes",
                      key, size - 1);
}

static int decode_ids(json_t *obj, uint32_t *job, uint32_t *step, bool job_optional,
                      struct np_err *err)
{
    uint64_t j = 0, s = 0;
    int rc;

    if ((rc = get_uint(obj, "job", UINT32_MAX, job_optional, &j, err)) < 0 ||
        (rc = get_uint(obj, "step", UINT32_MAX, job_optional, &s, err)) < 0)
        return rc;
    *job = (uint32_t)j;
    *step = (uint32_t)s;
    return 0;
}

/* step_end's "wait_report": absent or true, the reply waits for the durable report. */
static int decode_wait_report(json_t *obj, bool *answer_at_end, struct np_err *err)
{
    json_t *wait = json_object_get(obj, "wait_report");

    if (wait && !json_is_boolean(wait))
        return np_err_set(err, -EINVAL, "request field \"wait_report\" must be true or false");
    *answer_at_end = json_is_false(wait);
    return 0;
}

static int decode_register(json_t *obj, struct np_task_reg *reg, struct np_err *err)
{
    uint64_t uid = 0, gid = 0, pid = 0;
    int rc;

    reg->task_id = -1;
    if ((rc = decode_ids(obj, &reg->job_id, &reg->step_id, false, err)) < 0 ||
        (rc = get_uint(obj, "uid", UINT32_MAX - 1, false, &uid, err)) < 0 ||
        (rc = get_uint(obj, "gid", UINT32_MAX - 1, true, &gid, err)) < 0 ||
        (rc = get_uint(obj, "pid", INT32_MAX, false, &pid, err)) < 0 ||
        (rc = get_int(obj, "task", &reg->task_id, err)) < 0 ||
        (rc = get_string(obj, "cpus", true, reg->cpus, sizeof(reg->cpus), err)) < 0 ||
        (rc = get_string(obj, "policy", true, reg->policy_requested, sizeof(reg->policy_requested),
                         err)) < 0 ||
        (rc = get_string(obj, "sensitivity", false, reg->sensitivity, sizeof(reg->sensitivity),
                         err)) < 0)
        return rc;
    if (pid == 0)
        return np_err_set(err, -EINVAL, "request field \"pid\" must be a process id above 0");
    {
        json_t *labelled = json_object_get(obj, "labelled");
        if (labelled && !json_is_boolean(labelled))
            return np_err_set(err, -EINVAL, "request field \"labelled\" must be true or false");
        reg->unlabelled = json_is_false(labelled);
    }
    if (np_sensitivity_from_name(reg->sensitivity, &(enum np_sensitivity){0}, NULL) < 0)
        return np_err_set(err, -EINVAL, "request field \"sensitivity\" is \"%s\"; accepted: %s",
                          reg->sensitivity, np_sensitivity_names());
    reg->uid = (uid_t)uid;
    reg->gid = (gid_t)gid;
    reg->pid = (pid_t)pid;
    return 0;
}

/* A set of node numbers, [0, 2], as bits. */
static int get_nodes(json_t *obj, const char *key, uint64_t *out, struct np_err *err)
{
    json_t *v = json_object_get(obj, key), *n;
    size_t i;

    *out = 0;
    if (!json_is_array(v))
        return np_err_set(err, -EINVAL,
                          "request field \"auto\".\"%s\" must be an array of node "
                          "numbers below %d",
                          key, NP_PROTO_APPLIED_MAX_NODES);
    json_array_foreach(v, i, n)
    {
        if (!json_is_integer(n) || json_integer_value(n) < 0 ||
            json_integer_value(n) >= NP_PROTO_APPLIED_MAX_NODES)
            return np_err_set(err, -EINVAL,
                              "request field \"auto\".\"%s\" must be an array of node numbers "
                              "below %d",
                              key, NP_PROTO_APPLIED_MAX_NODES);
        *out |= UINT64_C(1) << json_integer_value(n);
    }
    return 0;
}

static json_t *nodes_array(uint64_t mask)
{
    json_t *a = json_array();

    for (unsigned n = 0; a && n < NP_PROTO_APPLIED_MAX_NODES; n++)
        if (mask >> n & 1u)
            json_array_append_new(a, json_integer(n));
    return a;
}

json_t *np_proto_applied_auto_json(const struct np_applied_auto *facts)
{
    return json_pack("{s:s, s:o, s:o, s:o}", "sensitivity", facts->sensitivity, "task_nodes",
                     nodes_array(facts->task_nodes), "allowed_nodes",
                     nodes_array(facts->allowed_nodes), "loaded_nodes",
                     nodes_array(facts->loaded_nodes));
}

int np_proto_applied_auto_from_json(json_t *obj, struct np_applied_auto *out, struct np_err *err)
{
    int rc;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(obj))
        return np_err_set(err, -EINVAL, "request field \"auto\" must be an object");
    if ((rc = get_string(obj, "sensitivity", false, out->sensitivity, sizeof(out->sensitivity),
                         err)) < 0 ||
        (rc = get_nodes(obj, "task_nodes", &out->task_nodes, err)) < 0 ||
        (rc = get_nodes(obj, "allowed_nodes", &out->allowed_nodes, err)) < 0 ||
        (rc = get_nodes(obj, "loaded_nodes", &out->loaded_nodes, err)) < 0)
        goto bad;
    if (strcmp(out->sensitivity, "unknown") != 0 &&
        np_sensitivity_from_name(out->sensitivity, &(enum np_sensitivity){0}, NULL) < 0) {
        rc = np_err_set(err, -EINVAL,
                        "request field \"auto\".\"sensitivity\" is not one; accepted: %s, "
                        "unknown",
                        np_sensitivity_names());
        goto bad;
    }
    out->given = true;
    return 0;
bad:
    memset(out, 0, sizeof(*out));
    return rc;
}

static int decode_applied(json_t *obj, struct np_task_applied *ap, struct np_err *err)
{
    uint64_t pid = 0;
    int rc;

    if ((rc = decode_ids(obj, &ap->job_id, &ap->step_id, false, err)) < 0 ||
        (rc = get_uint(obj, "pid", INT32_MAX, false, &pid, err)) < 0 ||
        (rc = get_string(obj, "policy", false, ap->policy, sizeof(ap->policy), err)) < 0 ||
        (rc = get_string(obj, "mode", true, ap->mode, sizeof(ap->mode), err)) < 0 ||
        (rc = get_string(obj, "nodes", true, ap->nodes, sizeof(ap->nodes), err)) < 0 ||
        (rc = get_string(obj, "cpus", true, ap->cpus, sizeof(ap->cpus), err)) < 0 ||
        (rc = get_string(obj, "reason", true, ap->reason, sizeof(ap->reason), err)) < 0)
        return rc;
    if (pid == 0)
        return np_err_set(err, -EINVAL, "request field \"pid\" must be a process id above 0");
    /* What the task says lands in reports root reads: only what the plugin can say gets in. */
    if (np_policy_from_name(ap->policy, &(enum np_policy){0}, NULL) < 0)
        return np_err_set(err, -EINVAL, "request field \"policy\" is not a policy; accepted: %s",
                          np_policy_names());
    if (ap->mode[0] && np_mode_from_name(ap->mode, &(enum np_mode){0}, NULL) < 0)
        return np_err_set(err, -EINVAL, "request field \"mode\" is not a mode; accepted: %s",
                          np_mode_names());
    if (!np_cpu_list_bounded(ap->nodes) || !np_cpu_list_bounded(ap->cpus))
        return np_err_set(err, -EINVAL,
                          "request field \"%s\" is not a list of numbers below %u (\"0-3,8\")",
                          np_cpu_list_bounded(ap->nodes) ? "cpus" : "nodes", NP_CPU_LIST_LIMIT);
    if ((rc = check_printable("reason", ap->reason, sizeof(ap->reason), err)) < 0)
        return rc;
    /* absent from plugins before it, and for every policy but auto */
    if (json_object_get(obj, "auto") &&
        (rc = np_proto_applied_auto_from_json(json_object_get(obj, "auto"), &ap->auto_facts, err)) <
            0)
        return rc;
    ap->pid = (pid_t)pid;
    return 0;
}

int np_proto_decode(const char *buf, size_t len, struct np_proto_request *out, struct np_err *err)
{
    json_error_t jerr;
    json_t *obj, *v;
    const char *op;
    size_t i;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (len > NP_PROTO_MAX_MSG)
        return np_err_set(err, -EMSGSIZE, "request of %zu bytes is over the limit of %d", len,
                          NP_PROTO_MAX_MSG);
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        len--;
    obj = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj)
        return np_err_set(err, -EINVAL, "request is not valid JSON: %s (at byte %d)", jerr.text,
                          jerr.position);
    if (!json_is_object(obj)) {
        rc = np_err_set(err, -EINVAL, "request must be a JSON object");
        goto out;
    }
    v = json_object_get(obj, "v");
    if (!json_is_integer(v)) {
        rc = np_err_set(err, -EPROTO,
                        "request has no protocol version \"v\" (this helper "
                        "speaks version %d)",
                        NP_PROTO_VERSION);
        goto out;
    }
    /* Compared as the 64-bit value it is: 4294967297 must not pass as version 1. */
    if (json_integer_value(v) != NP_PROTO_VERSION) {
        rc = np_err_set(err, -EPROTO, "request speaks protocol version %lld; this side speaks %d",
                        (long long)json_integer_value(v), NP_PROTO_VERSION);
        goto out;
    }
    out->version = NP_PROTO_VERSION;
    op = json_string_value(json_object_get(obj, "op"));
    if (!op) {
        rc = np_err_set(err, -EINVAL, "request has no \"op\"; accepted: %s", OP_LIST);
        goto out;
    }
    for (i = 0; i < N_OPS && strcmp(op, op_names[i]) != 0; i++)
        ;
    if (i == N_OPS) {
        rc = np_err_set(err, -EINVAL, "unknown op \"%.64s\"; accepted: %s", op, OP_LIST);
        goto out;
    }
    out->op = (enum np_proto_op)i;
    switch (out->op) {
    case NP_OP_REGISTER:
        rc = decode_register(obj, &out->reg, err);
        break;
    case NP_OP_APPLIED:
        rc = decode_applied(obj, &out->applied, err);
        break;
    case NP_OP_STEP_END:
        rc = decode_ids(obj, &out->job_id, &out->step_id, false, err);
        if (rc == 0)
            rc = decode_wait_report(obj, &out->answer_at_end, err);
        break;
    case NP_OP_STATUS:
        rc = decode_ids(obj, &out->job_id, &out->step_id, true, err);
        break;
    case NP_OP_PING:
        break;
    case NP_OP_SET_CLASS: {
        uint64_t job = 0;
        if ((rc = get_uint(obj, "job", UINT32_MAX, false, &job, err)) < 0 ||
            (rc = get_string(obj, "class", false, out->job_class, sizeof(out->job_class), err)) < 0)
            break;
        out->job_id = (uint32_t)job;
        if (np_class_from_name(out->job_class, &(enum np_class){0}, NULL) < 0)
            rc = np_err_set(err, -EINVAL, "request field \"class\" is \"%s\"; accepted: %s",
                            out->job_class, np_class_names());
        break;
    }
    case NP_OP_ADVISE: {
        uint64_t uid = 0;
        if ((rc = decode_ids(obj, &out->advise.job_id, &out->advise.step_id, false, err)) < 0 ||
            (rc = get_uint(obj, "uid", UINT32_MAX - 1, false, &uid, err)) < 0 ||
            (rc = get_string(obj, "name", true, out->advise.name, sizeof(out->advise.name), err)) <
                0 ||
            /* the user's job name, kept in root's history.json (escaped, a control character
             * would take six bytes) and printed */
            (rc = check_printable("name", out->advise.name, sizeof(out->advise.name), err)) < 0)
            break;
        out->advise.uid = (uid_t)uid;
        break;
    }
    case NP_OP_MIGRATE: {
        uint64_t from = 0, to = 0;
        json_t *dry = json_object_get(obj, "dry_run");
        if ((rc = get_uint(obj, "from", 4095, false, &from, err)) < 0 ||
            (rc = get_uint(obj, "to", 4095, false, &to, err)) < 0 ||
            (rc = get_uint(obj, "pages", INT64_MAX, false, &out->migrate.pages, err)) < 0 ||
            (rc = get_string(obj, "order", true, out->migrate.order, sizeof(out->migrate.order),
                             err)) < 0)
            break;
        if (dry && !json_is_boolean(dry)) {
            rc = np_err_set(err, -EINVAL, "request field \"dry_run\" must be true or false");
            break;
        }
        out->migrate.from = (unsigned)from;
        out->migrate.to = (unsigned)to;
        out->migrate.dry_run = json_is_true(dry);
        break;
    }
    }
out:
    json_decref(obj);
    return rc;
}

char *np_proto_encode(const struct np_proto_request *req)
{
    json_t *obj = json_pack("{s:i, s:s}", "v", NP_PROTO_VERSION, "op", np_proto_op_name(req->op));
    char *text = NULL, *line = NULL;
    int rc = 0;

    if (!obj)
        return NULL;
    switch (req->op) {
    case NP_OP_REGISTER: {
        const struct np_task_reg *r = &req->reg;
        json_t *more = json_pack(
            "{s:I, s:I, s:I, s:I, s:I, s:i, s:s, s:s, s:s, s:b}", "job", (json_int_t)r->job_id,
            "step", (json_int_t)r->step_id, "uid", (json_int_t)r->uid, "gid", (json_int_t)r->gid,
            "pid", (json_int_t)r->pid, "task", r->task_id, "cpus", r->cpus, "policy",
            r->policy_requested, "sensitivity", r->sensitivity, "labelled", !r->unlabelled);
        rc = json_object_update(obj, more);
        json_decref(more);
        break;
    }
    case NP_OP_APPLIED: {
        const struct np_task_applied *a = &req->applied;
        json_t *more =
            json_pack("{s:I, s:I, s:I, s:s, s:s, s:s, s:s}", "job", (json_int_t)a->job_id, "step",
                      (json_int_t)a->step_id, "pid", (json_int_t)a->pid, "policy", a->policy,
                      "mode", a->mode, "nodes", a->nodes, "cpus", a->cpus);
        if (more && a->reason[0])
            json_object_set_new(more, "reason", json_string(a->reason));
        if (more && a->auto_facts.given)
            json_object_set_new(more, "auto", np_proto_applied_auto_json(&a->auto_facts));
        rc = json_object_update(obj, more);
        json_decref(more);
        break;
    }
    case NP_OP_STEP_END:
    case NP_OP_STATUS:
        /* A status request's step is sent whenever it was set, so decoding gives it back. */
        if (req->op == NP_OP_STEP_END || req->job_id || req->step_id) {
            rc = json_object_set_new(obj, "job", json_integer(req->job_id));
            if (rc == 0)
                rc = json_object_set_new(obj, "step", json_integer(req->step_id));
        }
        if (rc == 0 && req->op == NP_OP_STEP_END && req->answer_at_end)
            rc = json_object_set_new(obj, "wait_report", json_false());
        break;
    case NP_OP_PING:
        break;
    case NP_OP_SET_CLASS:
        rc = json_object_set_new(obj, "job", json_integer(req->job_id));
        if (rc == 0)
            rc = json_object_set_new(obj, "class", json_string(req->job_class));
        break;
    case NP_OP_ADVISE: {
        json_t *more = json_pack("{s:I, s:I, s:I, s:s}", "job", (json_int_t)req->advise.job_id,
                                 "step", (json_int_t)req->advise.step_id, "uid",
                                 (json_int_t)req->advise.uid, "name", req->advise.name);
        rc = json_object_update(obj, more);
        json_decref(more);
        break;
    }
    case NP_OP_MIGRATE: {
        json_t *more = json_pack("{s:i, s:i, s:I, s:b}", "from", (int)req->migrate.from, "to",
                                 (int)req->migrate.to, "pages", (json_int_t)req->migrate.pages,
                                 "dry_run", req->migrate.dry_run);
        if (more && req->migrate.order[0])
            json_object_set_new(more, "order", json_string(req->migrate.order));
        rc = json_object_update(obj, more);
        json_decref(more);
        break;
    }
    }
    if (rc == 0)
        text = json_dumps(obj, JSON_COMPACT | NP_JSON_REALS);
    json_decref(obj);
    if (!text)
        return NULL;
    line = malloc(strlen(text) + 2);
    if (line)
        sprintf(line, "%s\n", text);
    free(text);
    return line;
}

json_t *np_proto_reply_ok(void)
{
    return json_pack("{s:i, s:b}", "v", NP_PROTO_VERSION, "ok", 1);
}

json_t *np_proto_reply_error(const char *fmt, ...)
{
    char msg[NP_ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return json_pack("{s:i, s:b, s:s}", "v", NP_PROTO_VERSION, "ok", 0, "error", msg);
}

int np_proto_reply_check(json_t *reply, struct np_err *err)
{
    json_t *v = json_object_get(reply, "v"), *ok = json_object_get(reply, "ok");

    if (!json_is_integer(v) || json_integer_value(v) != NP_PROTO_VERSION)
        return np_err_set(err, -EPROTO,
                          "the helper replied in protocol version %lld; this side "
                          "speaks %d",
                          json_is_integer(v) ? (long long)json_integer_value(v) : -1LL,
                          NP_PROTO_VERSION);
    if (!json_is_boolean(ok))
        return np_err_set(err, -EPROTO, "the helper's reply has no \"ok\"");
    if (!json_is_true(ok)) {
        const char *why = json_string_value(json_object_get(reply, "error"));
        return np_err_set(err, -EREMOTEIO, "the helper refused: %s", why ? why : "no reason");
    }
    return 0;
}

static long remaining_ms(const struct timespec *deadline)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

/* Wait for @p events on @p fd until the deadline. 0, -ETIMEDOUT or -errno. */
static int wait_fd(int fd, short events, const struct timespec *deadline)
{
    struct pollfd pfd = {.fd = fd, .events = events};

    for (;;) {
        long ms = remaining_ms(deadline);
        int n;

        if (ms <= 0)
            return -ETIMEDOUT;
        n = poll(&pfd, 1, (int)ms);
        if (n > 0)
            return 0;
        if (n == 0)
            return -ETIMEDOUT;
        if (errno != EINTR)
            return -errno;
    }
}

/* " at PATH" for the messages, or "" for a socket the caller connected earlier. */
static const char *at(const char *socket_path, char *buf, size_t size)
{
    if (!socket_path)
        return "";
    snprintf(buf, size, " at %s", socket_path);
    return buf;
}

/* Connect to the helper before @p deadline. @return the socket, or -errno with err. */
static int connect_by(const char *socket_path, unsigned timeout_ms, const struct timespec *deadline,
                      struct np_err *err)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int fd, rc;

    if (strlen(socket_path) >= sizeof(addr.sun_path))
        return np_err_set(err, -ENAMETOOLONG, "helper socket path %s is too long", socket_path);
    memcpy(addr.sun_path, socket_path, strlen(socket_path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return np_err_set(err, -errno, "socket: %s", strerror(errno));
    /* A full listen backlog (another user's flood of connections) fails a non-blocking Unix
     * connect with EAGAIN and leaves nothing pending: try again, briefly, until the deadline. */
    while (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        const struct timespec pause = {.tv_nsec = 1000000L};

        if (errno == EAGAIN && remaining_ms(deadline) > 0) {
            nanosleep(&pause, NULL);
            continue;
        }
        if (errno == EAGAIN)
            rc = np_err_set(err, -ETIMEDOUT, "the helper at %s did not accept within %u ms",
                            socket_path, timeout_ms);
        else if (errno != EINPROGRESS)
            rc = np_err_set(err, -errno, "cannot reach the helper at %s: %s", socket_path,
                            strerror(errno));
        else if ((rc = wait_fd(fd, POLLOUT, deadline)) < 0)
            np_err_set(err, rc, "the helper at %s did not accept within %u ms", socket_path,
                       timeout_ms);
        if (rc < 0) {
            close(fd);
            return rc;
        }
        break;
    }
    return fd;
}

/* Send @p line whole on @p fd before @p deadline. @return 0, or -errno with err. */
static int send_by(int fd, const char *socket_path, const char *line,
                   const struct timespec *deadline, struct np_err *err)
{
    size_t len = strlen(line), sent = 0;
    char where[128];

    while (sent < len) {
        ssize_t n = send(fd, line + sent, len - sent, MSG_NOSIGNAL);
        if (n > 0) {
            sent += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            const int waited = wait_fd(fd, POLLOUT, deadline);
            if (waited == 0)
                continue;
            return np_err_set(err, waited, "cannot send to the helper%s: %s",
                              at(socket_path, where, sizeof(where)), np_strerror(waited));
        }
        return np_err_set(err, n < 0 ? -errno : -EIO, "cannot send to the helper%s: %s",
                          at(socket_path, where, sizeof(where)),
                          n < 0 ? strerror(errno) : "nothing sent");
    }
    return 0;
}

/* Connect and send @p line, all before @p deadline. @return the socket, or -errno with err. */
static int connect_and_send(const char *socket_path, const char *line, unsigned timeout_ms,
                            const struct timespec *deadline, struct np_err *err)
{
    int fd = connect_by(socket_path, timeout_ms, deadline, err), rc;

    if (fd < 0)
        return fd;
    if ((rc = send_by(fd, socket_path, line, deadline, err)) < 0) {
        close(fd);
        return rc;
    }
    return fd;
}

static void deadline_in(unsigned timeout_ms, struct timespec *deadline)
{
    clock_gettime(CLOCK_MONOTONIC, deadline);
    deadline->tv_sec += timeout_ms / 1000;
    deadline->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline->tv_nsec >= 1000000000L) {
        deadline->tv_sec++;
        deadline->tv_nsec -= 1000000000L;
    }
}

int np_proto_send(const char *socket_path, const char *line, unsigned timeout_ms,
                  struct np_err *err)
{
    struct timespec deadline;
    int fd;

    deadline_in(timeout_ms, &deadline);
    fd = connect_and_send(socket_path, line, timeout_ms, &deadline, err);
    if (fd < 0)
        return fd;
    close(fd);
    return 0;
}

/* Read the reply on @p fd before @p deadline and check it (np_proto_reply_check). */
static int receive_by(int fd, const char *socket_path, unsigned timeout_ms,
                      const struct timespec *deadline, json_t **reply, struct np_err *err)
{
    size_t got = 0;
    char *buf = NULL, where[128];
    json_error_t jerr;
    int rc;

    *reply = NULL;
    for (size_t cap = 0;;) {
        ssize_t n;
        if (got == cap) { /* a reply of any size up to the limit arrives whole */
            char *bigger;
            if (cap >= NP_PROTO_MAX_REPLY) {
                rc = np_err_set(err, -EPROTO, "the helper's reply is over %u bytes",
                                NP_PROTO_MAX_REPLY);
                goto out;
            }
            cap = cap ? cap * 2 : NP_PROTO_MAX_MSG;
            bigger = realloc(buf, cap + 1);
            if (!bigger) {
                rc = np_err_set(err, -ENOMEM, "out of memory reading the helper's reply");
                goto out;
            }
            buf = bigger;
        }
        n = recv(fd, buf + got, cap - got, 0);
        if (n > 0) {
            got += (size_t)n;
            if (memchr(buf + got - (size_t)n, '\n', (size_t)n))
                break;
            continue;
        }
        if (n == 0)
            break; /* closed: parse what came */
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN) {
            const int waited = wait_fd(fd, POLLIN, deadline);
            if (waited == 0)
                continue;
            rc = np_err_set(err, waited, "no reply from the helper%s within %u ms",
                            at(socket_path, where, sizeof(where)), timeout_ms);
            goto out;
        }
        rc = np_err_set(err, -errno, "cannot read the helper's reply%s: %s",
                        at(socket_path, where, sizeof(where)), strerror(errno));
        goto out;
    }
    *reply = json_loadb(buf, got, 0, &jerr);
    if (!*reply) {
        rc = np_err_set(err, -EPROTO, "the helper's reply is not JSON: %s", jerr.text);
        goto out;
    }
    rc = np_proto_reply_check(*reply, err);
    if (rc < 0) {
        json_decref(*reply);
        *reply = NULL;
    }
out:
    free(buf);
    return rc;
}

int np_proto_call(const char *socket_path, const char *line, unsigned timeout_ms, json_t **reply,
                  struct np_err *err)
{
    struct timespec deadline;
    int fd, rc;

    *reply = NULL;
    deadline_in(timeout_ms, &deadline);
    fd = connect_and_send(socket_path, line, timeout_ms, &deadline, err);
    if (fd < 0)
        return fd;
    rc = receive_by(fd, socket_path, timeout_ms, &deadline, reply, err);
    close(fd);
    return rc;
}

int np_proto_connect(const char *socket_path, unsigned timeout_ms, struct np_err *err)
{
    struct timespec deadline;

    deadline_in(timeout_ms, &deadline);
    return connect_by(socket_path, timeout_ms, &deadline, err);
}

int np_proto_send_on(int fd, const char *line, unsigned timeout_ms, struct np_err *err)
{
    struct timespec deadline;

    deadline_in(timeout_ms, &deadline);
    return send_by(fd, NULL, line, &deadline, err);
}

int np_proto_receive(int fd, unsigned timeout_ms, json_t **reply, struct np_err *err)
{
    struct timespec deadline;

    deadline_in(timeout_ms, &deadline);
    return receive_by(fd, NULL, timeout_ms, &deadline, reply, err);
}
