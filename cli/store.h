/*
 * store.h - how `numaplace store` gets a node's part of a job summary into the job's one
 * AdminComment when every node of the job does the same at the same time (issue 12 #2), and
 * retries the parts that could not be stored (store_pending.h, issue 12 #1).
 *
 * slurmdbd offers no compare-and-swap on AdminComment: a read-merge-write based on a read made
 * before another node's write drops that node's part. So each node writes optimistically and
 * then confirms: it reads the stored summary at least SETTLE seconds after its write and again
 * SETTLE seconds later, and its part is confirmed when both reads show it and are identical. Every
 * writer re-reads instead of writing when its read is SETTLE/2 old, so a write lands at most
 * SETTLE after the read it is based on (a slower one is logged). Then no write after the
 * second read can be based on a read older than the first one, and every state since holds the
 * part: nothing later drops it. A part missing at either read is merged and written again, with
 * a jittered back-off. docs/accounting.md has the argument, the costs and the limits.
 */
#ifndef NUMAPLACE_STORE_H
#define NUMAPLACE_STORE_H

#include <stdint.h>

#include <jansson.h>

#include "numaplace/common.h"

/** Seconds a write may take from its read to slurmdbd; NUMAPLACE_STORE_SETTLE_S overrides. */
#define STORE_SETTLE_S 3.0

/** Jobs on more nodes store no summary (docs/accounting.md); NUMAPLACE_STORE_MAX_NODES overrides.
 */
#define STORE_MAX_NODES 128

/** How long one store may take. */
struct store_limits {
    double record_wait_s; /**< for slurmctld's record of the job to reach slurmdbd */
    double total_s;       /**< for the writes and their confirmation after that */
};

/** What one store cost, for the log and bench/RESULTS.md. */
struct store_costs {
    int reads, writes;
    double read_s, merge_s, write_s; /**< summed over the reads, merges, writes */
    double record_wait_s, total_s;   /**< waiting for the record; the whole store */
    long stored_bytes;
};

/**
 * Merge @p part (borrowed: this node's part of job @p job_id) into the job's stored summary and
 * confirm it as above. Never writes over another tool's AdminComment (-EEXIST) nor over a
 * summary it could not read (sacct failing: -EIO).
 * @return 0; -EIO (slurmdbd unreachable); -ETIMEDOUT; -EEXIST; -E2BIG; -ENOENT (slurmdbd has no
 *         such job); -EFBIG (the job has more than STORE_MAX_NODES nodes); each with @p err
 */
int store_commit(uint32_t job_id, const json_t *part, const struct store_limits *limits,
                 struct store_costs *costs, const struct np_log *log, struct np_err *err);

/** One line of @p costs for the log ("2 writes, 5 reads; read 0.12 s ..."). */
void store_costs_format(const struct store_costs *costs, char *buf, size_t len);

/**
 * Store the parts waiting in <@p spool>/pending but job @p except (0: none), oldest first, at
 * most @p max_jobs of them (0: all),
 * stopping at the first that finds slurmdbd unreachable. A part stored is removed; one that can
 * never be stored (another tool's AdminComment, too large, a corrupt file) or waited longer than
 * STORE_PENDING_MAX_AGE_S is dropped and logged.
 * @return the number of parts still waiting
 */
int store_pending_pass(const char *spool, uint32_t except, int max_jobs, const struct np_log *log);

/** Waiting parts an epilog's store takes on after its own job (the timer takes all). */
#define STORE_PENDING_PER_EPILOG 8

/** After this a part no longer waits (logged when dropped). */
#define STORE_PENDING_MAX_AGE_S (7L * 24 * 3600)

#endif /* NUMAPLACE_STORE_H */
