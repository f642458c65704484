/* --numa-policy / --numa-sensitivity values and plugstack.conf arguments, good and bad. */
#include <errno.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/siteconf.h"

static const struct {
    const char *text;
    int rc;
    bool help, verbose, given;
    enum np_policy policy;
} request_cases[] = {
    {"local", 0, false, false, true, NP_POLICY_LOCAL},
    {"verbose,interleave", 0, false, true, true, NP_POLICY_INTERLEAVE},
    {"interleave-all,verbose", 0, false, true, true, NP_POLICY_INTERLEAVE_ALL},
    {"verbose", 0, false, true, false, NP_POLICY_NONE}, /* the site default, verbosely */
    {"help", 0, true, false, false, NP_POLICY_NONE},
    {"none", 0, false, false, true, NP_POLICY_NONE},
    {"local-strict", 0, false, false, true, NP_POLICY_LOCAL_STRICT},
    {"interleaf", -EINVAL, false, false, false, 0},
    {"", -EINVAL, false, false, false, 0},
    {"local,interleave", -EINVAL, false, false, false, 0}, /* one policy at most */
    {"verbose,verbose,local", -EINVAL, false, false, false, 0},
    {"help,local", -EINVAL, false, false, false, 0},
    {"local,", -EINVAL, false, false, false, 0},
    {",local", -EINVAL, false, false, false, 0},
    {"verbose,,local", -EINVAL, false, false, false, 0},
    {"LOCAL", -EINVAL, false, false, false, 0},
    {NULL, -EINVAL, false, false, false, 0},
};

START_TEST(test_policy_request)
{
    struct np_policy_request r;
    struct np_err err = {0};

    ck_assert_int_eq(np_policy_request_parse(request_cases[_i].text, &r, &err),
                     request_cases[_i].rc);
    if (request_cases[_i].rc == 0) {
        ck_assert_int_eq(r.help, request_cases[_i].help);
        ck_assert_int_eq(r.verbose, request_cases[_i].verbose);
        ck_assert_int_eq(r.policy_given, request_cases[_i].given);
        ck_assert_int_eq(r.policy, request_cases[_i].policy);
    } else {
        char named[160];
        snprintf(named, sizeof(named), "invalid --numa-policy value '%s'",
                 request_cases[_i].text ? request_cases[_i].text : "");
        ck_assert_msg(strstr(err.msg, named), "'%s' lacks '%s'", err.msg, named);
        ck_assert_ptr_nonnull(strstr(err.msg, "[verbose,]none|local|local-strict|interleave|"
                                              "interleave-all|auto|fast-tier|fast-tier-strict|"
                                              "weighted-interleave, verbose, or help"));
    }
}
END_TEST

static const struct {
    const char *text;
    int rc;
    enum np_sensitivity s;
} sensitivity_cases[] = {
    {"high", 0, NP_SENSITIVITY_HIGH},
    {"low", 0, NP_SENSITIVITY_LOW},
    {"medium", -EINVAL, 0},
    {"HIGH", -EINVAL, 0},
    {"", -EINVAL, 0},
    {NULL, -EINVAL, 0},
};

START_TEST(test_sensitivity)
{
    enum np_sensitivity s = NP_SENSITIVITY_LOW;
    struct np_err err = {0};

    ck_assert_int_eq(np_sensitivity_from_name(sensitivity_cases[_i].text, &s, &err),
                     sensitivity_cases[_i].rc);
    if (sensitivity_cases[_i].rc == 0) {
        ck_assert_int_eq(s, sensitivity_cases[_i].s);
        ck_assert_str_eq(np_sensitivity_name(s), sensitivity_cases[_i].text);
    } else {
        ck_assert_ptr_nonnull(strstr(err.msg, "accepted values are high, low"));
    }
}
END_TEST

/* Collects what the parser logs. */
static char logged[4096];
static void sink(enum np_log_level level, const char *msg, void *arg)
{
    (void)arg;
    ck_assert_int_eq(level, NP_LOG_ERROR);
    strncat(logged, msg, sizeof(logged) - strlen(logged) - 2);
    strcat(logged, "\n");
}
static const struct np_log log_sink = {sink, NULL};

