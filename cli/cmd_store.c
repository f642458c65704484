/* `numaplace store` (numaplace(1), store.h): the epilog's call, this node's reports as one part of
 * the job's AdminComment; the retry of parts left pending; a large job's parts merged once. */
#include "store.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "numaplace/summary.h"

#include "accounting.h"
#include "cli.h"
#include "options.h"
#include "parse.h"

/* One waiting part: 0 stored, 1 still waiting, -EIO slurmdbd unreachable (stop the pass). */
static int retry_one(int dirfd, uint32_t job_id, const struct store_limits *limits,
                     const struct np_log *log)
{
    struct store_costs costs = {0};
    struct np_err err = {0};
    struct stat st;
    json_t *part = NULL;
    bool drop = false;
    char line[256];
    int fd, rc;

    fd = store_pending_take(dirfd, job_id, &err);
    if (fd < 0)
        return fd == -EBUSY ? 1 : 0; /* another store has it, or it is gone */
    if (fstat(fd, &st) == 0 && time(NULL) - st.st_mtime > STORE_PENDING_MAX_AGE_S) {
        rc = np_err_set(&err, -ETIME, "it waited over %ld days", STORE_PENDING_MAX_AGE_S / 86400);
        drop = true;
    } else if ((rc = store_pending_load(fd, &part, &err)) < 0) {
        drop = true;
    } else {
        rc = store_commit(job_id, part, limits, &costs, log, &err);
        drop = rc == -EEXIST || rc == -E2BIG || rc == -EINVAL || rc == -EFBIG;
    }
    json_decref(part);
    store_costs_format(&costs, line, sizeof(line));
    if (rc == 0 && costs.deposited)
        np_logf(log, NP_LOG_INFO,
                "job %" PRIu32 ": this node's waiting part left in %s for the job's one merge",
                job_id, store_parts_dir());
    else if (rc == 0)
        np_logf(log, NP_LOG_INFO,
                "job %" PRIu32 ": this node's waiting part stored in AdminComment (%ld bytes; %s)",
                job_id, costs.stored_bytes, line);
    else if (drop)
        np_logf(log, NP_LOG_WARNING,
                "job %" PRIu32 ": this node's waiting part dropped: %s (its reports stay in the "
                "spool)",
                job_id, err.msg);
    else
        np_logf(log, NP_LOG_WARNING, "job %" PRIu32 ": this node's part still waits: %s", job_id,
                err.msg);
    store_pending_release(dirfd, job_id, fd, rc == 0 || drop);
    return rc == 0 || drop ? 0 : rc == -EIO ? -EIO : 1;
}

/* Store the parts waiting in <@p spool>/pending but job @p except (0: none), oldest first, at most
 * @p max_jobs (0: all), each while @p until (np_monotonic_s; 0: none) leaves STORE_PENDING_MIN_S,
 * stopping where slurmdbd is unreachable; one never storable or too old is dropped, logged.
 * @return the number of parts still waiting */
static int store_pending_pass(const char *spool, uint32_t except, int max_jobs, double until,
                              const struct np_log *log)
{
    uint32_t *jobs = calloc(STORE_PENDING_MAX_FILES, sizeof(*jobs));
    struct np_err err = {0};
    int dirfd, n, waiting = 0;

    if (!jobs)
        return -ENOMEM;
    dirfd = store_pending_open(spool, false, &err);
    if (dirfd < 0) {
        free(jobs);
        if (dirfd != -ENOENT)
            np_logf(log, NP_LOG_WARNING, "parts waiting for accounting: %s", err.msg);
        return dirfd == -ENOENT ? 0 : dirfd;
    }
    store_pending_sweep(dirfd, log);
    n = store_pending_list(dirfd, jobs, STORE_PENDING_MAX_FILES, &err);
    for (int i = 0, tried = 0; i < n; i++) {
        struct store_limits limits = {.record_wait_s = 20, .total_s = 120};
        const double left = until > 0 ? until - np_monotonic_s() : 0;
        int rc;

        if (jobs[i] == except)
            continue;
        if ((max_jobs > 0 && tried++ == max_jobs) || (until > 0 && left < STORE_PENDING_MIN_S)) {
            waiting += n - i;
            break;
        }
        if (until > 0) { /* ends by @p until: a quarter of what is left for the record at most */
            limits.record_wait_s = fmin(limits.record_wait_s, left / 4);
            limits.total_s = fmin(limits.total_s, left - limits.record_wait_s);
        }
        rc = retry_one(dirfd, jobs[i], &limits, log);
        if (rc == -EIO) { /* slurmdbd unreachable: the others would fail the same way */
            waiting += n - i;
            break;
        }
        waiting += rc > 0;
    }
    close(dirfd);
    free(jobs);
    return waiting;
}

