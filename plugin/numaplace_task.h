/*
 * The contract between numaplace.so, which srun, sbatch, salloc and slurmstepd load, and
 * numaplace_task.so, its step side, which slurmstepd alone loads from the same directory: the
 * step side needs hwloc, libnuma and jansson, whose loading costs about a quarter of a
 * millisecond (their constructors run), and the submit side needs none of them. The plugin owns
 * the step's settings; the task module borrows them for every call.
 */
#ifndef NUMAPLACE_PLUGIN_TASK_H
#define NUMAPLACE_PLUGIN_TASK_H

#include <stdbool.h>

#include <slurm/spank.h>

#include "numaplace/siteconf.h"

/* Bumped whenever this file changes: a module from another build is refused, not misread. */
#define NUMAPLACE_TASK_ABI        3
#define NUMAPLACE_TASK_MODULE     "numaplace_task.so"
#define NUMAPLACE_TASK_OPS_SYMBOL "numaplace_task_ops"

/* What the user asked for and what the site allows, as the plugin parsed them. */
struct numaplace_step_settings {
    const struct np_site_config *site;
    const struct np_policy_request *request; /* meaningful when request_given */
    bool request_given;
    enum np_sensitivity sensitivity; /* meaningful when sensitivity_given */
    bool sensitivity_given;
};

/* Each entry mirrors the SPANK callback of the same name in the remote context and returns what
 * that callback returns (0, or -1 / ESPANK_ERROR to fail, only where the site asked for it). */
struct numaplace_task_ops {
    unsigned abi; /* NUMAPLACE_TASK_ABI */
    /* In slurmstepd as root, before the job's credentials are taken (user_init runs under the
     * job's euid, which numaplaced refuses for root-only ops such as advise). */
    int (*init_post_opt)(spank_t sp, const struct numaplace_step_settings *settings);
    int (*user_init)(spank_t sp, const struct numaplace_step_settings *settings);
    int (*task_post_fork)(spank_t sp, const struct numaplace_step_settings *settings);
    int (*task_init)(spank_t sp, const struct numaplace_step_settings *settings);
    void (*exit)(spank_t sp, const struct numaplace_step_settings *settings);
};

#endif
