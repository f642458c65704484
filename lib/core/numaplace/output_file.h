/*
 * numaplace/output_file.h - write a file a user named, as root, without writing through a link.
 *
 * The name may sit in a directory other users can write (/tmp): whatever they planted there must
 * not be written through. So the file is written as a temporary of our own next to it (O_EXCL,
 * O_NOFOLLOW), flushed, and renamed over the name; a symlink or anything but a regular file at
 * the name is refused, and one planted after that check is replaced by the rename, never followed.
 */
#ifndef NUMAPLACE_OUTPUT_FILE_H
#define NUMAPLACE_OUTPUT_FILE_H

#include <limits.h>
#include <stdbool.h>

#include "numaplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One output being written: fd is the temporary file's (the caller writes to it). */
struct np_output_file {
    int fd;
    char path[PATH_MAX];
    char tmp[PATH_MAX];
};

/**
 * Start writing @p path (mode 0644 less the umask), first removing the temporaries an earlier
 * writer of it left when killed (regular files of this user no longer locked). Refuses (-ELOOP)
 * a symlink at @p path and (-EINVAL) anything there but a regular file. @return 0, or -errno with
 * @p err naming @p path; on success the caller ends with np_output_file_commit or
 * np_output_file_abort.
 */
NP_API int np_output_file_open(struct np_output_file *o, const char *path, struct np_err *err);

/** Flush the temporary file, close it (even when the flush failed) and rename it over the name;
 *  aborts on failure. @return 0 or -errno */
NP_API int np_output_file_commit(struct np_output_file *o, struct np_err *err);

/**
 * The end of every atomic write (this file's and numaplaced's reports and registry): flush @p fd,
 * close it (whatever the flush said), rename @p tmp over @p name (both relative to @p dirfd, or
 * AT_FDCWD), and where @p durable, flush the directory so that the rename survives a crash too.
 * On failure @p tmp is removed. @return 0 or -errno
 */
NP_API int np_file_replace_at(int dirfd, int fd, const char *tmp, const char *name, bool durable);

/** Close and remove the temporary file (accepts one already ended). */
NP_API void np_output_file_abort(struct np_output_file *o);

#ifdef __cplusplus
}
#endif

#endif
