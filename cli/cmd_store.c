/* `numaplace store` (numaplace(1)): the epilog's call, this node's reports as one part of the job's
 * summary in its AdminComment, written against concurrent writers and confirmed; the retry of
 * parts left pending; a large job's parts merged once and stored with one write (store.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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

#include "numaplace/codec.h"
#include "numaplace/summary.h"

#include "accounting.h"
#include "cli.h"
#include "options.h"
#include "parse.h"

/* sacct runs before slurmdbd counts as unreachable. */
#define SACCT_TRIES 3

/* A random share of @p s in [0, s): writers that collided do not collide again in step. */
static double jitter(double s)
{
    return s * (double)(random() % 1000) / 1000.0;
}

static double settle_s(void)
{
    const char *env = getenv("NUMAPLACE_STORE_SETTLE_S");
    char *end;
    double v;

    if (!env || !*env)
        return STORE_SETTLE_S;
    v = strtod(env, &end);
    return (*end || v < 0.5 || v > 60) ? STORE_SETTLE_S : v;
}

/* acct_sacct_job, tried again while it fails: a busy slurmdbd times sacct out now and then. */
static int sacct_job(uint32_t job_id, uid_t *uid, char **comment, bool *full, struct np_err *err)
{
    for (int tries = 1;; tries++) {
        const int rc = acct_sacct_job(job_id, uid, comment, full, err);
        if (rc != -EIO || tries == SACCT_TRIES)
            return rc;
        np_sleep_s(1 + jitter(1));
    }
}

static int another_tool(uint32_t job_id, struct np_err *err)
{
    return np_err_set(err, -EEXIST,
                      "job %" PRIu32 "'s AdminComment holds another tool's text: numaplace "
                      "does not overwrite it (the summary stays in the spool)",
                      job_id);
}

/* The job's stored AdminComment (@p text new, "" when empty) and our summary in it (@p summary
 * new, NULL when none or corrupt: a corrupt one of ours is replaced). A failing sacct is an
 * error, never "nothing stored": writing on it would drop every other node's part. */
static int read_stored(uint32_t job_id, char **text, json_t **summary, struct store_costs *costs,
                       struct np_err *err)
{
    const double t0 = np_monotonic_s();
    uid_t uid;
    int rc;

    *summary = NULL;
    rc = sacct_job(job_id, &uid, text, NULL, err);
    costs->reads++;
    costs->read_s += np_monotonic_s() - t0;
    if (rc < 0)
        return rc;
    if (!(*text)[0])
        return 0;
    rc = np_stored_decode(*text, summary, NULL);
    if (rc == -ENOMSG) {
        free(*text);
        *text = NULL;
        return another_tool(job_id, err);
    }
    if (rc < 0)
        *summary = NULL;
    return 0;
}

/* Every node of @p part is in @p stored. */
static bool holds_nodes_of(const json_t *stored, const json_t *part)
{
    const char *name;
    json_t *node;
    bool all =
        stored && np_summary_validate(stored, NULL) == 0 && np_summary_validate(part, NULL) == 0;

    json_object_foreach(all ? json_object_get(part, "nodes") : NULL, name, node)
    {
        all = all && np_summary_node_reported(stored, name); /* kept whole or folded */
    }
    return all;
}

/* slurmdbd's full record of job @p job_id, the only one a modify reaches, waited for up to @p max_s
 * (it comes after the epilogs). @return 0; -EIO: sacct failed SACCT_TRIES times (slurmdbd down:
 * the part stays pending); -ENOENT: not in time; with @p err */
static int store_wait_for_record(uint32_t job_id, double max_s, struct np_err *err)
{
    const double until = np_monotonic_s() + max_s;

    for (;;) {
        uid_t uid;
        char *comment = NULL;
        bool full = false;
        const int rc = sacct_job(job_id, &uid, &comment, &full, err);

        free(comment);
        if (rc == 0 && full)
            return 0;
        if (rc < 0 && rc != -ENOENT)
            return rc;
        if (np_monotonic_s() > until)
            return np_err_set(err, -ENOENT,
                              "slurmdbd has no full record of job %" PRIu32 " after %.0f s", job_id,
                              max_s);
        np_sleep_s(0.25);
    }
}

