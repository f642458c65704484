/* safe_file.h - reports and the registry written into a verified directory (root's or the
 * helper's, no one else's to write, no symlink), atomically: a crash leaves the old or the new. */
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

/** Replace @p name in @p dirfd with @p len bytes of @p data, atomically and durably, mode @p mode;
 *  @p reader (-1: none) may read it (an ACL entry set before the rename), never write it.
 *  @return 0, SAFE_WRITE_NO_ACL (written, the helper's alone), or -errno with @p err */
int safe_write_at(int dirfd, const char *name, const char *data, size_t len, uid_t reader,
                  mode_t mode, struct np_err *err);

/** Remove the temporaries a killed numaplaced left in @p dir. @return how many, or -errno */
int safe_dir_sweep(const char *dir, struct np_err *err);

/** A temporary file younger than this is never swept from a shared directory. */
#define SAFE_SWEEP_SHARED_MIN_AGE_S 60

/** safe_dir_sweep for a directory several processes write (<spool>/pending): only temporaries of
 *  a process gone, older than SAFE_SWEEP_SHARED_MIN_AGE_S. @return how many, or -errno */
int safe_dirfd_sweep_shared(int dirfd, struct np_err *err);

/** safe_dir_open + safe_write_at + close, for a directory given by path. */
int safe_write(const char *dir, const char *name, const char *data, size_t len, uid_t reader,
               mode_t mode, struct np_err *err);

#endif /* NUMAPLACED_SAFE_FILE_H */
