/*
 * numaplace/policy.h - the placement policies a user or site names, and the kernel modes they
 * become: names only, libc only, so the plugin's submit side (srun, sbatch, salloc) parses and
 * lists them without hwloc or libnuma. The decision itself is numaplace/placement.h.
 *
 * "Placement policy" is where a task's memory goes when it starts (--numa-policy); a
 * "migration order" (numaplace/migration.h) is which jobs' pages move later. The words are kept
 * apart on purpose.
 */
#ifndef NUMAPLACE_POLICY_H
#define NUMAPLACE_POLICY_H

#include "numaplace/common.h"

/** What a user or site asks for. */
enum np_policy {
    NP_POLICY_NONE = 0,       /**< "none": kernel default, Slurm's --mem-bind left alone */
    NP_POLICY_LOCAL,          /**< "local": prefer the nodes of the task's CPUs, fall back */
    NP_POLICY_LOCAL_STRICT,   /**< "local-strict": bind to the nodes of the task's CPUs */
    NP_POLICY_INTERLEAVE,     /**< "interleave": over the nodes of the step's CPUs here */
    NP_POLICY_INTERLEAVE_ALL, /**< "interleave-all": over every memory node the cpuset allows */
    /** "auto": one of the four above per task, chosen at launch (numaplace/auto.h) */
    NP_POLICY_AUTO,
};
#define NP_POLICY_COUNT 6

/** Canonical name of a policy ("local", ...). Borrowed, static. */
NP_API const char *np_policy_name(enum np_policy policy);

/**
 * Parse a policy name. Accepts exactly the canonical names.
 * @return 0, or -EINVAL with @p err naming @p text and listing the accepted names
 */
NP_API int np_policy_from_name(const char *text, enum np_policy *out, struct np_err *err);

/** Comma-separated list of every policy name, for messages and help. Borrowed, static. */
NP_API const char *np_policy_names(void);
/** The same list with another separator ("|" for usage lines). Borrowed, static. */
NP_API const char *np_policy_names_separated(const char *separator);

/** One-line description of a policy for `--numa-policy=help`. Borrowed, static. */
NP_API const char *np_policy_help(enum np_policy policy);

/** The kernel memory policy numaplace applies. */
enum np_mode {
    NP_MODE_DEFAULT = 0,    /**< MPOL_DEFAULT: nothing applied */
    NP_MODE_PREFERRED,      /**< MPOL_PREFERRED: one node, falls back */
    NP_MODE_PREFERRED_MANY, /**< MPOL_PREFERRED_MANY (Linux >= 5.15): several, falls back */
    NP_MODE_BIND,           /**< MPOL_BIND: only these nodes */
    NP_MODE_INTERLEAVE,     /**< MPOL_INTERLEAVE: round-robin over these nodes */
};

/** Name of a mode ("default", "preferred", "preferred-many", "bind", "interleave"). */
NP_API const char *np_mode_name(enum np_mode mode);

/** Parse a mode name. @return 0 or -EINVAL (@p err lists the accepted names) */
NP_API int np_mode_from_name(const char *text, enum np_mode *out, struct np_err *err);

/** Every mode name, ", "-separated. Borrowed, static. */
NP_API const char *np_mode_names(void);

#endif /* NUMAPLACE_POLICY_H */
