/* numaplaced's socket and clients (see server.h). */
#include "server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "handlers.h"
#include "migration.h"

int server_open(struct np_daemon *d)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    char dir[1024];
    struct np_err err = {0};
    json_t *reply = NULL;
    int rc;

    np_daemon_dirname(d->cfg.socket, dir, sizeof(dir));
    if ((rc = np_daemon_mkdir_p(dir, 0755)) < 0) {
        NPD_LOG(d, ERROR, "cannot create %s: %s", dir, strerror(-rc));
        return rc;
    }
    if (np_proto_call(d->cfg.socket, "{\"v\":1,\"op\":\"ping\"}\n", 500, &reply, &err) == 0) {
        json_decref(reply);
        NPD_LOG(d, ERROR, "another numaplaced answers on %s; not starting a second one",
                d->cfg.socket);
        return -EADDRINUSE;
    }
    unlink(d->cfg.socket);
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", d->cfg.socket);
    d->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (d->listen_fd < 0 || bind(d->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
        chmod(d->cfg.socket, 0666) < 0 || listen(d->listen_fd, 128) < 0) {
        rc = -errno;
        NPD_LOG(d, ERROR, "cannot listen on %s: %s", d->cfg.socket, strerror(errno));
        return rc;
    }
    return 0;
}

static void close_client(struct np_daemon_client *c)
{
    close(c->fd);
    c->fd = -1;
    c->len = 0;
    c->pending = 0;
    free(c->out);
    c->out = NULL;
    c->out_len = c->out_off = 0;
}

void server_close(struct np_daemon *d)
{
    for (int i = 0; i < NPD_MAX_CLIENTS; i++)
        if (d->clients[i].fd >= 0)
            close_client(&d->clients[i]);
    if (d->listen_fd >= 0) {
        close(d->listen_fd);
        unlink(d->cfg.socket);
        d->listen_fd = -1;
    }
}

void server_write(struct np_daemon_client *c)
{
    /* Never blocks: what the socket does not take now goes when the loop sees POLLOUT, so a
     * large reply arrives whole and a client that does not read holds up no one. */
    while (c->out_off < c->out_len) {
        const ssize_t n =
            send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n <= 0)
            break; /* the client went away */
        c->out_off += (size_t)n;
        c->since = np_monotonic_s();
    }
    close_client(c);
}

void server_reply(struct np_daemon_client *c, json_t *reply)
{
    char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;

    json_decref(reply);
    if (!text) {
        close_client(c);
        return;
    }
    c->out_len = strlen(text);
    text[c->out_len++] = '\n'; /* the terminator becomes the line's end */
    c->out = text;
    c->out_off = 0;
    c->since = np_monotonic_s();
    server_write(c);
}

void server_accept(struct np_daemon *d)
{
    for (;;) {
        int fd = accept4(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        socklen_t len = sizeof(struct ucred);
        struct np_daemon_client *c = NULL;

        if (fd < 0)
            return;
        for (int i = 0; i < NPD_MAX_CLIENTS && !c; i++)
            if (d->clients[i].fd < 0)
                c = &d->clients[i];
        if (!c) {
            NPD_LOG(d, WARNING, "more than %d clients at once; refusing one", NPD_MAX_CLIENTS);
            close(fd);
            continue;
        }
        c->fd = fd;
        c->len = 0;
        c->pending = 0;
        c->out = NULL;
        c->out_len = c->out_off = 0;
        c->since = np_monotonic_s();
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) < 0) {
            NPD_LOG(d, WARNING, "SO_PEERCRED: %s; refusing the client", strerror(errno));
            close_client(c);
        }
    }
}

void server_read(struct np_daemon *d, struct np_daemon_client *c)
{
    ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
    const char *nl;
    json_t *reply;

    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        close_client(c);
        return;
    }
    if (n < 0)
        return;
    c->len += (size_t)n;
    nl = memchr(c->buf, '\n', c->len);
    if (!nl && c->len < sizeof(c->buf) - 1)
        return;
    if (!nl) {
        server_reply(c, np_proto_reply_error("request over %d bytes", NP_PROTO_MAX_MSG));
        return;
    }
    reply = handlers_dispatch(d, &c->cred, &c->pending, c->buf, (size_t)(nl - c->buf) + 1);
    if (reply)
        server_reply(c, reply);
    /* else: a migration the worker will answer; the client waits, with no timeout */
}

void server_expire_idle(struct np_daemon *d, double now)
{
    for (int i = 0; i < NPD_MAX_CLIENTS; i++) /* a silent client never holds a slot for long */
        if (d->clients[i].fd >= 0 && !d->clients[i].pending &&
            now - d->clients[i].since > NPD_CLIENT_TIMEOUT_S) /* reading, or writing stalled */
            close_client(&d->clients[i]);
}

void server_answer_pending(struct np_daemon *d, uint64_t tag, const struct migrator_done *done)
{
    for (int i = 0; i < NPD_MAX_CLIENTS; i++)
        if (d->clients[i].fd >= 0 && d->clients[i].pending == tag) {
            d->clients[i].pending = 0;
            server_reply(&d->clients[i], migration_result_json(done));
        }
}
