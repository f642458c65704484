/* accept_shed.h - accept(2) that never spins at the descriptor limit. A listener whose
 * connection cannot be accepted for want of a descriptor (EMFILE, ENFILE) stays readable, so a
 * poll loop would wake at once, forever, while the connection waits. A spare descriptor, kept
 * open for this, is closed to take the connection, which is closed at once (the peer sees its
 * connection end and may retry), and opened again. One spare for the process: the loop's thread
 * alone accepts. */
#ifndef NUMAPLACED_ACCEPT_SHED_H
#define NUMAPLACED_ACCEPT_SHED_H

#include <sys/socket.h>

/** Open the spare (numaplaced's start, while descriptors are free). 0 or -errno. */
int accept_shed_init(void);

/** accept4 of @p listen_fd (@p addr, @p len, @p flags as accept4's). At the descriptor limit the
 *  waiting connection is shed through the spare: -1 with errno EMFILE, and the listener is no
 *  longer readable for it. Other failures: -1 with accept4's errno. */
int accept_shed(int listen_fd, struct sockaddr *addr, socklen_t *len, int flags);

/** Connections shed since start (for the log). */
unsigned long accept_shed_count(void);

#endif /* NUMAPLACED_ACCEPT_SHED_H */