static const struct {
    const char *args[4];
    int rejected;
    const char *message; /* in the log when rejected, else NULL */
    const char *allowed; /* allowed policies after parsing */
    enum np_policy default_policy;
} args_cases[] = {
    {{"default_policy=local"},
     0,
     NULL,
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_LOCAL},
    {{"allowed_policies=local,none", "default_policy=local"},
     0,
     NULL,
     "none,local",
     NP_POLICY_LOCAL},
    {{"default_policy=interleaf"},
     1,
     "invalid plugstack argument 'default_policy=interleaf': accepted values are none, local, "
     "local-strict, interleave, interleave-all",
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_NONE},
    {{"allowed_policies=local,,none"},
     1,
     "(comma-separated)",
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_NONE},
    {{"allowed_policies=local", "default_policy=interleave"},
     1,
     "default_policy=interleave is not in allowed_policies=local",
     "none,local",
     NP_POLICY_NONE},
    {{"colour=blue"},
     1,
     "unknown plugstack argument 'colour=blue'; accepted keys are "
     "default_policy, allowed_policies",
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_NONE},
    {{"verbose"},
     1,
     "plugstack argument 'verbose' is not key=value",
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_NONE},
    {{"=local"},
     1,
     "is not key=value",
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_NONE},
    {{"high_unauthorized=deny"},
     1,
     "accepted values are downgrade, refuse",
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_NONE},
    {{"topology_xml=relative.xml"},
     1,
     "an absolute path",
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_NONE},
    {{"helper_timeout_ms=0"},
     1,
     "from 1 to 5000",
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_NONE},
    {{"helper_timeout_ms=10x"},
     1,
     "from 1 to 5000",
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_NONE},
    {{"cpuless_nodes=maybe", "on_error=panic", "verbose=1"},
     3,
     "accepted values are ignore, fail",
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_NONE},
    {{"fast_tier=everyone"},
     1,
     "invalid plugstack argument 'fast_tier=everyone': accepted values are all, high",
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_NONE},
    {{"default_sensitivity=medium"},
     1,
     "accepted values are high, low",
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_NONE},
    {{"high_users="},
     1,
     "a comma-separated list of names",
     "none,local,local-strict,interleave,interleave-all,auto,fast-tier,fast-tier-strict,weighted-"
     "interleave",
     NP_POLICY_NONE},
};

START_TEST(test_plugstack_args)
{
    struct np_site_config cfg;
    char *argv[4];
    int argc = 0;
    char names[128];

    logged[0] = '\0';
    for (; argc < 4 && args_cases[_i].args[argc]; argc++)
        argv[argc] = (char *)args_cases[_i].args[argc];
    ck_assert_int_eq(np_site_config_init(&cfg), 0);
    ck_assert_int_eq(np_site_config_parse(&cfg, argc, argv, &log_sink), args_cases[_i].rejected);
    if (args_cases[_i].message)
        ck_assert_msg(strstr(logged, args_cases[_i].message), "log '%s' lacks '%s'", logged,
                      args_cases[_i].message);
    else
        ck_assert_str_eq(logged, "");
    ck_assert_str_eq(np_site_config_allowed_names(&cfg, names, sizeof(names)),
                     args_cases[_i].allowed);
    ck_assert_int_eq(cfg.default_policy, args_cases[_i].default_policy);
    ck_assert(np_site_config_allows(&cfg, cfg.default_policy));
    np_site_config_fini(&cfg);
    np_site_config_fini(NULL);
}
END_TEST

START_TEST(test_every_key)
{
    struct np_site_config cfg;
    char *argv[] = {"default_policy=interleave",
                    "default_sensitivity=high",
                    "high_users=alice,bob",
                    "high_groups=hpc",
                    "high_unauthorized=refuse",
                    "topology_xml=/etc/numaplace/topo.xml",
                    "cpuless_nodes=include",
                    "fast_tier=high",
                    "on_error=fail",
                    "verbose=yes",
                    "helper_socket=/tmp/np.sock",
                    "helper_timeout_ms=250",
                    "high_users=carol"};

    ck_assert_int_eq(np_site_config_init(&cfg), 0);
    ck_assert_str_eq(cfg.helper_socket, "/run/numaplace/numaplaced.sock");
    ck_assert_uint_eq(cfg.helper_timeout_ms, 100);
    ck_assert(!cfg.fast_tier_high_only);
    ck_assert_int_eq(np_site_config_parse(&cfg, 13, argv, NULL), 0);
    ck_assert_int_eq(cfg.default_policy, NP_POLICY_INTERLEAVE);
    ck_assert_int_eq(cfg.default_sensitivity, NP_SENSITIVITY_HIGH);
    ck_assert_str_eq(cfg.high_users[0], "carol"); /* a repeated key: the last one counts */
    ck_assert_ptr_null(cfg.high_users[1]);
    ck_assert_str_eq(cfg.high_groups[0], "hpc");
    ck_assert_int_eq(cfg.high_unauthorized, NP_HIGH_REFUSE);
    ck_assert_str_eq(cfg.topology_xml, "/etc/numaplace/topo.xml");
    ck_assert(cfg.include_cpuless);
    ck_assert(cfg.fast_tier_high_only);
    ck_assert(cfg.fail_on_error);
    ck_assert(cfg.verbose);
    ck_assert_str_eq(cfg.helper_socket, "/tmp/np.sock");
    ck_assert_uint_eq(cfg.helper_timeout_ms, 250);
    np_site_config_fini(&cfg);
}
END_TEST

