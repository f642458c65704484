/* The numaplace command's reading of Slurm's output and the spool (cli/parse.h), without Slurm:
 * sacct lines good and bad, `numaplace jobs` lines, scontrol's configuration, spool
 * file names, AdminComment payloads that are not numaplace summaries. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/summary.h"
#include "parse.h"

static const struct {
    const char *out; /* sacct -j JOB -X -n -P -o UID,Account,AdminComment */
    int rc;
    unsigned uid;
    bool full;
    const char *comment;
} sacct_cases[] = {
    {"1000|physics|NPS1:abc\n", 0, 1000, true, "NPS1:abc"},
    {"1000||\n", 0, 1000, false, ""}, /* slurmdbd's placeholder row, no comment yet */
    {"0|root|other tool's note\n", 0, 0, true, "other tool's note"},
    {"1000|acct|a|b\n", 0, 1000, true, "a|b"},          /* the comment keeps its bars */
    {"1000|acct|x\n1001|acct|y\n", 0, 1000, true, "x"}, /* the first line only */
    {"", -ENOENT, 0, false, NULL},
    {"\n", -ENOENT, 0, false, NULL},
    {"1000|acct\n", -ENOENT, 0, false, NULL},
    {"sacct: error: Problem talking to the database\n", -ENOENT, 0, false, NULL},
};

START_TEST(test_sacct_job)
{
    char *out = strdup(sacct_cases[_i].out);
    const char *comment = NULL;
    uid_t uid = 4242;
    bool full = false;
    int rc = cli_parse_sacct_job(out, &uid, &full, &comment);

    ck_assert_int_eq(rc, sacct_cases[_i].rc);
    if (rc == 0) {
        ck_assert_uint_eq(uid, sacct_cases[_i].uid);
        ck_assert(full == sacct_cases[_i].full);
        ck_assert_str_eq(comment, sacct_cases[_i].comment);
    }
    free(out);
}
END_TEST

static const struct {
    const char *line; /* sacct -X -n -P -o JobID,User,State,AdminComment */
    int rc;
    const char *id, *user, *state, *comment;
} jobs_cases[] = {
    {"42|alice|COMPLETED|NPS1:xyz", 0, "42", "alice", "COMPLETED", "NPS1:xyz"},
    {"43|bob|FAILED|", 0, "43", "bob", "FAILED", ""},
    {"44|bob|CANCELLED by 0|note|with|bars", 0, "44", "bob", "CANCELLED by 0", "note|with|bars"},
    {"45|bob|RUNNING", -EINVAL, NULL, NULL, NULL, NULL},
    {"", -EINVAL, NULL, NULL, NULL, NULL},
};

START_TEST(test_jobs_line)
{
    char *line = strdup(jobs_cases[_i].line);
    struct cli_jobs_row row = {0};
    int rc = cli_parse_jobs_line(line, &row);

    ck_assert_int_eq(rc, jobs_cases[_i].rc);
    if (rc == 0) {
        ck_assert_str_eq(row.id, jobs_cases[_i].id);
        ck_assert_str_eq(row.user, jobs_cases[_i].user);
        ck_assert_str_eq(row.state, jobs_cases[_i].state);
        ck_assert_str_eq(row.comment, jobs_cases[_i].comment);
    }
    free(line);
}
END_TEST

/* `scontrol show config` lines as 22.05 to 26.05 print them. */
static const struct {
    const char *out, *key, *value;
} config_cases[] = {
    {"Configuration data as of 2026-12-01T23:00:00\nClusterName             = np-test\n"
     "SlurmUser               = slurm(64030)\n",
     "ClusterName", "np-test"},
    {"ClusterNameX            = no\nClusterName = yes  \n", "ClusterName", "yes"},
    {"AccountingStorageHost   = (null)\n", "AccountingStorageHost", ""},
    {"SlurmUser               = slurm(64030)", "ClusterName", ""},
    {"ClusterName             = last", "ClusterName", "last"},
    {"", "ClusterName", ""},
};

START_TEST(test_config_value)
{
    char *v = cli_config_value(config_cases[_i].out, config_cases[_i].key);

    ck_assert_ptr_nonnull(v);
    ck_assert_str_eq(v, config_cases[_i].value);
    free(v);
}
END_TEST

