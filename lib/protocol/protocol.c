/* The plugin <-> numaplaced wire format: one JSON object per line, validated field by field. */
#include "numaplace/protocol.h"
#include "numaplace/cpulist.h"
#include "numaplace/names.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
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

/* How a request member is read from the wire and written back. */
enum field_kind {
    FIELD_UINT,   /* an integer from 0 to max, into an unsigned member of 4 or 8 bytes */
    FIELD_TASK,   /* an integer from -1 to INT32_MAX, into an int */
    FIELD_STRING, /* a string, into a char array it must fit with its NUL (too long is an error,
                     not a silent cut) */
    FIELD_BOOL,   /* true or false, into a bool */
};
#define OPTIONAL 1u /* absent is no error: the member keeps its zero */
#define INVERTED 2u /* a bool member holding the wire value's negation (absent means true) */
#define SPARSE                                                                                     \
    4u /* sent only when it is not what its absence means ("", the bool's default,                 \
          NP_PROTO_NO_NODE for a 32-bit integer) */

struct field {
    const char *key;
    enum field_kind kind;
    unsigned flags;
    uint64_t max; /* FIELD_UINT's */
    size_t offset, size;
};

#define FIELD_OF(type, key, kind, member, max, flags)                                              \
    {                                                                                              \
        key, kind, flags, max, offsetof(type, member), sizeof(((type *)0)->member)                 \
    }
#define REQ(key, kind, member, max, flags)                                                         \
    FIELD_OF(struct np_proto_request, key, kind, member, max, flags)

/* Every op's members in the order they are checked and sent (the plugin's lines stay byte for
 * byte what they were). */
