/* numaplaced's configuration: every key, good and bad values, and a file with bad lines. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "np_test.h"
#include "numaplace/helperconf.h"

static const struct {
    const char *key, *value;
    int rc;
    const char *msg; /* in the error, or "" */
} cases[] = {
    {"socket", "/tmp/x.sock", 0, ""},
    {"socket", "relative.sock", -EINVAL, "socket=\"relative.sock\": an absolute path is required"},
    {"state_dir", "/var/lib/np", 0, ""},
    {"spool_dir", "", -EINVAL, "an absolute path is required"},
    {"pid_file", "", 0, ""},
    {"record", "", 0, ""},
    {"record", "trace", -EINVAL, "(or nothing, to turn it off)"},
    {"log", "stderr", 0, ""},
    {"log", "/var/log/numaplaced.log", 0, ""},
    {"log", "journal", -EINVAL, "accepted: syslog, stderr or an absolute file path"},
    {"log_level", "debug", 0, ""},
    {"log_level", "loud", -EINVAL, "accepted: error, warning, info, debug"},
    {"interval_ms", "250", 0, ""},
    {"interval_ms", "10", -EINVAL, "interval_ms=\"10\": an integer from 100 to 3600000"},
    {"interval_ms", "1s", -EINVAL, "an integer from 100"},
    {"interval_ms", "-5", -EINVAL, "an integer from 100"},
    {"numa_maps_large_bytes", "8589934592", 0, ""},
    {"max_jobs", "0", -EINVAL, "from 1 to 65536"},
    {"backends", "proc", 0, ""},
    {"backends", "perf,proc", 0, ""},
    {"backends", "pcm", -EINVAL, "accepted: perf,proc or proc"},
    {"housekeeping_cpus", "auto", 0, ""},
    {"housekeeping_cpus", "0,32", 0, ""},
    {"housekeeping_cpus", "zero", -EINVAL, "accepted: auto (Slurm's CpuSpecList), none, or a CPU"},
    /* fuzz_helperconf: hwloc reads "-1" as ULONG_MAX and sized a 512 MB bitmap for it */
    {"housekeeping_cpus", "0L-1", -EINVAL, "0-3 of CPUs below 65536"},
    {"housekeeping_cpus", "0-4000000000", -EINVAL, "of CPUs below 65536"},
    {"housekeeping_cpus", "0x10", -EINVAL, "of CPUs below 65536"},
    {"housekeeping_cpus", "65536", -EINVAL, "of CPUs below 65536"},
    /* fuzz_helperconf (10M run): hwloc reads "08" as octal; "08-1124" sized a 512 MB bitmap */
    {"housekeeping_cpus", "08-1124", -EINVAL, "of CPUs below 65536"},
    {"housekeeping_cpus", "0,10-12", 0, ""},
    {"housekeeping_cpus", "0-3, 65535", 0, ""},
    /* read as Slurm's core lists are: ranges ascend, no empty element */
    {"housekeeping_cpus", "3-1", -EINVAL, "of CPUs below 65536"},
    {"housekeeping_cpus", "1,,2", -EINVAL, "of CPUs below 65536"},
    {"housekeeping_cpus", "1,", -EINVAL, "of CPUs below 65536"},
    {"colour", "blue", -EINVAL, "unknown key \"colour\"; accepted: socket, state_dir"},
    {"migration", "maybe", -EINVAL, "migration=\"maybe\": accepted: on, off"},
    {"migration_order", "worst-plus", 0, ""},
    {"migration_order", "fastest", -EINVAL,
     "accepted: best-plus, best, random, worst, worst-plus, predicted"},
    {"migration_rate_mb_s", "0", 0, ""},
    {"move_shared_pages", "yes", 0, ""},
    {"move_shared_pages", "all", -EINVAL, "move_shared_pages=\"all\": accepted: on, off"},
    {"class_map", "high:low,low:low", 0, ""},
    {"class_map", "urgent:high", -EINVAL, "label \"urgent\": accepted labels: high, low"},
    {"class_map", "high", -EINVAL, "is not label:class"},
    {"class_default", "medium", -EINVAL, "accepted: high, low, auto"},
    {"class_default", "auto", 0, ""},
    {"sensitivity_table", "/etc/numaplace/table.csv", 0, ""},
    {"sensitivity_table", "table.csv", -EINVAL, "an absolute path is required"},
    {"machine_profile", "/var/lib/numaplace/p.json", 0, ""},
    {"machine_profile", "p.json", -EINVAL, "an absolute path is required"},
    {"detail_interval_ms", "5000", 0, ""},
    {"metrics_listen", "", 0, ""},
    {"metrics_listen", "127.0.0.1:9477", 0, ""},
    {"metrics_listen", "[::1]:9477", 0, ""},
    {"metrics_listen", "0.0.0.0:1", 0, ""},
    {"metrics_listen", "127.0.0.1", -EINVAL,
     "metrics_listen=\"127.0.0.1\": accepted: nothing (off), or HOST:PORT with an IPv4"},
    {"metrics_listen", "localhost:9477", -EINVAL, "metrics_listen=\"localhost:9477\": accepted"},
    {"metrics_listen", "::1:9477", -EINVAL, "or [IPv6] and a port from 1 to 65535"},
    {"metrics_listen", "127.0.0.1:0", -EINVAL, "a port from 1 to 65535"},
    {"metrics_listen", "127.0.0.1:65536", -EINVAL, "a port from 1 to 65535"},
    {"metrics_listen", "127.0.0.1:94x", -EINVAL, "a port from 1 to 65535"},
    {"metrics_listen", "[::1:9477", -EINVAL, "accepted: nothing (off)"},
    {"metrics_users", "", 0, ""},
    {"metrics_users", "root, 1000,0", 0, ""},
    {"metrics_users", "root,no-such-user-here", -EINVAL,
     "metrics_users=\"root,no-such-user-here\": no such user \"no-such-user-here\"; accepted: "
     "user names of this node or uids, comma-separated"},
    {"metrics_users", "12ab", -EINVAL, "bad uid \"12ab\""},
    {"metrics_allow", "", 0, ""},
    {"metrics_allow", "10.1.0.0/16, fd00::/8,192.0.2.7", 0, ""},
    {"metrics_allow", "10.1.0.0/33", -EINVAL,
     "metrics_allow=\"10.1.0.0/33\": \"10.1.0.0/33\" is not a network; accepted: CIDRs like"},
    {"metrics_allow", "fd00::/129", -EINVAL, "\"fd00::/129\" is not a network"},
    {"metrics_allow", "10.0.0.0/8,intranet", -EINVAL, "\"intranet\" is not a network"},
    {"metrics_allow", "10.0.0.0/", -EINVAL, "is not a network"},
    {"metrics_step_series", "on", 0, ""},
    {"metrics_step_series", "off", 0, ""},
    {"metrics_step_series", "200", 0, ""},
    {"metrics_step_series", "1000000", 0, ""},
    {"metrics_step_series", "0", -EINVAL,
     "metrics_step_series=\"0\": accepted: on (every step), off (no per-step series), or the "
     "most steps with series, from 1 to 1000000"},
    {"metrics_step_series", "1000001", -EINVAL, "from 1 to 1000000"},
    {"metrics_step_series", "yes", -EINVAL, "accepted: on (every step), off"},
    {"metrics_step_series", "-5", -EINVAL, "accepted: on"},
    {"metrics_step_series", "10k", -EINVAL, "accepted: on"},
};

