/*
 * numaplaced's metrics endpoint served for real over loopback by libmicrohttpd, driven the way
 * the poll loop drives it (http_fd, http_run), and read by a plain socket client in a child
 * process (as another user when the suite runs as root): the page, 404, 405, 403, a client that
 * drips bytes cut at its lifetime, a reload onto an address that cannot be bound.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"
#include "np_daemon_test.h"

#define NOBODY 65534u

static struct np_test_daemon t;
static uint16_t port;

/* A port free on 127.0.0.1 now (the kernel's pick; it could be taken again, rarely). */
static uint16_t free_port(void)
{
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(in);
    const int fd = socket(AF_INET, SOCK_STREAM, 0);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&in, sizeof(in)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&in, &len), 0);
    close(fd);
    return ntohs(in.sin_port);
}

static void start(const char *users)
{
    struct np_err err = {0};
    char listen[64];

    np_test_daemon_init(&t);
    port = free_port();
    snprintf(listen, sizeof(listen), "127.0.0.1:%u", port);
    ck_assert_int_eq(np_helper_config_set(&t.d->cfg, "metrics_listen", listen, &err), 0);
    ck_assert_int_eq(np_helper_config_set(&t.d->cfg, "metrics_users", users, &err), 0);
    ck_assert_int_eq(http_start(t.d), 0);
    ck_assert_int_ge(http_fd(t.d), 0);
}

/* The client: connect, send @p request (as @p uid when it is not ours), read to the end and
 * write what came back to @p out. */
static void client(const char *request, uid_t uid, int out)
{
    struct sockaddr_in in = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    char buf[65536];
    ssize_t n;
    int fd;

    if (uid != geteuid() && (setgid(NOBODY) < 0 || setuid(uid) < 0))
        _exit(3);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&in, sizeof(in)) < 0)
        _exit(4);
    if (write(fd, request, strlen(request)) < 0)
        _exit(5);
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        if (write(out, buf, (size_t)n) != n)
            _exit(6);
    _exit(0);
}

/* Run the endpoint as the loop does until the client is done; its reply (free it). */
static char *exchange(const char *request, uid_t uid)
{
    int pipefd[2];
    pid_t pid;
    size_t len = 0, cap = 1 << 16;
    char *reply = malloc(cap);
    const double deadline = np_monotonic_s() + 10.0;
    int status;

    ck_assert_ptr_nonnull(reply);
    ck_assert_int_eq(pipe(pipefd), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(pipefd[0]);
        client(request, uid, pipefd[1]);
    }
    close(pipefd[1]);
    for (;;) {
        struct pollfd pfd[2] = {{.fd = http_fd(t.d), .events = POLLIN},
                                {.fd = pipefd[0], .events = POLLIN}};
        ssize_t n;
        ck_assert_msg(np_monotonic_s() < deadline, "no reply within 10 s");
        poll(pfd, 2, http_timeout_ms(t.d, 100));
        http_run(t.d);
        if (!(pfd[1].revents & (POLLIN | POLLHUP)))
            continue;
        if (len + 4096 > cap) {
            char *bigger = realloc(reply, cap *= 2);
            ck_assert_ptr_nonnull(bigger);
            reply = bigger;
        }
        n = read(pipefd[0], reply + len, cap - len - 1);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    reply[len] = '\0';
    close(pipefd[0]);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "client failed: %d", status);
    return reply;
}

static const struct {
    const char *request;
    bool as_other; /* a user neither root nor in metrics_users */
    const char *status, *also;
} cases[] = {
    {"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false, "HTTP/1.1 200 OK",
     "# TYPE numaplace_steps gauge"},
    {"GET /metrics HTTP/1.0\r\n\r\n", false, "HTTP/1.1 200 OK",
     "Content-Type: text/plain; version=0.0.4; charset=utf-8"},
    {"GET / HTTP/1.0\r\n\r\n", false, "HTTP/1.1 404 Not Found", "the page is /metrics"},
    {"GET /metrics/../x HTTP/1.0\r\n\r\n", false, "HTTP/1.1 404", ""},
    {"POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", false,
     "HTTP/1.1 405 Method Not Allowed", "Allow: GET"},
    {"DELETE /metrics HTTP/1.0\r\n\r\n", false, "HTTP/1.1 405", ""},
    {"GET /metrics HTTP/1.0\r\n\r\n", true, "HTTP/1.1 403 Forbidden", "numaplaced(8)"},
    {"GET /x HTTP/1.0\r\n\r\n", true, "HTTP/1.1 403 Forbidden", ""},
};

