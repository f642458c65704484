/*
 * accept_shed (daemon.c): at the descriptor limit a waiting connection is closed through the spare
 * descriptor, so the listener is no longer readable and the poll loop does not spin on it.
 * Each case lowers its own RLIMIT_NOFILE (check runs it in a child of its own).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"
#include "np_test.h"

/* A listener on an abstract Unix address and a client connected to it, its connection waiting. */
static void listen_and_connect(int *listener, int *client)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};

    snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "np-accept-shed-%d", (int)getpid());
    *listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(*listener, 0);
    ck_assert_int_eq(bind(*listener, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(listen(*listener, 8), 0);
    *client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(*client, 0);
    ck_assert_int_eq(connect(*client, (struct sockaddr *)&sa, sizeof(sa)), 0);
}

static bool readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};

    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

START_TEST(full_table_sheds_instead_of_spinning)
{
    int listener, client, fillers[64], nfill = 0;
    struct rlimit lim;
    char byte;

    ck_assert_int_eq(accept_shed_init(), 0);
    listen_and_connect(&listener, &client);
    ck_assert(readable(listener));
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &lim), 0);
    lim.rlim_cur = (rlim_t)fd_count_open("/proc/self/fd") + 8;
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &lim), 0);
    while (nfill < 64 && (fillers[nfill] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
        nfill++;
    ck_assert_int_lt(nfill, 64); /* the table is full */
    errno = 0;
    ck_assert_int_eq(accept_shed(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), -1);
    ck_assert_int_eq(errno, EMFILE);
    /* A plain accept4 leaves the connection waiting: the listener stays readable, and poll
     * wakes the loop at once, again and again. */
    ck_assert_msg(!readable(listener), "the waiting connection was left for the loop to spin on");
    ck_assert_int_eq(accept_shed_count(), 1);
    ck_assert_int_eq(recv(client, &byte, 1, 0), 0); /* the peer sees its connection end */
    /* Once descriptors are free again, connections are accepted as before. */
    while (nfill > 0)
        close(fillers[--nfill]);
    close(client);
    {
        struct sockaddr_un sa;
        socklen_t len = sizeof(sa);
        int fd;
        ck_assert_int_eq(getsockname(listener, (struct sockaddr *)&sa, &len), 0);
        client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_eq(connect(client, (struct sockaddr *)&sa, len), 0);
        fd = accept_shed(listener, NULL, NULL, SOCK_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        close(fd);
    }
    close(client);
    close(listener);
}
END_TEST

static Suite *accept_shed_suite(void)
{
    Suite *s = suite_create("daemon_accept_shed");
    TCase *tc = tcase_create("shed");

    tcase_add_test(tc, full_table_sheds_instead_of_spinning);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return np_test_run(accept_shed_suite());
}