START_TEST(test_set)
{
    struct np_helper_config cfg;
    struct np_err err = {0};

    np_helper_config_defaults(&cfg);
    ck_assert_int_eq(np_helper_config_set(&cfg, cases[_i].key, cases[_i].value, &err),
                     cases[_i].rc);
    ck_assert_msg(strstr(err.msg, cases[_i].msg), "case %d: \"%s\"", _i, err.msg);
}
END_TEST

static int logged;
static void count_log(enum np_log_level level, const char *msg, void *arg)
{
    (void)level;
    (void)arg;
    ck_assert_ptr_nonnull(strstr(msg, ".conf:"));
    logged++;
}

START_TEST(test_load_file)
{
    char path[] = "/tmp/np-helperconf-XXXXXX.conf";
    struct np_helper_config cfg;
    struct np_err err = {0};
    struct np_log log = {count_log, NULL};
    int fd = mkstemps(path, 5);
    FILE *f = fdopen(fd, "w");

    ck_assert_ptr_nonnull(f);
    fputs("# comment\n\n  interval_ms = 500  # half a second\nbackends=proc\n"
          "nonsense line\nlog_level = chatty\nspool_dir = /srv/np\n",
          f);
    fclose(f);
    np_helper_config_defaults(&cfg);
    logged = 0;
    ck_assert_int_eq(np_helper_config_load(&cfg, path, &log, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, ":5: \"nonsense line\" is not key = value"));
    ck_assert_int_eq(logged, 2); /* both bad lines reported, not just the first */
    ck_assert_uint_eq(cfg.interval_ms, 500);
    ck_assert(!cfg.perf);
    ck_assert_str_eq(cfg.spool_dir, "/srv/np"); /* good lines after bad ones still apply */
    unlink(path);
    ck_assert_int_eq(np_helper_config_load(&cfg, path, NULL, &err), -ENOENT);
}
END_TEST

