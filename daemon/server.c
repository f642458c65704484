/* numaplaced's socket: who may connect, and each request to its op (daemon.h). */
#include "daemon.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ops.h"

int server_open(struct np_daemon *d)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    char dir[1024];
    struct np_err err = {0};
    json_t *reply = NULL;
    int rc;

    np_daemon_dirname(d->cfg.socket, dir, sizeof(dir));
    if ((rc = np_daemon_mkdir_p(dir, 0755)) < 0)
        return NPD_LOG_RC(d, ERROR, rc, "cannot create %s: %s", dir, strerror(-rc));
    if (np_proto_call(d->cfg.socket, "{\"v\":1,\"op\":\"ping\"}\n", 500, &reply, &err) == 0) {
        json_decref(reply);
        return NPD_LOG_RC(d, ERROR, -EADDRINUSE,
                          "another numaplaced answers on %s; not starting a second one",
                          d->cfg.socket);
    }
    unlink(d->cfg.socket);
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", d->cfg.socket);
    d->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (d->listen_fd < 0 || bind(d->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
        chmod(d->cfg.socket, 0666) < 0 || listen(d->listen_fd, 128) < 0) {
        rc = -errno;
        return NPD_LOG_RC(d, ERROR, rc, "cannot listen on %s: %s", d->cfg.socket, strerror(errno));
    }
    return 0;
}

void server_close(struct np_daemon *d)
{
    for (int i = 0; i < NPD_MAX_CLIENTS; i++)
        if (d->clients[i].fd >= 0)
            client_close(&d->clients[i]);
    if (d->listen_fd >= 0) {
        close(d->listen_fd);
        unlink(d->cfg.socket);
        d->listen_fd = -1;
    }
}

bool server_admit(const struct np_daemon *d, uid_t uid)
{
    unsigned free_slots = 0, by_uid = 0;

    for (int i = 0; i < NPD_MAX_CLIENTS; i++)
        if (d->clients[i].fd < 0)
            free_slots++;
        else if (d->clients[i].cred.uid == uid)
            by_uid++;
    /* Root (slurmstepd) gets any free slot; others their share outside root's: none locks out */
    if (uid == 0)
        return free_slots > 0;
    return free_slots > NPD_ROOT_RESERVED && by_uid < NPD_MAX_PER_USER;
}

/* Out of descriptors: the connection was shed (accept_shed). One line per 10 s at most. */
static void log_shed(struct np_daemon *d)
{
    static double logged;
    const double now = np_monotonic_s();

    if (logged > 0 && now - logged < 10.0)
        return;
    logged = now;
    NPD_LOG(d, WARNING,
            "out of descriptors: closed %lu connection(s) it could not accept so far (the "
            "descriptor budget keeps %ld; see LimitNOFILE)",
            accept_shed_count(), d->fd_limit);
}

/* One line per 10 s at most, however many are refused: a flood cannot fill the disk. */
static void log_refusal(struct np_daemon *d, uid_t uid)
{
    const double now = np_monotonic_s();

    d->refused++;
    d->totals.connections_refused++;
    if (d->refused_logged > 0 && now - d->refused_logged < 10.0)
        return;
    NPD_LOG(d, WARNING,
            "refused %u connection(s) (the last from uid %u): %d slots, %d kept for root, at "
            "most %d per other user",
            d->refused, (unsigned)uid, NPD_MAX_CLIENTS, NPD_ROOT_RESERVED, NPD_MAX_PER_USER);
    d->refused = 0;
    d->refused_logged = now;
}

void server_accept(struct np_daemon *d)
{
    for (;;) {
        const int fd = accept_shed(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct np_peer cred;
        struct np_daemon_client *c = NULL;
        int rc;

        if (fd < 0) {
            if (errno == EMFILE)
                log_shed(d);
            return;
        }
        if ((rc = auth_peer_read(fd, &cred)) < 0) {
            NPD_LOG(d, WARNING, "SO_PEERCRED: %s; refusing the client", strerror(-rc));
            close(fd);
            continue;
        }
        for (int i = 0; i < NPD_MAX_CLIENTS && !c; i++)
            if (d->clients[i].fd < 0)
                c = &d->clients[i];
        if (!c || !server_admit(d, cred.uid)) { /* no free slot is never admitted */
            log_refusal(d, cred.uid);
            auth_peer_release(&cred);
            close(fd);
            continue;
        }
        *c = (struct np_daemon_client){.fd = fd, .cred = cred, .since = np_monotonic_s()};
    }
}

void server_read(struct np_daemon *d, struct np_daemon_client *c)
{
    char sink[256];
    /* One request per connection: more from a client waiting for its answer is dropped. */
    ssize_t n = c->pending ? recv(c->fd, sink, sizeof(sink), 0)
                           : recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
    const char *nl;
    json_t *reply;

    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        client_close(c);
        return;
    }
    if (n < 0 || c->pending)
        return;
    c->len += (size_t)n;
    nl = memchr(c->buf, '\n', c->len);
    if (!nl && c->len < sizeof(c->buf) - 1)
        return;
    if (!nl) {
        client_reply(c, np_proto_reply_error("request over %d bytes", NP_PROTO_MAX_MSG));
        return;
    }
    reply = handlers_dispatch(d, &c->cred, &c->pending, c->buf, (size_t)(nl - c->buf) + 1);
    if (reply)
        client_reply(c, reply);
    /* else: a migration, or a step_end answered once its report is on disk; no timeout */
}

void server_expire_idle(struct np_daemon *d, double now)
{
    for (int i = 0; i < NPD_MAX_CLIENTS; i++) { /* a silent client never holds a slot for long */
        struct np_daemon_client *c = &d->clients[i];
        /* Root's sockets may wait: slurmstepd connects one per task before the fork and sends
         * the task's registration after it, seconds later on a busy node. */
        const double limit = c->cred.uid == 0 ? NPD_ROOT_CLIENT_TIMEOUT_S : NPD_CLIENT_TIMEOUT_S;
        int unread = 0;

        if (c->fd < 0 || c->pending || now - c->since <= limit) /* reading, or writing stalled */
            continue;
        /* A request that arrived since the loop last looked is read, not thrown away. */
        if (ioctl(c->fd, FIONREAD, &unread) == 0 && unread > 0)
            continue;
        client_close(c);
    }
}