/* A count above 0 from the environment ("4"), else @p fallback. */
static long env_count(const char *name, long fallback)
{
    const char *v = getenv(name);
    char *end = NULL;
    const long n = v && *v ? strtol(v, &end, 10) : 0;

    return end && !*end && n > 0 ? n : fallback;
}

/* Compared with the full record's node count (slurmctld's shrinks as nodes end their epilogs). */
static long store_max_nodes(void)
{
    return env_count("NUMAPLACE_STORE_MAX_NODES", STORE_MAX_NODES);
}

static int too_many_nodes(uint32_t job_id, struct np_err *err)
{
    char id[16], *out = NULL;
    char *argv[] = {"sacct", "-j", id, "-X", "-n", "-P", "-o", "NNodes", NULL};
    const long max = store_max_nodes();
    long n = 0;

    snprintf(id, sizeof(id), "%" PRIu32, job_id);
    for (int tries = 0; tries < SACCT_TRIES; tries++) {
        const int rc = acct_run(argv, &out, NULL, 0, NULL);
        if (rc == 0)
            n = strtol(out, NULL, 10);
        free(out);
        out = NULL;
        if (rc == 0)
            break;
        np_sleep_s(1 + jitter(1));
    }
    if (n <= max)
        return 0;
    return np_err_set(err, -EFBIG,
                      "%ld nodes, over the %ld whose nodes each store their part in the one "
                      "AdminComment (NUMAPLACE_STORE_MAX_NODES)",
                      n, max);
}

/* One read-merge-write. @p text: what was read. 1: the read was too old to write on. */
static int write_merged(uint32_t job_id, const json_t *part, double settle,
                        struct store_costs *costs, char **text, struct np_err *err)
{
    const double t_read = np_monotonic_s();
    json_t *merged = NULL;
    char *stored = NULL;
    double t0;
    long len;
    int rc;

    rc = read_stored(job_id, text, &merged, costs, err);
    if (rc < 0)
        return rc;
    t0 = np_monotonic_s();
    if (!merged)
        merged = json_deep_copy(part);
    else if ((rc = np_summary_merge(merged, (json_t *)part, err)) < 0) {
        json_decref(merged);
        return rc;
    }
    len = np_summary_fit(merged, NP_SUMMARY_STORED_MAX, &stored, err);
    json_decref(merged);
    costs->merge_s += np_monotonic_s() - t0;
    if (len < 0)
        return (int)len;
    /* Others confirm on the promise that a write lands within SETTLE of its read. */
    if (np_monotonic_s() - t_read > settle / 2) {
        free(stored);
        return 1;
    }
    t0 = np_monotonic_s();
    rc = acct_set_admin_comment(job_id, stored, err);
    costs->writes++;
    costs->write_s += np_monotonic_s() - t0;
    costs->stored_bytes = len;
    free(stored);
    if (rc == 0 && np_monotonic_s() - t_read > settle)
        rc = 2;
    return rc;
}

/* A large job's part left for its one merge (store.h). */
static int deposit(uint32_t job_id, const json_t *part, struct store_costs *costs, double start,
                   struct np_err *err)
{
    const int rc = store_parts_deposit(store_parts_dir(), job_id, part, err);

    costs->deposited = rc == 0;
    costs->total_s = np_monotonic_s() - start;
    return rc;
}

/*
 * Merge @p part (borrowed: this node's part of job @p job_id) into the job's stored summary and
 * confirm it (store.h), never over another tool's AdminComment (-EEXIST) nor over a summary it
 * could not read (-EIO). A job on more than store_max_nodes() nodes is the single merger's: the
 * part is left in the parts directory (@p costs->deposited), or -EFBIG when the site has none.
 * @return 0; -EIO (slurmdbd unreachable); -ETIMEDOUT; -EEXIST; -E2BIG; -ENOENT (no such job in
 *         slurmdbd); -EFBIG; each with @p err
 */
