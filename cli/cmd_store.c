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
#include "store.h"
#include "store_pending.h"

/* This node's part of the job, saved as pending before it goes to slurmdbd and removed only
 * once it is stored and confirmed (store_pending.h): a store that fails or is killed leaves it
 * for the next store on this node or `numaplace store --pending`. */
static int store_durably(uint32_t job_id, const char *spool, const json_t *part,
                         const struct np_log *log, struct np_err *err)
{
    const struct store_limits limits = {.record_wait_s = 120, .total_s = 300};
    struct store_costs costs;
    struct np_err perr = {0};
    int dirfd, fd = -1, rc;
    char line[256];

    dirfd = store_pending_open(spool, true, &perr);
    /* A part of this job already waiting and being stored (`store --pending`): left to it. */
    if (dirfd >= 0 && (fd = store_pending_take(dirfd, job_id, &perr)) >= 0)
        store_pending_release(dirfd, job_id, fd, false);
    if (dirfd >= 0 && fd != -EBUSY && store_pending_save(dirfd, job_id, part, log, &perr) == 0)
        fd = store_pending_take(dirfd, job_id, &perr);
    else if (fd != -EBUSY)
        fd = -1;
    if (fd == -EBUSY) { /* `store --pending` took it meanwhile: it stores it */
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
    if (rc == 0)
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

/* The job's nodes as slurmctld has them ("node[1-4]"; new string, NULL when it does not say):
 * slurmd's epilog environment has no SLURM_JOB_NODELIST on Slurm 22.05. Nodes whose epilog is
 * done may have left it already: the list names nodes of the job, not always all of them. */
static char *controller_nodelist(uint32_t job_id)
{
    char id[16], *out = NULL, *list = NULL;
    char *argv[] = {"scontrol", "-o", "show", "job", id, NULL};
    const char *at;

    snprintf(id, sizeof(id), "%" PRIu32, job_id);
    if (acct_run(argv, &out, NULL, 0, NULL) == 0 && (at = strstr(out, " NodeList=")) != NULL) {
        at += strlen(" NodeList=");
        list = strndup(at, strcspn(at, " \n"));
    }
    free(out);
    if (list && (!list[0] || strcmp(list, "(null)") == 0)) {
        free(list);
        list = NULL;
    }
    return list;
}

int acct_store(uint32_t job_id, const char *spool, const char *nodes, const struct np_log *log,
               struct np_err *err)
{
    char job_arg[16], *expanded = NULL;
    json_t *reports = json_array(), *mine = NULL, *report;
    int denied, bad, n, rc = 0;
    size_t i;

    snprintf(job_arg, sizeof(job_arg), "%" PRIu32, job_id);
    n = acct_spool_reports(spool, job_arg, reports, &denied, &bad, err);
    if (n < 0)
        goto out;
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
    {
        const struct passwd *pw = getpwuid(acct_report_uid(json_array_get(reports, 0)));
        if (pw)
            np_summary_set_user(mine, pw->pw_name, NULL);
    }
    if (nodes && *nodes) {
        expanded = acct_expand_hostlist(nodes);
    } else {
        char *list = controller_nodelist(job_id);
        expanded = list ? acct_expand_hostlist(list) : NULL;
        free(list);
    }
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
        store_pending_pass(spool, job_id, STORE_PENDING_PER_EPILOG, log);
    return rc;
}

/* `numaplace store --pending`: the parts this node could not store yet (a timer's call). */
static int cmd_store_pending(void)
{
    struct np_log log = {cli_stderr_log, NULL};
    const int waiting = store_pending_pass(cli.spool_dir, 0, 0, &log);

    if (waiting < 0) {
        fprintf(stderr, "numaplace: store --pending: %s\n", strerror(-waiting));
        return 1;
    }
    if (waiting > 0)
        fprintf(stderr, "numaplace: store --pending: %d job(s) still wait for accounting\n",
                waiting);
    return waiting > 0 ? 1 : 0;
}

/* `numaplace store JOBID`: the epilog's call (etc/numaplace-epilog). */
int cmd_store(int argc, char **argv)
{
    struct np_log log = {cli_stderr_log, NULL};
    struct np_err err = {0};
    const char *nodes = getenv("SLURM_JOB_NODELIST");
    char *end;
    unsigned long id;

    if (argc == 2 && strcmp(argv[1], "--pending") == 0) {
        if (getuid() != 0) {
            fprintf(stderr, "numaplace: store writes Slurm accounting: root only\n");
            return 1;
        }
        return cmd_store_pending();
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc) {
            nodes = argv[++i];
        } else {
            fprintf(stderr,
                    "numaplace: store: unexpected \"%s\" (usage: store JOBID [--nodes "
                    "HOSTLIST], or store --pending)\n",
                    argv[i]);
            return 2;
        }
    }
    if (argc < 2) {
        fprintf(stderr, "numaplace: store needs a JOBID (or --pending)\n");
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
