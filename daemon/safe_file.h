/*
 * safe_file.h - how numaplaced writes what matters (reports, the registry): into a verified
 * directory (a real one, root's or the helper's, not writable by group or others, opened without
 * following a symlink), through numaplace's one atomic writer (numaplace/output_file.h), so a
 * crash leaves the old file or the new one, whole. Files are the helper's; a report's user reads
 * it through an ACL entry.
 */
#ifndef NUMAPLACED_SAFE_FILE_H
#define NUMAPLACED_SAFE_FILE_H

#include <stddef.h>
#include <sys/types.h>

#include "numaplace/common.h"

/** Open @p path as a trusted directory. @return an O_DIRECTORY fd, or -errno with @p err (-EPERM:
 *  group- or world-writable, or another user's) */
int safe_dir_open(const char *path, struct np_err *err);

/** safe_write_at's return when the file was written but the filesystem refuses ACLs. */
#define SAFE_WRITE_NO_ACL 1

/** Replace @p name in @p dirfd with @p len bytes of @p data, atomically and durably, mode @p mode,
 *  the helper's. @p reader (-1: none) reads it through an ACL entry user:READER:r set before the
 *  rename; it never owns or may write it (root trusts what it reads back only because nobody else
 *  could write it). @return 0; SAFE_WRITE_NO_ACL when the filesystem refuses ACLs (written,
 *  readable by the helper only); or -errno with @p err */
int safe_write_at(int dirfd, const char *name, const char *data, size_t len, uid_t reader,
                  mode_t mode, struct np_err *err);

/** Remove the temporaries (".NAME.PID.tmp", a pid not ours) an earlier numaplaced killed between
 *  creating and renaming one left in @p dir; the pid file's lock keeps a second helper off it.
 *  Nothing is followed or read. @return how many were removed, or -errno with @p err */
int safe_dir_sweep(const char *dir, struct np_err *err);

/** A temporary file younger than this is never swept from a shared directory. */
#define SAFE_SWEEP_SHARED_MIN_AGE_S 60

/** safe_dir_sweep for a verified directory several processes write at once (<spool>/pending, one
 *  `numaplace store` per ending job): only temporaries of a process gone and older than
 *  SAFE_SWEEP_SHARED_MIN_AGE_S, so a store writing now (or one with a dead one's pid) keeps its
 *  own. @return how many were removed, or -errno with @p err */
int safe_dirfd_sweep_shared(int dirfd, struct np_err *err);

/** safe_dir_open + safe_write_at + close, for a directory given by path. */
int safe_write(const char *dir, const char *name, const char *data, size_t len, uid_t reader,
               mode_t mode, struct np_err *err);

#endif /* NUMAPLACED_SAFE_FILE_H */
