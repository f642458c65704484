/*
 * history.h - what --numa-policy=auto learnt of each (user, job name) on this node: how many of
 * its runs ended labelled (or predicted) high and low (docs/auto.md). Kept in memory
 * (NPD_HISTORY_MAX entries shared among the users: a user past their share replaces their own
 * entry used longest ago, else one of the user holding the most) and in <state_dir>/history.json,
 * so a restart keeps it: written whole after every change through safe_file (a temporary file,
 * fsync, rename: a kill -9 at any point leaves the old file or the new one), read back once at
 * start with json_unpack, and only from a regular file of numaplaced's own that no one else may
 * write, of at most NPD_HISTORY_FILE_MAX bytes.
 */
#ifndef NUMAPLACED_HISTORY_H
#define NUMAPLACED_HISTORY_H

#include "daemon.h"

/** The file's schema and name under state_dir. */
#define NPD_HISTORY_SCHEMA "numaplace-history/1"
#define NPD_HISTORY_FILE   "history.json"
/*
 * The longest history.json: NPD_HISTORY_MAX entries of the longest figures and names, a name's
 * every byte escaped. Names are printable (np_proto_printable: advise refuses others, a restore
 * drops them), so the worst escape is two bytes (\" or \\; UTF-8 is written as it is). An entry
 * {"uid":U,"name":"N","high":H,"low":L,"last":S}, and its comma: 42 bytes of keys and
 * punctuation, uid, high and low of at most 10 digits, last of at most 20 (a json_int_t). Around
 * them {"schema":"numaplace-history/1","seq":S,"entries":[]}: 52 bytes and seq's 20.
 */
#define NPD_HISTORY_NAME_MAX  127 /* bytes, as advise's "name" */
#define NPD_HISTORY_ENTRY_MAX (42 + 3 * 10 + 20 + 2 * NPD_HISTORY_NAME_MAX)
#define NPD_HISTORY_FILE_MAX  (52 + 20 + NPD_HISTORY_MAX * NPD_HISTORY_ENTRY_MAX) /* 88,648 */
/** What the reader accepts: numaplaced never writes more than NPD_HISTORY_FILE_MAX (a longer
 *  text is not written, and says why), and a file of an older numaplaced within it still reads. */
#define NPD_HISTORY_READ_MAX 131072 /* 128 KiB */
_Static_assert(NPD_HISTORY_FILE_MAX <= NPD_HISTORY_READ_MAX, "the reader refuses what is written");

/** The entry for (@p uid, @p name), or -1. */
int history_find(const struct np_hint_state *a, uid_t uid, const char *name);

/** Count one run of (@p uid, @p name) that ended @p high or low, and save the file. A name that
 *  is empty, too long or not printable is not kept. */
void history_note(struct np_daemon *d, uid_t uid, const char *name, bool high);

/** Write history.json now (on the writer's thread when there is one). */
void history_save(struct np_daemon *d);

/** At start: read history.json back, or start empty saying why (missing: silently).
 *  @return the entries restored, or -errno (the file refused or unreadable; logged) */
int history_restore(struct np_daemon *d);

#endif /* NUMAPLACED_HISTORY_H */