/* The job's node count, node list (new string) and uid from its full record in slurmdbd. */
static int record_nodes(uint32_t job_id, long *nnodes, char **nodelist, uid_t *uid,
                        struct np_err *err)
{
    char id[16], *out = NULL, *list;
    char *argv[] = {"sacct", "-j", id, "-X", "-n", "-P", "-o", "NNodes,UID,NodeList", NULL};
    long n, u;
    int rc;

    snprintf(id, sizeof(id), "%" PRIu32, job_id);
    rc = acct_run(argv, &out, NULL, 0, err);
    if (rc != 0 || !out || sscanf(out, "%ld|%ld|", &n, &u) != 2 || n < 1 || u < 0) {
        free(out);
        return np_err_set(err, -EIO, "sacct gave no node count, uid and node list for job %" PRIu32,
                          job_id);
    }
    list = strchr(strchr(out, '|') + 1, '|') + 1;
    list[strcspn(list, "\n")] = '\0';
    *nnodes = n;
    *uid = (uid_t)u;
    *nodelist = strdup(list);
    free(out);
    return *nodelist ? 0 : np_err_set(err, -ENOMEM, "out of memory");
}

/* SLURM_JOB_UID when this runs as EpilogSlurmctld of job @p job_id; else @p uid stays. */
static void epilog_uid(uint32_t job_id, uid_t *uid)
{
    const char *job = getenv("SLURM_JOB_ID"), *user = getenv("SLURM_JOB_UID");
    char *end = NULL;
    unsigned long v;

    if (!job || !user || !*user || strtoul(job, &end, 10) != job_id || *end)
        return;
    v = strtoul(user, &end, 10);
    if (!*end && v < (uid_t)-1)
        *uid = (uid_t)v;
}

/* Every part of the job merged and stored once. @return 0 or -errno with @p err */
static int merge_job(const char *dir, uint32_t job_id, const struct store_limits *limits,
                     double parts_wait_s, const struct np_log *log, struct np_err *err)
{
    const double start = np_monotonic_s();
    struct store_parts_job job;
    struct store_parts_found found;
    struct store_costs costs = {0};
    char *nodelist = NULL, *expanded = NULL, line[256];
    json_t *merged = NULL;
    long nnodes = 0;
    uid_t uid = 0;
    int rc;

    rc = store_wait_for_record(job_id, limits->record_wait_s, err);
    if (rc == 0)
        rc = record_nodes(job_id, &nnodes, &nodelist, &uid, err);
    if (rc < 0)
        return rc;
    /* EpilogSlurmctld's own word for the job's user: slurmdbd's record can still say uid 0 right
     * after the job ends (seen under load), and every part would then be refused. */
    epilog_uid(job_id, &uid);
    if (nnodes <= store_max_nodes() && parts_wait_s > 0) {
        np_logf(log, NP_LOG_INFO, "job %" PRIu32 ": %ld node(s): each stores its own part", job_id,
                nnodes);
        free(nodelist);
        return 0;
    }
    /* The nodes leave their parts once they too see the record: a few seconds after it. */
    while (store_parts_count(dir, job_id) < nnodes && np_monotonic_s() - start < parts_wait_s)
        usleep(500000);
    rc = store_parts_merge(dir, job_id, uid, &job, &merged, &found, log, err);
    if (rc < 0) {
        free(nodelist);
        return rc;
    }
    expanded = acct_hostlist_expand(nodelist, nnodes); /* never more names than its nodes */
    if (expanded)
        np_summary_expect_nodes(merged, expanded, NULL);
    rc = store_commit(job_id, merged, limits, &costs, log, err);
    /* Never storable (another tool's AdminComment, too many nodes): the spools keep the reports. */
    if (rc == -EEXIST || rc == -E2BIG)
        np_logf(log, NP_LOG_WARNING, "job %" PRIu32 ": its %d parts dropped: %s", job_id,
                found.parts, err->msg);
    store_parts_release(dir, job_id, &job, rc == 0 || rc == -EEXIST || rc == -E2BIG);
    store_costs_format(&costs, line, sizeof(line));
    if (rc == 0)
        np_logf(log, NP_LOG_INFO,
                "job %" PRIu32 ": %d of %ld nodes' parts merged and stored in AdminComment (%ld "
                "bytes; %s; %d part(s) left out); %.1f s in all",
                job_id, found.parts, nnodes, costs.stored_bytes, line, found.rejected,
                np_monotonic_s() - start);
    free(expanded);
    free(nodelist);
    json_decref(merged);
    return rc;
}

