/*
 * safe_file.h - how numaplaced writes what matters (reports, the registry): into a directory it
 * verified (a real directory, owned by root or by the helper's own user, not writable by group or
 * others, opened without following a symlink), through numaplace's one atomic writer
 * (numaplace/output_file.h: a temporary of its own, flushed, renamed, the directory flushed). A
 * crash at any point leaves the old file or the new one, whole. Files are always the helper's
 * own; a report's user reads it through an ACL entry.
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

/** safe_write_at's return when the file was written but the filesystem refuses ACLs. */
#define SAFE_WRITE_NO_ACL 1

/**
 * Replace @p name in @p dirfd with @p len bytes of @p data, atomically and durably, mode
 * @p mode, owned by the helper. @p reader (-1: none) gets read access through a POSIX ACL entry
 * user:READER:r set before the rename (the file never exists without it); it never owns or may
 * write the file (root trusts what it reads back only because nobody else could write it).
 * @return 0; SAFE_WRITE_NO_ACL when the filesystem refuses ACLs (the file is written, readable by
 *         the helper only); or -errno with @p err.
 */
int safe_write_at(int dirfd, const char *name, const char *data, size_t len, uid_t reader,
                  mode_t mode, struct np_err *err);

/**
 * Remove the temporary files of safe_write_at that an earlier numaplaced left in @p dir when it
 * was killed between creating one and renaming it: ".NAME.PID.tmp" of a pid not ours (the pid
 * file's lock keeps a second helper off the same directories). Nothing is followed or read.
 * @return how many were removed, or -errno with @p err
 */
int safe_dir_sweep(const char *dir, struct np_err *err);

/** A temporary file younger than this is never swept from a shared directory. */
#define SAFE_SWEEP_SHARED_MIN_AGE_S 60

/**
 * safe_dir_sweep for a verified directory that several processes write at once (the parts
 * `numaplace store` keeps in <spool>/pending, one store per ending job): only temporary files
 * of a process that no longer runs and older than SAFE_SWEEP_SHARED_MIN_AGE_S go, so a store
 * writing at the same moment (or a new process that got a dead one's pid) keeps its own.
 * @return how many were removed, or -errno with @p err
 */
int safe_dirfd_sweep_shared(int dirfd, struct np_err *err);

/** safe_dir_open + safe_write_at + close, for a directory given by path. */
int safe_write(const char *dir, const char *name, const char *data, size_t len, uid_t reader,
               mode_t mode, struct np_err *err);

#endif /* NUMAPLACED_SAFE_FILE_H */
