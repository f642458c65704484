/*
 * The calls numaplace makes into libslurm, walled into this one file: store a job's AdminComment
 * in slurmdbd, and Slurm's own hostlists for the node lists users type and read.
 *
 * Why not a Slurm command for the AdminComment: from an epilog the job is completing, and
 * slurmctld refuses `scontrol update AdminComment` ("Job has already finished"); `sacctmgr modify
 * job ... set AdminComment=` reaches slurmdbd but Slurm 22.05's sacctmgr lowercases the value,
 * which ruins base64 (test/integration/README.md). slurmdb_job_modify() is the request behind
 * sacctmgr's, and stores the bytes as given.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "accounting.h"

#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

/* Slurm's list type was List until 24.05 and list_t * after (24.11 has no List). */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 5, 0)
typedef list_t *np_slurm_list;
#else
typedef List np_slurm_list;
#endif

/* A hostlist was `hostlist_t` (a pointer) until 23.11 and `hostlist_t *` after: the type
 * slurm_hostlist_create returns, whichever it is. */
typedef __typeof__(slurm_hostlist_create("")) np_slurm_hostlist;

/* What slurm_load_ctl_conf() gave is freed with slurm_free_ctl_conf() in 24.11 and before, and
 * with slurm_free_conf() in 26.05, which has no slurm_free_ctl_conf(). */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
#define np_slurm_free_conf slurm_free_conf
#else
#define np_slurm_free_conf slurm_free_ctl_conf
#endif

/* Exported by libslurm (sacctmgr uses it) but not declared in its public headers. It sets every
 * field to "not given", so the modify touches only the AdminComment. */
extern slurmdb_job_rec_t *slurmdb_create_job_rec(void);

/* The cluster the job ran on: the epilog's environment, else the controller's configuration. */
static char *cluster_name(void)
{
    const char *env = getenv("SLURM_CLUSTER_NAME");
    slurm_conf_t *conf = NULL;
    char *name = NULL;

    if (env && *env)
        return strdup(env);
    if (slurm_load_ctl_conf((time_t)0, &conf) == SLURM_SUCCESS && conf && conf->cluster_name)
        name = strdup(conf->cluster_name);
    np_slurm_free_conf(conf);
    return name;
}

/* libslurm set up once per process and never torn down: Slurm 24.11 crashes (SIGSEGV) in a
 * slurmdb_connection_get() after slurm_fini() and slurm_init() again, and a process writes more
 * than once (a store whose part another node's write dropped writes again; `store --pending`
 * writes one job after another). 22.05 did not mind. */
static void slurm_init_once(void)
{
    static bool done;

    if (!done) {
        slurm_init(NULL);
        done = true;
    }
}

int acct_set_admin_comment(uint32_t job_id, const char *value, struct np_err *err)
{
    slurmdb_job_cond_t cond;
    slurm_selected_step_t step;
    slurmdb_job_rec_t *job;
    uint16_t conn_flags = 0;
    char *cluster;
    void *db;
    int rc = 0;

    slurm_init_once();
    cluster = cluster_name();
    if (!cluster) {
        return np_err_set(err, -ENOENT,
                          "cannot tell the job's cluster (no SLURM_CLUSTER_NAME, and slurmctld's "
                          "configuration did not say)");
    }
    db = slurmdb_connection_get(&conn_flags);
    if (!db) {
        rc = np_err_set(err, -EIO, "no connection to slurmdbd: %s", slurm_strerror(errno));
        free(cluster);
        return rc;
    }
    /* As sacctmgr's "modify job where jobid=N": that one job, no default time window. */
    memset(&cond, 0, sizeof(cond));
    memset(&step, 0, sizeof(step));
    cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
    cond.flags = JOBCOND_FLAG_NO_DEFAULT_USAGE;
    cond.cluster_list = slurm_list_create(NULL);
    slurm_list_append(cond.cluster_list, cluster);
    step.array_task_id = NO_VAL;
    step.het_job_offset = NO_VAL;
    step.step_id.job_id = job_id;
    step.step_id.step_id = NO_VAL;
    step.step_id.step_het_comp = NO_VAL;
    cond.step_list = slurm_list_create(NULL);
    slurm_list_append(cond.step_list, &step);
    job = slurmdb_create_job_rec();
    job->admin_comment = (char *)value;
    /* At a job's end slurmdbd may not have its row yet (slurmctld sends it within seconds). */
    for (int tries = 0;; tries++) {
        np_slurm_list modified = slurmdb_job_modify(db, &cond, job);
        if (!modified) {
            rc = np_err_set(err, -EIO, "slurmdbd refused to modify job %u: %s", job_id,
                            slurm_strerror(errno));
            break;
        }
        if (slurm_list_count(modified) > 0) {
            slurm_list_destroy(modified);
            break;
        }
        slurm_list_destroy(modified);
        if (tries == 60) {
            rc = np_err_set(err, -ENOENT, "slurmdbd has no job %u on cluster %s after 15 s", job_id,
                            cluster);
            break;
        }
        usleep(250000);
    }
    slurmdb_connection_commit(db, rc == 0);
    slurmdb_connection_close(&db);
    job->admin_comment = NULL; /* the caller's */
    slurmdb_destroy_job_rec(job);
    slurm_list_destroy(cond.step_list);
    slurm_list_destroy(cond.cluster_list);
    free(cluster);
    return rc;
}

char *acct_hostlist_expand(const char *list)
{
    np_slurm_hostlist hl = slurm_hostlist_create(list);
    char *out = NULL, *host;
    size_t len = 0;
    bool first = true;
    FILE *f;

    if (!hl)
        return NULL;
    f = open_memstream(&out, &len);
    while (f && (host = slurm_hostlist_shift(hl)) != NULL) {
        fprintf(f, "%s%s", first ? "" : ",", host);
        first = false;
        free(host); /* slurm_hostlist_shift's is malloc()ed */
    }
    slurm_hostlist_destroy(hl);
    if (!f || fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

char *acct_hostlist_ranged(const char *list, bool sorted)
{
    np_slurm_hostlist hl = slurm_hostlist_create(list);
    char *out = NULL;

    if (!hl)
        return NULL;
    if (sorted)
        slurm_hostlist_uniq(hl);
    /* slurm_hostlist_ranged_string_malloc() is gone in 24.11, and _xmalloc's result needs
     * Slurm's xfree: the buffer form is in every release. It returns -1 when truncated. */
    for (size_t size = 256; size <= ((size_t)1 << 24); size *= 4) {
        char *buf = malloc(size);

        if (!buf)
            break;
        if (slurm_hostlist_ranged_string(hl, size, buf) >= 0) {
            out = buf;
            break;
        }
        free(buf);
    }
    slurm_hostlist_destroy(hl);
    return out;
}

char *acct_hostlist_of_names(const char *const *names, size_t n)
{
    char *list = NULL, *ranged;
    size_t len = 0;
    FILE *f = open_memstream(&list, &len);

    for (size_t i = 0; f && i < n; i++)
        fprintf(f, "%s%s", i ? "," : "", names[i]);
    if (!f || fclose(f) != 0) {
        free(list);
        return NULL;
    }
    ranged = acct_hostlist_ranged(list, true);
    free(list);
    return ranged;
}
