/*
 * numaplace/siteconf.h - what users ask for (--numa-policy, --numa-sensitivity) and what the
 * site allows (plugstack.conf arguments). Parsing lives here, not in the plugin, so every
 * accepted and rejected string is unit-tested.
 */
#ifndef NUMAPLACE_SITECONF_H
#define NUMAPLACE_SITECONF_H

#include <stdbool.h>
#include <sys/types.h>

#include "numaplace/common.h"
#include "numaplace/names.h"

/** A parsed --numa-policy value: "[verbose,]POLICY" or "help" (also "verbose" alone). */
struct np_policy_request {
    bool help;         /**< print the choices and exit 0 */
    bool verbose;      /**< one line per task saying what it got */
    bool policy_given; /**< false for "verbose" alone: the site default applies */
    enum np_policy policy;
};

/** @return 0 or -EINVAL naming @p text and listing the accepted values. */
NP_API int np_policy_request_parse(const char *text, struct np_policy_request *out,
                                   struct np_err *err);

/** What to do when a user not allowed to claim high sensitivity asks for it. */
enum np_high_unauthorized {
    NP_HIGH_DOWNGRADE = 0, /**< run the job as low, with a warning */
    NP_HIGH_REFUSE,        /**< refuse the job */
};

/** Site configuration from plugstack.conf arguments. Owns its strings. */
struct np_site_config {
    enum np_policy default_policy;               /**< default_policy=  (none) */
    unsigned allowed_policies;                   /**< allowed_policies= bit (1u << policy); all */
    enum np_sensitivity default_sensitivity;     /**< default_sensitivity= (low) */
    char **high_users;                           /**< high_users=a,b (NULL-terminated or NULL) */
    char **high_groups;                          /**< high_groups=g,h */
    enum np_high_unauthorized high_unauthorized; /**< high_unauthorized=downgrade|refuse */
    char *topology_xml;                          /**< topology_xml=PATH or NULL (live discovery) */
    bool include_cpuless;                        /**< cpuless_nodes=include|exclude (exclude) */
    bool fast_tier_high_only;   /**< fast_tier=all|high: who fast-tier places on it (all) */
    bool fail_on_error;         /**< on_error=ignore|fail (ignore) */
    bool verbose;               /**< verbose=yes|no: verbose for every job (no) */
    char *helper_socket;        /**< helper_socket=PATH|none (numaplaced's default) */
    unsigned helper_timeout_ms; /**< helper_timeout_ms=N (100) */
    /** An argument was rejected: a misspelt high_users= or a bad list must not let everyone
     *  claim high, so until the site fixes it only root may (fail closed). */
    bool high_closed;
};

/** Fill @p cfg with the defaults above. @return 0 or -ENOMEM. */
NP_API int np_site_config_init(struct np_site_config *cfg);
/** Free what @p cfg owns. Accepts NULL. */
NP_API void np_site_config_fini(struct np_site_config *cfg);

/**
 * Apply plugstack.conf arguments ("key=value" each). Every unknown key or malformed value is
 * reported to @p log as an error naming the argument and the accepted keys or values, and is
 * ignored (the setting keeps its default), so a typo never fails jobs by itself.
 * @return the number of rejected arguments (0 when all were good), or -ENOMEM
 */
NP_API int np_site_config_parse(struct np_site_config *cfg, int argc, char *const argv[],
                                const struct np_log *log);

/** Whether the site allows @p policy. */
NP_API bool np_site_config_allows(const struct np_site_config *cfg, enum np_policy policy);

/** The allowed policies as "a,b,c" into @p buf. @return @p buf. */
NP_API char *np_site_config_allowed_names(const struct np_site_config *cfg, char *buf, size_t len);

/**
 * May the user claim high sensitivity? root always may; when neither high_users nor
 * high_groups is set, everyone may; otherwise the user must be listed or be in a listed group
 * (primary or supplementary, looked up with getgrouplist).
 */
NP_API bool np_site_config_may_claim_high(const struct np_site_config *cfg, uid_t uid, gid_t gid);

/** The same decision from names, for tests and callers that already resolved them. */
NP_API bool np_site_config_may_claim_high_names(const struct np_site_config *cfg, const char *user,
                                                const char *const groups[]);

#endif /* NUMAPLACE_SITECONF_H */
