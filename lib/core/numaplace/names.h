/*
 * numaplace/names.h - every enum's names come from one table.
 *
 * Each enum that users see (placement policies and modes, migration orders, triggers, classes,
 * move failures) has one static table of names; printing a value, parsing a name and every list
 * of accepted names in help, errors and man pages (docs/CMakeLists.txt) come from that table,
 * so a new entry cannot be forgotten in one of them.
 */
#ifndef NUMAPLACE_NAMES_H
#define NUMAPLACE_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "numaplace/common.h"

/** The names of an enum's values 0..count-1, and what they name (for error messages). */
struct np_name_table {
    const char *what;         /**< "NUMA policy", "class", ... */
    const char *const *names; /**< names[value]; borrowed, static */
    size_t count;
    const unsigned *list_order; /**< the order lists print values in; NULL = by value */
};

/** The name of @p value, or "unknown" past the table's end. Borrowed, static. */
NP_API const char *np_name_of(const struct np_name_table *table, unsigned value);

/**
 * The value named @p text (exact match).
 * @return 0, or -EINVAL with @p err "invalid WHAT 'TEXT': accepted values are a, b, c"
 */
NP_API int np_name_parse(const struct np_name_table *table, const char *text, unsigned *out,
                         struct np_err *err);

/** Write "a, b, c" into @p buf (cut, never overflowed). @return the length it needed. */
NP_API size_t np_name_list(const struct np_name_table *table, char *buf, size_t len);

/** The list "a, b, c" (with @p separator between names), built once per table and separator.
 *  Borrowed: valid for the life of the process. Thread-safe. */
NP_API const char *np_name_list_static(const struct np_name_table *table, const char *separator);

/* The two high/low words of numaplace, kept apart on purpose.
 *
 * A job's *sensitivity* is the label its user gives (--numa-sensitivity): how much it suffers
 * from remote memory. Its *class* is the priority numaplaced keeps it in: high jobs are kept
 * local and never moved away, low jobs may be moved. A sensitive job can be unimportant; the
 * site's class_map (numaplaced.conf) decides which label becomes which class. */
enum np_sensitivity {
    NP_SENSITIVITY_LOW = 0, /**< memory may be moved by numaplaced */
    NP_SENSITIVITY_HIGH,    /**< kept local, never moved away */
    NP_SENSITIVITY_COUNT
};

NP_API const char *np_sensitivity_name(enum np_sensitivity s);
/** Accepts "high" and "low". @return 0 or -EINVAL naming @p text and the accepted values. */
NP_API int np_sensitivity_from_name(const char *text, enum np_sensitivity *out, struct np_err *err);
/** "high, low". Borrowed, static. */
NP_API const char *np_sensitivity_names(void);

/** Priority class: high jobs are kept local and never moved away; low jobs may be moved. */
enum np_class { NP_CLASS_LOW = 0, NP_CLASS_HIGH = 1, NP_CLASS_COUNT };

NP_API const char *np_class_name(enum np_class c);
NP_API int np_class_from_name(const char *text, enum np_class *out, struct np_err *err);
/** "high, low". Borrowed, static. */
NP_API const char *np_class_names(void);

/* The placement policies a user or site names, and the kernel modes they
 * become: names only, libc only, so the plugin's submit side (srun, sbatch, salloc) parses and
 * lists them without hwloc or libnuma. The decision itself is numaplace/placement.h.
 *
 * "Placement policy" is where a task's memory goes when it starts (--numa-policy); a
 * "migration order" (numaplace/migration.h) is which jobs' pages move later. The words are kept
 * apart on purpose. */
/** What a user or site asks for. */
enum np_policy {
    NP_POLICY_NONE = 0,       /**< "none": kernel default, Slurm's --mem-bind left alone */
    NP_POLICY_LOCAL,          /**< "local": prefer the nodes of the task's CPUs, fall back */
    NP_POLICY_LOCAL_STRICT,   /**< "local-strict": bind to the nodes of the task's CPUs */
    NP_POLICY_INTERLEAVE,     /**< "interleave": over the nodes of the step's CPUs here */
    NP_POLICY_INTERLEAVE_ALL, /**< "interleave-all": over every memory node the cpuset allows */
    /** "auto": one of the four above per task, chosen at launch (numaplace/auto.h) */
    NP_POLICY_AUTO,
    NP_POLICY_FAST_TIER, /**< "fast-tier": prefer the nearest faster memory (HBM), fall back */
    NP_POLICY_FAST_TIER_STRICT, /**< "fast-tier-strict": bind to the nearest faster memory */
    /** "weighted-interleave": the step's nodes and the nearest memory of another tier, by the
     *  kernel's weights */
    NP_POLICY_WEIGHTED_INTERLEAVE,
};
#define NP_POLICY_COUNT 9

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
    /** MPOL_WEIGHTED_INTERLEAVE (Linux >= 6.9): by the weights in sysfs */
    NP_MODE_WEIGHTED_INTERLEAVE,
};

/** Name of a mode ("default", "preferred", "preferred-many", "bind", "interleave",
 *  "weighted-interleave"). */
NP_API const char *np_mode_name(enum np_mode mode);

/** Parse a mode name. @return 0 or -EINVAL (@p err lists the accepted names) */
NP_API int np_mode_from_name(const char *text, enum np_mode *out, struct np_err *err);

/** Every mode name, ", "-separated. Borrowed, static. */
NP_API const char *np_mode_names(void);

/* Slurm's job step ids as Slurm prints them, for every layer that names a step (log lines,
 * reports, spool file names); the special ids are slurm.h's SLURM_BATCH_SCRIPT and friends. */
#define NP_STEP_BATCH       0xfffffffbu
#define NP_STEP_EXTERN      0xfffffffcu
#define NP_STEP_INTERACTIVE 0xfffffffau

/** "batch", "extern", "interactive" or the number. Borrowed: a per-thread buffer, valid until
 *  the same thread calls this again. */
NP_API const char *np_step_name(uint32_t step_id);

#endif /* NUMAPLACE_NAMES_H */