/* A line over 2,047 bytes was cut in two and its tail read as a setting. */
START_TEST(test_long_line_refused_whole)
{
    char path[] = "/tmp/np-helperconf-XXXXXX.conf";
    struct np_helper_config cfg;
    struct np_err err = {0};
    int fd = mkstemps(path, 5);
    FILE *f = fdopen(fd, "w");

    ck_assert_ptr_nonnull(f);
    /* "# " then padding to 2046 bytes, then a tail that looks like a setting */
    fputs("# ", f);
    for (int i = 0; i < 2046; i++)
        fputc('x', f);
    fputs("migration = off\ninterval_ms = 700\n", f);
    fclose(f);
    np_helper_config_defaults(&cfg);
    ck_assert_int_eq(np_helper_config_load(&cfg, path, NULL, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, ":1: line of"));
    ck_assert(cfg.migration);                /* the tail was not read as a setting */
    ck_assert_uint_eq(cfg.interval_ms, 700); /* the next line still applies */
    unlink(path);
}
END_TEST

/* The key list (usage, error messages) and the parser agree: every listed key is known to the
 * parser (a nonsense value gets a bad-value error, never "unknown key"), and an unknown key's
 * error lists them all. */
START_TEST(test_keys_listed_are_parsed)
{
    char keys[2048], *save = NULL;
    struct np_helper_config cfg;
    struct np_err err = {0};
    int n = 0;

    snprintf(keys, sizeof(keys), "%s", np_helper_config_keys());
    for (char *key = strtok_r(keys, ", ", &save); key; key = strtok_r(NULL, ", ", &save), n++) {
        np_helper_config_defaults(&cfg);
        err.msg[0] = '\0';
        np_helper_config_set(&cfg, key, "\x01nonsense", &err);
        ck_assert_msg(strstr(err.msg, "unknown key") == NULL, "listed key '%s' is unknown: %s", key,
                      err.msg);
    }
    ck_assert_int_ge(n, 20);
    np_helper_config_defaults(&cfg);
    ck_assert_int_eq(np_helper_config_set(&cfg, "no_such_key", "1", &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, np_helper_config_keys()));
}
END_TEST

/* A bad metrics value leaves the earlier one in place (a reload refuses the whole file anyway,
 * but a flag given after a good file must not half-apply). */
