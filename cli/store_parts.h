/*
 * store_parts.h - the single merger for large jobs (docs/accounting.md). Past
 * NUMAPLACE_STORE_MAX_NODES nodes a job's nodes no longer read, merge and write its one
 * AdminComment each: every node's epilog leaves its part in the site's parts directory
 * (NUMAPLACE_PARTS_DIR, shared by the nodes and the controller host) as <dir>/JOBID/NODE.json,
 * and one `numaplace store --merge JOBID` (EpilogSlurmctld, on the controller host) merges the
 * parts once and writes once. The parts stay until the merged summary is confirmed in
 * accounting: a merge that fails (slurmdbd down) or is killed leaves them for
 * `numaplace store --merge --pending`, and a part that comes after the merge is merged by that
 * pass into what is stored.
 *
 * Trust: the directory must be root's and not writable by group or others (daemon/safe_file.c);
 * a part is read only when root wrote it (a regular file of root's, or of the merger's own user,
 * not writable by group or others), at most STORE_PENDING_MAX_BYTES, of this job and naming only
 * the node its file names.
 */
#ifndef NUMAPLACE_STORE_PARTS_H
#define NUMAPLACE_STORE_PARTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "numaplace/common.h"

/** The site's parts directory (NUMAPLACE_PARTS_DIR), NULL when the single merger is off. */
const char *store_parts_dir(void);

/**
 * Leave @p part (borrowed: one node's part of job @p job_id, its only node the part's key) in
 * <@p dir>/JOBID/NODE.json, atomically, replacing an older part of the node.
 * @return 0, or -errno with @p err
 */
int store_parts_deposit(const char *dir, uint32_t job_id, const json_t *part, struct np_err *err);

/** What one merge found. */
struct store_parts_found {
    int parts;    /**< merged */
    int rejected; /**< files left out (logged): not root's, corrupt, another job, user or node */
};

/** A job's parts taken for a merge: the directory, locked, and the files merged. */
struct store_parts_job {
    int dirfd;    /**< <dir>/JOBID, flock'ed */
    ino_t *inos;  /**< the merged files, removed once stored */
    char **names; /**< their names */
    size_t n;
};

/**
 * Take job @p job_id's parts (flock on its directory, not waiting) and merge every one into a
 * new summary (@p merged; its uid must be @p uid). Logs each file left out.
 * @return 0; -ENOENT (no part); -EBUSY (another merge has the job); -errno, with @p err
 */
int store_parts_merge(const char *dir, uint32_t job_id, uid_t uid, struct store_parts_job *job,
                      json_t **merged, struct store_parts_found *found, const struct np_log *log,
                      struct np_err *err);

/**
 * Let go of a job's parts; with @p stored remove the merged files (a newer file under a name
 * stays) and the job's directory when nothing else came meanwhile.
 */
void store_parts_release(const char *dir, uint32_t job_id, struct store_parts_job *job,
                         bool stored);

/** How many part files job @p job_id has in @p dir (0 when none yet), or -errno. */
int store_parts_count(const char *dir, uint32_t job_id);

/**
 * The jobs with a directory in @p dir, oldest job id first, at most @p max.
 * @return how many, or -errno with @p err
 */
int store_parts_list(const char *dir, uint32_t *jobs, size_t max, struct np_err *err);

#endif /* NUMAPLACE_STORE_PARTS_H */
