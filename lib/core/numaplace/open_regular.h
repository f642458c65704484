/*
 * numaplace/open_regular.h - open a file a user named, only if it is a regular file.
 *
 * A FIFO would block the reader until a writer came, and opening a device can act on it (a tape
 * rewinds, a terminal becomes the controlling one), so the type is checked before the open and
 * again on the descriptor (the name could be replaced in between).
 */
#ifndef NUMAPLACE_OPEN_REGULAR_H
#define NUMAPLACE_OPEN_REGULAR_H

#include "numaplace/common.h"

/**
 * Opens @p path read-only (close-on-exec) if it is a regular file.
 * @p no_follow: refuse a symlink as the last component (-ELOOP) instead of following it.
 * Returns a new descriptor (the caller closes it), or -errno with @p err naming @p path:
 * -EINVAL when it is not a regular file.
 */
NP_API int np_open_regular(const char *path, int no_follow, struct np_err *err);

#endif
