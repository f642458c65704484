/*
 * numaplace/summary_defs.h - the summary's schema name, the bound of its stored form and the
 * advice thresholds: what numaplace/summary.h's users and the summary_*.c files share, in a
 * header below both.
 */
#ifndef NUMAPLACE_SUMMARY_DEFS_H
#define NUMAPLACE_SUMMARY_DEFS_H

#include <stddef.h>

#define NP_SUMMARY_SCHEMA "numaplace.summary/1"

/** @p n node names (borrowed) as one hostlist for a reader: a new string, or NULL to print them
 *  in the library's own form. The command passes Slurm's (libslurm's hostlist), which the library
 *  does not link. */
typedef char *(*np_hostlist_fn)(const char *const *names, size_t n);

/**
 * The longest stored summary (the "NPS1:..." string, in bytes) to put in a job's AdminComment.
 * slurmdbd keeps admin_comment in a MySQL TEXT column, which holds at most 65,535 bytes; longer
 * comments are cut or refused. 60,000 leaves about 5.5 kB for another tool's note next to ours
 * and for the quoting of `sacctmgr`/`scontrol` around the value. Pass it to np_summary_fit.
 */
#define NP_SUMMARY_STORED_MAX 60000

/* Advice thresholds (docs/summary-schema.md explains each). */
#define NP_ADVICE_REMOTE_SHARE          0.50 /**< remote-memory: local share below this on a node */
#define NP_ADVICE_LOCAL_GOOD_SHARE      0.90 /**< local-is-good: local policy and share >= this */
#define NP_ADVICE_HIGH_LOCAL_SHARE      0.90 /**< high-but-remote: class high and share below */
#define NP_ADVICE_BANDWIDTH_BYTES_PER_S 2e9  /**< interleave-may-help: mean bandwidth >= this */
#define NP_ADVICE_SPREAD_SHARE          0.10 /**< ... and >= 2 NUMA nodes each hold >= this share */
#define NP_ADVICE_KERNEL_SHARE          0.10 /**< os-noise: kernel share of CPU time >= this, */
#define NP_ADVICE_INVOLUNTARY_CS_PER_S  100.0  /**< or involuntary context switches/s >= this, */
#define NP_ADVICE_INTERRUPTS_PER_S      1000.0 /**< or interrupts/s on the job's CPUs >= this */
#define NP_ADVICE_SENSITIVITY_MIN_S     30.0 /**< predicted-*: steps that ran at least this long */

/** Most nodes a fold names: a hostlist of a few bytes must not expand to gigabytes when checked
 * (Slurm's largest clusters are a few tens of thousands of nodes). */
#define NP_FOLD_MAX_NODES 65536

/** The worst nodes (lowest local share) a fold keeps whole in `nodes`: the advice names up to 4. */
#define NP_FOLD_KEEP_WORST 8

/** Width of the local-memory bar in np_summary_print: `[##########----------]`. */
#define NP_SUMMARY_BAR_WIDTH 20

#endif /* NUMAPLACE_SUMMARY_DEFS_H */
