/*
 * store.h - how `numaplace store` gets a node's part of a job summary into the job's one
 * AdminComment while every node of the job does the same, and keeps the parts not stored yet.
 *
 * slurmdbd has no compare-and-swap: a read-merge-write on a read older than another node's write
 * drops that node's part. So each node writes, then reads the summary SETTLE seconds later and
 * again SETTLE after that: its part is confirmed when both reads show it and are identical. A
 * writer whose read is SETTLE/2 old reads again instead, so a write lands within SETTLE of its
 * read and nothing after the second read can drop the part. A part missing at either read is
 * written again after a jittered back-off. docs/accounting.md has the argument and the limits.
 */
#ifndef NUMAPLACE_STORE_H
#define NUMAPLACE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "numaplace/common.h"

/** Seconds a write may take from its read to slurmdbd; NUMAPLACE_STORE_SETTLE_S overrides. */
#define STORE_SETTLE_S 3.0

/** Jobs on more nodes are the single merger's (below); NUMAPLACE_STORE_MAX_NODES overrides. */
#define STORE_MAX_NODES 128

/** How long one store may take. */
struct store_limits {
    double record_wait_s; /**< for slurmctld's record of the job to reach slurmdbd */
    double total_s;       /**< for the writes and their confirmation after that */
    bool merged;          /**< the single merger's part (store_parts_*): no node-count limit */
};

/** What one store cost, for the log and bench/RESULTS.md. */
struct store_costs {
    int reads, writes;
    double read_s, merge_s, write_s; /**< summed over the reads, merges, writes */
    double record_wait_s, total_s;   /**< waiting for the record; the whole store */
    long stored_bytes;
    bool deposited; /**< a large job's part left for its merger (store_parts_*), not stored */
};

/** Waiting parts an epilog's store takes on after its own job (the timer takes all). */
#define STORE_PENDING_PER_EPILOG 8
/** A waiting part is tried only with this much time left before the pass's end. */
#define STORE_PENDING_MIN_S 15.0

/** The epilog's store waits STORE_EPILOG_RECORD_S at most for the job's record,
 *  STORE_EPILOG_WRITE_S for its writes, and ends by STORE_EPILOG_S, earlier parts too. */
#define STORE_EPILOG_RECORD_S 30.0
#define STORE_EPILOG_WRITE_S  60.0
#define STORE_EPILOG_S        120.0
/** EpilogSlurmctld's merge (store --merge JOBID) also ends by STORE_EPILOG_S: it waits for the
 *  nodes' parts until STORE_EPILOG_PARTS_S after its start, then STORE_EPILOG_WRITE_S to write. */
#define STORE_EPILOG_PARTS_S (STORE_EPILOG_S - STORE_EPILOG_WRITE_S)

/** After this a part no longer waits (logged when dropped). */
#define STORE_PENDING_MAX_AGE_S (7L * 24 * 3600)

/*
 * This node's parts not in accounting yet: saved as <spool>/pending/JOBID.json before the write,
 * removed once stored and confirmed. What stops a store (slurmdbd down, a reboot) leaves the file
 * for the node's next `numaplace store` or `store --pending` (a timer). The directory is root's,
 * 0700; files are written atomically, one process at a time on each (flock).
 */
#define STORE_PENDING_DIR "pending"
/** Past it the oldest job's part is dropped (and said so): at one job's part per node. */
#define STORE_PENDING_MAX_FILES 512
/** A node's part of one job; larger ones are not kept (they would not fit AdminComment). */
#define STORE_PENDING_MAX_BYTES (8u << 20)

/** Open (with @p create, make: mode 0700) <@p spool>/pending, a directory of root's that group
 *  and others cannot write. @return its fd, or -errno with @p err */
int store_pending_open(const char *spool, bool create, struct np_err *err);

/** Save @p part (borrowed: this node's part of job @p job_id) as JOBID.json, replacing an older
 *  one; drops the oldest jobs' files past STORE_PENDING_MAX_FILES, each named in @p log.
 *  @return 0, or -errno with @p err */
int store_pending_save(int dirfd, uint32_t job_id, const json_t *part, const struct np_log *log,
                       struct np_err *err);

/** Take job @p job_id's file (flock, not waiting). @return an fd for store_pending_load and
 *  store_pending_release; -EBUSY (another process has it), -ENOENT (none, or just stored), with
 *  @p err */
int store_pending_take(int dirfd, uint32_t job_id, struct np_err *err);

/**
 * Save @p part (borrowed: this node's newest part of job @p job_id) and take its file, before the
 * write to slurmdbd. A process holding an older file of the job keeps it; the newer part is saved
 * beside it, never dropped. @return the taken fd; -EBUSY when another process took the new file
 * first (it stores it); another -errno (not saved) with @p err
 */