/* `store --merge JOBID` (EpilogSlurmctld): once every node of the large job left its part in
 * @p parts_dir (or STORE_EPILOG_PARTS_S passed), merge and store them with one write (a smaller
 * job is its nodes'); @p job_id 0: each job waiting there. @return 0, or -errno (parts stay) */
static int store_merge(const char *parts_dir, uint32_t job_id, const struct store_limits *limits,
                       const struct np_log *log, struct np_err *err)
{
    uint32_t jobs[512];
    int n, waiting = 0;

    if (job_id)
        return merge_job(parts_dir, job_id, limits, STORE_EPILOG_PARTS_S, log, err);
    /* The pass: parts a merge could not store (slurmdbd down), or that came after it. */
    n = store_parts_list(parts_dir, jobs, sizeof(jobs) / sizeof(jobs[0]), err);
    if (n < 0)
        return n == -ENOENT ? 0 : n;
    for (int i = 0; i < n; i++) {
        struct np_err jerr = {0};
        const int rc = merge_job(parts_dir, jobs[i], limits, 0, log, &jerr);
        if (rc < 0 && rc != -EBUSY) {
            np_logf(log, NP_LOG_WARNING, "job %" PRIu32 ": its parts still wait: %s", jobs[i],
                    jerr.msg);
            waiting++;
        }
        if (rc == -EIO) /* slurmdbd unreachable: the others would fail the same way */
            break;
    }
    return waiting ? np_err_set(err, -EAGAIN, "%d job(s)' parts still wait for accounting", waiting)
                   : 0;
}

/* This node's part of the job, pending until it is stored and confirmed (store.h). */
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

/* From the epilog's environment, else (an administrator's store) sacct and the node's own name. */
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
        struct np_err why = {0}; /* apart from err: a message is never formatted into itself */
        const int rc = acct_sacct_job(job_id, &who->uid, &comment, NULL, &why);
        free(comment);
        if (rc < 0)
            return np_err_set(err, rc,
                              "the job's user is unknown: no SLURM_JOB_UID (not run by the "
                              "epilog) and sacct: %s",
                              why.msg[0] ? why.msg : "failed");
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

/* Keep (and key by Slurm's node name) the reports of this job, user and node; log any other. */
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

/* The job's nodes, expanded ("node1,node2"; new string, NULL when unknown or not believed), from
 * @p nodes (SLURM_JOB_NODELIST or --nodes), else SLURM_NODELIST (22.05's epilog has only that),
 * else slurmctld's record's fields (never `scontrol show job`'s text, where a job name can plant
 * " NodeList="). A list naming more hosts than the job has nodes is not believed (logged). */
