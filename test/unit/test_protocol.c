/* The helper protocol: decoding of good and bad requests, encoding round trips, and the client's
 * bounded timeout against real Unix-socket servers in child processes. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "np_test.h"
#include "numaplace/protocol.h"

static const struct {
    const char *text;
    int rc;
    const char *msg; /* expected in the error line */
} bad_cases[] = {
    {"", -EINVAL, "not valid JSON"},
    {"{\"v\":1,\"op\":\"ping\"", -EINVAL, "not valid JSON"},
    {"[1,2]", -EINVAL, "must be a JSON object"},
    {"{\"op\":\"ping\"}", -EPROTO, "no protocol version"},
    {"{\"v\":2,\"op\":\"ping\"}", -EPROTO, "version 2; this side speaks 1"},
    /* 2^32 + 1: once read as 1 through an int */
    {"{\"v\":4294967297,\"op\":\"ping\"}", -EPROTO, "version 4294967297; this side"},
    {"{\"v\":1}", -EINVAL, "accepted: register, applied"},
    {"{\"v\":1,\"op\":\"reboot\"}", -EINVAL, "unknown op \"reboot\""},
    {"{\"v\":1,\"op\":\"ping\",\"v\":1}", -EINVAL, "not valid JSON"}, /* duplicate key */
    {"{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,\"uid\":0,\"pid\":5}", -EINVAL,
     "no \"sensitivity\""},
    {"{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,\"uid\":0,\"pid\":0,\"sensitivity\":"
     "\"low\"}",
     -EINVAL, "above 0"},
    {"{\"v\":1,\"op\":\"register\",\"job\":-1,\"step\":0,\"uid\":0,\"pid\":5,\"sensitivity\":"
     "\"low\"}",
     -EINVAL, "\"job\" must be an integer from 0 to 4294967295"},
    {"{\"v\":1,\"op\":\"register\",\"job\":\"7\",\"step\":0,\"uid\":0,\"pid\":5,"
     "\"sensitivity\":\"low\"}",
     -EINVAL, "\"job\" must be an integer"},
    {"{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,\"uid\":0,\"pid\":5,\"sensitivity\":"
     "\"urgent\"}",
     -EINVAL, "accepted: high, low"},
    {"{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,\"uid\":0,\"pid\":5,\"sensitivity\":"
     "\"low\",\"labelled\":\"no\"}",
     -EINVAL, "\"labelled\" must be true or false"},
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5}", -EINVAL, "no \"policy\""},
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":7}", -EINVAL,
     "\"policy\" must be a string"},
    /* what a task says it applied reaches root's terminal: only what the plugin can say */
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":"
     "\"\\u001b]0;owned\\u0007\"}",
     -EINVAL, "\"policy\" is not a policy; accepted: none, local"},
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
     "\"mode\":\"bind\\u001b[2J\"}",
     -EINVAL, "\"mode\" is not a mode; accepted: default, preferred, preferred-many, bind"},
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
     "\"mode\":\"bind\",\"nodes\":\"0\\u009b2J\"}",
     -EINVAL, "\"nodes\" is not a list of numbers below 65536"},
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
     "\"mode\":\"bind\",\"nodes\":\"0\",\"cpus\":\"0-3\\n\"}",
     -EINVAL, "\"cpus\" is not a list"},
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
     "\"mode\":\"bind\",\"nodes\":\"0\",\"cpus\":\"-1\"}",
     -EINVAL, "\"cpus\" is not a list"},
    /* the free text of --numa-policy=auto is printed too: printable, and bounded */
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
     "\"reason\":\"small\\u001b]0;owned\\u0007\"}",
     -EINVAL, "\"reason\" has a control character; accepted: printable text of at most 511"},
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
     "\"reason\":\"fits\\u009b2J\"}",
     -EINVAL, "\"reason\" has a control character"},
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
     "\"reason\":\"a\\u007fb\"}",
     -EINVAL, "\"reason\" has a control character"},
    /* auto's facts are fields readers trust as such: each one checked */
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
     "\"auto\":\"sensitivity high\"}",
     -EINVAL, "\"auto\" must be an object"},
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
     "\"auto\":{\"sensitivity\":\"very\",\"task_nodes\":[0],\"allowed_nodes\":[0],"
     "\"loaded_nodes\":[]}}",
     -EINVAL, "\"auto\".\"sensitivity\" is not one; accepted: high, low, unknown"},
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
     "\"auto\":{\"sensitivity\":\"high\",\"task_nodes\":[64],\"allowed_nodes\":[0],"
     "\"loaded_nodes\":[]}}",
     -EINVAL, "\"auto\".\"task_nodes\" must be an array of node numbers below 64"},
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
     "\"auto\":{\"sensitivity\":\"high\",\"task_nodes\":[0],\"allowed_nodes\":\"0-1\","
     "\"loaded_nodes\":[]}}",
     -EINVAL, "\"auto\".\"allowed_nodes\" must be an array"},
    {"{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
     "\"auto\":{\"sensitivity\":\"high\",\"task_nodes\":[0],\"allowed_nodes\":[0]}}",
     -EINVAL, "\"auto\".\"loaded_nodes\" must be an array"},
    /* the user's job name is kept in root's history: printable, and bounded */
    {"{\"v\":1,\"op\":\"advise\",\"job\":1,\"step\":0,\"uid\":5,\"name\":\"a\\u0001b\"}", -EINVAL,
     "\"name\" has a control character; accepted: printable text of at most 127 bytes"},
    {"{\"v\":1,\"op\":\"advise\",\"job\":1,\"step\":0,\"uid\":5,\"name\":\"a\\u009bb\"}", -EINVAL,
     "\"name\" has a control character"},
    {"{\"v\":1,\"op\":\"step_end\",\"job\":1}", -EINVAL, "no \"step\""},
    {"{\"v\":1,\"op\":\"step_end\",\"job\":1,\"step\":0,\"wait_report\":0}", -EINVAL,
     "\"wait_report\" must be true or false"},
    {"{\"v\":1,\"op\":\"set_class\",\"job\":1,\"class\":\"urgent\"}", -EINVAL,
     "\"class\" is \"urgent\"; accepted: high, low"},
    {"{\"v\":1,\"op\":\"migrate\",\"from\":0,\"to\":1}", -EINVAL, "no \"pages\""},
    {"{\"v\":1,\"op\":\"migrate\",\"from\":0,\"to\":1,\"pages\":5,\"dry_run\":\"yes\"}", -EINVAL,
     "\"dry_run\" must be true or false"},
    {"{\"v\":1,\"op\":\"migrate\",\"from\":0,\"to\":5000,\"pages\":5}", -EINVAL,
     "\"to\" must be an integer from 0 to 4095"},
    {"{\"v\":1,\"op\":\"migrate\",\"from\":0,\"pages\":5}", -EINVAL,
     "needs \"to\" (a node) or \"tier\" (down, up), one of them"},
    {"{\"v\":1,\"op\":\"migrate\",\"from\":0,\"to\":1,\"tier\":\"down\",\"pages\":5}", -EINVAL,
     "needs \"to\" (a node) or \"tier\" (down, up), one of them"},
    {"{\"v\":1,\"op\":\"migrate\",\"from\":0,\"tier\":\"left\",\"pages\":5}", -EINVAL,
     "\"tier\" is \"left\"; accepted: down, up"},
};