START_TEST(test_metrics_bad_value_keeps_previous)
{
    struct np_helper_config cfg;
    struct np_err err = {0};

    np_helper_config_defaults(&cfg);
    ck_assert_str_eq(cfg.metrics.listen, ""); /* off by default */
    ck_assert_int_eq(np_helper_config_set(&cfg, "metrics_listen", "127.0.0.1:9477", &err), 0);
    ck_assert_int_eq(np_helper_config_set(&cfg, "metrics_users", "0,7", &err), 0);
    ck_assert_int_eq(np_helper_config_set(&cfg, "metrics_allow", "10.0.0.0/8", &err), 0);
    ck_assert_int_lt(np_helper_config_set(&cfg, "metrics_listen", "[::1]:99999", &err), 0);
    ck_assert_int_lt(np_helper_config_set(&cfg, "metrics_users", "7,nobody-at-all", &err), 0);
    ck_assert_int_lt(np_helper_config_set(&cfg, "metrics_allow", "192.0.2.0/8,x", &err), 0);
    ck_assert_str_eq(cfg.metrics.listen, "127.0.0.1:9477");
    ck_assert_int_eq(cfg.metrics.family, AF_INET);
    ck_assert_uint_eq(cfg.metrics.port, 9477);
    ck_assert_uint_eq(cfg.metrics.nuids, 2);
    ck_assert_uint_eq(cfg.metrics.uids[1], 7);
    ck_assert_uint_eq(cfg.metrics.nnets, 1);
    /* per-step series: on by default, a cap, off, and a bad value changes nothing */
    ck_assert(!cfg.metrics.step_series_off);
    ck_assert_uint_eq(cfg.metrics.step_series_max, 0);
    ck_assert_int_eq(np_helper_config_set(&cfg, "metrics_step_series", "50", &err), 0);
    ck_assert_int_lt(np_helper_config_set(&cfg, "metrics_step_series", "lots", &err), 0);
    ck_assert(!cfg.metrics.step_series_off);
    ck_assert_uint_eq(cfg.metrics.step_series_max, 50);
    ck_assert_int_eq(np_helper_config_set(&cfg, "metrics_step_series", "off", &err), 0);
    ck_assert(cfg.metrics.step_series_off);
    ck_assert_uint_eq(cfg.metrics.step_series_max, 0);
}
END_TEST

static const struct {
    const char *net, *addr;
    bool inside;
} cidr_cases[] = {
    {"10.0.0.0/8", "10.255.1.2", true},
    {"10.0.0.0/8", "11.0.0.1", false},
    {"192.0.2.0/25", "192.0.2.127", true},
    {"192.0.2.0/25", "192.0.2.128", false},
    {"192.0.2.7", "192.0.2.7", true},
    {"192.0.2.7", "192.0.2.6", false},
    {"0.0.0.0/0", "203.0.113.9", true},
    {"fd00::/8", "fd12::1", true},
    {"fd00::/8", "fe80::1", false},
    {"fd00::/8", "10.0.0.1", false},
    {"2001:db8::/33", "2001:db8:7fff::1", true},
    {"2001:db8::/33", "2001:db8:8000::1", false},
};

START_TEST(test_cidr_contains)
{
    struct np_cidr net;
    unsigned char addr[16];
    const int family = strchr(cidr_cases[_i].addr, ':') ? AF_INET6 : AF_INET;

    ck_assert_int_eq(np_cidr_parse(cidr_cases[_i].net, &net), 0);
    ck_assert_int_eq(inet_pton(family, cidr_cases[_i].addr, addr), 1);
    ck_assert_msg(np_cidr_contains(&net, family, addr) == cidr_cases[_i].inside, "%s in %s",
                  cidr_cases[_i].addr, cidr_cases[_i].net);
}
END_TEST

START_TEST(test_defaults)
{
    struct np_helper_config cfg;

    np_helper_config_defaults(&cfg);
    ck_assert_str_eq(cfg.socket, NP_HELPER_DEFAULT_SOCKET);
    ck_assert_uint_eq(cfg.interval_ms, 1000);
    ck_assert(cfg.perf);
    ck_assert_str_eq(cfg.housekeeping_cpus, "auto");
    ck_assert_str_eq(cfg.log, "syslog");
    ck_assert(!cfg.move_shared_pages); /* shared pages stay unless the site says otherwise */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("helperconf");
    TCase *tc = tcase_create("helperconf");

    tcase_add_loop_test(tc, test_set, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, test_load_file);
    tcase_add_test(tc, test_long_line_refused_whole);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_keys_listed_are_parsed);
    tcase_add_test(tc, test_metrics_bad_value_keeps_previous);
    tcase_add_loop_test(tc, test_cidr_contains, 0,
                        (int)(sizeof(cidr_cases) / sizeof(cidr_cases[0])));
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