static const struct {
    const char *name, *job;
    bool match;
} spool_cases[] = {
    {"42.0.node1.json", "42", true},
    {"42.batch.node1.json", "42", true},
    {"42.batch.node1.json", "42.batch", true},
    {"42.0.node1.json", "42.batch", false},
    {"420.0.node1.json", "42", false}, /* another job whose id starts alike */
    {"42.0.node1.json.tmp", "42", false},
    {"42.0.node1.jso", "42", false},
    {"42.json", "42", true}, /* "42." and ".json" overlap: taken, as it always was */
    {".", "42", false},
    {"41.0.node1.json", "42", false},
};

START_TEST(test_spool_names)
{
    ck_assert_msg(cli_spool_name_matches(spool_cases[_i].name, spool_cases[_i].job) ==
                      spool_cases[_i].match,
                  "%s for job %s", spool_cases[_i].name, spool_cases[_i].job);
}
END_TEST

static const struct {
    const char *comment;
    int rc;
    const char *msg;
} comment_cases[] = {
    {"", -ENOMSG, "job 7 has no numaplace summary in accounting"},
    {NULL, -ENOMSG, "no numaplace summary"},
    {"checked by the admin", -ENOMSG, "another tool's text"},
    {"JS1:eJyrVg==", -ENOMSG, "another tool's text"},
    {"NPS9:abc", -EPROTO, ""},
    {"NPS1:!!!not base64", -EBADMSG, ""},
    {"NPS1:aGVsbG8=", -EBADMSG, ""}, /* base64 of something that is not zlib */
};

START_TEST(test_admin_comment)
{
    struct np_err err = {0};
    json_t *summary = (json_t *)1;
    int rc = cli_decode_admin_comment(comment_cases[_i].comment, 7, &summary, &err);

    ck_assert_msg(rc == comment_cases[_i].rc, "rc %d (%s)", rc, err.msg);
    ck_assert_ptr_null(summary);
    ck_assert_msg(strstr(err.msg, comment_cases[_i].msg), "'%s' lacks '%s'", err.msg,
                  comment_cases[_i].msg);
}
END_TEST

