/*
 * The name service off the loop (daemon/user_names.c) with a made-up one in its place: a lookup
 * that never answers until the test lets it leaves set-class and the user-name cache answering at
 * once (were either waiting on it, the test would hang there, since only the test releases it);
 * once answered, admin_group's members have their rights and no one else does; a failing or
 * absent group is no one's.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "np_daemon_test.h"
#include "ops.h"
#include "daemon.h"
#include "user_names.h"

#define MEMBER    4242u
#define OUTSIDER  4343u
#define GROUP_GID 5555u

static struct np_test_daemon t;
/* A lookup reads one byte from its gate's [0]: blocked until the test writes one. */
static int group_gate[2], name_gate[2];
static int group_rc = 1; /* what the made-up group lookup answers: a count, or -errno */
static int group_calls;  /* lookups made (read only once they answered) */

static void wait_at(const int *gate)
{
    char c;

    while (read(gate[0], &c, 1) < 0 && errno == EINTR)
        ;
}

static void let_one_through(const int *gate)
{
    ck_assert_int_eq(write(gate[1], "x", 1), 1);
}

static int slow_user_name(uid_t uid, char *buf, size_t len)
{
    wait_at(name_gate);
    snprintf(buf, len, "user%u", (unsigned)uid);
    return 0;
}

static int slow_group_members(const char *group, gid_t *gid, uid_t **members)
{
    int rc;

    wait_at(group_gate);
    __atomic_add_fetch(&group_calls, 1, __ATOMIC_SEQ_CST);
    rc = __atomic_load_n(&group_rc, __ATOMIC_SEQ_CST);

    if (strcmp(group, "hpcadm") != 0 || rc < 0)
        return rc < 0 ? rc : -ENOENT;
    *gid = GROUP_GID;
    if (!(*members = malloc(sizeof(uid_t))))
        return -ENOMEM;
    (*members)[0] = MEMBER;
    return 1;
}

static const struct user_resolver slow = {slow_user_name, slow_group_members};

static void setup(void)
{
    ck_assert_int_eq(pipe(group_gate), 0);
    ck_assert_int_eq(pipe(name_gate), 0);
    np_test_daemon_init(&t);
    user_names_set_resolver(&slow);
}

static void teardown(void)
{
    user_names_set_resolver(NULL);
    np_test_daemon_fini(&t);
    for (int i = 0; i < 2; i++) { /* a lookup still waiting gives up */
        close(group_gate[i]);
        close(name_gate[i]);
    }
}

static void answered(const char *group)
{
    while (admin_group_has(group, 0, 0, NULL, 0) == -EAGAIN) /* the lookup's thread answers */
        usleep(1000);
}

static json_t *set_class_as(uid_t uid, gid_t gid)
{
    const struct np_peer peer = np_test_peer(1, uid, gid);

    return op_set_class(t.d, &peer, 10, "high");
}

/* A name service that does not answer: set-class is answered at once, refused, and says why;
 * once it answers, the member gets in and the outsider does not. */
START_TEST(a_slow_group_lookup_never_stalls_set_class)
{
    const struct np_peer root = np_test_peer(1, 0, 0);
    json_t *reply;

    struct np_task_reg r = {.job_id = 10, .uid = MEMBER, .pid = NP_TEST_LIVE_PID};

    snprintf(r.cpus, sizeof(r.cpus), "0");
    snprintf(r.sensitivity, sizeof(r.sensitivity), "low");
    reply = op_register(t.d, &root, &r); /* its user's name is asked for: never answered here */
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
    snprintf(t.d->cfg.admin_group, sizeof(t.d->cfg.admin_group), "hpcadm");
    for (int i = 0; i < 100; i++) { /* each a request a loop would have waited on */
        reply = set_class_as(MEMBER, MEMBER);
        ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply), "still being looked up"));
        json_decref(reply);
    }
    ck_assert_int_eq(registry_find(&t.d->registry, 10, 0)->job_class, NP_CLASS_LOW);
    ck_assert_int_eq(auth_admin_rights(&root, "hpcadm"), AUTH_YES); /* root asks no one */
    let_one_through(group_gate);
    answered("hpcadm");
    ck_assert_int_eq(__atomic_load_n(&group_calls, __ATOMIC_SEQ_CST), 1); /* one lookup for all */
    reply = set_class_as(MEMBER, MEMBER);                                 /* listed in the group */
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
    reply = set_class_as(OUTSIDER, OUTSIDER);
    ck_assert_ptr_nonnull(strstr(np_test_reply_error(reply),
                                 "only root or members of admin_group hpcadm may change"));
    json_decref(reply);
    reply = set_class_as(OUTSIDER, GROUP_GID); /* a process running with the group's gid */
    ck_assert_msg(np_test_reply_ok(reply), "%s", np_test_reply_error(reply));
    json_decref(reply);
}
END_TEST

/* A lookup that fails, or a group that does not exist: no one but root. */
static const int failing_rc[] = {-EIO, -ENOENT};

START_TEST(a_failing_group_lookup_grants_nothing)
{
    const struct np_peer member = np_test_peer(1, MEMBER, GROUP_GID);

    __atomic_store_n(&group_rc, failing_rc[_i], __ATOMIC_SEQ_CST);
    let_one_through(group_gate);
    ck_assert_int_eq(auth_admin_rights(&member, "hpcadm"), AUTH_NOT_YET);
    answered("hpcadm");
    ck_assert_int_eq(auth_admin_rights(&member, "hpcadm"), AUTH_NO);
}
END_TEST