int store_pending_hold(int dirfd, uint32_t job_id, const json_t *part, const struct np_log *log,
                       struct np_err *err);

/** The part in a taken file (@p part new). @return 0, or -errno with @p err (-EBADMSG: corrupt) */
int store_pending_load(int fd, json_t **part, struct np_err *err);

/** Let go of a taken file; with @p stored, remove it first (durably), unless the name holds a
 *  newer file by then (saved by another store of the job). */
void store_pending_release(int dirfd, uint32_t job_id, int fd, bool stored);

/** Remove the temporary files a store killed mid-write left (safe_dirfd_sweep_shared: other
 *  stores may be writing now), counted in @p log. @return how many, or -errno */
int store_pending_sweep(int dirfd, const struct np_log *log);

/** The pending files' jobs, oldest first, at most @p max. @return how many, -errno with @p err */
int store_pending_list(int dirfd, uint32_t *jobs, size_t max, struct np_err *err);

/*
 * The single merger for large jobs (docs/accounting.md). Past NUMAPLACE_STORE_MAX_NODES nodes each
 * node's epilog leaves its part in the site's shared parts directory (NUMAPLACE_PARTS_DIR) as
 * <dir>/JOBID/NODE.json, and one `store --merge JOBID` (EpilogSlurmctld) merges and writes once.
 * The parts stay until the summary is confirmed, for `store --merge --pending` after a failure
 * (which also merges a part that came late). The directory must be root's, not writable by group
 * or others; a part is read only when root (or the merger's user) wrote it, at most
 * STORE_PENDING_MAX_BYTES, of this job and naming only its file's node.
 */
/** The site's parts directory (NUMAPLACE_PARTS_DIR), NULL when the single merger is off. */
const char *store_parts_dir(void);

/** Leave @p part (borrowed: one node's part of job @p job_id, its only node the part's key) in
 *  <@p dir>/JOBID/NODE.json, atomically, replacing an older part of the node.
 *  @return 0, or -errno with @p err */
int store_parts_deposit(const char *dir, uint32_t job_id, const json_t *part, struct np_err *err);

/** What one merge found. */
struct store_parts_found {
    int parts;    /**< merged */
    int rejected; /**< files left out (logged): not root's, corrupt, another job, user or node */
};

/** A merged part file, removed once stored (unless a newer file took its name meanwhile). */
struct store_part_file {
    ino_t ino;
    char *name;
};

/** A job's parts taken for a merge: the directory, locked, and the files merged. */
struct store_parts_job {
    int dirfd;                     /**< <dir>/JOBID, flock'ed */
    struct store_part_file *files; /**< the merged files */
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

/** Let go of a job's parts; with @p stored remove the merged files (a newer file under a name
 *  stays) and the job's directory when nothing else came meanwhile. */
void store_parts_release(const char *dir, uint32_t job_id, struct store_parts_job *job,
                         bool stored);

/** How many part files job @p job_id has in @p dir (0 when none yet), or -errno. */
int store_parts_count(const char *dir, uint32_t job_id);

/** @p dir's job directories' jobs, as store_pending_list. */
int store_parts_list(const char *dir, uint32_t *jobs, size_t max, struct np_err *err);

/* store_commit.c: one part stored against concurrent writers, and what it cost. */
/*
 * Merge @p part (borrowed: this node's part of job @p job_id) into the job's stored summary and
 * confirm it (see above), never over another tool's AdminComment (-EEXIST) nor over a summary it
 * could not read (-EIO). A job on more than store_max_nodes() nodes is the single merger's: the
 * part is left in the parts directory (@p costs->deposited), or -EFBIG when the site has none.
 * @return 0; -EIO (slurmdbd unreachable); -ETIMEDOUT; -EEXIST; -E2BIG; -ENOENT (no such job in
 *         slurmdbd); -EFBIG; each with @p err
 */
int store_commit(uint32_t job_id, const json_t *part, const struct store_limits *limits,
                 struct store_costs *costs, const struct np_log *log, struct np_err *err);
/** One line of @p costs for the log ("2 writes, 5 reads; read 0.12 s ..."). */
void store_costs_format(const struct store_costs *costs, char *buf, size_t len);
/* slurmdbd's full record of job @p job_id, the only one a modify reaches, waited for up to @p max_s
 * (it comes after the epilogs). @return 0; -EIO: sacct failed SACCT_TRIES times (slurmdbd down:
 * the part stays pending); -ENOENT: not in time; with @p err */
int store_wait_for_record(uint32_t job_id, double max_s, struct np_err *err);
/* Compared with the full record's node count (slurmctld's shrinks as nodes end their epilogs). */
long store_max_nodes(void);
/* A count above 0 from the environment ("4"), else @p fallback. */
long store_env_count(const char *name, long fallback);

#endif /* NUMAPLACE_STORE_H */
