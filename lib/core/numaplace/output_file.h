/*
 * numaplace/output_file.h - files a user named, and text a user influenced. The one atomic writer:
 * the files root's command writes at a name a user gave, and numaplaced's reports, registry and
 * parts (daemon/safe_file.h). A temporary of our own next to the name (np_file_temp_at: O_EXCL,
 * O_NOFOLLOW), written, flushed, renamed over the name and the directory flushed
 * (np_file_replace_at): a crash leaves the old file or the new one, whole, and nothing planted at
 * either name is written through. The name may sit in a directory other users can write (/tmp): a
 * symlink or anything but a regular file at it is refused, and one planted after that check is
 * replaced by the rename, never followed.
 */
#ifndef NUMAPLACE_OUTPUT_FILE_H
#define NUMAPLACE_OUTPUT_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdio.h>

#include "numaplace/common.h"

/** One output being written: fd is the temporary file's (the caller writes to it). */
struct np_output_file {
    int fd, dirfd;
    char path[PATH_MAX];
    char name[NAME_MAX + 1], tmp[NAME_MAX + 1];
};

/**
 * Create the temporary file for @p name in @p dirfd: ".NAME.PID.tmp" (a leftover of this process
 * is removed first), or ".NAME.RANDOM.PID.tmp" when someone else's file holds that name, mode @p
 * mode, its name into @p tmp (@p size bytes). @return the fd, or -errno
 */
NP_API int np_file_temp_at(int dirfd, const char *name, mode_t mode, char *tmp, size_t size);

/** The writer's pid in @p name when it is one of np_file_temp_at's names, else -1. */
NP_API long np_file_temp_pid(const char *name);

/**
 * Start writing @p path (mode 0644 less the umask), first removing the temporaries an earlier
 * writer of it left when killed (regular files of this user whose lock, held until the rename, is
 * free). Refuses (-ELOOP) a symlink at @p path and (-EINVAL) anything there but a regular file.
 * @return 0, or -errno with @p err naming @p path; on success the caller ends with
 * np_output_file_commit or np_output_file_abort.
 */
NP_API int np_output_file_open(struct np_output_file *o, const char *path, struct np_err *err);

/** Flush the temporary file, close it (even when the flush failed) and rename it over the name;
 *  aborts on failure. @return 0 or -errno */
NP_API int np_output_file_commit(struct np_output_file *o, struct np_err *err);

/**
 * The end of every atomic write: flush @p fd, close it (whatever the flush said), rename @p tmp
 * over @p name (both in @p dirfd) and flush the directory so that the rename survives a crash
 * too. On failure @p tmp is removed. @return 0 or -errno
 */
NP_API int np_file_replace_at(int dirfd, int fd, const char *tmp, const char *name);

/** Close and remove the temporary file (accepts one already ended). */
NP_API void np_output_file_abort(struct np_output_file *o);

/* Open a file a user named, only if it is a regular file.
 *
 * A FIFO would block the reader until a writer came, and opening a device can act on it (a tape
 * rewinds, a terminal becomes the controlling one), so the type is checked before the open and
 * again on the descriptor (the name could be replaced in between). */
/**
 * Opens @p path read-only (close-on-exec) if it is a regular file.
 * @p no_follow: refuse a symlink as the last component (-ELOOP) instead of following it.
 * Returns a new descriptor (the caller closes it), or -errno with @p err naming @p path:
 * -EINVAL when it is not a regular file.
 */
NP_API int np_open_regular(const char *path, int no_follow, struct np_err *err);

/* Text a user influenced (job names, users, reasons, what a task said)
 * shown on a terminal without its control characters acting: C0 controls and DEL as \xNN, the C1
 * controls a terminal obeys too (U+0080-U+009F in UTF-8) as \uNNNN. An ESC ] ... BEL sequence
 * cannot retitle the window, ESC [ 2J cannot clear the screen, CR cannot hide a line. */
/** Print @p s on one line: every control character escaped, newline and tab included. */
NP_API void np_print_text(FILE *out, const char *s);

/**
 * A stream that writes to @p out what it is given with control characters escaped as
 * np_print_text does, except newline and tab (the printers' own layout). New: fclose it (which
 * flushes it, not @p out); NULL when out of memory. JSON passes through unchanged in meaning:
 * jansson escapes C0 itself, and \u0080-\u009f is the same string.
 */
NP_API FILE *np_safe_text_stream(FILE *out);

#endif
