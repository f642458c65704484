/* A large job's parts merged once and stored with one write (store.h: store_merge). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "numaplace/summary.h"

#include "accounting.h"
#include "store.h"

/* The job's node count, node list (new string) and uid from its full record in slurmdbd. */
static int job_nodes(uint32_t job_id, long *nnodes, char **nodelist, uid_t *uid, struct np_err *err)
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
        rc = job_nodes(job_id, &nnodes, &nodelist, &uid, err);
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

int store_merge(const char *parts_dir, uint32_t job_id, const struct store_limits *limits,
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
