/*
 * Who may read the metrics page: the decision as a pure function over (address, uid found on
 * this host, configuration), and the kernel's uid of a real loopback peer (inet_diag, IPv4 and
 * IPv6).
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "numaplace/helperconf.h"
#include "numaplace/sampler.h"
#include "peer.h"

static struct peer_address address(const char *text)
{
    struct peer_address a = {0};
    struct sockaddr_storage ss = {0};

    if (strchr(text, ':')) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        in6->sin6_family = AF_INET6;
        ck_assert_int_eq(inet_pton(AF_INET6, text, &in6->sin6_addr), 1);
    } else {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        in->sin_family = AF_INET;
        ck_assert_int_eq(inet_pton(AF_INET, text, &in->sin_addr), 1);
    }
    a = peer_address_of((struct sockaddr *)&ss);
    return a;
}

#define UNKNOWN -1 /* no socket of this peer on this host */

static const struct {
    const char *addr;
    long uid; /* the peer socket's owner, or UNKNOWN */
    const char *users, *allow;
    bool allowed;
    const char *why; /* in the refusal */
} cases[] = {
    /* on this host: root always, the named users, nobody else, whatever the address */
    {"127.0.0.1", 0, "", "", true, ""},
    {"127.0.0.1", 1000, "", "", false, "local peer of uid 1000, neither root nor in metrics_users"},
    {"127.0.0.1", 1000, "1000", "", true, ""},
    {"127.0.0.1", 1001, "1000,1002", "", false, "uid 1001"},
    {"127.3.4.5", 1002, "1000,1002", "", true, ""},
    {"::1", 0, "", "", true, ""},
    {"::1", 1000, "", "", false, "uid 1000"},
    {"::ffff:127.0.0.1", 1000, "1000", "", true, ""},
    /* the node's own address inside an allowed network: still only the named users */
    {"10.1.2.3", 1000, "", "10.0.0.0/8", false, "uid 1000"},
    {"10.1.2.3", 0, "", "10.0.0.0/8", true, ""},
    /* loopback but its socket not found: never let in, whatever the networks say */
    {"127.0.0.1", UNKNOWN, "1000", "127.0.0.0/8,0.0.0.0/0", false,
     "loopback peer whose user could not be found"},
    {"::1", UNKNOWN, "", "::/0", false, "could not be found"},
    {"::ffff:127.0.0.1", UNKNOWN, "", "0.0.0.0/0", false, "could not be found"},
    /* other hosts: only the networks of metrics_allow */
    {"10.1.2.3", UNKNOWN, "", "", false, "address outside metrics_allow"},
    {"10.1.2.3", UNKNOWN, "0", "10.0.0.0/8", true, ""},
    {"11.1.2.3", UNKNOWN, "", "10.0.0.0/8", false, "outside metrics_allow"},
    {"::ffff:10.9.9.9", UNKNOWN, "", "10.0.0.0/8", true, ""},
    {"fd00::7", UNKNOWN, "", "10.0.0.0/8,fd00::/16", true, ""},
    {"fd01::7", UNKNOWN, "", "fd00::/16", false, "outside metrics_allow"},
    {"192.0.2.7", UNKNOWN, "", "192.0.2.7", true, ""},
    {"192.0.2.8", UNKNOWN, "", "192.0.2.7", false, "outside"},
};

START_TEST(decision)
{
    struct np_helper_config cfg;
    struct np_err err = {0};
    const struct peer_address a = address(cases[_i].addr);
    char why[160] = "";
    bool allowed;

    np_helper_config_defaults(&cfg);
    ck_assert_int_eq(np_helper_config_set(&cfg, "metrics_users", cases[_i].users, &err), 0);
    ck_assert_int_eq(np_helper_config_set(&cfg, "metrics_allow", cases[_i].allow, &err), 0);
    allowed = peer_allowed(&a, cases[_i].uid != UNKNOWN,
                           cases[_i].uid == UNKNOWN ? (uid_t)-1 : (uid_t)cases[_i].uid,
                           &cfg.metrics, why, sizeof(why));
    ck_assert_msg(allowed == cases[_i].allowed, "case %d (%s): %s", _i, cases[_i].addr, why);
    ck_assert_msg(strstr(why, cases[_i].why), "case %d: \"%s\"", _i, why);
}
END_TEST

START_TEST(ipv4_mapped_is_ipv4)
{
    const struct peer_address a = address("::ffff:192.0.2.1"), lo8 = address("127.255.0.1"),
                              not_lo = address("128.0.0.1"), v6 = address("::2");

    ck_assert_int_eq(a.family, AF_INET);
    ck_assert_mem_eq(a.addr, "\xc0\x00\x02\x01", 4);
    ck_assert(peer_is_loopback(&lo8));
    ck_assert(!peer_is_loopback(&not_lo));
    ck_assert(!peer_is_loopback(&v6));
}
END_TEST

/* The slots: 8 of them, 2 kept for root, 3 per peer. Holders are written "u1000" (a local uid)
 * or "a10.0.0.1" (another host). */
static struct peer_holder holder(const char *text)
{
    struct peer_holder h = {.local = text[0] == 'u'};

    if (h.local)
        h.uid = (uid_t)strtoul(text + 1, NULL, 10);
    else
        h.addr = address(text + 1);
    return h;
}

