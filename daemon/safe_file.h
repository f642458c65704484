/*
 * safe_file.h - how numaplaced writes what matters (reports, the registry): into a directory it
 * verified (a real directory, owned by root or by the helper's own user, not writable by group or
 * others, opened without following a symlink), through a temporary file of its own (O_EXCL,
 * O_NOFOLLOW: a planted symlink is never followed), flushed to disk, then renamed over the old
 * file and the directory flushed too. A crash at any point leaves the old file or the new one,
 * whole.
 */
#ifndef NUMAPLACED_SAFE_FILE_H
#define NUMAPLACED_SAFE_FILE_H

#include <stddef.h>
#include <sys/types.h>

#include "numaplace/common.h"

/**
 * Open @p path as a trusted directory. @return an O_DIRECTORY fd, or -errno with @p err saying
 * why (-EPERM: group- or world-writable, or owned by another user).
 */
int safe_dir_open(const char *path, struct np_err *err);

/**
 * Replace @p name in @p dirfd with @p len bytes of @p data, atomically and durably, mode
 * @p mode, owned by @p owner (-1: the helper). @return 0 or -errno with @p err.
 */
int safe_write_at(int dirfd, const char *name, const char *data, size_t len, uid_t owner,
                  mode_t mode, struct np_err *err);

/**
 * Remove the temporary files of safe_write_at that an earlier numaplaced left in @p dir when it
 * was killed between creating one and renaming it: ".NAME.PID.tmp" of a pid not ours (the pid
 * file's lock keeps a second helper off the same directories). Nothing is followed or read.
 * @return how many were removed, or -errno with @p err
 */
int safe_dir_sweep(const char *dir, struct np_err *err);

/** safe_dir_open + safe_write_at + close, for a directory given by path. */
int safe_write(const char *dir, const char *name, const char *data, size_t len, uid_t owner,
               mode_t mode, struct np_err *err);

#endif /* NUMAPLACED_SAFE_FILE_H */