static int store_commit(uint32_t job_id, const json_t *part, const struct store_limits *limits,
                        struct store_costs *costs, const struct np_log *log, struct np_err *err)
{
    const double settle = settle_s(), start = np_monotonic_s();
    double until;
    struct acct_controller_job controller;
    long controller_nodes = 0;
    int rc;

    memset(costs, 0, sizeof(*costs));
    srandom((unsigned)(getpid() ^ time(NULL)));
    /* slurmctld may still hold another tool's AdminComment that slurmdbd has not got yet. */
    if (acct_controller_job(job_id, &controller, NULL) == 0) {
        const bool other =
            controller.admin_comment[0] &&
            strncmp(controller.admin_comment, NP_STORED_PREFIX, strlen(NP_STORED_PREFIX)) != 0;
        controller_nodes = controller.num_nodes;
        acct_controller_job_free(&controller);
        if (other)
            return another_tool(job_id, err);
    }
    /* A large job by slurmctld's count: left for its merge at once, no sacct at all (thousands of
     * nodes polling slurmdbd for the record would load it; the count may shrink as nodes finish
     * their epilogs, and then the record's count below decides). */
    if (!limits->merged && store_parts_dir() && controller_nodes > store_max_nodes())
        return deposit(job_id, part, costs, start, err);
    rc = store_wait_for_record(job_id, limits->record_wait_s, err);
    costs->record_wait_s = np_monotonic_s() - start;
    if (rc < 0)
        return rc;
    rc = limits->merged ? 0 : too_many_nodes(job_id, err);
    if (rc == -EFBIG && store_parts_dir()) /* one merge stores the job's parts */
        return deposit(job_id, part, costs, start, err);
    if (rc == -EFBIG && err) {
        char why[sizeof(err->msg)];
        snprintf(why, sizeof(why), "%s", err->msg);
        np_err_set(err, rc,
                   "%s, and no parts directory for one merge (NUMAPLACE_PARTS_DIR): this node's "
                   "reports stay in its spool",
                   why);
    }
    if (rc < 0)
        return rc;
    until = np_monotonic_s() + limits->total_s;
    while (np_monotonic_s() < until) {
        char *read_text = NULL, *previous = NULL;
        bool lost = false;

        rc = write_merged(job_id, part, settle, costs, &read_text, err);
        free(read_text);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            np_logf(log, NP_LOG_INFO,
                    "job %" PRIu32 ": the read was over %.1f s old before the write: read again",
                    job_id, settle / 2);
            continue;
        }
        if (rc == 2)
            np_logf(log, NP_LOG_WARNING,
                    "job %" PRIu32 ": a write landed over %.1f s after its read (slurmdbd slow?): "
                    "other nodes' parts may need their retry (numaplace store --pending)",
                    job_id, settle);
        /* Confirmed: two reads SETTLE apart, the same, both with the part (store.h). */
        while (!lost && np_monotonic_s() < until) {
            char *text = NULL;
            json_t *check = NULL;

            np_sleep_s(settle + jitter(settle / 4));
            rc = read_stored(job_id, &text, &check, costs, err);
            if (rc < 0) {
                free(previous);
                return rc;
            }
            lost = !holds_nodes_of(check, part);
            json_decref(check);
            if (!lost && previous && strcmp(previous, text) == 0) {
                free(previous);
                free(text);
                costs->total_s = np_monotonic_s() - start;
                return 0;
            }
            free(previous);
            previous = text;
        }
        free(previous);
        if (lost) /* overwritten by a writer that read before our write: again, spread out */
            np_sleep_s(jitter(settle));
    }
    costs->total_s = np_monotonic_s() - start;
    return np_err_set(err, -ETIMEDOUT,
                      "job %" PRIu32 ": this node's part not confirmed within %.0f s (%d writes): "
                      "concurrent writers",
                      job_id, limits->total_s, costs->writes);
}