static const struct field register_fields[] = {
    REQ("job", FIELD_UINT, reg.job_id, UINT32_MAX, 0),
    REQ("step", FIELD_UINT, reg.step_id, UINT32_MAX, 0),
    REQ("uid", FIELD_UINT, reg.uid, UINT32_MAX - 1, 0),
    REQ("gid", FIELD_UINT, reg.gid, UINT32_MAX - 1, OPTIONAL),
    REQ("pid", FIELD_UINT, reg.pid, INT32_MAX, 0),
    REQ("task", FIELD_TASK, reg.task_id, 0, OPTIONAL),
    REQ("cpus", FIELD_STRING, reg.cpus, 0, OPTIONAL),
    REQ("policy", FIELD_STRING, reg.policy_requested, 0, OPTIONAL),
    REQ("sensitivity", FIELD_STRING, reg.sensitivity, 0, 0),
    REQ("labelled", FIELD_BOOL, reg.unlabelled, 0, OPTIONAL | INVERTED),
};
static const struct field applied_fields[] = {
    REQ("job", FIELD_UINT, applied.job_id, UINT32_MAX, 0),
    REQ("step", FIELD_UINT, applied.step_id, UINT32_MAX, 0),
    REQ("pid", FIELD_UINT, applied.pid, INT32_MAX, 0),
    REQ("policy", FIELD_STRING, applied.policy, 0, 0),
    REQ("mode", FIELD_STRING, applied.mode, 0, OPTIONAL),
    REQ("nodes", FIELD_STRING, applied.nodes, 0, OPTIONAL),
    REQ("cpus", FIELD_STRING, applied.cpus, 0, OPTIONAL),
    REQ("reason", FIELD_STRING, applied.reason, 0, OPTIONAL | SPARSE),
};
/* step_end's "wait_report": absent or true, the reply waits for the durable report. */
static const struct field step_end_fields[] = {
    REQ("job", FIELD_UINT, job_id, UINT32_MAX, 0),
    REQ("step", FIELD_UINT, step_id, UINT32_MAX, 0),
    REQ("wait_report", FIELD_BOOL, answer_at_end, 0, OPTIONAL | INVERTED | SPARSE),
};
static const struct field status_fields[] = {
    REQ("job", FIELD_UINT, job_id, UINT32_MAX, OPTIONAL),
    REQ("step", FIELD_UINT, step_id, UINT32_MAX, OPTIONAL),
};
static const struct field set_class_fields[] = {
    REQ("job", FIELD_UINT, job_id, UINT32_MAX, 0),
    REQ("class", FIELD_STRING, job_class, 0, 0),
};
static const struct field migrate_fields[] = {
    REQ("from", FIELD_UINT, migrate.from, 4095, 0),
    REQ("to", FIELD_UINT, migrate.to, 4095, OPTIONAL | SPARSE),
    REQ("tier", FIELD_STRING, migrate.tier, 0, OPTIONAL | SPARSE),
    REQ("pages", FIELD_UINT, migrate.pages, INT64_MAX, 0),
    REQ("dry_run", FIELD_BOOL, migrate.dry_run, 0, OPTIONAL),
    REQ("order", FIELD_STRING, migrate.order, 0, OPTIONAL | SPARSE),
};
static const struct field advise_fields[] = {
    REQ("job", FIELD_UINT, advise.job_id, UINT32_MAX, 0),
    REQ("step", FIELD_UINT, advise.step_id, UINT32_MAX, 0),
    REQ("uid", FIELD_UINT, advise.uid, UINT32_MAX - 1, 0),
    REQ("name", FIELD_STRING, advise.name, 0, OPTIONAL),
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
static const struct {
    const struct field *fields;
    size_t n;
} op_fields[] = {
    [NP_OP_REGISTER] = {register_fields, COUNT(register_fields)},
    [NP_OP_APPLIED] = {applied_fields, COUNT(applied_fields)},
    [NP_OP_STEP_END] = {step_end_fields, COUNT(step_end_fields)},
    [NP_OP_STATUS] = {status_fields, COUNT(status_fields)},
    [NP_OP_PING] = {NULL, 0},
    [NP_OP_SET_CLASS] = {set_class_fields, COUNT(set_class_fields)},
    [NP_OP_MIGRATE] = {migrate_fields, COUNT(migrate_fields)},
    [NP_OP_ADVISE] = {advise_fields, COUNT(advise_fields)},
};
_Static_assert(COUNT(op_fields) == N_OPS, "every op has its members");

/* Member @p f of @p base from @p obj, checked. */
static int decode_field(json_t *obj, const struct field *f, void *base, struct np_err *err)
{
    json_t *v = json_object_get(obj, f->key);
    char *member = (char *)base + f->offset;

    if (!v) {
        if (f->flags & OPTIONAL)
            return 0;
        return np_err_set(err, -EINVAL, "request has no \"%s\" (%s is required)", f->key,
                          f->kind == FIELD_STRING ? "a string" : "an integer");
    }
    switch (f->kind) {
    case FIELD_UINT:
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            (uint64_t)json_integer_value(v) > f->max)
            return np_err_set(err, -EINVAL,
                              "request field \"%s\" must be an integer from 0 to %llu", f->key,
                              (unsigned long long)f->max);
        if (f->size == sizeof(uint64_t))
            memcpy(member, &(uint64_t){(uint64_t)json_integer_value(v)}, sizeof(uint64_t));
        else
            memcpy(member, &(uint32_t){(uint32_t)json_integer_value(v)}, sizeof(uint32_t));
        return 0;
    case FIELD_TASK:
        if (!json_is_integer(v) || json_integer_value(v) < -1 || json_integer_value(v) > INT32_MAX)
            return np_err_set(err, -EINVAL, "request field \"%s\" must be an integer from -1 to %d",
                              f->key, INT32_MAX);
        memcpy(member, &(int){(int)json_integer_value(v)}, sizeof(int));
        return 0;
    case FIELD_STRING:
        if (!json_is_string(v))
            return np_err_set(err, -EINVAL, "request field \"%s\" must be a string", f->key);
        if (json_string_length(v) >= f->size)
            return np_err_set(err, -EINVAL, "request field \"%s\" is longer than %zu bytes", f->key,
                              f->size - 1);
        memcpy(member, json_string_value(v), json_string_length(v) + 1);
        return 0;
    case FIELD_BOOL:
        if (!json_is_boolean(v))
            return np_err_set(err, -EINVAL, "request field \"%s\" must be true or false", f->key);
        *(bool *)member = f->flags & INVERTED ? json_is_false(v) : json_is_true(v);
        return 0;
    }
    return 0;
}

