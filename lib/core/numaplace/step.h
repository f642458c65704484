/*
 * numaplace/step.h - Slurm's job step ids as Slurm prints them. Shared by every layer that names
 * a step in a message or a file (the mover's log lines, reports, spool file names).
 */
#ifndef NUMAPLACE_STEP_H
#define NUMAPLACE_STEP_H

#include <stdint.h>

#include "numaplace/common.h"

/* Slurm's special step ids (slurm.h's SLURM_BATCH_SCRIPT and friends), without slurm.h. */
#define NP_STEP_BATCH       0xfffffffbu
#define NP_STEP_EXTERN      0xfffffffcu
#define NP_STEP_INTERACTIVE 0xfffffffau

/** "batch", "extern", "interactive" or the number. Borrowed: a per-thread buffer, valid until
 *  the same thread calls this again. */
NP_API const char *np_step_name(uint32_t step_id);

#endif /* NUMAPLACE_STEP_H */
