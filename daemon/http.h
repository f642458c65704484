/*
 * http.h - numaplaced's Prometheus endpoint: GET /metrics over libmicrohttpd, run without a
 * thread of its own. Its epoll fd sits in the daemon's poll loop (loop.c), which calls
 * http_run() when it is readable and at least every http_timeout_ms(), so the page is rendered
 * from the daemon's state in the loop's thread (no locks, no copies) and nothing waits on a
 * client: sockets are non-blocking, connections are bounded in number and in time. Peers are
 * judged when accepted, before they send a byte (peer.h): one that may not read the page is
 * answered 403 and closed, one that may holds at most its share of the slots, and root on this
 * host always finds one free.
 */
#ifndef NUMAPLACED_HTTP_H
#define NUMAPLACED_HTTP_H

struct np_daemon;
struct np_metrics_config;

#define NPD_HTTP_MAX_CONNECTIONS 16 /* scrapers at once; more are answered 503 */
#define NPD_HTTP_ROOT_RESERVED   4  /* of them, only root on this host may take */
#define NPD_HTTP_MAX_PER_PEER    4  /* one user on this host, or one other host, at most */
#define NPD_HTTP_TIMEOUT_S       5  /* a connection idle this long is closed */
#define NPD_HTTP_LIFETIME_S      10 /* and any connection this old (a slow client included) */

/** Start serving d->cfg.metrics (nothing when metrics_listen is empty). Says where it listens.
 *  @return 0 or -errno (logged; metrics stay off) */
int http_start(struct np_daemon *d);

/** Stop serving (accepts a daemon that serves nothing). */
void http_stop(struct np_daemon *d);

/** At a reload: restart on a new metrics_listen (the old one stays when the new one cannot be
 *  bound, and d->cfg.metrics.listen says so), start when it is not serving (newly on, or it
 *  could not bind before). Users and networks apply at the next request. */
void http_reload(struct np_daemon *d, const struct np_metrics_config *old);

/** The fd to poll for input, or -1. */
int http_fd(const struct np_daemon *d);

/** How long the loop may wait before calling http_run, at most @p max_ms. */
int http_timeout_ms(const struct np_daemon *d, int max_ms);

/** Do whatever the endpoint can without waiting (accept, read, answer, time out). */
void http_run(struct np_daemon *d);

/** Change the connections' lifetime (NPD_HTTP_LIFETIME_S; the suites shorten it). */
void http_set_lifetime(struct np_daemon *d, double seconds);

#endif /* NUMAPLACED_HTTP_H */
