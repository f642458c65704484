/*
 * The calls numaplace makes into libslurm, walled into this one file: a job's AdminComment stored
 * in slurmdbd, its fields read from slurmctld, Slurm's hostlists. Only what Slurm's public headers
 * declare from 22.05 to 26.05 (test/unit/slurm_public_api.sh checks); why libslurm and not
 * scontrol or sacctmgr: docs/accounting.md, "How the store talks to Slurm".
 */
#include "accounting.h"
#include "parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

/* The cluster the job ran on: the epilog's environment, else slurmctld's configuration
 * (`scontrol show config`: libslurm's own copy is freed by a call renamed in 26.05). */
static char *cluster_name(void)
{
    const char *env = getenv("SLURM_CLUSTER_NAME");
    char *out = NULL, *name = NULL;
    char *argv[] = {"scontrol", "show", "config", NULL};

    if (env && *env)
        return strdup(env);
    if (acct_run(argv, &out, NULL, 0, NULL) == 0)
        name = cli_config_value(out, "ClusterName");
    free(out);
    if (name && !name[0]) {
        free(name);
        name = NULL;
    }
    return name;
}

/* libslurm set up once per process, never torn down: a process may write more than once, and
 * Slurm 24.11 crashes in slurmdb_connection_get() after slurm_fini() and slurm_init() again. */
static void slurm_init_once(void)
{
    static bool done;

    if (!done) {
        slurm_init(NULL);
        done = true;
    }
}

/* A job record that changes nothing but what the caller sets, as sacctmgr's (whose constructor is
 * not public): slurmdbd's modify skips NULL text fields and NO_VAL derived_ec. Only members every
 * release from 22.05 to 26.05 has (26.05 dropped lft, which the modify never read). */
static void job_rec_unchanged(slurmdb_job_rec_t *job)
{
    memset(job, 0, sizeof(*job));
    job->array_task_id = NO_VAL;
    job->derived_ec = NO_VAL;
    job->resvid = NO_VAL;
    job->requid = (uint32_t)-1;
    job->state = JOB_PENDING;
    job->steps = slurm_list_create(slurmdb_destroy_step_rec); /* packed as an empty list */
}

int acct_set_admin_comment(uint32_t job_id, const char *value, struct np_err *err)
{
    slurmdb_job_cond_t cond;
    slurm_selected_step_t step;
    slurmdb_job_rec_t job;
    uint16_t conn_flags = 0;
    char *cluster;
    void *db;
    int rc = 0;

    slurm_init_once();
    cluster = cluster_name();
    if (!cluster)
        return np_err_set(err, -ENOENT,
                          "cannot tell the job's cluster (no SLURM_CLUSTER_NAME, and slurmctld's "
                          "configuration did not say)");
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
    job_rec_unchanged(&job);
    job.admin_comment = (char *)value; /* the caller's, never freed here */
    /* At a job's end slurmdbd may not have its row yet (slurmctld sends it within seconds). */
    for (int tries = 0;; tries++) {
        void *modified = slurmdb_job_modify(db, &cond, &job); /* List, list_t * after 24.05 */
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
    slurm_list_destroy(job.steps);
    slurm_list_destroy(cond.step_list);
    slurm_list_destroy(cond.cluster_list);
    free(cluster);
    return rc;
}

/* Slurm 26.05 names the job by a slurm_step_id_t (its job-number form is kept only behind
 * SLURM_BACKWARD_COMPAT); earlier releases by its number. */
static int load_job(job_info_msg_t **msg, uint32_t job_id)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
    slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;

    id.job_id = job_id;
    return slurm_load_job(msg, id, SHOW_ALL);
#else
    return slurm_load_job(msg, job_id, SHOW_ALL);
#endif
}

int acct_controller_job(uint32_t job_id, struct acct_controller_job *job, struct np_err *err)
{
    job_info_msg_t *msg = NULL;
    const slurm_job_info_t *rec = NULL;
    int rc = 0;

    memset(job, 0, sizeof(*job));
    slurm_init_once();
    if (load_job(&msg, job_id) != SLURM_SUCCESS || !msg)
        return np_err_set(err, -ENOENT, "slurmctld does not show job %" PRIu32 ": %s", job_id,
                          slurm_strerror(errno));
    /* An array's or a heterogeneous job's id may bring its other records too. */
    for (uint32_t i = 0; i < msg->record_count && !rec; i++)
        if (msg->job_array[i].job_id == job_id)
            rec = &msg->job_array[i];
    if (!rec) {
        rc = np_err_set(err, -ENOENT, "slurmctld does not show job %" PRIu32, job_id);
    } else {
        job->admin_comment = strdup(rec->admin_comment ? rec->admin_comment : "");
        job->nodes = rec->nodes && rec->nodes[0] ? strdup(rec->nodes) : NULL;
        job->num_nodes = rec->num_nodes;
        if (!job->admin_comment || (rec->nodes && rec->nodes[0] && !job->nodes)) {
            acct_controller_job_free(job);
            rc = np_err_set(err, -ENOMEM, "out of memory");
        }
    }
    slurm_free_job_info_msg(msg);
    return rc;
}

void acct_controller_job_free(struct acct_controller_job *job)
{
    free(job->admin_comment);
    free(job->nodes);
    memset(job, 0, sizeof(*job));
}

char *acct_hostlist_expand(const char *list, long max)
{
    void *hl = slurm_hostlist_create(list); /* hostlist_t, hostlist_t * after 23.11 */
    char *out = NULL, *host;
    size_t len = 0;
    bool first = true;
    FILE *f;

    if (!hl)
        return NULL;
    if (max > 0 && slurm_hostlist_count(hl) > max) { /* counted from its ranges, unexpanded */
        slurm_hostlist_destroy(hl);
        errno = E2BIG;
        return NULL;
    }
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
    void *hl = slurm_hostlist_create(list);
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
