/* numaplaced's Prometheus endpoint (daemon.h). */

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <microhttpd.h>

#include "daemon.h"
#include "metrics_text.h"
#include "peer.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* One open connection, with a lifetime: MHD's idle timeout alone lets a trickle hold it. */
struct http_conn {
    int fd; /* -1: a free slot */
    double started;
    bool cut;
    struct peer_holder holder;
};

/* The endpoint accepts itself (MHD has no listening socket): a peer is judged before it takes a
 * slot (peer_slot_admit). epoll_fd watches the listening socket and MHD's own. */
struct http_server {
    struct MHD_Daemon *mhd;
    int listen_fd, epoll_fd;
    double lifetime_s;
    struct http_conn conns[NPD_HTTP_MAX_CONNECTIONS];
};

static void mhd_log(void *arg, const char *fmt, va_list ap) NP_PRINTF(2, 0);
static void mhd_log(void *arg, const char *fmt, va_list ap)
{
    struct np_daemon *d = arg;
    char msg[512];
    size_t len;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    len = strlen(msg);
    while (len && msg[len - 1] == '\n')
        msg[--len] = '\0';
    NPD_LOG(d, DEBUG, "metrics: %s", msg); /* clients cause them: not worth a warning */
}

/* One line per 10 s at most, however many are refused (as the socket's refusals, server.c). */
static void log_refusal(struct np_daemon *d, const struct peer_address *a, const char *why)
{
    const double now = np_monotonic_s();
    char addr[INET6_ADDRSTRLEN] = "?";

    d->metrics_refused++;
    d->totals.scrapes_refused++;
    if (d->metrics_refused_logged > 0 && now - d->metrics_refused_logged < 10.0)
        return;
    if (a->family)
        inet_ntop(a->family, a->addr, addr, sizeof(addr));
    NPD_LOG(d, WARNING, "metrics: refused %llu scrape(s) (the last from %s: %s)",
            (unsigned long long)d->metrics_refused, addr, why);
    d->metrics_refused = 0;
    d->metrics_refused_logged = now;
}

/* Queue @p r (NULL: out of memory) of content type @p type. */
static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status, struct MHD_Response *r,
                               const char *type)
{
    enum MHD_Result rc;

    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET");
    rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *text)
{
    return respond(
        conn, status,
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT),
        "text/plain; charset=utf-8");
}

/* Who is at the other end of @p fd, and may they read the page? */
static bool identify(struct np_daemon *d, int fd, const struct sockaddr *remote_sa,
                     struct peer_holder *who)
{
    struct sockaddr_storage ss_local;
    socklen_t llen = sizeof(ss_local);
    char why[160];

    *who = (struct peer_holder){.addr = peer_address_of(remote_sa), .uid = (uid_t)-1};
    if (getsockname(fd, (struct sockaddr *)&ss_local, &llen) == 0) {
        const struct peer_address local = peer_address_of((struct sockaddr *)&ss_local);
        who->local = peer_uid(&local, &who->addr, &who->uid) == 0;
    }
    if (peer_allowed(&who->addr, who->local, who->uid, &d->cfg.metrics, why, sizeof(why)))
        return true;
    log_refusal(d, &who->addr, why);
    return false;
}

/* Every peer is looked up (identify): one on this host may come through the node's own address,
 * which a network of metrics_allow would otherwise let in. */
static bool admitted(struct np_daemon *d, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct sockaddr_storage ss = {0}; /* unknown: no IP peer, refused */
    socklen_t len = sizeof(ss);
    struct peer_holder who;

    if (ci && getpeername(ci->connect_fd, (struct sockaddr *)&ss, &len) < 0)
        ss.ss_family = AF_UNSPEC;
    return identify(d, ci ? ci->connect_fd : -1, (struct sockaddr *)&ss, &who);
}

static enum MHD_Result serve_page(struct np_daemon *d, struct MHD_Connection *conn)
{
    struct metrics_text page;
    struct MHD_Response *r;
    const double t0 = np_monotonic_s();

    if (metrics_render(d, &page) < 0)
        return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    d->metrics_render_s = np_monotonic_s() - t0;
    r = MHD_create_response_from_buffer(page.len, page.buf, MHD_RESPMEM_MUST_FREE);
    if (!r)
        free(page.buf);
    return respond(conn, MHD_HTTP_OK, r, CONTENT_TYPE);
}

static enum MHD_Result on_request(void *arg, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **state)
{
    struct np_daemon *d = arg;

    (void)version;
    (void)upload_data;
    (void)state;
    /* Answered at the first call: nothing of a body is needed (and a body is not read). */
    *upload_data_size = 0;
    if (!admitted(d, conn))
        return reply(conn, MHD_HTTP_FORBIDDEN, "forbidden: see numaplaced(8), METRICS\n");
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0)
        return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
    if (strcmp(url, "/metrics") != 0)
        return reply(conn, MHD_HTTP_NOT_FOUND, "not found: the page is /metrics\n");
    return serve_page(d, conn);
}

