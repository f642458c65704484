/* Slurm step ids as Slurm prints them (see numaplace/step.h). */
#include "numaplace/step.h"

#include <stdio.h>

const char *np_step_name(uint32_t step_id)
{
    static _Thread_local char text[16]; /* numaplaced names steps from two threads */

    switch (step_id) {
    case NP_STEP_BATCH:
        return "batch";
    case NP_STEP_EXTERN:
        return "extern";
    case NP_STEP_INTERACTIVE:
        return "interactive";
    default:
        snprintf(text, sizeof(text), "%u", step_id);
        return text;
    }
}
