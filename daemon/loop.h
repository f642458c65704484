/* loop.h - numaplaced's one thread: a poll loop over the signalfd, the sampling timerfd, the
 * socket and its clients, the migration worker's fd and the metrics endpoint's epoll fd. */
#ifndef NUMAPLACED_LOOP_H
#define NUMAPLACED_LOOP_H

struct np_daemon;

/** Block SIGHUP/SIGTERM/SIGINT into a signalfd, ignore SIGPIPE, create the interval's timerfd.
 *  @return 0 or -errno */
int loop_open_fds(struct np_daemon *d);

/** Arm the timerfd at cfg.interval_ms. */
void loop_set_timer(struct np_daemon *d);

/** Run until SIGTERM or SIGINT (SIGHUP reloads) or poll fails. */
void loop_run(struct np_daemon *d);

#endif /* NUMAPLACED_LOOP_H */