static void on_connection(void *arg, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct http_server *s = arg;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        *socket_context = NULL; /* its slot was taken when it was accepted (accept_peers) */
        for (int i = 0; ci && i < NPD_HTTP_MAX_CONNECTIONS; i++)
            if (s->conns[i].fd == ci->connect_fd) {
                *socket_context = &s->conns[i];
                break;
            }
    } else if (*socket_context) {
        ((struct http_conn *)*socket_context)->fd = -1;
        *socket_context = NULL;
    }
}

/* A refused peer is answered at once and closed: it never reaches MHD nor holds a slot. */
static void refuse(int fd, unsigned status, const char *text)
{
    char buf[256];
    char sink[4096];
    const int len =
        snprintf(buf, sizeof(buf),
                 "HTTP/1.1 %u %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                 status, status == MHD_HTTP_FORBIDDEN ? "Forbidden" : "Service Unavailable",
                 strlen(text), text);

    if (send(fd, buf, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        /* nothing to do: the peer is closed either way */
    }
    shutdown(fd, SHUT_WR);
    /* What it sent already, so that the close does not reset the answer away; bounded, since a
     * refused peer that keeps writing must not keep the daemon's one loop here. */
    for (int reads = 0; reads < 16 && recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; reads++) {
    }
    close(fd);
}

static unsigned held_now(const struct http_server *s, struct peer_holder *held)
{
    unsigned n = 0;

    for (int i = 0; i < NPD_HTTP_MAX_CONNECTIONS; i++)
        if (s->conns[i].fd >= 0)
            held[n++] = s->conns[i].holder;
    return n;
}

/* At most a batch a run: a flood of connections is taken in turns with the loop's other work. */
static void accept_peers(struct np_daemon *d, struct http_server *s)
{
    for (int batch = 0; batch < 4 * NPD_HTTP_MAX_CONNECTIONS; batch++) {
        struct sockaddr_storage ss = {0};
        socklen_t len = sizeof(ss);
        struct peer_holder held[NPD_HTTP_MAX_CONNECTIONS], who;
        struct http_conn *slot = NULL;
        const int fd =
            accept_shed(s->listen_fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0)
            return;
        if (!identify(d, fd, (struct sockaddr *)&ss, &who)) {
            refuse(fd, MHD_HTTP_FORBIDDEN, "forbidden: see numaplaced(8), METRICS\n");
            continue;
        }
        for (int i = 0; i < NPD_HTTP_MAX_CONNECTIONS && !slot; i++)
            if (s->conns[i].fd < 0)
                slot = &s->conns[i];
        if (!slot || !peer_slot_admit(held, held_now(s, held), NPD_HTTP_MAX_CONNECTIONS,
                                      NPD_HTTP_ROOT_RESERVED, NPD_HTTP_MAX_PER_PEER, &who)) {
            log_refusal(d, &who.addr, "its share of the connections is taken");
            refuse(fd, MHD_HTTP_SERVICE_UNAVAILABLE, "busy: too many connections of yours\n");
            continue;
        }
        *slot = (struct http_conn){fd, np_monotonic_s(), false, who};
        /* MHD closes the socket when it cannot take it; its slot is free again then */
        if (MHD_add_connection(s->mhd, fd, (struct sockaddr *)&ss, len) != MHD_YES)
            slot->fd = -1;
    }
}

/* A connection past its lifetime is shut down, not closed: MHD closes it on its next read. */
static void cut_old_connections(struct http_server *s, double now)
{
    for (int i = 0; i < NPD_HTTP_MAX_CONNECTIONS; i++)
        if (s->conns[i].fd >= 0 && !s->conns[i].cut && now - s->conns[i].started > s->lifetime_s) {
            shutdown(s->conns[i].fd, SHUT_RDWR);
            s->conns[i].cut = true;
        }
}

static int listen_on(const struct np_metrics_config *mc)
{
    struct sockaddr_storage ss = {0};
    socklen_t len;
    const int one = 1, zero = 0;
    int fd;

    if (mc->family == AF_INET6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(mc->port);
        memcpy(&in6->sin6_addr, mc->addr, 16);
        len = sizeof(*in6);
    } else {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        in->sin_family = AF_INET;
        in->sin_port = htons(mc->port);
        memcpy(&in->sin_addr, mc->addr, 4);
        len = sizeof(*in);
    }
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (mc->family == AF_INET6) /* [::] takes IPv4 peers too (as ::ffff:a.b.c.d) */
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0) {
        const int rc = -errno;
        close(fd);
        return rc;
    }
    return fd;
}

static void stop(struct http_server *s)
{
    if (!s)
        return;
    if (s->mhd)
        MHD_stop_daemon(s->mhd);
    if (s->epoll_fd >= 0)
        close(s->epoll_fd);
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    free(s);
}

static int start_on(struct np_daemon *d, const struct np_metrics_config *mc,
                    struct http_server **out)
{
    const union MHD_DaemonInfo *info;
    struct epoll_event ev = {.events = EPOLLIN};
    struct http_server *s = calloc(1, sizeof(*s));
    int rc;