START_TEST(serves_over_loopback)
{
    const bool root = geteuid() == 0;
    char users[32] = "";
    char *reply;

    /* As root the other user is nobody; otherwise it is us, left out of metrics_users. */
    if (!root && !cases[_i].as_other)
        snprintf(users, sizeof(users), "%u", (unsigned)geteuid());
    start(users);
    reply = exchange(cases[_i].request, root && cases[_i].as_other ? NOBODY : geteuid());
    ck_assert_msg(strncmp(reply, cases[_i].status, strlen(cases[_i].status)) == 0, "got: %.200s",
                  reply);
    ck_assert_msg(strstr(reply, cases[_i].also), "no \"%s\" in %.300s", cases[_i].also, reply);
    if (cases[_i].as_other) {
        ck_assert_ptr_null(strstr(reply, "numaplace_"));
        ck_assert_ptr_nonnull(strstr(t.log.text, "metrics: refused 1 scrape(s)"));
        ck_assert_uint_eq(t.d->totals.scrapes_refused, 1); /* and counted for the page */
    } else {
        ck_assert_uint_eq(t.d->totals.scrapes_refused, 0);
    }
    free(reply);
    np_test_daemon_fini(&t);
}
END_TEST

/* A client sending one byte now and then is cut at its lifetime, not kept by the idle timeout. */
START_TEST(slow_client_is_cut)
{
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    const char *drip_start = "GET /metrics HTTP/1.1\r\nX-Drip: ";
    const double t0 = np_monotonic_s();
    bool closed = false;
    char c;
    int fd;

    start("");
    http_set_lifetime(t.d, 0.5);
    in.sin_port = htons(port);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert(connect(fd, (struct sockaddr *)&in, sizeof(in)) == 0 || errno == EINPROGRESS);
    /* a valid start, then a header whose value never ends */
    http_run(t.d);
    ck_assert_int_eq(send(fd, drip_start, strlen(drip_start), MSG_NOSIGNAL),
                     (ssize_t)strlen(drip_start));
    /* One byte every 250 ms: never idle for MHD's timeout (NPD_HTTP_TIMEOUT_S), far from its
     * memory limit. Cut before that timeout could have, it was cut at its 0.5 s lifetime. */
    while (!closed && np_monotonic_s() - t0 < 2 * NPD_HTTP_TIMEOUT_S) {
        struct pollfd pfd = {.fd = http_fd(t.d), .events = POLLIN};
        poll(&pfd, 1, 250);
        http_run(t.d);
        if (send(fd, "a", 1, MSG_NOSIGNAL) < 0 && errno != EAGAIN)
            closed = true;
        else if (recv(fd, &c, 1, 0) == 0)
            closed = true;
    }
    ck_assert_msg(closed, "a dripping client still connected after %d s", 2 * NPD_HTTP_TIMEOUT_S);
    ck_assert_double_lt(np_monotonic_s() - t0, NPD_HTTP_TIMEOUT_S);
    close(fd);
    np_test_daemon_fini(&t);
}
END_TEST

/* Run the endpoint as the loop does for @p seconds. */
static void serve_for(double seconds)
{
    const double end = np_monotonic_s() + seconds;

    while (np_monotonic_s() < end) {
        struct pollfd pfd = {.fd = http_fd(t.d), .events = POLLIN};
        poll(&pfd, 1, 50);
        http_run(t.d);
    }
}

/* A child holding 40 connections as @p uid, each with half a request (as a client sending a
 * header byte a second would); its pid. */