/* Member @p f of @p base into @p obj. @return 0, or -1 (out of memory, or not UTF-8) */
static int encode_field(json_t *obj, const struct field *f, const void *base)
{
    const char *member = (const char *)base + f->offset;
    const bool inverted = f->flags & INVERTED;
    json_t *v = NULL;

    switch (f->kind) {
    case FIELD_UINT: {
        uint64_t u64 = 0;
        uint32_t u32 = 0;
        if (f->size == sizeof(u64))
            memcpy(&u64, member, sizeof(u64));
        else
            memcpy(&u32, member, sizeof(u32));
        if (f->flags & SPARSE && f->size == sizeof(u32) && u32 == NP_PROTO_NO_NODE)
            return 0;
        v = json_integer((json_int_t)(f->size == sizeof(u64) ? u64 : u32));
        break;
    }
    case FIELD_TASK:
        v = json_integer(*(const int *)member);
        break;
    case FIELD_STRING:
        if (f->flags & SPARSE && !member[0])
            return 0;
        v = json_string(member);
        break;
    case FIELD_BOOL:
        if (f->flags & SPARSE && !*(const bool *)member)
            return 0;
        v = json_boolean(*(const bool *)member != inverted);
        break;
    }
    return json_object_set_new(obj, f->key, v);
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

static int check_register(const struct np_task_reg *reg, struct np_err *err)
{
    if (reg->pid == 0)
        return np_err_set(err, -EINVAL, "request field \"pid\" must be a process id above 0");
    if (np_sensitivity_from_name(reg->sensitivity, &(enum np_sensitivity){0}, NULL) < 0)
        return np_err_set(err, -EINVAL, "request field \"sensitivity\" is \"%s\"; accepted: %s",
                          reg->sensitivity, np_sensitivity_names());
    return 0;
}

/* A set of node numbers, [0, 2], as bits. */
static int get_nodes(json_t *obj, const char *key, uint64_t *out, struct np_err *err)
{
    json_t *v = json_object_get(obj, key), *n;
    size_t i;

    *out = 0;
    if (!json_is_array(v))
        goto bad;
    json_array_foreach(v, i, n)
    {
        if (!json_is_integer(n) || json_integer_value(n) < 0 ||
            json_integer_value(n) >= NP_PROTO_APPLIED_MAX_NODES)
            goto bad;
        *out |= UINT64_C(1) << json_integer_value(n);
    }
    return 0;
bad:
    return np_err_set(err, -EINVAL,
                      "request field \"auto\".\"%s\" must be an array of node numbers below %d",
                      key, NP_PROTO_APPLIED_MAX_NODES);
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
    static const struct field sensitivity =
        FIELD_OF(struct np_applied_auto, "sensitivity", FIELD_STRING, sensitivity, 0, 0);
    int rc;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(obj))
        return np_err_set(err, -EINVAL, "request field \"auto\" must be an object");
    if ((rc = decode_field(obj, &sensitivity, out, err)) < 0 ||
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

static int check_applied(json_t *obj, struct np_task_applied *ap, struct np_err *err)
{
    int rc;

    if (ap->pid == 0)
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
    if (json_object_get(obj, "auto"))
        return np_proto_applied_auto_from_json(json_object_get(obj, "auto"), &ap->auto_facts, err);
    return 0;
}

int np_proto_decode(const char *buf, size_t len, struct np_proto_request *out, struct np_err *err)
{
    json_error_t jerr;
    json_t *obj, *v;
    const char *op;
    unsigned i;
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
    if (np_name_parse(&ops, op, &i, NULL) < 0) {
        rc = np_err_set(err, -EINVAL, "unknown op \"%.64s\"; accepted: %s", op, OP_LIST);
        goto out;
    }
    out->op = (enum np_proto_op)i;
    out->reg.task_id = out->op == NP_OP_REGISTER ? -1 : 0;
    out->migrate.to = out->op == NP_OP_MIGRATE ? NP_PROTO_NO_NODE : 0;
    for (size_t k = 0; rc == 0 && k < op_fields[i].n; k++)
        rc = decode_field(obj, &op_fields[i].fields[k], out, err);
    if (rc < 0)
        goto out;
    if (out->op == NP_OP_REGISTER)
        rc = check_register(&out->reg, err);
    else if (out->op == NP_OP_APPLIED)
        rc = check_applied(obj, &out->applied, err);
    else if (out->op == NP_OP_MIGRATE &&
             (out->migrate.to == NP_PROTO_NO_NODE) == !out->migrate.tier[0])
        rc = np_err_set(err, -EINVAL,
                        "migrate needs \"to\" (a node) or \"tier\" (down, up), one of them");
    else if (out->op == NP_OP_MIGRATE && out->migrate.tier[0] &&
             strcmp(out->migrate.tier, "down") != 0 && strcmp(out->migrate.tier, "up") != 0)
        rc = np_err_set(err, -EINVAL, "request field \"tier\" is \"%s\"; accepted: down, up",
                        out->migrate.tier);
    else if (out->op == NP_OP_SET_CLASS &&
             np_class_from_name(out->job_class, &(enum np_class){0}, NULL) < 0)
        rc = np_err_set(err, -EINVAL, "request field \"class\" is \"%s\"; accepted: %s",
                        out->job_class, np_class_names());
    else if (out->op == NP_OP_ADVISE)
        /* the user's job name, kept in root's history.json (escaped, a control character would
         * take six bytes) and printed */
        rc = check_printable("name", out->advise.name, sizeof(out->advise.name), err);
out:
    json_decref(obj);
    return rc;
}

char *np_proto_encode(const struct np_proto_request *req)
{
    json_t *obj = json_pack("{s:i, s:s}", "v", NP_PROTO_VERSION, "op", np_proto_op_name(req->op));
    /* A status request's step is sent whenever it was set, so decoding gives it back. */
    const bool no_ids = req->op == NP_OP_STATUS && !req->job_id && !req->step_id;
    const size_t n = (unsigned)req->op < N_OPS && !no_ids ? op_fields[req->op].n : 0;
    char *text = NULL, *line = NULL;
    int rc = 0;

    if (!obj)
        return NULL;
    for (size_t k = 0; rc == 0 && k < n; k++)
        rc = encode_field(obj, &op_fields[req->op].fields[k], req);
    if (rc == 0 && req->op == NP_OP_APPLIED && req->applied.auto_facts.given)
        rc = json_object_set_new(obj, "auto", np_proto_applied_auto_json(&req->applied.auto_facts));
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

static struct timespec deadline_in(unsigned timeout_ms)
{
    struct timespec deadline;
    long ns;

    clock_gettime(CLOCK_MONOTONIC, &deadline);
    ns = deadline.tv_nsec + (long)(timeout_ms % 1000) * 1000000L;
    deadline.tv_sec += timeout_ms / 1000 + ns / 1000000000L;
    deadline.tv_nsec = ns % 1000000000L;
    return deadline;
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

/* Connect, send @p line and, with @p reply (np_proto_send passes none), read the answer, all
 * before one deadline. */
int np_proto_call(const char *socket_path, const char *line, unsigned timeout_ms, json_t **reply,
                  struct np_err *err)
{
    const struct timespec deadline = deadline_in(timeout_ms);
    int fd, rc;

    if (reply)
        *reply = NULL;
    fd = connect_by(socket_path, timeout_ms, &deadline, err);
    if (fd < 0)
        return fd;
    rc = send_by(fd, socket_path, line, &deadline, err);
    if (rc == 0 && reply)
        rc = receive_by(fd, socket_path, timeout_ms, &deadline, reply, err);
    close(fd);
    return rc;
}

int np_proto_send(const char *socket_path, const char *line, unsigned timeout_ms,
                  struct np_err *err)
{
    return np_proto_call(socket_path, line, timeout_ms, NULL, err);
}

int np_proto_connect(const char *socket_path, unsigned timeout_ms, struct np_err *err)
{
    const struct timespec deadline = deadline_in(timeout_ms);

    return connect_by(socket_path, timeout_ms, &deadline, err);
}

int np_proto_send_on(int fd, const char *line, unsigned timeout_ms, struct np_err *err)
{
    const struct timespec deadline = deadline_in(timeout_ms);

    return send_by(fd, NULL, line, &deadline, err);
}

int np_proto_receive(int fd, unsigned timeout_ms, json_t **reply, struct np_err *err)
{
    const struct timespec deadline = deadline_in(timeout_ms);

    return receive_by(fd, NULL, timeout_ms, &deadline, reply, err);
}
