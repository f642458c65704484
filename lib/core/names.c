/* Names of enum values from one table each (see numaplace/names.h). */
#include "numaplace/names.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

const char *np_name_of(const struct np_name_table *table, unsigned value)
{
    return value < table->count && table->names[value] ? table->names[value] : "unknown";
}

int np_name_parse(const struct np_name_table *table, const char *text, unsigned *out,
                  struct np_err *err)
{
    char accepted[256];

    for (unsigned v = 0; text && v < table->count; v++)
        if (table->names[v] && strcmp(text, table->names[v]) == 0) {
            *out = v;
            return 0;
        }
    np_name_list(table, accepted, sizeof(accepted));
    return np_err_set(err, -EINVAL, "invalid %s '%s': accepted values are %s", table->what,
                      text ? text : "(null)", accepted);
}

static size_t name_list_sep(const struct np_name_table *table, const char *separator, char *buf,
                            size_t len)
{
    size_t need = 0;

    if (len)
        buf[0] = '\0';
    for (unsigned i = 0; i < table->count; i++) {
        const unsigned v = table->list_order ? table->list_order[i] : i;
        if (v >= table->count || !table->names[v])
            continue;
        const int n = snprintf(need < len ? buf + need : NULL, need < len ? len - need : 0, "%s%s",
                               need ? separator : "", table->names[v]);
        need += n > 0 ? (size_t)n : 0;
    }
    return need;
}

size_t np_name_list(const struct np_name_table *table, char *buf, size_t len)
{
    return name_list_sep(table, ", ", buf, len);
}

/* A few tables' lists, each built once: the lists are small and the tables static. */
const char *np_name_list_static(const struct np_name_table *table, const char *separator)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct {
        const struct np_name_table *table;
        const char *separator;
        char text[256];
    } cache[16];
    static size_t ncached;
    const char *found = NULL;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ncached && !found; i++)
        if (cache[i].table == table && strcmp(cache[i].separator, separator) == 0)
            found = cache[i].text;
    if (!found && ncached < sizeof(cache) / sizeof(cache[0])) {
        cache[ncached].table = table;
        cache[ncached].separator = separator;
        name_list_sep(table, separator, cache[ncached].text, sizeof(cache[ncached].text));
        found = cache[ncached++].text;
    }
    pthread_mutex_unlock(&lock);
    return found ? found : "(too many name lists)";
}

/* Both lists read most important first, as every message and man page has always said them. */
static const unsigned high_first[2] = {1, 0};

static const char *const sensitivity_names[NP_SENSITIVITY_COUNT] = {
    [NP_SENSITIVITY_LOW] = "low",
    [NP_SENSITIVITY_HIGH] = "high",
};
static const struct np_name_table sensitivities = {"--numa-sensitivity value", sensitivity_names,
                                                   NP_SENSITIVITY_COUNT, high_first};

static const char *const class_names[NP_CLASS_COUNT] = {
    [NP_CLASS_LOW] = "low",
    [NP_CLASS_HIGH] = "high",
};
static const struct np_name_table classes = {"class", class_names, NP_CLASS_COUNT, high_first};

/* What each named enum offers over its table (numaplace/names.h): np_X_name, np_X_from_name (the
 * error names the input and the accepted values) and np_X_names, for sensitivity, class, policy
 * and mode. A type cannot be parenthesised, hence the NOLINT. */
/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define NAMED_ENUM(prefix, type, table)                                                            \
    const char *prefix##_name(type value)                                                          \
    {                                                                                              \
        return np_name_of(&(table), (unsigned)value);                                              \
    }                                                                                              \
    int prefix##_from_name(const char *text, type *out, struct np_err *err)                        \
    {                                                                                              \
        unsigned v = 0;                                                                            \
        const int rc = np_name_parse(&(table), text ? text : "", &v, err);                         \
        if (rc == 0)                                                                               \
            *out = (type)v;                                                                        \
        return rc;                                                                                 \
    }                                                                                              \
    const char *prefix##_names(void)                                                               \
    {                                                                                              \
        return np_name_list_static(&(table), ", ");                                                \
    }
/* NOLINTEND(bugprone-macro-parentheses) */

NAMED_ENUM(np_sensitivity, enum np_sensitivity, sensitivities)
NAMED_ENUM(np_class, enum np_class, classes)

static const char *const policy_names[NP_POLICY_COUNT] = {
    [NP_POLICY_NONE] = "none",
    [NP_POLICY_LOCAL] = "local",
    [NP_POLICY_LOCAL_STRICT] = "local-strict",
    [NP_POLICY_INTERLEAVE] = "interleave",
    [NP_POLICY_INTERLEAVE_ALL] = "interleave-all",
    [NP_POLICY_AUTO] = "auto",
    [NP_POLICY_FAST_TIER] = "fast-tier",
    [NP_POLICY_FAST_TIER_STRICT] = "fast-tier-strict",
    [NP_POLICY_WEIGHTED_INTERLEAVE] = "weighted-interleave",
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
    [NP_POLICY_FAST_TIER] = ("prefer the fast memory (HBM) nearest the task's CPUs; other nodes "
                             "when it is full; local where the node has none"),
    [NP_POLICY_FAST_TIER_STRICT] = ("bind memory to the fast memory nearest the task's CPUs; "
                                    "local-strict where the node has none"),
    [NP_POLICY_WEIGHTED_INTERLEAVE] = ("interleave over the step's nodes and the nearest memory of "
                                       "another tier (CXL) by the kernel's weights"),
};

static const struct np_name_table policies = {"NUMA policy", policy_names, NP_POLICY_COUNT, NULL};

static const char *const mode_names[] = {
    [NP_MODE_DEFAULT] = "default",
    [NP_MODE_PREFERRED] = "preferred",
    [NP_MODE_PREFERRED_MANY] = "preferred-many",
    [NP_MODE_BIND] = "bind",
    [NP_MODE_INTERLEAVE] = "interleave",
    [NP_MODE_WEIGHTED_INTERLEAVE] = "weighted-interleave",
};

static const struct np_name_table modes = {"memory policy mode", mode_names,
                                           sizeof(mode_names) / sizeof(mode_names[0]), NULL};

const char *np_policy_help(enum np_policy policy)
{
    return (unsigned)policy < NP_POLICY_COUNT ? policy_help[policy] : "";
}

const char *np_policy_names_separated(const char *separator)
{
    return np_name_list_static(&policies, separator);
}

NAMED_ENUM(np_policy, enum np_policy, policies)
NAMED_ENUM(np_mode, enum np_mode, modes)

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