static pid_t hold_connections(uid_t uid)
{
    const pid_t pid = fork();

    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct sockaddr_in in = {.sin_family = AF_INET,
                                 .sin_port = htons(port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (setgid(NOBODY) < 0 || setuid(uid) < 0)
            _exit(3);
        for (int i = 0; i < 40; i++) {
            const int fd = socket(AF_INET, SOCK_STREAM, 0);
            if (fd < 0 || connect(fd, (struct sockaddr *)&in, sizeof(in)) < 0 ||
                write(fd, "GET /metrics HTTP/1.1\r\nX-Drip: ", 31) < 0)
                _exit(4);
        }
        pause();
        _exit(0);
    }
    return pid;
}

/* A user holding half-sent requests locks root out of nobody's page: refused at accept when not
 * in metrics_users, held to its share when in it; root's scrape is answered either way. */
START_TEST(root_served_while_a_user_holds_connections)
{
    const bool in_users = _i == 1;
    char users[32] = "";
    pid_t holder;
    char *reply;
    double t0;

    if (geteuid() != 0) {
        fprintf(stderr, "root_served_while_a_user_holds_connections: not root; not checked\n");
        return;
    }
    if (in_users)
        snprintf(users, sizeof(users), "%u", NOBODY);
    start(users);
    holder = hold_connections(NOBODY);
    serve_for(1.0);
    t0 = np_monotonic_s();
    reply = exchange("GET /metrics HTTP/1.0\r\n\r\n", 0);
    ck_assert_msg(strncmp(reply, "HTTP/1.1 200", 12) == 0, "got: %.100s", reply);
    /* not only once the held connections time out idle (NPD_HTTP_TIMEOUT_S) */
    ck_assert_double_lt(np_monotonic_s() - t0, NPD_HTTP_TIMEOUT_S - 2);
    free(reply);
    ck_assert_ptr_nonnull(strstr(t.log.text, in_users ? "its share of the connections is taken"
                                                      : "neither root nor in metrics_users"));
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    np_test_daemon_fini(&t);
}
END_TEST

/* An address:port that this machine cannot bind (EADDRNOTAVAIL: no interface carries it), proved
 * by binding it: a documentation address (RFC 5737) is local wherever a network configuration
 * gives it to an interface, as the QEMU guests do (test/vm/run: 192.0.2.1 on a dummy one). */
static void unbindable_listen(char *out, size_t size)
{
    static const char *const candidates[] = {"192.0.2.1", "198.51.100.1", "203.0.113.1"};

    for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
        struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(9)};
        const int fd = socket(AF_INET, SOCK_STREAM, 0);
        int rc, bind_errno;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(inet_pton(AF_INET, candidates[i], &in.sin_addr), 1);
        rc = bind(fd, (struct sockaddr *)&in, sizeof(in));
        bind_errno = errno;
        close(fd);
        if (rc < 0 && bind_errno == EADDRNOTAVAIL) {
            snprintf(out, size, "%s:9", candidates[i]);
            return;
        }
    }
    ck_abort_msg("192.0.2.1, 198.51.100.1 and 203.0.113.1 can all be bound here (local, or "
                 "net.ipv4.ip_nonlocal_bind set): no address to fail on");
}

/* A reload onto an address that cannot be bound keeps the running endpoint and says so. */
START_TEST(reload_keeps_serving_when_the_new_address_fails)
{
    struct np_metrics_config old;
    struct np_err err = {0};
    char listen[32], expected[128];
    char *reply;

    start("");
    old = t.d->cfg.metrics;
    unbindable_listen(listen, sizeof(listen));
    ck_assert_int_eq(np_helper_config_set(&t.d->cfg, "metrics_listen", listen, &err), 0);
    http_reload(t.d, &old);
    ck_assert_str_eq(t.d->cfg.metrics.listen, old.listen);
    snprintf(expected, sizeof(expected), "cannot listen on %s: %s", listen,
             strerror(EADDRNOTAVAIL));
    ck_assert_msg(strstr(t.log.text, expected), "no '%s' in: %s", expected, t.log.text);
    ck_assert_ptr_nonnull(strstr(t.log.text, "still serving"));
    reply = exchange("GET /metrics HTTP/1.0\r\n\r\n", geteuid());
    /* root reads the page; another user running the suite is refused, by the same endpoint */
    ck_assert_msg(strncmp(reply, geteuid() == 0 ? "HTTP/1.1 200" : "HTTP/1.1 403", 12) == 0,
                  "got: %.100s", reply);
    free(reply);
    np_test_daemon_fini(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_http");
    TCase *tc = tcase_create("http");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, serves_over_loopback, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, slow_client_is_cut);
    tcase_add_loop_test(tc, root_served_while_a_user_holds_connections, 0, 2);
    tcase_add_test(tc, reload_keeps_serving_when_the_new_address_fails);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