START_TEST(test_decode_bad)
{
    struct np_proto_request req;
    struct np_err err = {0};
    const char *text = bad_cases[_i].text;

    ck_assert_int_eq(np_proto_decode(text, strlen(text), &req, &err), bad_cases[_i].rc);
    ck_assert_msg(strstr(err.msg, bad_cases[_i].msg), "case %d: \"%s\" lacks \"%s\"", _i, err.msg,
                  bad_cases[_i].msg);
}
END_TEST

START_TEST(test_decode_oversized_and_long_field)
{
    struct np_proto_request req;
    struct np_err err = {0};
    size_t n = NP_PROTO_MAX_MSG + 10;
    char *big = malloc(n + 1);
    char line[1024];

    ck_assert_ptr_nonnull(big);
    memset(big, ' ', n);
    big[n] = '\0';
    ck_assert_int_eq(np_proto_decode(big, n, &req, &err), -EMSGSIZE);
    ck_assert_ptr_nonnull(strstr(err.msg, "over the limit"));
    free(big);

    snprintf(line, sizeof(line),
             "{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"%0200d\"}",
             0);
    ck_assert_int_eq(np_proto_decode(line, strlen(line), &req, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "longer than 31 bytes"));
    snprintf(line, sizeof(line),
             "{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
             "\"reason\":\"%0600d\"}",
             0);
    ck_assert_int_eq(np_proto_decode(line, strlen(line), &req, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "\"reason\" is longer than 511 bytes"));
    /* printable text beyond ASCII is text */
    snprintf(line, sizeof(line),
             "{\"v\":1,\"op\":\"applied\",\"job\":1,\"step\":0,\"pid\":5,\"policy\":\"local\","
             "\"reason\":\"footprint \u00e9 3 GB > 2 GB\"}");
    ck_assert_int_eq(np_proto_decode(line, strlen(line), &req, &err), 0);
}
END_TEST