/** One line of @p costs for the log ("2 writes, 5 reads; read 0.12 s ..."). */
static void store_costs_format(const struct store_costs *costs, char *buf, size_t len)
{
    snprintf(buf, len,
             "%d writes, %d reads; per read %.3f s, merge %.3f s, write %.3f s; waited %.1f s for "
             "the job's record, %.1f s in all",
             costs->writes, costs->reads, costs->reads ? costs->read_s / costs->reads : 0.0,
             costs->writes ? costs->merge_s / costs->writes : 0.0,
             costs->writes ? costs->write_s / costs->writes : 0.0, costs->record_wait_s,
             costs->total_s);
}

/* One waiting part: 0 stored, 1 still waiting, -EIO slurmdbd unreachable (stop the pass). */
static int retry_one(int dirfd, uint32_t job_id, const struct store_limits *limits,
                     const struct np_log *log)
{
    struct store_costs costs = {0};
    struct np_err err = {0};
    struct stat st;
    json_t *part = NULL;
    bool drop = false;
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
    if (rc == 0 && costs.deposited) {
        np_logf(log, NP_LOG_INFO,
                "job %" PRIu32 ": this node's waiting part left in %s for the job's one merge",
                job_id, store_parts_dir());
    } else if (rc == 0) {
        char line[256];
        store_costs_format(&costs, line, sizeof(line));
        np_logf(log, NP_LOG_INFO,
                "job %" PRIu32 ": this node's waiting part stored in AdminComment (%ld bytes; %s)",
                job_id, costs.stored_bytes, line);
    } else if (drop) {
        np_logf(log, NP_LOG_WARNING,
                "job %" PRIu32 ": this node's waiting part dropped: %s (its reports stay in the "
                "spool)",
                job_id, err.msg);
    } else {
        np_logf(log, NP_LOG_WARNING, "job %" PRIu32 ": this node's part still waits: %s", job_id,
                err.msg);
    }
    store_pending_release(dirfd, job_id, fd, rc == 0 || drop);
    return rc == 0 || drop ? 0 : rc == -EIO ? -EIO : 1;
}

/* Store the parts waiting in <@p spool>/pending but job @p except (0: none), oldest first, at
 * most @p max_jobs (0: all), each only while @p until (np_monotonic_s; 0: no end) leaves it
 * STORE_PENDING_MIN_S, bounded to end by then; stopping where slurmdbd is unreachable. One that
 * can never be stored (another tool's AdminComment, too large, corrupt) or waited over
 * STORE_PENDING_MAX_AGE_S is dropped, logged. @return the number of parts still waiting */
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
    /* Another tool's AdminComment, or too many nodes for it even trimmed: never storable, and
     * each node's spool keeps its reports. */
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

/* `store --merge JOBID` (EpilogSlurmctld): once every node of the large job @p job_id left its
 * part in @p parts_dir (or STORE_EPILOG_PARTS_S passed), merge them, store the summary with one
 * write and remove the parts; a job on fewer nodes is left to its nodes. @p job_id 0: every job
 * waiting in @p parts_dir, each once. @return 0, or -errno with @p err (the parts stay) */
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
    long count = env_count("SLURM_JOB_NUM_NODES", 0);
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

/* This node's reports of @p job_id in @p spool, as one part, into the job's AdminComment
 * (store_commit); @p nodes: the job's hostlist, or NULL (job_nodes). Messages go to @p log (the
 * epilog's syslog). @return 0, or -errno with @p err */
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

/* `store --merge JOBID` (EpilogSlurmctld), or `store --merge --pending` (a timer: @p job NULL). */
static int cmd_store_merge(const char *job)
{
    /* A job's merge runs in EpilogSlurmctld's time (STORE_EPILOG_S); the pass has a timer's. */
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
    const char *nodes =
        cli.opt[CLI_STORE_NODES] ? cli.opt[CLI_STORE_NODES] : getenv("SLURM_JOB_NODELIST");
    const bool pending = cli.opt[CLI_STORE_PENDING] != NULL;
    uint32_t id;
    size_t left;

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
