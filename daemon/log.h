/* log.h - numaplaced's log sink: the library never logs, it hands messages to this. */
#ifndef NUMAPLACED_LOG_H
#define NUMAPLACED_LOG_H

#include "numaplace/common.h"

struct np_daemon;

/** The np_log_fn of the daemon; @p arg is its struct np_daemon. Safe from the worker thread. */
/** @p msg with control characters written as \\xNN, into @p out (cut, never overflowed). */
void log_escape(const char *msg, char *out, size_t size);

void log_sink(enum np_log_level level, const char *msg, void *arg);

/** (Re)open the destination cfg.log names: "syslog", "stderr" or a file. @return 0 or -errno */
int log_open(struct np_daemon *d);

/** Close a log file (syslog and stderr need nothing). */
void log_close(struct np_daemon *d);

#endif /* NUMAPLACED_LOG_H */