/* Lines that decode: encoding the decoded request and decoding that gives the same request. */
static const char *const rewire_cases[] = {
    ("{\"v\":1,\"op\":\"register\",\"job\":42,\"step\":0,\"uid\":1000,\"pid\":12345,"
     "\"sensitivity\":\"low\"}"),
    "{\"v\":1,\"op\":\"status\"}",
    /* applied from plugins before auto's facts, and with them (the reason says other things:
     * the fields, not the line, are what is kept) */
    ("{\"v\":1,\"op\":\"applied\",\"job\":42,\"step\":0,\"pid\":7,\"policy\":\"local\","
     "\"mode\":\"preferred\",\"nodes\":\"0\",\"cpus\":\"0-1\",\"reason\":\"auto: local: "
     "sensitivity unknown, node 0 loaded\"}"),
    ("{\"v\":1,\"op\":\"applied\",\"job\":42,\"step\":0,\"pid\":7,\"policy\":\"local\","
     "\"mode\":\"preferred\",\"nodes\":\"0\",\"cpus\":\"0-1\",\"reason\":\"CPUs span nodes 0,1 "
     "but no other allowed node is less loaded\",\"auto\":{\"sensitivity\":\"unknown\","
     "\"task_nodes\":[0],\"allowed_nodes\":[0,1,63],\"loaded_nodes\":[0]}}"),
    "{\"v\":1,\"op\":\"status\",\"job\":42,\"step\":3}",
    /* fuzz_proto_request: a step without a job was dropped by the encoder */
    "{\"v\":1,\"op\":\"status\",\"step\":5}",
    "{\"v\":1,\"op\":\"migrate\",\"from\":2,\"to\":1,\"pages\":16384,\"dry_run\":true}",
    "{\"v\":1,\"op\":\"migrate\",\"from\":2,\"pages\":16384,\"tier\":\"down\"}",
    "{\"v\":1,\"op\":\"step_end\",\"job\":42,\"step\":0,\"wait_report\":false}",
    "{\"v\":1,\"op\":\"step_end\",\"job\":42,\"step\":0,\"wait_report\":true}",
};

START_TEST(test_decode_encode_decode)
{
    struct np_proto_request first, second;
    struct np_err err = {0};
    char *line;

    ck_assert_msg(np_proto_decode(rewire_cases[_i], strlen(rewire_cases[_i]), &first, &err) == 0,
                  "%s", err.msg);
    line = np_proto_encode(&first);
    ck_assert_ptr_nonnull(line);
    ck_assert_msg(np_proto_decode(line, strlen(line), &second, &err) == 0, "%s", err.msg);
    ck_assert_msg(memcmp(&first, &second, sizeof(first)) == 0, "%s -> %s", rewire_cases[_i], line);
    free(line);
}
END_TEST

