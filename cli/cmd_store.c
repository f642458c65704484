/* `numaplace store` (the epilog's call): this node's reports merged into the job's summary in
 * its AdminComment, read back, retried against concurrent writers (numaplace(1)). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "numaplace/summary.h"

#include "accounting.h"
#include "cli.h"
#include "options.h"
#include "parse.h"
#include "store.h"

/* This node's part of the job, saved as pending before it goes to slurmdbd and removed only
 * once it is stored and confirmed (store.h): a store that fails or is killed leaves it
 * for the next store on this node or `numaplace store --pending`. */
static int store_durably(uint32_t job_id, const char *spool, const json_t *part,
                         const struct np_log *log, struct np_err *err)
{
    const struct store_limits limits = {.record_wait_s = STORE_EPILOG_RECORD_S,
                                        .total_s = STORE_EPILOG_WRITE_S};
    struct store_costs costs = {0};
    struct np_err perr = {0};
    int dirfd, fd = -1, rc;
    char line[256];

    dirfd = store_pending_open(spool, true, &perr);
    if (dirfd >= 0)
        fd = store_pending_hold(dirfd, job_id, part, log, &perr);
    if (fd == -EBUSY) { /* `store --pending` took this very part meanwhile: it stores it */
        close(dirfd);
        np_logf(log, NP_LOG_INFO, "job %" PRIu32 ": %s", job_id, perr.msg);
        return 0;
    }
    if (fd < 0)
        np_logf(log, NP_LOG_WARNING,
                "job %" PRIu32 ": this node's part cannot wait in the spool if slurmdbd fails: %s",
                job_id, perr.msg);
    rc = store_commit(job_id, part, &limits, &costs, log, err);
    store_costs_format(&costs, line, sizeof(line));
    if (rc == 0 && costs.deposited)
        np_logf(log, NP_LOG_INFO,
                "job %" PRIu32 ": this node's part left in %s for the job's one merge (waited "
                "%.1f s for the job's record, %.1f s in all)",
                job_id, store_parts_dir(), costs.record_wait_s, costs.total_s);
    else if (rc == 0)
        np_logf(log, NP_LOG_INFO, "job %" PRIu32 ": summary stored in AdminComment (%ld bytes; %s)",
                job_id, costs.stored_bytes, line);
    else if (rc == -EFBIG) /* by design: logged, nothing waits */
        np_logf(log, NP_LOG_INFO, "job %" PRIu32 ": %s", job_id, err->msg);
    else if (fd >= 0 && rc != -EEXIST && rc != -E2BIG)
        np_logf(log, NP_LOG_WARNING,
                "job %" PRIu32 ": this node's part waits in %s/%s: the next numaplace store on "
                "this node or `numaplace store --pending` stores it",
                job_id, spool, STORE_PENDING_DIR);
    if (fd >= 0) /* never stored: the job's reports stay in the spool, nothing to retry */
        store_pending_release(dirfd, job_id, fd,
                              rc == 0 || rc == -EEXIST || rc == -E2BIG || rc == -EFBIG);
    if (dirfd >= 0)
        close(dirfd);
    return rc;
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
        const int rc = acct_sacct_job(job_id, &who->uid, &comment, NULL, err);
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

/* A node count from slurmd's environment ("4"), 0 when absent or not a count. */
static long env_count(const char *name)
{
    const char *v = getenv(name);
    char *end = NULL;
    long n;

    if (!v || !*v)
        return 0;
    n = strtol(v, &end, 10);
    return *end || n < 0 ? 0 : n;
}

/* The job's nodes, expanded ("node1,node2"; new string, NULL when unknown or not believed), from
 * @p nodes (SLURM_JOB_NODELIST or --nodes), else SLURM_NODELIST (22.05's epilog has only that),
 * else slurmctld's record of the job, read as its fields (acct_controller_job), never from
 * `scontrol show job`'s text, where a job name can plant " NodeList=". Never more names than the
 * job has nodes: a longer list is not believed (logged), and is never expanded. */
static char *job_nodes(uint32_t job_id, const char *nodes, const struct np_log *log)
{
    struct acct_controller_job job;
    long count = env_count("SLURM_JOB_NUM_NODES");
    const char *list = nodes && *nodes ? nodes : getenv("SLURM_NODELIST");
    char *expanded = NULL;

    memset(&job, 0, sizeof(job));
    if ((!list || !*list || count <= 0) && acct_controller_job(job_id, &job, NULL) == 0) {
        if (!list || !*list)
            list = job.nodes;
        if (count <= 0)
            count = job.num_nodes;
    }
    if (list && *list) {
        expanded = acct_hostlist_expand(list, count);
        if (!expanded && errno == E2BIG)
            np_logf(log, NP_LOG_WARNING,
                    "job %" PRIu32 ": the node list \"%.64s%s\" names more than the job's %ld "
                    "nodes: not used, the summary names no missing nodes",
                    job_id, list, strlen(list) > 64 ? "..." : "", count);
    }
    acct_controller_job_free(&job);
    return expanded;
}

/**
 * Store this node's reports of @p job_id (from @p spool) into the job's AdminComment: merge them
 * into whatever numaplace summary is stored already (every node's epilog adds its own), fit it
 * under NP_SUMMARY_STORED_MAX, write it to slurmdbd (acct_set_admin_comment), and read it back
 * with sacct; a concurrent writer that overwrote this node's part is retried
 * with a random back-off. Never overwrites another tool's AdminComment. @p nodes: the job's
 * node list (a Slurm hostlist) or NULL to skip the missing-node bookkeeping. Messages go to
 * @p log (the epilog logs them to syslog).
 * @return 0, or -errno with @p err
 */
static int acct_store(uint32_t job_id, const char *spool, const char *nodes,
                      const struct np_log *log, struct np_err *err)
{
    const double started = np_monotonic_s();
    char job_arg[16], *expanded = NULL;
    json_t *reports = json_array(), *mine = NULL, *report;
    struct store_identity who;
    int denied, bad, n, rc = 0;
    size_t i;

    snprintf(job_arg, sizeof(job_arg), "%" PRIu32, job_id);
    if ((rc = store_identity(job_id, &who, err)) < 0)
        goto out;
    n = acct_spool_reports(spool, job_arg, reports, &denied, &bad, NULL, err);
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
    expanded = job_nodes(job_id, nodes, log);
    if (expanded)
        np_summary_expect_nodes(mine, expanded, NULL);
    rc = store_durably(job_id, spool, mine, log, err);
    if (rc == -EFBIG)
        rc = 0;
out:
    free(expanded);
    json_decref(mine);
    json_decref(reports);
    /* Parts of earlier jobs left waiting (slurmdbd was down): while slurmdbd answers. */
    if (rc != -EIO)
        store_pending_pass(spool, job_id, STORE_PENDING_PER_EPILOG, started + STORE_EPILOG_S, log);
    return rc;
}

/* `numaplace store --pending`: the parts this node could not store yet (a timer's call). */
static int cmd_store_pending(void)
{
    struct np_log log = {cli_stderr_log, NULL};
    const int waiting = store_pending_pass(cli.spool_dir, 0, 0, 0, &log);

    if (waiting < 0) {
        fprintf(stderr, "numaplace: store --pending: %s\n", strerror(-waiting));
        return 1;
    }
    if (waiting > 0)
        fprintf(stderr, "numaplace: store --pending: %d job(s) still wait for accounting\n",
                waiting);
    return waiting > 0 ? 1 : 0;
}

/* EpilogSlurmctld runs as SlurmUser ("SlurmUser = slurm(64030)" in scontrol's config). */
static bool is_slurm_user(uid_t uid)
{
    char *out = NULL, *user = NULL, *argv[] = {"scontrol", "show", "config", NULL};
    const char *at;
    bool yes = false;

    if (acct_run(argv, &out, NULL, 0, NULL) == 0)
        user = cli_config_value(out, "SlurmUser");
    if (user && (at = strchr(user, '(')))
        yes = strtoul(at + 1, NULL, 10) == uid;
    free(user);
    free(out);
    return yes;
}

/* `numaplace store --merge JOBID` (EpilogSlurmctld: etc/numaplace-epilog-slurmctld), or
 * `store --merge --pending` (a timer on the controller host; @p job NULL). */
static int cmd_store_merge(const char *job)
{
    /* A job's merge runs in EpilogSlurmctld's time (STORE_EPILOG_S in all); the pass has a timer's.
     */
    const struct store_limits limits = {.record_wait_s = job ? STORE_EPILOG_RECORD_S : 120,
                                        .total_s = job ? STORE_EPILOG_WRITE_S : 120,
                                        .merged = true};
    struct np_log log = {cli_stderr_log, NULL};
    struct np_err err = {0};
    const char *dir = store_parts_dir();
    uint32_t id = 0;

    if (job && cli_job_id("store --merge", job, &id) < 0)
        return 2;
    if (getuid() != 0 && !is_slurm_user(getuid())) {
        fprintf(stderr, "numaplace: store --merge writes Slurm accounting: root or SlurmUser only "
                        "(EpilogSlurmctld)\n");
        return 1;
    }
    if (!dir) {
        fprintf(stderr, "numaplace: store --merge: NUMAPLACE_PARTS_DIR is not set (an absolute "
                        "path): no parts to merge\n");
        return 2;
    }
    if (store_merge(dir, id, &limits, &log, &err) < 0) {
        fprintf(stderr, "numaplace: store --merge: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* `numaplace store JOBID`: the epilog's call (etc/numaplace-epilog). */
int cmd_store(int argc, char **argv)
{
    struct np_log log = {cli_stderr_log, NULL};
    struct np_err err = {0};
    const char *nodes = getenv("SLURM_JOB_NODELIST");
    uint32_t id;
    size_t left;

    const bool pending = cli.opt[CLI_STORE_PENDING] != NULL;

    if (cli.opt[CLI_STORE_NODES])
        nodes = cli.opt[CLI_STORE_NODES];
    if ((pending ? 1 : 0) + (argc > 1 ? 1 : 0) != 1 ||
        (cli.opt[CLI_STORE_NODES] && (pending || cli.opt[CLI_STORE_MERGE]))) {
        fprintf(stderr, "numaplace: store: usage: store JOBID [--nodes HOSTLIST], store --pending, "
                        "store --merge JOBID, or store --merge --pending\n");
        return 2;
    }
    if (cli.opt[CLI_STORE_MERGE])
        return cmd_store_merge(pending ? NULL : argv[1]);
    if (pending) {
        if (getuid() != 0) {
            fprintf(stderr, "numaplace: store writes Slurm accounting: root only\n");
            return 1;
        }
        return cmd_store_pending();
    }
    if (cli_job_id("store", argv[1], &id) < 0)
        return 2;
    if (getuid() != 0) {
        fprintf(stderr, "numaplace: store writes Slurm accounting: root only (the epilog)\n");
        return 1;
    }
    left = cli_wait_for_steps_to_end(id, 10.0, false);
    if (left) /* a spool that refuses reports (numaplaced holds them): said, not silent */
        fprintf(stderr,
                "numaplace: store: job %" PRIu32
                ": %zu step(s) numaplaced tracks on this node still have "
                "no report after 10 s (its log says why: a full spool holds them); stored "
                "without them\n",
                id, left);
    if (acct_store(id, cli.spool_dir, nodes, &log, &err) < 0) {
        fprintf(stderr, "numaplace: store: %s\n", err.msg);
        return 1;
    }
    return 0;
}
