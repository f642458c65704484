/* Policy and mode names (see numaplace/placement.h). Kept apart from the placement code so the
 * plugin's submit side (srun, sbatch, salloc) links them without hwloc or libnuma. */
#include "numaplace/placement.h"

#include <errno.h>
#include <string.h>

static const struct {
    const char *name;
    const char *help;
} policies[NP_POLICY_COUNT] = {
    [NP_POLICY_NONE] = {"none", "leave the kernel default and Slurm's --mem-bind alone"},
    [NP_POLICY_LOCAL] = {"local", "prefer the NUMA node(s) of the task's CPUs; fall back to "
                                  "other nodes when they are full"},
    [NP_POLICY_LOCAL_STRICT] = {"local-strict",
                                "bind memory to the node(s) of the task's CPUs; never remote"},
    [NP_POLICY_INTERLEAVE] = {"interleave",
                              "interleave pages over the nodes of the step's CPUs on this host"},
    [NP_POLICY_INTERLEAVE_ALL] = {"interleave-all",
                                  "interleave pages over every memory node the job may use"},
};

const char *np_policy_name(enum np_policy policy)
{
    return (unsigned)policy < NP_POLICY_COUNT ? policies[policy].name : "unknown";
}

const char *np_policy_help(enum np_policy policy)
{
    return (unsigned)policy < NP_POLICY_COUNT ? policies[policy].help : "";
}

const char *np_policy_names(void)
{
    return "none, local, local-strict, interleave, interleave-all";
}

int np_policy_from_name(const char *text, enum np_policy *out, struct np_err *err)
{
    for (unsigned p = 0; text && p < NP_POLICY_COUNT; p++)
        if (strcmp(text, policies[p].name) == 0) {
            *out = (enum np_policy)p;
            return 0;
        }
    return np_err_set(err, -EINVAL, "invalid NUMA policy '%s': accepted values are %s",
                      text ? text : "(null)", np_policy_names());
}

const char *np_mode_name(enum np_mode mode)
{
    switch (mode) {
    case NP_MODE_DEFAULT:
        return "default";
    case NP_MODE_PREFERRED:
        return "preferred";
    case NP_MODE_PREFERRED_MANY:
        return "preferred-many";
    case NP_MODE_BIND:
        return "bind";
    case NP_MODE_INTERLEAVE:
        return "interleave";
    }
    return "unknown";
}