START_TEST(test_round_trip)
{
    struct np_proto_request in = {.op = NP_OP_REGISTER}, out;
    struct np_err err = {0};
    char *line;

    in.reg = (struct np_task_reg){.job_id = 4294967000u,
                                  .step_id = 0xfffffffbu,
                                  .uid = 1000,
                                  .gid = 100,
                                  .pid = 4242,
                                  .task_id = 3,
                                  .cpus = "0-3,8",
                                  .policy_requested = "interleave",
                                  .sensitivity = "high",
                                  .unlabelled = true};
    line = np_proto_encode(&in);
    ck_assert_ptr_nonnull(line);
    ck_assert_int_eq(line[strlen(line) - 1], '\n');
    ck_assert_msg(np_proto_decode(line, strlen(line), &out, &err) == 0, "%s", err.msg);
    free(line);
    ck_assert_int_eq(out.op, NP_OP_REGISTER);
    ck_assert_uint_eq(out.reg.job_id, 4294967000u);
    ck_assert_uint_eq(out.reg.step_id, 0xfffffffbu);
    ck_assert_int_eq(out.reg.pid, 4242);
    ck_assert_int_eq(out.reg.task_id, 3);
    ck_assert_str_eq(out.reg.cpus, "0-3,8");
    ck_assert_str_eq(out.reg.sensitivity, "high");
    ck_assert(out.reg.unlabelled); /* "labelled": false; absent (older plugins) is labelled */
    ck_assert_int_eq(np_proto_decode("{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,"
                                     "\"uid\":0,\"pid\":5,\"sensitivity\":\"low\"}\n",
                                     strlen("{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,"
                                            "\"uid\":0,\"pid\":5,\"sensitivity\":\"low\"}\n"),
                                     &out, &err),
                     0);
    ck_assert(!out.reg.unlabelled);

    in = (struct np_proto_request){.op = NP_OP_APPLIED};
    in.applied = (struct np_task_applied){.job_id = 7,
                                          .step_id = 1,
                                          .pid = 9,
                                          .policy = "local",
                                          .mode = "preferred-many",
                                          .nodes = "2"};
    line = np_proto_encode(&in);
    ck_assert_int_eq(np_proto_decode(line, strlen(line), &out, &err), 0);
    free(line);
    ck_assert_str_eq(out.applied.mode, "preferred-many");
    ck_assert_str_eq(out.applied.nodes, "2");
    ck_assert(!out.applied.auto_facts.given); /* no "auto": not auto, or an older plugin */

    in.applied.auto_facts = (struct np_applied_auto){.given = true,
                                                     .sensitivity = "high",
                                                     .task_nodes = UINT64_C(1) << 63,
                                                     .allowed_nodes = 0x3 | UINT64_C(1) << 63,
                                                     .loaded_nodes = 0};
    line = np_proto_encode(&in);
    ck_assert_int_eq(np_proto_decode(line, strlen(line), &out, &err), 0);
    free(line);
    ck_assert(out.applied.auto_facts.given);
    ck_assert_str_eq(out.applied.auto_facts.sensitivity, "high");
    ck_assert_uint_eq(out.applied.auto_facts.task_nodes, UINT64_C(1) << 63);
    ck_assert_uint_eq(out.applied.auto_facts.allowed_nodes, 0x3 | UINT64_C(1) << 63);
    ck_assert_uint_eq(out.applied.auto_facts.loaded_nodes, 0);

    in = (struct np_proto_request){.op = NP_OP_MIGRATE};
    in.migrate.from = 2;
    in.migrate.to = 1;
    in.migrate.pages = 8192;
    in.migrate.dry_run = true;
    snprintf(in.migrate.order, sizeof(in.migrate.order), "worst-plus");
    line = np_proto_encode(&in);
    ck_assert_int_eq(np_proto_decode(line, strlen(line), &out, &err), 0);
    free(line);
    ck_assert_int_eq(out.op, NP_OP_MIGRATE);
    ck_assert_uint_eq(out.migrate.to, 1);
    ck_assert_uint_eq(out.migrate.pages, 8192);
    ck_assert(out.migrate.dry_run);
    ck_assert_str_eq(out.migrate.order, "worst-plus");
    ck_assert_str_eq(out.migrate.tier, "");

    /* --tier: no "to" on the wire, NP_PROTO_NO_NODE after the decode */
    in.migrate.to = NP_PROTO_NO_NODE;
    snprintf(in.migrate.tier, sizeof(in.migrate.tier), "up");
    line = np_proto_encode(&in);
    ck_assert_ptr_null(strstr(line, "\"to\""));
    ck_assert_int_eq(np_proto_decode(line, strlen(line), &out, &err), 0);
    free(line);
    ck_assert_uint_eq(out.migrate.to, NP_PROTO_NO_NODE);
    ck_assert_str_eq(out.migrate.tier, "up");

    /* step_end: the plugin answers at the step's end; absent (older plugins) waits */
    in = (struct np_proto_request){.op = NP_OP_STEP_END, .job_id = 42, .answer_at_end = true};
    line = np_proto_encode(&in);
    ck_assert_ptr_nonnull(strstr(line, "\"wait_report\":false"));
    ck_assert_int_eq(np_proto_decode(line, strlen(line), &out, &err), 0);
    free(line);
    ck_assert(out.answer_at_end);
    ck_assert_int_eq(
        np_proto_decode("{\"v\":1,\"op\":\"step_end\",\"job\":1,\"step\":0}", 40, &out, &err), 0);
    ck_assert(!out.answer_at_end);

    in = (struct np_proto_request){.op = NP_OP_SET_CLASS, .job_id = 42, .job_class = "high"};
    line = np_proto_encode(&in);
    ck_assert_int_eq(np_proto_decode(line, strlen(line), &out, &err), 0);
    free(line);
    ck_assert_uint_eq(out.job_id, 42);
    ck_assert_str_eq(out.job_class, "high");

    in = (struct np_proto_request){.op = NP_OP_STATUS};
    line = np_proto_encode(&in);
    ck_assert_int_eq(np_proto_decode(line, strlen(line), &out, &err), 0);
    free(line);
    ck_assert_int_eq(out.op, NP_OP_STATUS);
    ck_assert_uint_eq(out.job_id, 0);
}
END_TEST

