/* Placement policy and mode names (see numaplace/policy.h): one table each, libc only, so the
 * plugin's submit side (srun, sbatch, salloc) links them without hwloc or libnuma. */
#include "numaplace/policy.h"

#include "numaplace/names.h"

static const char *const policy_names[NP_POLICY_COUNT] = {
    [NP_POLICY_NONE] = "none",
    [NP_POLICY_LOCAL] = "local",
    [NP_POLICY_LOCAL_STRICT] = "local-strict",
    [NP_POLICY_INTERLEAVE] = "interleave",
    [NP_POLICY_INTERLEAVE_ALL] = "interleave-all",
    [NP_POLICY_AUTO] = "auto",
};

static const char *const policy_help[NP_POLICY_COUNT] = {
    [NP_POLICY_NONE] = "leave the kernel default and Slurm's --mem-bind alone",
    /* One sentence, split to fit the line: the parentheses say the concatenation is meant. */
    [NP_POLICY_LOCAL] = ("prefer the NUMA node(s) of the task's CPUs; fall back to other nodes "
                         "when they are full"),
    [NP_POLICY_LOCAL_STRICT] = "bind memory to the node(s) of the task's CPUs; never remote",
    [NP_POLICY_INTERLEAVE] = "interleave pages over the nodes of the step's CPUs on this host",
    [NP_POLICY_INTERLEAVE_ALL] = "interleave pages over every memory node the job may use",
    [NP_POLICY_AUTO] = ("choose one of the above per task from its sensitivity, its CPUs' nodes "
                        "and the nodes' memory traffic"),
};

static const struct np_name_table policies = {"NUMA policy", policy_names, NP_POLICY_COUNT, NULL};

static const char *const mode_names[] = {
    [NP_MODE_DEFAULT] = "default",
    [NP_MODE_PREFERRED] = "preferred",
    [NP_MODE_PREFERRED_MANY] = "preferred-many",
    [NP_MODE_BIND] = "bind",
    [NP_MODE_INTERLEAVE] = "interleave",
};

static const struct np_name_table modes = {"memory policy mode", mode_names,
                                           sizeof(mode_names) / sizeof(mode_names[0]), NULL};

const char *np_policy_name(enum np_policy policy)
{
    return np_name_of(&policies, (unsigned)policy);
}

const char *np_policy_help(enum np_policy policy)
{
    return (unsigned)policy < NP_POLICY_COUNT ? policy_help[policy] : "";
}

const char *np_policy_names(void)
{
    return np_name_list_static(&policies, ", ");
}

const char *np_policy_names_separated(const char *separator)
{
    return np_name_list_static(&policies, separator);
}

int np_policy_from_name(const char *text, enum np_policy *out, struct np_err *err)
{
    unsigned v;
    const int rc = np_name_parse(&policies, text, &v, err);

    if (rc == 0)
        *out = (enum np_policy)v;
    return rc;
}

const char *np_mode_name(enum np_mode mode)
{
    return np_name_of(&modes, (unsigned)mode);
}

int np_mode_from_name(const char *text, enum np_mode *out, struct np_err *err)
{
    unsigned v;
    const int rc = np_name_parse(&modes, text, &v, err);

    if (rc == 0)
        *out = (enum np_mode)v;
    return rc;
}

const char *np_mode_names(void)
{
    return np_name_list_static(&modes, ", ");
}
