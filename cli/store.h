/*
 * store.h - how `numaplace store` gets a node's part of a job summary into the job's one
 * AdminComment when every node of the job does the same at the same time, and retries the
 * parts that could not be stored (store_pending.h).
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

#include <stdbool.h>
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
    bool merged; /**< the part is the single merger's (store_parts.h): no node-count limit */
};

/** What one store cost, for the log and bench/RESULTS.md. */
struct store_costs {
    int reads, writes;
    double read_s, merge_s, write_s; /**< summed over the reads, merges, writes */
    double record_wait_s, total_s;   /**< waiting for the record; the whole store */
    long stored_bytes;
    bool deposited; /**< a large job's part left for its merger (store_parts.h), not stored */
};

/**
 * Merge @p part (borrowed: this node's part of job @p job_id) into the job's stored summary and
 * confirm it as above. Never writes over another tool's AdminComment (-EEXIST) nor over a
 * summary it could not read (sacct failing: -EIO).
 * A job on more than NUMAPLACE_STORE_MAX_NODES nodes (default STORE_MAX_NODES) is the single
 * merger's: the part is left in the parts directory (store_parts_deposit; @p costs->deposited)
 * when the site has one, and is -EFBIG when not.
 * @return 0; -EIO (slurmdbd unreachable); -ETIMEDOUT; -EEXIST; -E2BIG; -ENOENT (slurmdbd has no
 *         such job); -EFBIG; each with @p err
 */
int store_commit(uint32_t job_id, const json_t *part, const struct store_limits *limits,
                 struct store_costs *costs, const struct np_log *log, struct np_err *err);

/**
 * slurmdbd's full record of job @p job_id, waited for up to @p max_s (slurmctld sends it after
 * the epilogs). @return 0; -EIO (sacct failed 3 times); -ENOENT (not in time); with @p err
 */
int store_wait_for_record(uint32_t job_id, double max_s, struct np_err *err);

/** NUMAPLACE_STORE_MAX_NODES, else STORE_MAX_NODES. */
long store_max_nodes(void);

/**
 * `numaplace store --merge JOBID` (EpilogSlurmctld): once every node of the large job @p job_id
 * left its part in @p parts_dir (or STORE_EPILOG_PARTS_S passed), merge them and store the summary
 * with one write (store_commit), then remove the parts; a job on at most store_max_nodes() nodes
 * is left to its nodes. With @p job_id 0, every job waiting in @p parts_dir, each once.
 * @return 0, or -errno with @p err (the parts stay for the next pass)
 */
int store_merge(const char *parts_dir, uint32_t job_id, const struct store_limits *limits,
                const struct np_log *log, struct np_err *err);

/** One line of @p costs for the log ("2 writes, 5 reads; read 0.12 s ..."). */
void store_costs_format(const struct store_costs *costs, char *buf, size_t len);

/**
 * Store the parts waiting in <@p spool>/pending but job @p except (0: none), oldest first, at
 * most @p max_jobs of them (0: all), each only while @p until (store_now_s's clock; 0: no end)
 * leaves it STORE_PENDING_MIN_S, and each bounded to end by then;
 * stopping at the first that finds slurmdbd unreachable. A part stored is removed; one that can
 * never be stored (another tool's AdminComment, too large, a corrupt file) or waited longer than
 * STORE_PENDING_MAX_AGE_S is dropped and logged.
 * @return the number of parts still waiting
 */
int store_pending_pass(const char *spool, uint32_t except, int max_jobs, double until,
                       const struct np_log *log);

/** Waiting parts an epilog's store takes on after its own job (the timer takes all). */
#define STORE_PENDING_PER_EPILOG 8
/** A waiting part is tried only with this much time left before the pass's end. */
#define STORE_PENDING_MIN_S 15.0

/** The epilog's store runs in the epilog's time (etc/numaplace-epilog): its own part waits at most
 *  STORE_EPILOG_RECORD_S for the job's record and STORE_EPILOG_WRITE_S for the writes and their
 *  confirmation, and the whole store, earlier jobs' parts included, ends by STORE_EPILOG_S. */
#define STORE_EPILOG_RECORD_S 30.0
#define STORE_EPILOG_WRITE_S  60.0
#define STORE_EPILOG_S        120.0
/** EpilogSlurmctld's merge (store --merge JOBID) also ends by STORE_EPILOG_S: the record as the
 *  node's, the nodes' parts until STORE_EPILOG_PARTS_S after its start (each node leaves its
 *  part once it too sees the record), then STORE_EPILOG_WRITE_S for the write. */
#define STORE_EPILOG_PARTS_S (STORE_EPILOG_S - STORE_EPILOG_WRITE_S)

/** After this a part no longer waits (logged when dropped). */
#define STORE_PENDING_MAX_AGE_S (7L * 24 * 3600)

#endif /* NUMAPLACE_STORE_H */