/* A one-shot server in a child: how it answers is the case. */
enum server_mode {
    SERVE_OK,
    SERVE_SILENT,
    SERVE_OLD_VERSION,
    SERVE_REFUSE,
    SERVE_GARBAGE,
    SERVE_BIG, /* a status of thousands of steps: over 64 KiB, once cut off */
    SERVE_LATE /* its backlog full (one connection waiting, backlog 0) for 150 ms, then ok */
};

static pid_t start_server(const char *path, enum server_mode mode)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    pid_t pid;

    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    unlink(path);
    ck_assert_int_ge(lfd, 0);
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    ck_assert_int_eq(listen(lfd, mode == SERVE_LATE ? 0 : 4), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        static const char *const replies[] = {
            [SERVE_OK] = "{\"v\":1,\"ok\":true,\"version\":1}\n",
            [SERVE_OLD_VERSION] = "{\"v\":0,\"ok\":true}\n",
            [SERVE_REFUSE] = "{\"v\":1,\"ok\":false,\"error\":\"not yours\"}\n",
            [SERVE_GARBAGE] = "<html>\n",
            [SERVE_LATE] = "{\"v\":1,\"ok\":true,\"version\":1}\n",
        };
        char buf[4096];
        int cfd;

        if (mode == SERVE_LATE) {
            usleep(150000);
            close(accept(lfd, NULL, NULL)); /* the connection that filled the backlog */
        }
        cfd = accept(lfd, NULL, NULL);

        if (cfd < 0)
            _exit(1);
        if (read(cfd, buf, sizeof(buf)) <= 0)
            _exit(1);
        if (mode == SERVE_SILENT) {
            sleep(5);
            _exit(0);
        }
        if (mode == SERVE_BIG) {
            static char big[(1 << 20) + 64];
            const size_t pad = sizeof(big) - 64;
            size_t len =
                (size_t)snprintf(big, sizeof(big), "{\"v\":1,\"ok\":true,\"version\":1,\"pad\":\"");
            memset(big + len, 'x', pad);
            len += pad;
            memcpy(big + len, "\"}\n", 3);
            len += 3;
            for (size_t off = 0; off < len;) {
                const ssize_t n = write(cfd, big + off, len - off);
                if (n <= 0)
                    _exit(1);
                off += (size_t)n;
            }
            _exit(0);
        }
        if (write(cfd, replies[mode], strlen(replies[mode])) < 0)
            _exit(1);
        _exit(0);
    }
    close(lfd);
    return pid;
}

