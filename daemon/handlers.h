/*
 * handlers.h - from a request line to its op (ops.h, one function per protocol op).
 */
#ifndef NUMAPLACED_HANDLERS_H
#define NUMAPLACED_HANDLERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <jansson.h>

#include "daemon.h"
#include "ops.h"

/**
 * Decode one request line and run its op. @p pending is the client's tag: a migrate request that
 * was queued, or a step_end whose report is with the writer, sets it and returns NULL (the reply
 * comes later, client_answer_tag).
 */
json_t *handlers_dispatch(struct np_daemon *d, const struct np_peer *peer, uint64_t *pending,
                          const char *buf, size_t len);

#endif /* NUMAPLACED_HANDLERS_H */
