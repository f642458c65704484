/*
 * report_hold.h - reports the spool would not take (full, read-only, removed, unsafe): held in
 * memory, in the order the steps ended, and written once it takes them. A held step stays in the
 * registry, finishing (status lists it "ending", so `numaplace store` and `report` wait for it),
 * with its report in registry.json and the journal: a restart writes it (or holds it again). The
 * retries go to the writer's thread, the oldest first, one at a time: each one written sends the
 * next, and one refused waits for the next interval. The first refusal is logged once, a reminder
 * at most every NPD_HOLD_REMIND_S; a report that cannot be held (the hold is full) is logged as
 * lost with its job, and so is one still held at stop that registry.json could not keep.
 */
#ifndef NUMAPLACED_REPORT_HOLD_H
#define NUMAPLACED_REPORT_HOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon.h"

/**
 * Hold the report @p name (@p len bytes of @p text, stolen: freed here whatever happens) of step
 * @p j (borrowed: it stays in the registry until the report is written); @p why is the write's
 * error. @return true: held (j->report_held set); false: lost (logged), the step may be forgotten
 */
bool report_hold_add(struct np_daemon *d, struct np_daemon_job *j, const char *name, char *text,
                     size_t len, const char *why);

/** Try the oldest held report again: on the writer's thread when there is one (nothing done on
 *  the loop but queueing it), else here, oldest first, stopping at the first refused. Each
 *  interval; nothing held, or a retry already with the writer, costs nothing. */
void report_hold_retry(struct np_daemon *d);

/** At stop, once the writer has stopped and registry.json is saved: every report still held is
 *  logged, as kept in registry.json for the next start, or as lost when that save failed. */
void report_hold_flush(struct np_daemon *d);

/** Free what is held without a word (np_daemon_fini). */
void report_hold_fini(struct np_daemon *d);

#endif /* NUMAPLACED_REPORT_HOLD_H */