static const struct {
    enum server_mode mode;
    int rc;
    const char *msg;
} call_cases[] = {
    {SERVE_OK, 0, ""},
    {SERVE_SILENT, -ETIMEDOUT, "within 200 ms"},
    {SERVE_OLD_VERSION, -EPROTO, "version 0"},
    {SERVE_REFUSE, -EREMOTEIO, "not yours"},
    {SERVE_GARBAGE, -EPROTO, "not JSON"},
    {SERVE_BIG, 0, ""},
};

START_TEST(test_call)
{
    char path[108];
    struct np_err err = {0};
    json_t *reply = NULL;
    pid_t server;
    int rc;

    /* A server that answers gets as long as a loaded machine may need to schedule it; the
     * silent one proves the bound (it never answers, so returning at all is the timeout). */
    const unsigned timeout_ms = call_cases[_i].mode == SERVE_SILENT ? 200 : 60000;

    snprintf(path, sizeof(path), "/tmp/np-proto-%d-%d.sock", (int)getpid(), _i);
    server = start_server(path, call_cases[_i].mode);
    rc = np_proto_call(path, "{\"v\":1,\"op\":\"ping\"}\n", timeout_ms, &reply, &err);
    ck_assert_msg(rc == call_cases[_i].rc, "case %d: rc %d (%s)", _i, rc, err.msg);
    ck_assert_msg(strstr(err.msg, call_cases[_i].msg), "case %d: \"%s\"", _i, err.msg);
    if (rc == 0) {
        ck_assert_ptr_nonnull(reply);
        ck_assert_int_eq(json_integer_value(json_object_get(reply, "version")), 1);
    } else {
        ck_assert_ptr_null(reply);
    }
    json_decref(reply);
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
    unlink(path);
}
END_TEST

/* Another user's flood fills the helper's listen backlog: a non-blocking Unix connect then fails
 * with EAGAIN; the caller tries again until its deadline instead of failing at once. */
