/* loop.h - numaplaced's event loop: a poll over the signalfd, the sampling timerfd, the socket
 * and its clients, the migration worker's fd, the metrics endpoint's epoll fd and the writer's
 * eventfd (writer.h: the only disk flushes are made on that thread). */
#ifndef NUMAPLACED_LOOP_H
#define NUMAPLACED_LOOP_H

#include <time.h>

struct np_daemon;

/** The first whole multiple of @p interval_ms since the epoch after @p now (CLOCK_REALTIME):
 *  when the sampling timer next fires, the same on every node whose clock agrees. */
struct timespec loop_next_deadline(struct timespec now, unsigned interval_ms);

/** Block SIGHUP/SIGTERM/SIGINT into a signalfd, ignore SIGPIPE, create the interval's timerfd.
 *  @return 0 or -errno */
int loop_open_fds(struct np_daemon *d);

/** Arm the timerfd at every cfg.interval_ms on the wall clock (loop_next_deadline), re-armed
 *  when the clock is set (TFD_TIMER_CANCEL_ON_SET). */
void loop_set_timer(struct np_daemon *d);

/** Run until SIGTERM or SIGINT (SIGHUP reloads) or poll fails. */
void loop_run(struct np_daemon *d);

#endif /* NUMAPLACED_LOOP_H */
