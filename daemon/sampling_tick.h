/* sampling_tick.h - each interval's work: above sampling (one step's sample), the step's life
 * (ending those whose processes are gone) and the migration triggers it runs. */
#ifndef NUMAPLACED_SAMPLING_TICK_H
#define NUMAPLACED_SAMPLING_TICK_H

#include "daemon.h"

/** The interval's work: sample every step, end those whose processes are gone, then run the
 *  migration triggers. */
void sampling_tick(struct np_daemon *d);

#endif /* NUMAPLACED_SAMPLING_TICK_H */