static char *job_nodes(uint32_t job_id, const char *nodes, const struct np_log *log)
{
    struct acct_controller_job job;
    long count = store_env_count("SLURM_JOB_NUM_NODES", 0);
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

/* This node's reports of @p job_id in @p spool, as one part, into the job's AdminComment; @p nodes:
 * the job's hostlist, or NULL (job_nodes). @return 0, or -errno with @p err */
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

/* The store's messages, "numaplace: level: msg" on stderr: the epilog passes them to syslog. */
static void log_to_stderr(enum np_log_level level, const char *msg, void *arg)
{
    (void)arg;
    fprintf(stderr, "numaplace: %s: %s\n", np_log_level_name(level), msg);
}

static const struct np_log stderr_log = {log_to_stderr, NULL};

/* `numaplace store --pending`: the parts this node could not store yet (a timer's call). */
static int cmd_store_pending(void)
{
    int waiting;

    if (getuid() != 0)
        return cli_error(1, "store writes Slurm accounting: root only");
    waiting = store_pending_pass(cli.spool_dir, 0, 0, 0, &stderr_log);
    if (waiting < 0)
        return cli_error(1, "store --pending: %s", strerror(-waiting));
    if (waiting > 0)
        return cli_error(1, "store --pending: %d job(s) still wait for accounting", waiting);
    return 0;
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

/* `store --merge JOBID` (EpilogSlurmctld), or `store --merge --pending` (a timer: @p job NULL). */
static int cmd_store_merge(const char *job)
{
    /* A job's merge runs in EpilogSlurmctld's time (STORE_EPILOG_S); the pass has a timer's. */
    const struct store_limits limits = {.record_wait_s = job ? STORE_EPILOG_RECORD_S : 120,
                                        .total_s = job ? STORE_EPILOG_WRITE_S : 120,
                                        .merged = true};
    struct np_err err = {0};
    const char *dir = store_parts_dir();
    uint32_t id = 0;

    if (job && cli_job_id("store --merge", job, &id) < 0)
        return 2;
    if (getuid() != 0 && !is_slurm_user(getuid()))
        return cli_error(1, "store --merge writes Slurm accounting: root or SlurmUser only "
                            "(EpilogSlurmctld)");
    if (!dir)
        return cli_error(2, "store --merge: NUMAPLACE_PARTS_DIR is not set (an absolute "
                            "path): no parts to merge");
    if (store_merge(dir, id, &limits, &stderr_log, &err) < 0)
        return cli_error(1, "store --merge: %s", err.msg);
    return 0;
}

/* `numaplace store JOBID`: the epilog's call (etc/numaplace-epilog). */
int cmd_store(int argc, char **argv)
{
    struct np_err err = {0};
    const char *nodes =
        cli.opt[CLI_STORE_NODES] ? cli.opt[CLI_STORE_NODES] : getenv("SLURM_JOB_NODELIST");
    const bool pending = cli.opt[CLI_STORE_PENDING] != NULL;
    uint32_t id;
    size_t left;

    if ((pending ? 1 : 0) + (argc > 1 ? 1 : 0) != 1 ||
        (cli.opt[CLI_STORE_NODES] && (pending || cli.opt[CLI_STORE_MERGE])))
        return cli_error(2, "store: usage: store JOBID [--nodes HOSTLIST], store --pending, "
                            "store --merge JOBID, or store --merge --pending");
    if (cli.opt[CLI_STORE_MERGE])
        return cmd_store_merge(pending ? NULL : argv[1]);
    if (pending)
        return cmd_store_pending();
    if (cli_job_id("store", argv[1], &id) < 0)
        return 2;
    if (getuid() != 0)
        return cli_error(1, "store writes Slurm accounting: root only (the epilog)");
    left = cli_wait_for_steps_to_end(id, 10.0, false);
    if (left) /* a spool that refuses reports (numaplaced holds them): said, not silent */
        (void)cli_error(0,
                        "store: job %" PRIu32
                        ": %zu step(s) numaplaced tracks on this node still have no report after "
                        "10 s (its log says why: a full spool holds them); stored without them",
                        id, left);
    if (acct_store(id, cli.spool_dir, nodes, &stderr_log, &err) < 0)
        return cli_error(1, "store: %s", err.msg);
    return 0;
}