    if (!s)
        return -ENOMEM;
    s->lifetime_s = NPD_HTTP_LIFETIME_S;
    s->epoll_fd = -1;
    for (int i = 0; i < NPD_HTTP_MAX_CONNECTIONS; i++)
        s->conns[i].fd = -1;
    s->listen_fd = listen_on(mc);
    if (s->listen_fd < 0) {
        rc = s->listen_fd;
        free(s);
        return rc;
    }
    errno = 0;
    s->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET, 0, NULL,
                              NULL, on_request, d, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, d,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned)NPD_HTTP_MAX_CONNECTIONS,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)NPD_HTTP_TIMEOUT_S,
                              MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
                              MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_END);
    info = s->mhd ? MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
    rc = errno ? -errno : -ENOMEM;
    if (info)
        s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (!info || s->epoll_fd < 0 || epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->listen_fd, &ev) < 0 ||
        epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, info->epoll_fd, &ev) < 0) {
        if (info)
            rc = -errno;
        stop(s);
        return rc;
    }
    *out = s;
    return 0;
}

int http_start(struct np_daemon *d)
{
    const struct np_metrics_config *mc = &d->cfg.metrics;
    int rc;

    if (!mc->listen[0] || d->http)
        return 0;
    rc = start_on(d, mc, &d->http);
    if (rc < 0)
        return NPD_LOG_RC(d, ERROR, rc, "metrics: cannot listen on %s: %s; metrics off", mc->listen,
                          strerror(-rc));
    NPD_LOG(d, INFO,
            "metrics: serving http://%s/metrics to root and %u user(s) of metrics_users on this "
            "host, and to %u network(s) of metrics_allow",
            mc->listen, mc->nuids, mc->nnets);
    return 0;
}

void http_stop(struct np_daemon *d)
{
    stop(d->http);
    d->http = NULL;
}

void http_reload(struct np_daemon *d, const struct np_metrics_config *old)
{
    struct http_server *next = NULL;
    int rc;

    if (!d->cfg.metrics.listen[0]) {
        if (d->http)
            NPD_LOG(d, INFO, "metrics: off");
        http_stop(d);
        return;
    }
    if (!d->http) {
        http_start(d); /* newly on, or its address could not be bound before: try again */
        return;
    }
    if (strcmp(old->listen, d->cfg.metrics.listen) == 0)
        return;
    /* Bind the new address first; the same port on an overlapping address (127.0.0.1 to
     * 0.0.0.0) is the old endpoint's: then it goes first, and comes back if the new one fails. */
    rc = start_on(d, &d->cfg.metrics, &next);
    if (rc == -EADDRINUSE && old->port == d->cfg.metrics.port) {
        http_stop(d);
        rc = start_on(d, &d->cfg.metrics, &next);
        if (rc < 0 && start_on(d, old, &d->http) < 0) {
            NPD_LOG(d, ERROR, "metrics: cannot listen on %s: %s, nor again on %s; metrics off",
                    d->cfg.metrics.listen, strerror(-rc), old->listen);
            d->cfg.metrics.listen[0] = '\0';
            return;
        }
    }
    if (rc < 0) {
        NPD_LOG(d, ERROR, "metrics: cannot listen on %s: %s; still serving %s",
                d->cfg.metrics.listen, strerror(-rc), old->listen);
        memcpy(d->cfg.metrics.listen, old->listen, sizeof(old->listen));
        d->cfg.metrics.family = old->family;
        memcpy(d->cfg.metrics.addr, old->addr, sizeof(old->addr));
        d->cfg.metrics.port = old->port;
        return;
    }
    http_stop(d);
    d->http = next;
    NPD_LOG(d, INFO, "metrics: now serving http://%s/metrics", d->cfg.metrics.listen);
}

int http_fd(const struct np_daemon *d)
{
    return d->http ? d->http->epoll_fd : -1;
}

int http_timeout_ms(const struct np_daemon *d, int max_ms)
{
    const double now = np_monotonic_s();
    MHD_UNSIGNED_LONG_LONG ms;
    int wait = max_ms;

    if (!d->http)
        return max_ms;
    if (MHD_get_timeout(d->http->mhd, &ms) == MHD_YES && ms < (unsigned)wait)
        wait = (int)ms;
    for (int i = 0; i < NPD_HTTP_MAX_CONNECTIONS; i++) {
        const struct http_conn *c = &d->http->conns[i];
        if (c->fd >= 0 && !c->cut) {
            const double left = c->started + d->http->lifetime_s - now;
            const int left_ms = left <= 0 ? 0 : (int)(left * 1000.0) + 1;
            if (left_ms < wait)
                wait = left_ms;
        }
    }
    return wait;
}

void http_run(struct np_daemon *d)
{
    if (!d->http)
        return;
    accept_peers(d, d->http);
    MHD_run(d->http->mhd);
    cut_old_connections(d->http, np_monotonic_s());
}

void http_set_lifetime(struct np_daemon *d, double seconds)
{
    if (d->http)
        d->http->lifetime_s = seconds;
}
