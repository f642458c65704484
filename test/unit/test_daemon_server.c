/* numaplaced's replies: a reply larger than the socket buffer arrives whole, sent
 * as the client reads it (POLLOUT), and a client that stops reading is dropped, not waited on. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "np_daemon_test.h"
#include "daemon.h"

/* A client slot connected to one end of a socketpair with a small send buffer. */
static void connect_client(struct np_daemon_client *c, int *peer)
{
    int sv[2], small = 4096;

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
    ck_assert_int_eq(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
    memset(c, 0, sizeof(*c));
    c->fd = sv[0];
    *peer = sv[1];
}

static json_t *big_reply(size_t bytes)
{
    char *pad = malloc(bytes + 1);
    json_t *reply = np_proto_reply_ok();

    memset(pad, 'x', bytes);
    pad[bytes] = '\0';
    json_object_set_new(reply, "pad", json_string(pad));
    free(pad);
    return reply;
}

START_TEST(test_large_reply_arrives_whole)
{
    const size_t bytes = 1 << 20; /* far over the socket buffer */
    struct np_daemon_client c;
    char *got = malloc(2 * bytes);
    size_t len = 0;
    json_t *parsed;
    json_error_t jerr;
    int peer;

    connect_client(&c, &peer);
    client_reply(&c, big_reply(bytes));
    ck_assert_int_ge(c.fd, 0); /* not all of it went at once: the client is kept */
    ck_assert_ptr_nonnull(c.out);
    while (c.fd >= 0) { /* the loop's POLLOUT, as the client reads */
        const ssize_t n = read(peer, got + len, 2 * bytes - len);
        ck_assert_int_gt(n, 0);
        len += (size_t)n;
        client_write(&c);
    }
    for (ssize_t n; (n = read(peer, got + len, 2 * bytes - len)) > 0;)
        len += (size_t)n;
    ck_assert_uint_gt(len, bytes);
    ck_assert_int_eq(got[len - 1], '\n');
    parsed = json_loadb(got, len, 0, &jerr);
    ck_assert_msg(parsed != NULL, "not JSON: %s", jerr.text);
    ck_assert_uint_eq(strlen(json_string_value(json_object_get(parsed, "pad"))), bytes);
    json_decref(parsed);
    close(peer);
    free(got);
}
END_TEST

START_TEST(test_client_that_stops_reading_is_dropped)
{
    struct np_daemon_client c;
    int peer;

    connect_client(&c, &peer);
    client_reply(&c, big_reply(1 << 20));
    ck_assert_int_ge(c.fd, 0);
    close(peer); /* gone without reading */
    client_write(&c);
    ck_assert_int_eq(c.fd, -1);
    ck_assert_ptr_null(c.out);
}
END_TEST

/* Who gets a slot when OTHERS hold some: once one user held all 64 and root got none. */
static const struct {
    unsigned held_by_nobody, held_by_root;
    uid_t asking;
    bool admitted;
} admit_cases[] = {
    {0, 0, 65534, true},
    {NPD_MAX_PER_USER - 1, 0, 65534, true},
    {NPD_MAX_PER_USER, 0, 65534, false},                    /* a user's share is full */
    {NPD_MAX_PER_USER, 0, 1000, true},                      /* ... another user still gets in */
    {NPD_MAX_PER_USER, 0, 0, true},                         /* ... and root */
    {0, NPD_MAX_CLIENTS - NPD_ROOT_RESERVED, 65534, false}, /* only root's reserve is left */
    {0, NPD_MAX_CLIENTS - NPD_ROOT_RESERVED, 0, true},
    {0, NPD_MAX_CLIENTS, 0, false}, /* every slot taken */
};

START_TEST(test_admission)
{
    struct np_test_daemon t;
    unsigned slot = 0;

    np_test_daemon_init(&t);
    for (unsigned i = 0; i < admit_cases[_i].held_by_nobody; i++, slot++) {
        t.d->clients[slot].fd = 1000 + (int)slot; /* held, never used */
        t.d->clients[slot].cred.uid = 65534;
    }
    for (unsigned i = 0; i < admit_cases[_i].held_by_root; i++, slot++) {
        t.d->clients[slot].fd = 1000 + (int)slot;
        t.d->clients[slot].cred.uid = 0;
    }
    ck_assert_int_eq(server_admit(t.d, admit_cases[_i].asking), admit_cases[_i].admitted);
    for (unsigned i = 0; i < slot; i++)
        t.d->clients[i].fd = -1; /* nothing to close */
    np_test_daemon_fini(&t);
}
END_TEST

/* A connection refused for want of a slot is counted for the metrics page, however many the
 * log line sums up. */
START_TEST(test_refusal_is_counted)
{
    struct np_test_daemon t;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fds[2];

    np_test_daemon_init(&t);
    snprintf(t.d->cfg.socket, sizeof(t.d->cfg.socket), "%.80s/numaplaced.sock", t.dir);
    ck_assert_int_eq(server_open(t.d), 0);
    for (int i = 0; i < NPD_MAX_CLIENTS; i++) {
        t.d->clients[i].fd = 1000 + i; /* held, never used */
        t.d->clients[i].cred.uid = 0;
    }
    ck_assert_uint_lt(strlen(t.d->cfg.socket), sizeof(sa.sun_path));
    memcpy(sa.sun_path, t.d->cfg.socket, strlen(t.d->cfg.socket) + 1);
    for (int k = 0; k < 2; k++) {
        fds[k] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_eq(connect(fds[k], (struct sockaddr *)&sa, sizeof(sa)), 0);
    }
    server_accept(t.d);
    ck_assert_uint_eq(t.d->totals.connections_refused, 2);
    ck_assert_ptr_nonnull(strstr(t.log.text, "refused 1 connection(s)")); /* then quiet 10 s */
    for (int i = 0; i < NPD_MAX_CLIENTS; i++)
        t.d->clients[i].fd = -1; /* nothing to close */
    close(fds[0]);
    close(fds[1]);
    server_close(t.d);
    np_test_daemon_fini(&t);
}
END_TEST

/* A newline in a request's op cannot forge a log line. */
START_TEST(test_log_escape)
{
    char out[128];

    log_escape("unknown op \"x\n2026-11-24 numaplaced: info: forged\"", out, sizeof(out));
    ck_assert_ptr_null(strchr(out, '\n'));
    ck_assert_ptr_nonnull(strstr(out, "x\\x0a2026"));
    log_escape("\x01\x7f", out, 6); /* cut, never overflowed */
    ck_assert_uint_le(strlen(out), 5);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_server");
    TCase *tc = tcase_create("replies");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_large_reply_arrives_whole);
    tcase_add_test(tc, test_client_that_stops_reading_is_dropped);
    tcase_add_loop_test(tc, test_admission, 0, (int)(sizeof(admit_cases) / sizeof(admit_cases[0])));
    tcase_add_test(tc, test_log_escape);
    tcase_add_test(tc, test_refusal_is_counted);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
