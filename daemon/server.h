/*
 * server.h - numaplaced's socket: the listening socket, its clients (who they are from
 * SO_PEERCRED, how long they may take) and their requests; the replies are clients.h's.
 */
#ifndef NUMAPLACED_SERVER_H
#define NUMAPLACED_SERVER_H

#include <stdint.h>

#include <jansson.h>

#include "clients.h"
#include "daemon.h"

/** Listen on cfg.socket (mode 0666: who may do what is decided per request). A live numaplaced
 *  already answering there wins; a stale socket file is replaced. @return 0 or -errno (logged) */
int server_open(struct np_daemon *d);

/** Close every client and the socket, and remove the socket file. */
void server_close(struct np_daemon *d);

/** Take every waiting connection (up to NPD_MAX_CLIENTS at once). */
void server_accept(struct np_daemon *d);

/** May a client of @p uid have a slot now? Root: any free one; others: not the NPD_ROOT_RESERVED
 *  slots kept for root, and at most NPD_MAX_PER_USER at once. */
bool server_admit(const struct np_daemon *d, uid_t uid);

/** Read what @p c sent; a whole line is handled and answered (a migration later). */
void server_read(struct np_daemon *d, struct np_daemon_client *c);

/** Close idle clients: those silent for NPD_CLIENT_TIMEOUT_S and not waiting on a migration. */
void server_expire_idle(struct np_daemon *d, double now);

#endif /* NUMAPLACED_SERVER_H */