START_TEST(test_call_backlog_full)
{
    char path[108];
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    struct np_err err = {0};
    json_t *reply = NULL;
    pid_t server;
    int filler, probe, lfd;

    snprintf(path, sizeof(path), "/tmp/np-proto-backlog-%d.sock", (int)getpid());
    server = start_server(path, SERVE_LATE);
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    filler = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_eq(connect(filler, (struct sockaddr *)&addr, sizeof(addr)), 0);
    /* the backlog is full now: a non-blocking connect is refused at once */
    probe = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ck_assert_int_lt(connect(probe, (struct sockaddr *)&addr, sizeof(addr)), 0);
    ck_assert_int_eq(errno, EAGAIN);
    close(probe);
    /* the server drains its backlog 150 ms on, or whenever a loaded machine runs it */
    ck_assert_msg(np_proto_call(path, "{\"v\":1,\"op\":\"ping\"}\n", 60000, &reply, &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(json_integer_value(json_object_get(reply, "version")), 1);
    json_decref(reply);
    close(filler);
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
    unlink(path);
    /* still bounded: a backlog nobody drains is a timeout, not a hang */
    lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    ck_assert_int_eq(listen(lfd, 0), 0);
    filler = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_eq(connect(filler, (struct sockaddr *)&addr, sizeof(addr)), 0);
    ck_assert_int_eq(np_proto_call(path, "{}\n", 200, &reply, &err), -ETIMEDOUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "did not accept within 200 ms"));
    close(filler);
    close(lfd);
    unlink(path);
}
END_TEST

START_TEST(test_call_nobody_listening)
{
    struct np_err err = {0};
    json_t *reply = NULL;

    ck_assert_int_eq(np_proto_call("/tmp/np-proto-nonexistent.sock", "{}\n", 100, &reply, &err),
                     -ENOENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot reach the helper at /tmp/np-proto-nonexistent"));
}
END_TEST

START_TEST(test_send_without_reply)
{
    char path[108];
    struct np_err err = {0};
    pid_t server;

    snprintf(path, sizeof(path), "/tmp/np-proto-send-%d.sock", (int)getpid());
    server = start_server(path, SERVE_SILENT);
    /* A server that never answers: a sender waiting for a reply would time out (-ETIMEDOUT);
     * the listen backlog takes the connection and the socket the line, whatever the load. */
    ck_assert_msg(np_proto_send(path, "{\"v\":1,\"op\":\"ping\"}\n", 200, &err) == 0, "%s",
                  err.msg);
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
    unlink(path);
    ck_assert_int_eq(np_proto_send(path, "{}\n", 100, &err), -ENOENT);
}
END_TEST

/* np_proto_call in parts, as the plugin registers a task: connected before a fork, the request
 * sent by the parent after it, the reply read by the child, which inherited the socket. */
START_TEST(test_call_in_parts)
{
    char path[108];
    struct np_err err = {0};
    json_t *reply = NULL;
    pid_t server, child;
    int fd, status = -1;

    snprintf(path, sizeof(path), "/tmp/np-proto-parts-%d.sock", (int)getpid());
    server = start_server(path, SERVE_OK);
    fd = np_proto_connect(path, 60000, &err);
    ck_assert_msg(fd >= 0, "%s", err.msg);
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        const int rc = np_proto_receive(fd, 60000, &reply, &err);
        _exit(rc == 0 && json_integer_value(json_object_get(reply, "version")) == 1 ? 0 : 1);
    }
    ck_assert_msg(np_proto_send_on(fd, "{\"v\":1,\"op\":\"ping\"}\n", 60000, &err) == 0, "%s",
                  err.msg);
    close(fd); /* the child holds the connection now */
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child got no ok reply");
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);

    /* a server that never answers: the reader's wait is bounded */
    server = start_server(path, SERVE_SILENT);
    fd = np_proto_connect(path, 60000, &err);
    ck_assert_msg(fd >= 0, "%s", err.msg);
    ck_assert_msg(np_proto_send_on(fd, "{\"v\":1,\"op\":\"ping\"}\n", 60000, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(np_proto_receive(fd, 200, &reply, &err), -ETIMEDOUT);
    ck_assert_ptr_null(reply);
    ck_assert_ptr_nonnull(strstr(err.msg, "within 200 ms"));
    close(fd);
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
    unlink(path);
    ck_assert_int_eq(np_proto_connect(path, 100, &err), -ENOENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot reach the helper at"));
}
END_TEST

START_TEST(test_reply_builders)
{
    json_t *ok = np_proto_reply_ok(), *bad = np_proto_reply_error("job %d is not yours", 5);
    struct np_err err = {0};

    ck_assert_int_eq(np_proto_reply_check(ok, &err), 0);
    ck_assert_int_eq(np_proto_reply_check(bad, &err), -EREMOTEIO);
    ck_assert_str_eq(err.msg, "the helper refused: job 5 is not yours");
    json_decref(ok);
    json_decref(bad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("protocol");
    TCase *tc = tcase_create("protocol");

    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_decode_bad, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
    tcase_add_test(tc, test_decode_oversized_and_long_field);
    tcase_add_test(tc, test_round_trip);
    tcase_add_loop_test(tc, test_decode_encode_decode, 0,
                        (int)(sizeof(rewire_cases) / sizeof(rewire_cases[0])));
    tcase_add_loop_test(tc, test_call, 0, (int)(sizeof(call_cases) / sizeof(call_cases[0])));
    tcase_add_test(tc, test_call_backlog_full);
    tcase_add_test(tc, test_call_nobody_listening);
    tcase_add_test(tc, test_send_without_reply);
    tcase_add_test(tc, test_call_in_parts);
    tcase_add_test(tc, test_reply_builders);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
