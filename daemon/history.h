/*
 * history.h - what --numa-policy=auto learnt of each (user, job name) on this node: how many of
 * its runs ended labelled (or predicted) high and low (docs/auto.md). Kept in memory
 * (NPD_HISTORY_MAX entries, the one used longest ago replaced) and in <state_dir>/history.json,
 * so a restart keeps it: written whole after every change through safe_file (a temporary file,
 * fsync, rename: a kill -9 at any point leaves the old file or the new one), read back once at
 * start with json_unpack, and only from a regular file of the helper's own that no one else may
 * write, of at most NPD_HISTORY_FILE_MAX bytes.
 */
#ifndef NUMAPLACED_HISTORY_H
#define NUMAPLACED_HISTORY_H

#include <stdbool.h>

#include "daemon.h"

/** The file's schema and name under state_dir. */
#define NPD_HISTORY_SCHEMA "numaplace-history/1"
#define NPD_HISTORY_FILE   "history.json"
/** The most history.json may hold: NPD_HISTORY_MAX entries with the longest names, and room. */
#define NPD_HISTORY_FILE_MAX 131072 /* 128 KiB */

/** The entry for (@p uid, @p name), or -1. */
int history_find(const struct np_advice_state *a, uid_t uid, const char *name);

/** Count one run of (@p uid, @p name) that ended @p high or low, and save the file. */
void history_note(struct np_daemon *d, uid_t uid, const char *name, bool high);

/** Write history.json now (on the writer's thread when there is one). */
void history_save(struct np_daemon *d);

/** At start: read history.json back, or start empty saying why (missing: silently).
 *  @return the entries restored, or -errno (the file refused or unreadable; logged) */
int history_restore(struct np_daemon *d);

#endif /* NUMAPLACED_HISTORY_H */
