/*
 * store_pending.h - this node's parts of job summaries that are not in Slurm accounting yet
 * (`numaplace store`). Before a node writes its part to the job's AdminComment it
 * saves it as <spool>/pending/JOBID.json; the file goes only once the part is stored and read
 * back. Whatever stops the store (slurmdbd down, a reboot, too many concurrent writers) leaves
 * the file, and the next `numaplace store` on the node (any job's epilog) or
 * `numaplace store --pending` (a timer) stores it. The directory is root's, mode 0700; files
 * are written atomically (daemon/safe_file.c), at most STORE_PENDING_MAX_FILES of them, each at
 * most STORE_PENDING_MAX_BYTES. One process at a time works on a job's file (flock).
 */
#ifndef NUMAPLACE_STORE_PENDING_H
#define NUMAPLACE_STORE_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "numaplace/common.h"

#define STORE_PENDING_DIR "pending"
/** Past it the oldest job's part is dropped (and said so): at one job's part per node. */
#define STORE_PENDING_MAX_FILES 512
/** A node's part of one job; larger ones are not kept (they would not fit AdminComment). */
#define STORE_PENDING_MAX_BYTES (8u << 20)

/**
 * Open (with @p create, make) <@p spool>/pending: a directory of root's that group and others
 * cannot write (mode 0700 when made). @return its fd, or -errno with @p err
 */
int store_pending_open(const char *spool, bool create, struct np_err *err);

/**
 * Save @p part (borrowed: a summary of this node's reports of job @p job_id) as JOBID.json,
 * replacing an older one; drops the oldest jobs' files past STORE_PENDING_MAX_FILES, each
 * named in @p log. @return 0, or -errno with @p err
 */
int store_pending_save(int dirfd, uint32_t job_id, const json_t *part, const struct np_log *log,
                       struct np_err *err);

/**
 * Take job @p job_id's file for this process (flock, not waiting).
 * @return an fd to pass to store_pending_load and store_pending_release; -EBUSY when another
 *         process has it, -ENOENT when there is none (or it was just stored), with @p err
 */
int store_pending_take(int dirfd, uint32_t job_id, struct np_err *err);

/**
 * Save @p part (borrowed: this node's newest part of job @p job_id) and take its file, as a store
 * of the job does before it writes to slurmdbd. The part is saved even while another process
 * holds an older file of the job (`store --pending`, an earlier store): that one keeps its old
 * file and stores it; the newer part is never dropped for it (the merge keeps the newer part).
 * @return the taken fd; -EBUSY when another process took the new file first (it stores it);
 *         another -errno (the part could not be saved) with @p err
 */
int store_pending_hold(int dirfd, uint32_t job_id, const json_t *part, const struct np_log *log,
                       struct np_err *err);

/** The part in a taken file (@p part new). @return 0, or -errno with @p err (-EBADMSG: corrupt) */
int store_pending_load(int fd, json_t **part, struct np_err *err);

/**
 * Let go of a taken file; with @p stored, remove it first (durably) so no other process takes
 * it again, unless the name holds a newer file by then (saved by another store of the job).
 */
void store_pending_release(int dirfd, uint32_t job_id, int fd, bool stored);

/**
 * Remove the temporary files that a store killed mid-write left (safe_dirfd_sweep_shared: other
 * stores may be writing now), each pass of `store --pending` and of an epilog's store; the count
 * goes to @p log. @return how many, or -errno
 */
int store_pending_sweep(int dirfd, const struct np_log *log);

/**
 * The jobs with a file in the directory, oldest job id first, at most @p max in @p jobs.
 * @return how many, or -errno with @p err
 */
int store_pending_list(int dirfd, uint32_t *jobs, size_t max, struct np_err *err);

#endif /* NUMAPLACE_STORE_PENDING_H */