static const struct {
    const char *held[8];
    const char *who;
    bool admitted;
} slot_cases[] = {
    {{NULL}, "u1000", true},
    {{"u1000", "u1000", NULL}, "u1000", true},
    {{"u1000", "u1000", "u1000", NULL}, "u1000", false}, /* its share is taken */
    {{"u1000", "u1000", "u1000", NULL}, "u1001", true},  /* another user's is not */
    {{"u1000", "u1000", "u1000", NULL}, "u0", true},
    {{"a10.0.0.1", "a10.0.0.1", "a10.0.0.1", NULL}, "a10.0.0.1", false},
    {{"a10.0.0.1", "a10.0.0.1", "a10.0.0.1", NULL}, "a10.0.0.2", true},
    {{"a10.0.0.1", "a10.0.0.1", "a10.0.0.1", NULL}, "u1000", true}, /* an address is not a uid */
    {{"a::ffff:10.0.0.1", "a10.0.0.1", "a10.0.0.1", NULL}, "a10.0.0.1", false},
    /* six taken: the last two are root's */
    {{"u1", "u2", "u3", "a10.0.0.1", "a10.0.0.2", "a10.0.0.3", NULL}, "u4", false},
    {{"u1", "u2", "u3", "a10.0.0.1", "a10.0.0.2", "a10.0.0.3", NULL}, "a10.0.0.4", false},
    {{"u1", "u2", "u3", "a10.0.0.1", "a10.0.0.2", "a10.0.0.3", NULL}, "u0", true},
    {{"u1", "u2", "u3", "u4", "u5", "u6", "u0", NULL}, "u0", true},
    {{"u1", "u2", "u3", "u4", "u5", "u6", "u0", "u0"}, "u0", false}, /* none free at all */
};

START_TEST(slot_admission)
{
    struct peer_holder held[8];
    unsigned n = 0;
    const struct peer_holder who = holder(slot_cases[_i].who);

    while (n < 8 && slot_cases[_i].held[n]) {
        held[n] = holder(slot_cases[_i].held[n]);
        n++;
    }
    ck_assert_msg(peer_slot_admit(held, n, 8, 2, 3, &who) == slot_cases[_i].admitted, "case %d: %s",
                  _i, slot_cases[_i].who);
}
END_TEST

/* A real connection over loopback: the peer's uid is ours; a 4-tuple with no socket is none. */
START_TEST(uid_of_a_loopback_peer)
{
    const int family = _i == 0 ? AF_INET : AF_INET6;
    struct sockaddr_storage ss = {0}, ls, cs;
    socklen_t len = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    socklen_t llen = sizeof(ls), clen = sizeof(cs);
    int server, client, conn;
    struct peer_address local, remote;
    uid_t uid = 12345;

    if (family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        in->sin_family = AF_INET;
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        in6->sin6_family = AF_INET6;
        in6->sin6_addr = in6addr_loopback;
    }
    server = socket(family, SOCK_STREAM, 0);
    ck_assert_int_ge(server, 0);
    if (bind(server, (struct sockaddr *)&ss, len) < 0 && family == AF_INET6) {
        fprintf(stderr, "uid_of_a_loopback_peer: no IPv6 loopback here; not checked\n");
        close(server);
        return;
    }
    ck_assert_int_eq(listen(server, 1), 0);
    ck_assert_int_eq(getsockname(server, (struct sockaddr *)&ss, &len), 0);
    client = socket(family, SOCK_STREAM, 0);
    ck_assert_int_eq(connect(client, (struct sockaddr *)&ss, len), 0);
    conn = accept(server, NULL, NULL);
    ck_assert_int_ge(conn, 0);
    ck_assert_int_eq(getsockname(conn, (struct sockaddr *)&ls, &llen), 0);
    ck_assert_int_eq(getpeername(conn, (struct sockaddr *)&cs, &clen), 0);
    local = peer_address_of((struct sockaddr *)&ls);
    remote = peer_address_of((struct sockaddr *)&cs);
    ck_assert_int_eq(peer_uid(&local, &remote, &uid), 0);
    ck_assert_uint_eq(uid, geteuid());
    /* a client that closed at once leaves a TIME_WAIT socket whose uid reads 0: not root */
    close(client);
    {
        /* the kernel moves the closed socket on at its own pace: wait for it, not a guess */
        const double deadline = np_monotonic_s() + 30;
        while (peer_uid(&local, &remote, &uid) == 0 && np_monotonic_s() < deadline)
            usleep(10000);
    }
    ck_assert_int_lt(peer_uid(&local, &remote, &uid), 0);
    /* a 4-tuple nobody uses is no socket at all: no uid is guessed */
    remote.port = (uint16_t)(remote.port == 1 ? 2 : 1);
    ck_assert_int_eq(peer_uid(&local, &remote, &uid), -ENOENT);
    close(conn);
    close(server);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_peer");
    TCase *tc = tcase_create("peer");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, decision, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, ipv4_mapped_is_ipv4);
    tcase_add_loop_test(tc, slot_admission, 0, (int)(sizeof(slot_cases) / sizeof(slot_cases[0])));
    tcase_add_loop_test(tc, uid_of_a_loopback_peer, 0, 2);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