/* The answer is the configured group's: another group, or none, is not answered by it. */
START_TEST(a_new_group_is_looked_up_again)
{
    const struct np_peer member = np_test_peer(1, MEMBER, MEMBER);

    let_one_through(group_gate);
    admin_group_want("hpcadm"); /* at start (config_load) */
    answered("hpcadm");
    ck_assert_int_eq(auth_admin_rights(&member, "hpcadm"), AUTH_YES);
    ck_assert_int_eq(auth_admin_rights(&member, "other"), AUTH_NOT_YET); /* a reload */
    let_one_through(group_gate);
    answered("other");
    ck_assert_int_eq(auth_admin_rights(&member, "other"), AUTH_NO);
    ck_assert_int_eq(auth_admin_rights(&member, ""), AUTH_NO);
}
END_TEST

/* A reload looks the group up again at once, fresh answer or not (a member taken out counts from
 * the SIGHUP); the old answer serves until then. */
START_TEST(a_reload_looks_up_again)
{
    const struct np_peer member = np_test_peer(1, MEMBER, MEMBER);

    let_one_through(group_gate);
    admin_group_want("hpcadm");
    answered("hpcadm");
    ck_assert_int_eq(auth_admin_rights(&member, "hpcadm"), AUTH_YES);
    __atomic_store_n(&group_rc, -ENOENT, __ATOMIC_SEQ_CST);           /* gone from the directory */
    admin_group_want("hpcadm");                                       /* SIGHUP */
    ck_assert_int_eq(auth_admin_rights(&member, "hpcadm"), AUTH_YES); /* meanwhile */
    let_one_through(group_gate);
    while (__atomic_load_n(&group_calls, __ATOMIC_SEQ_CST) < 2 ||
           auth_admin_rights(&member, "hpcadm") == AUTH_YES)
        usleep(1000);
    ck_assert_int_eq(auth_admin_rights(&member, "hpcadm"), AUTH_NO);
}
END_TEST

/* The metrics page's names through the same mechanism: the uid's number until the name comes. */
START_TEST(a_slow_user_lookup_never_stalls_the_names)
{
    char name[64] = "";

    user_name_want(MEMBER);
    user_name_want(MEMBER); /* asked twice, looked up once */
    ck_assert(!user_name_get(MEMBER, name, sizeof(name)));
    let_one_through(name_gate);
    while (!user_name_get(MEMBER, name, sizeof(name)))
        usleep(1000);
    ck_assert_str_eq(name, "user4242");
}
END_TEST

/* A member the group does not list (sssd with ignore_group_members): its process holds the group
 * as a supplementary group, which its socket says; a process without it is no member, and before
 * the group's gid is known the answer is "ask again", whoever asks. */
static const struct {
    const char *name;
    gid_t groups[3];
    unsigned ngroups;
    enum auth_answer answer;
} supplementary_cases[] = {
    {"the group among its supplementary groups", {100, GROUP_GID, 200}, 3, AUTH_YES},
    {"the group its only supplementary group", {GROUP_GID}, 1, AUTH_YES},
    {"other supplementary groups only", {100, 200}, 2, AUTH_NO},
    {"no supplementary group", {0}, 0, AUTH_NO},
};

START_TEST(a_supplementary_group_counts)
{
    struct np_peer peer = np_test_peer(1, OUTSIDER, OUTSIDER); /* not listed, gid its own */

    peer.groups = (gid_t *)supplementary_cases[_i].groups;
    peer.ngroups = supplementary_cases[_i].ngroups;
    peer.groups_known = true;
    ck_assert_int_eq(auth_admin_rights(&peer, "hpcadm"), AUTH_NOT_YET);
    let_one_through(group_gate);
    answered("hpcadm");
    ck_assert_msg(auth_admin_rights(&peer, "hpcadm") == supplementary_cases[_i].answer, "%s",
                  supplementary_cases[_i].name);
}
END_TEST

/* The credentials come from the socket, groups too: a peer connected through a socket pair is
 * this process, with its uid, gid and supplementary groups. */
START_TEST(a_peer_is_read_from_its_socket)
{
    int sv[2], n;
    gid_t mine[256];
    struct np_peer peer;

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(auth_peer_read(sv[0], &peer), 0);
    ck_assert_int_eq(peer.pid, getpid());
    ck_assert_uint_eq(peer.uid, getuid());
    ck_assert_uint_eq(peer.gid, getgid());
    ck_assert(peer.groups_known); /* Linux 4.13 on */
    n = getgroups(256, mine);
    ck_assert_int_ge(n, 0);
    ck_assert_uint_eq(peer.ngroups, (unsigned)n);
    for (int i = 0; i < n; i++) {
        bool found = false;
        for (unsigned k = 0; k < peer.ngroups; k++)
            found = found || peer.groups[k] == mine[i];
        ck_assert_msg(found, "group %u missing", (unsigned)mine[i]);
    }
    auth_peer_release(&peer);
    ck_assert_ptr_null(peer.groups);
    auth_peer_release(NULL);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("daemon_user_names");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_slow_group_lookup_never_stalls_set_class);
    tcase_add_loop_test(tc, a_failing_group_lookup_grants_nothing, 0,
                        (int)(sizeof(failing_rc) / sizeof(failing_rc[0])));
    tcase_add_test(tc, a_new_group_is_looked_up_again);
    tcase_add_test(tc, a_reload_looks_up_again);
    tcase_add_test(tc, a_slow_user_lookup_never_stalls_the_names);
    tcase_add_loop_test(tc, a_supplementary_group_counts, 0,
                        (int)(sizeof(supplementary_cases) / sizeof(supplementary_cases[0])));
    tcase_add_test(tc, a_peer_is_read_from_its_socket);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
