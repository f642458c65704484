/* numaplaced's replies (issue 12 #5): a reply larger than the socket buffer arrives whole, sent
 * as the client reads it (POLLOUT), and a client that stops reading is dropped, not waited on. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "np_daemon_test.h"
#include "server.h"

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
    server_reply(&c, big_reply(bytes));
    ck_assert_int_ge(c.fd, 0); /* not all of it went at once: the client is kept */
    ck_assert_ptr_nonnull(c.out);
    while (c.fd >= 0) { /* the loop's POLLOUT, as the client reads */
        const ssize_t n = read(peer, got + len, 2 * bytes - len);
        ck_assert_int_gt(n, 0);
        len += (size_t)n;
        server_write(&c);
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
    server_reply(&c, big_reply(1 << 20));
    ck_assert_int_ge(c.fd, 0);
    close(peer); /* gone without reading */
    server_write(&c);
    ck_assert_int_eq(c.fd, -1);
    ck_assert_ptr_null(c.out);
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
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
