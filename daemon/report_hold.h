/*
 * report_hold.h - reports the spool would not take (full, read-only, removed, unsafe): held in
 * memory, in the order the steps ended, and written on a later interval once it takes them. The
 * first refusal is logged once, a reminder at most every NPD_HOLD_REMIND_S; a report that cannot
 * be held (the hold is full) or is still held when numaplaced stops is logged as lost with its
 * job. A kill -9 loses what is held, silently (numaplaced(8)).
 */
#ifndef NUMAPLACED_REPORT_HOLD_H
#define NUMAPLACED_REPORT_HOLD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon.h"

/**
 * Hold the report @p name (@p len bytes of @p text, stolen: freed here whatever happens) of job
 * @p job_id step @p step_id, to be written owned by @p owner; @p why is the write's error.
 */
void report_hold_add(struct np_daemon *d, const char *name, char *text, size_t len, uid_t owner,
                     uint32_t job_id, uint32_t step_id, const char *why);

/** Write the held reports, oldest first, stopping at the first the spool refuses. Each
 *  interval; nothing to do costs nothing. */
void report_hold_retry(struct np_daemon *d);

/** At stop: one last try, then every report still held is logged as lost, and freed. */
void report_hold_flush(struct np_daemon *d);

/** Free what is held without a word (np_daemon_fini). */
void report_hold_fini(struct np_daemon *d);

#endif /* NUMAPLACED_REPORT_HOLD_H */
