/* `numaplace store` (the epilog's call): this node's reports merged into the job's summary in
 * its AdminComment, read back, retried against concurrent writers (numaplace(1)). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "numaplace/codec.h"
#include "numaplace/report_model.h"
#include "numaplace/summary.h"
#include "numaplace/summary_model.h"

#include "accounting.h"
#include "cli.h"
#include "parse.h"

/* The summary stored for the job in slurmdbd (where the epilogs write it; slurmctld does not
 * see those writes). *current NULL: nothing stored yet. -EEXIST: another tool's AdminComment. */
static int stored_summary(uint32_t job_id, json_t **current, struct np_err *err)
{
    char *comment = NULL;
    uid_t uid;
    int rc;

    *current = NULL;
    comment = acct_controller_admin_comment(job_id);
    if (comment && comment[0] &&
        strncmp(comment, NP_STORED_PREFIX, strlen(NP_STORED_PREFIX)) != 0) {
        free(comment);
        return np_err_set(err, -EEXIST,
                          "job %" PRIu32 "'s AdminComment holds another tool's text: numaplace "
                          "does not overwrite it (the summary stays in the spool)",
                          job_id);
    }
    free(comment);
    comment = NULL;
    if (acct_sacct_admin_comment(job_id, &uid, &comment, NULL) < 0 || !comment || !comment[0]) {
        free(comment);
        return 0; /* not there yet, or empty: store as the first */
    }
    rc = np_stored_decode(comment, current, err);
    free(comment);
    if (rc == -ENOMSG)
        return np_err_set(err, -EEXIST,
                          "job %" PRIu32 "'s AdminComment holds another tool's text: numaplace "
                          "does not overwrite it (the summary stays in the spool)",
                          job_id);
    if (rc < 0) /* a corrupt summary of ours: replaced */
        *current = NULL;
    return 0;
}

/* Who the job is and where this runs, from Slurm and this node, never from a report. */
struct store_identity {
    uid_t uid;
    char user[64];  /* "" when the uid has no name here */
    char host[256]; /* this node's own name: what numaplaced names its reports with */
    char node[256]; /* Slurm's name for it (SLURMD_NODENAME): the key of this node's part */
};

/* The epilog's environment (SLURM_JOB_ID, SLURM_JOB_UID, SLURM_JOB_USER, SLURMD_NODENAME), else
 * sacct and the node's own name (an administrator running `numaplace store` by hand). */
static int store_identity(uint32_t job_id, struct store_identity *who, struct np_err *err)
{
    const char *env_job = getenv("SLURM_JOB_ID"), *env_uid = getenv("SLURM_JOB_UID");
    const char *env_user = getenv("SLURM_JOB_USER"), *env_node = getenv("SLURMD_NODENAME");
    const struct passwd *pw;
    char *end = NULL;

    memset(who, 0, sizeof(*who));
    if (env_job && *env_job && (strtoull(env_job, &end, 10) != job_id || *end))
        return np_err_set(err, -EINVAL,
                          "job %" PRIu32 " is not the epilog's job (SLURM_JOB_ID=%s): refused",
                          job_id, env_job);
    if (env_uid && *env_uid) {
        const unsigned long v = strtoul(env_uid, &end, 10);
        if (*end || v >= (uid_t)-1)
            return np_err_set(err, -EINVAL, "SLURM_JOB_UID=\"%s\" is not a uid", env_uid);
        who->uid = (uid_t)v;
    } else {
        char *comment = NULL;
        const int rc = acct_sacct_admin_comment(job_id, &who->uid, &comment, err);
        free(comment);
        if (rc < 0)
            return np_err_set(err, rc,
                              "the job's user is unknown: no SLURM_JOB_UID (not run by the "
                              "epilog) and sacct: %s",
                              err ? err->msg : "failed");
    }
    pw = env_user && *env_user ? getpwnam(env_user) : NULL;
    if (!pw || pw->pw_uid != who->uid)
        pw = getpwuid(who->uid); /* the uid decides; a name that is not its own is ignored */
    if (pw)
        snprintf(who->user, sizeof(who->user), "%s", pw->pw_name);
    if (gethostname(who->host, sizeof(who->host) - 1) < 0)
        return np_err_set(err, -errno, "gethostname: %s", strerror(errno));
    snprintf(who->node, sizeof(who->node), "%s", env_node && *env_node ? env_node : who->host);
    return 0;
}

/* Keep only the reports of this job, its user and this node, and key them by Slurm's node name:
 * a report that names another node or user (numaplaced never writes one) is left out, logged.
 * @return the number kept */
static size_t keep_own_reports(json_t *reports, uint32_t job_id, const struct store_identity *who,
                               const struct np_log *log)
{
    for (size_t i = 0; i < json_array_size(reports);) {
        json_t *report = json_array_get(reports, i);
        struct np_err why = {0};

        if (cli_report_is_own(report, job_id, who->uid, who->host, &why) < 0) {
            np_logf(log, NP_LOG_WARNING, "job %" PRIu32 ": left out %s", job_id, why.msg);
            json_array_remove(reports, i);
            continue;
        }
        json_object_set_new(report, "node", json_string(who->node));
        i++;
    }
    return json_array_size(reports);
}

/* Every node of @p mine is in @p stored (the read-back check of a concurrent store). */
static bool holds_nodes_of(json_t *stored, json_t *mine)
{
    struct np_sum st, me;
    bool all = true;

    if (np_sum_decode(stored, &st, NULL) != 0)
        return false;
    if (np_sum_decode(mine, &me, NULL) != 0) {
        np_sum_free(&st);
        return false;
    }
    for (size_t i = 0; all && i < me.nnodes; i++)
        all = np_sum_node_get(&st, me.nodes[i].name) != NULL;
    np_sum_free(&st);
    np_sum_free(&me);
    return all;
}

