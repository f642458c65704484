/*
 * clients.h - replies to numaplaced's clients, now or once what they wait for is done (a
 * migration, a step's report). Below every part that answers: server.c reads the requests.
 */
#ifndef NUMAPLACED_CLIENTS_H
#define NUMAPLACED_CLIENTS_H

#include <stdint.h>

#include <jansson.h>

#include "daemon.h"

/** Close @p c and drop what it was sent or was sending; its slot is free again. */
void client_close(struct np_daemon_client *c);

/** Send @p reply (stolen; NULL sends nothing) without blocking; what the socket does not take
 *  now goes on POLLOUT (client_write); then the client is closed. */
void client_reply(struct np_daemon_client *c, json_t *reply);

/** Send more of a client's pending reply (the loop calls it on POLLOUT); closes the client when
 *  the reply is out or the client went away. */
void client_write(struct np_daemon_client *c);

/** Answer the client waiting on @p tag with @p reply (stolen; freed when nobody waits). */
void client_answer_tag(struct np_daemon *d, uint64_t tag, json_t *reply);

#endif /* NUMAPLACED_CLIENTS_H */