/* A summary numaplace stored comes back. */
START_TEST(test_admin_comment_round_trip)
{
    json_t *s = np_summary_new(7), *back = NULL;
    struct np_err err = {0};
    char *stored = NULL;

    ck_assert_int_gt(np_summary_fit(s, NP_SUMMARY_STORED_MAX, &stored, &err), 0);
    ck_assert_int_eq(cli_decode_admin_comment(stored, 7, &back, &err), 0);
    ck_assert(json_equal(back, s));
    free(stored);
    json_decref(back);
    json_decref(s);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Spool reports as root reads them: bounded, no symlink followed, files only. */
START_TEST(test_load_report_limits)
{
    char dir[] = "/tmp/np-spool-XXXXXX", path[96], link[96];
    struct np_err err = {0};
    json_t *r = NULL;
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/1.0.n.json", dir);
    f = fopen(path, "w");
    fputs("{\"schema\":\"numaplace.report/1\"}\n", f);
    fclose(f);
    ck_assert_int_eq(cli_load_report(path, 1024, NULL, &r, NULL, &err), 0);
    ck_assert_ptr_nonnull(r);
    json_decref(r);
    ck_assert_int_eq(cli_load_report(path, 8, NULL, &r, NULL, &err), -EFBIG); /* over the limit */
    ck_assert_ptr_null(r);
    snprintf(link, sizeof(link), "%s/2.0.n.json", dir);
    ck_assert_int_eq(symlink(path, link), 0);
    ck_assert_int_eq(cli_load_report(link, 1024, NULL, &r, NULL, &err), -ELOOP); /* not followed */
    ck_assert_int_eq(cli_load_report(dir, 1024, NULL, &r, NULL, &err), -EINVAL); /* not a file */
    unlink(link);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* Root trusts only what numaplaced wrote: owned by root or the helper's uid, not
 * writable by group or others (an ACL granting write shows in the group bits). */
static const struct trust_case {
    const char *what;
    mode_t mode;
    bool other_owner; /* chowned away from the trusted writers (needs root; else it is so) */
    const char *acl;  /* setfacl-style text applied after chmod, or NULL */
    int expect;
} trust_cases[] = {
    {"numaplaced's, read ACL", 0600, false, "u::rw-,u:54321:r--,g::---,m::r--,o::---", 0},
    {"numaplaced's, no ACL", 0600, false, NULL, 0},
    {"the user's own file", 0600, true, NULL, -EPERM},
    {"group-writable", 0620, false, NULL, -EPERM},
    {"world-writable", 0602, false, NULL, -EPERM},
    {"an ACL lets a user write", 0600, false, "u::rw-,u:54321:rw-,g::---,m::rw-,o::---", -EPERM},
};

START_TEST(test_load_report_trust)
{
    const struct trust_case *c = &trust_cases[_i];
    char dir[] = "/tmp/np-trust-XXXXXX", path[96];
    struct cli_report_trust trust = {.helper_uid = geteuid()};
    struct cli_report_origin origin = {0};
    struct np_err err = {0};
    json_t *r = NULL;
    FILE *f;
    int rc;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/1.0.n.json", dir);
    f = fopen(path, "w");
    fputs("{\"schema\":\"numaplace.report/1\"}\n", f);
    fclose(f);
    ck_assert_int_eq(chmod(path, c->mode), 0);
    if (c->other_owner) {
        if (geteuid() == 0)
            ck_assert_int_eq(chown(path, 54321, (gid_t)-1), 0);
        else
            trust.helper_uid = geteuid() + 1; /* owned by us, whom root would not trust */
    }
    if (c->acl) {
        acl_t acl = acl_from_text(c->acl);
        ck_assert_ptr_nonnull(acl);
        if (acl_set_file(path, ACL_TYPE_ACCESS, acl) < 0 && errno == EOPNOTSUPP) {
            fprintf(stderr, "SKIPPED: /tmp refuses POSIX ACLs: case \"%s\" not tested\n", c->what);
            acl_free(acl);
            goto out;
        }
        acl_free(acl);
    }
    rc = cli_load_report(path, 1024, &trust, &r, &origin, &err);
    ck_assert_msg(rc == c->expect, "%s: %d (%s)", c->what, rc, err.msg);
    if (rc < 0) {
        ck_assert_ptr_null(r);
        ck_assert_ptr_nonnull(strstr(err.msg, path)); /* names the file */
        ck_assert_ptr_nonnull(strstr(err.msg, "not trusted"));
    } else {
        ck_assert_uint_eq(origin.owner, geteuid());
        ck_assert_int_eq(origin.has_reader, c->acl != NULL);
        if (c->acl)
            ck_assert_uint_eq(origin.reader, 54321);
    }
    json_decref(r);
    /* without a trust (a user reading with their own rights) any file of theirs loads */
    ck_assert_int_eq(cli_load_report(path, 1024, NULL, &r, NULL, &err), 0);
    json_decref(r);
out:
    unlink(path);
    rmdir(dir);
}
END_TEST

/* The epilog believes no report about whose it is: job, uid and node must be
 * Slurm's. */
static const struct own_case {
    const char *report;
    int expect;
} own_cases[] = {
    {"{\"job_id\": 42, \"uid\": 1000, \"node\": \"n1\"}", 0},
    {"{\"job_id\": 42, \"uid\": 0, \"node\": \"n1\"}", -EINVAL},    /* claims root */
    {"{\"job_id\": 42, \"uid\": 1000, \"node\": \"n2\"}", -EINVAL}, /* another node's part */
    {"{\"job_id\": 43, \"uid\": 1000, \"node\": \"n1\"}", -EINVAL}, /* another job */
    {"{\"job_id\": 42, \"node\": \"n1\"}", -EINVAL},                /* no uid */
    {"{\"job_id\": 42, \"uid\": 1000}", -EINVAL},                   /* no node */
    {"{\"job_id\": 42, \"uid\": \"1000\", \"node\": \"n1\"}", -EINVAL},
};

START_TEST(test_report_is_own)
{
    json_t *r = json_loads(own_cases[_i].report, 0, NULL);
    struct np_err err = {0};

    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(cli_report_is_own(r, 42, 1000, "n1", &err), own_cases[_i].expect);
    if (own_cases[_i].expect)
        ck_assert_ptr_nonnull(strstr(err.msg, "Slurm says job 42, uid 1000"));
    json_decref(r);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("cli_accounting");
    TCase *tc = tcase_create("parse");

    tcase_add_loop_test(tc, test_sacct_job, 0, N(sacct_cases));
    tcase_add_loop_test(tc, test_jobs_line, 0, N(jobs_cases));
    tcase_add_loop_test(tc, test_config_value, 0, N(config_cases));
    tcase_add_loop_test(tc, test_spool_names, 0, N(spool_cases));
    tcase_add_loop_test(tc, test_admin_comment, 0, N(comment_cases));
    tcase_add_test(tc, test_admin_comment_round_trip);
    tcase_add_test(tc, test_load_report_limits);
    tcase_add_loop_test(tc, test_load_report_trust, 0, N(trust_cases));
    tcase_add_loop_test(tc, test_report_is_own, 0, N(own_cases));
    suite_add_tcase(suite, tc);
    return np_test_run(suite);
}
