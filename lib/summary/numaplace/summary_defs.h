/*
 * numaplace/summary_defs.h - the summary's schema name, the bound of its stored form and the
 * advice thresholds: what numaplace/summary.h's users and the summary_*.c files share, in a
 * header below both (summary.c's json_t functions call those files, never the other way).
 */
#ifndef NUMAPLACE_SUMMARY_DEFS_H
#define NUMAPLACE_SUMMARY_DEFS_H

#define NP_SUMMARY_SCHEMA "numaplace.summary/1"

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

/** Width of the local-memory bar in np_summary_print: `[##########----------]`. */
#define NP_SUMMARY_BAR_WIDTH 20

#endif /* NUMAPLACE_SUMMARY_DEFS_H */