static const struct {
    const char *users, *groups; /* plugstack values or NULL */
    const char *user;
    const char *groups_of_user[3];
    bool may;
} high_cases[] = {
    {NULL, NULL, "anyone", {NULL}, true}, /* no restriction configured */
    {"alice,bob", NULL, "bob", {NULL}, true},
    {"alice,bob", NULL, "mallory", {"users", NULL}, false},
    {"alice", "hpc,admins", "mallory", {"users", "hpc", NULL}, true},
    {NULL, "hpc", "mallory", {"users", NULL}, false},
    {"alice", NULL, "root", {NULL}, true},
};

START_TEST(test_may_claim_high)
{
    struct np_site_config cfg;
    char users[64], groups[64];
    char *argv[2];
    int argc = 0;

    ck_assert_int_eq(np_site_config_init(&cfg), 0);
    if (high_cases[_i].users) {
        snprintf(users, sizeof(users), "high_users=%s", high_cases[_i].users);
        argv[argc++] = users;
    }
    if (high_cases[_i].groups) {
        snprintf(groups, sizeof(groups), "high_groups=%s", high_cases[_i].groups);
        argv[argc++] = groups;
    }
    ck_assert_int_eq(np_site_config_parse(&cfg, argc, argv, NULL), 0);
    ck_assert_int_eq(np_site_config_may_claim_high_names(&cfg, high_cases[_i].user,
                                                         high_cases[_i].groups_of_user),
                     high_cases[_i].may);
    np_site_config_fini(&cfg);
}
END_TEST

/* A rejected argument closes high to everyone but root: a typo must not fail open. */
static const struct {
    const char *arg;
    const char *user;
    bool may;
} closed_cases[] = {
    {"high_user=alice", "bob", false},         /* misspelt key: before, everyone could */
    {"high_user=alice", "alice", false},       /* ... and the list was never read */
    {"high_users=alice,,bob", "alice", false}, /* empty item */
    {"high_groups=", "mallory", false},        /* empty list */
    {"verbose=maybe", "anyone", false},        /* any rejected argument */
    {"high_user=alice", "root", true},
};

START_TEST(test_bad_arguments_close_high)
{
    struct np_site_config cfg;
    char arg[64];
    char *argv[] = {arg};

    snprintf(arg, sizeof(arg), "%s", closed_cases[_i].arg);
    ck_assert_int_eq(np_site_config_init(&cfg), 0);
    ck_assert_int_eq(np_site_config_parse(&cfg, 1, argv, NULL), 1);
    ck_assert(cfg.high_closed);
    ck_assert_int_eq(np_site_config_may_claim_high_names(&cfg, closed_cases[_i].user, NULL),
                     closed_cases[_i].may);
    ck_assert_int_eq(np_site_config_may_claim_high(&cfg, 0, 0), true);
    ck_assert_int_eq(np_site_config_may_claim_high(&cfg, 65534, 65534), false);
    np_site_config_fini(&cfg);
}
END_TEST

START_TEST(test_may_claim_high_by_uid)
{
    struct np_site_config cfg;
    char *argv[] = {"high_users=nobody-such-user"};

    ck_assert_int_eq(np_site_config_init(&cfg), 0);
    ck_assert_int_eq(np_site_config_parse(&cfg, 1, argv, NULL), 0);
    ck_assert(np_site_config_may_claim_high(&cfg, 0, 0));              /* root always */
    ck_assert(!np_site_config_may_claim_high(&cfg, 65534, 65534));     /* nobody: not listed */
    ck_assert(!np_site_config_may_claim_high(&cfg, 4000000, 4000000)); /* unknown uid */
    np_site_config_fini(&cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("siteconf");
    TCase *tc = tcase_create("siteconf");

    tcase_add_loop_test(tc, test_policy_request, 0,
                        sizeof(request_cases) / sizeof(request_cases[0]));
    tcase_add_loop_test(tc, test_sensitivity, 0,
                        sizeof(sensitivity_cases) / sizeof(sensitivity_cases[0]));
    tcase_add_loop_test(tc, test_plugstack_args, 0, sizeof(args_cases) / sizeof(args_cases[0]));
    tcase_add_test(tc, test_every_key);
    tcase_add_loop_test(tc, test_bad_arguments_close_high, 0,
                        (int)(sizeof(closed_cases) / sizeof(closed_cases[0])));
    tcase_add_loop_test(tc, test_may_claim_high, 0, sizeof(high_cases) / sizeof(high_cases[0]));
    tcase_add_test(tc, test_may_claim_high_by_uid);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
