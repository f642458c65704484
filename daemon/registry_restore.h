/* registry_restore.h - the steps back after a restart. Above the registry and the step's life:
 * it creates the steps that still run and finishes those that ended meanwhile. */
#ifndef NUMAPLACED_REGISTRY_RESTORE_H
#define NUMAPLACED_REGISTRY_RESTORE_H

#include "daemon.h"

/**
 * Read <state_dir>/registry.json back, with the journal's lines since it was written: steps whose
 * processes still run are tracked again; those that ended while the helper was down get an
 * incomplete report. A file that cannot be read or is not numaplace.state/1 is logged and the
 * registry starts empty; a malformed entry is logged and skipped.
 */
void registry_restore(struct np_daemon *d);

#endif /* NUMAPLACED_REGISTRY_RESTORE_H */