int acct_store(uint32_t job_id, const char *spool, const char *nodes, const struct np_log *log,
               struct np_err *err)
{
    enum { ATTEMPTS = 8 };
    char job_arg[16], *expanded = NULL;
    json_t *reports = json_array(), *mine = NULL, *report;
    struct store_identity who;
    int denied, bad, n, rc = 0;
    size_t i;

    snprintf(job_arg, sizeof(job_arg), "%" PRIu32, job_id);
    if ((rc = store_identity(job_id, &who, err)) < 0)
        goto out;
    n = acct_spool_reports(spool, job_arg, reports, &denied, &bad, err);
    if (n < 0)
        goto out;
    if (n > 0)
        n = (int)keep_own_reports(reports, job_id, &who, log);
    if (n == 0) {
        np_logf(log, NP_LOG_INFO, "job %s: no report on this node in %s: nothing to store", job_arg,
                spool);
        goto out;
    }
    mine = np_summary_new(job_id);
    if (!mine) {
        rc = np_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    json_array_foreach(reports, i, report)
    {
        struct np_err rerr = {0};
        if (np_summary_add_report(mine, report, &rerr) < 0)
            np_logf(log, NP_LOG_WARNING, "job %s: a report left out: %s", job_arg, rerr.msg);
    }
    if (who.user[0])
        np_summary_set_user(mine, who.user, NULL);
    if (nodes && *nodes)
        expanded = acct_expand_hostlist(nodes);
    srandom((unsigned)(getpid() ^ time(NULL)));
    /* slurmdbd gets slurmctld's record of the job a few seconds after the job has ended, and
     * not before the epilogs are done: `numaplace store` runs detached from the epilog
     * (etc/numaplace-epilog) and waits here, bounded, so the nodes' writes meet a real row. */
    for (int waited = 0; waited < 480; waited++) {
        uid_t uid;
        char *comment = NULL;
        bool full = false;
        const int known = acct_sacct_job(job_id, &uid, &comment, &full, NULL);
        free(comment);
        if (known == 0 && full)
            break;
        if (known < 0 && known != -ENOENT)
            break; /* sacct itself fails: the write below says why */
        usleep(250000);
    }
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
        json_t *merged = NULL, *check = NULL;
        char *stored = NULL;
        long len;

        rc = stored_summary(job_id, &merged, err);
        if (rc < 0)
            break;
        if (!merged)
            merged = json_deep_copy(mine);
        else if ((rc = np_summary_merge(merged, mine, err)) < 0) {
            json_decref(merged);
            break;
        }
        if (expanded)
            np_summary_expect_nodes(merged, expanded, NULL);
        len = np_summary_fit(merged, NP_SUMMARY_STORED_MAX, &stored, err);
        json_decref(merged);
        if (len < 0) {
            rc = (int)len;
            break;
        }
        rc = acct_set_admin_comment(job_id, stored, err);
        free(stored);
        if (rc < 0)
            break;
        /* Read back twice: soon, and again after the other nodes' epilogs (which run at the same
         * time) have had time to finish a write they based on what was stored before ours. A
         * part that was overwritten is merged in and written again. */
        usleep((useconds_t)(100000 + random() % 300000));
        if (stored_summary(job_id, &check, NULL) == 0 && check && holds_nodes_of(check, mine)) {
            json_decref(check);
            check = NULL;
            usleep((useconds_t)(2000000 + random() % 500000));
            if (stored_summary(job_id, &check, NULL) == 0 && check && holds_nodes_of(check, mine)) {
                json_decref(check);
                np_logf(log, NP_LOG_INFO,
                        "job %s: summary stored in AdminComment (%ld bytes, try %d)", job_arg, len,
                        attempt);
                rc = 0;
                goto out;
            }
        }
        json_decref(check);
        rc = np_err_set(err, -EAGAIN,
                        "job %s: this node's part was overwritten %d times by concurrent writers",
                        job_arg, attempt);
    }
out:
    free(expanded);
    json_decref(mine);
    json_decref(reports);
    return rc;
}

/* `numaplace store JOBID`: the epilog's call (etc/numaplace-epilog). */
int cmd_store(int argc, char **argv)
{
    struct np_log log = {cli_stderr_log, NULL};
    struct np_err err = {0};
    const char *nodes = getenv("SLURM_JOB_NODELIST");
    char *end;
    unsigned long id;

    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc) {
            nodes = argv[++i];
        } else {
            fprintf(stderr,
                    "numaplace: store: unexpected \"%s\" (usage: store JOBID [--nodes "
                    "HOSTLIST])\n",
                    argv[i]);
            return 2;
        }
    }
    if (argc < 2) {
        fprintf(stderr, "numaplace: store needs a JOBID\n");
        return 2;
    }
    id = strtoul(argv[1], &end, 10);
    if (*end || !id || id > UINT32_MAX || !isdigit((unsigned char)argv[1][0])) {
        fprintf(stderr, "numaplace: store: \"%s\" is not a job id (a number above 0)\n", argv[1]);
        return 2;
    }
    if (getuid() != 0) {
        fprintf(stderr, "numaplace: store writes Slurm accounting: root only (the epilog)\n");
        return 1;
    }
    cli_wait_for_steps_to_end((uint32_t)id, 10.0);
    if (acct_store((uint32_t)id, cli.spool_dir, nodes, &log, &err) < 0) {
        fprintf(stderr, "numaplace: store: %s\n", err.msg);
        return 1;
    }
    return 0;
}
