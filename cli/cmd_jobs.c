/* `numaplace jobs`: finished jobs with a numaplace summary in accounting, worst local share
 * first (numaplace(1)). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/summary_model.h"

#include "accounting.h"
#include "cli.h"
#include "parse.h"

struct listed_job {
    char id[32], user[64], state[32];
    double share;
    json_t *summary;   /* as stored, for --json */
    struct np_sum sum; /* the same, read */
};

static int by_share(const void *a, const void *b)
{
    const struct listed_job *x = a, *y = b;
    if (isnan(x->share) != isnan(y->share))
        return isnan(x->share) ? 1 : -1; /* unknown shares last */
    return (x->share > y->share) - (x->share < y->share);
}

/* One line of the job list. */
static void print_job(const struct listed_job *job)
{
    const struct np_sum *s = &job->sum;
    const struct np_sens_model *model = cli_sensitivity();
    struct np_advice *advice = NULL;
    const int nadvice = np_sum_advice_with(s, model, &advice);
    char share[16], rules[128] = "", policies[64] = "", predicted[24];
    struct np_sum_prediction p;

    if (isnan(job->share))
        snprintf(share, sizeof(share), "unavailable");
    else
        snprintf(share, sizeof(share), "%.0f%%", 100 * job->share);
    for (int k = 0; k < nadvice; k++)
        if (strlen(rules) + strlen(advice[k].rule) + 2 < sizeof(rules))
            snprintf(rules + strlen(rules), sizeof(rules) - strlen(rules), "%s%s", k ? "," : "",
                     advice[k].rule);
    free(advice);
    for (size_t k = 0; k < s->policy_requested.n; k++)
        snprintf(policies + strlen(policies), sizeof(policies) - strlen(policies), "%s%s",
                 k ? "," : "", s->policy_requested.v[k]);
    np_sum_predict(s, model, &p);
    if (p.available)
        snprintf(predicted, sizeof(predicted), "%.1fx %s", p.slowdown,
                 p.sensitive ? "high" : "low");
    else
        snprintf(predicted, sizeof(predicted), "unavailable");
    printf("%-10s %-10s %-11s %-5zu %-16s %-5s %-13s %-12s %s\n", job->id, job->user, job->state,
           s->nnodes, policies[0] ? policies : "-", s->sensitivity ? s->sensitivity : "-",
           predicted, share, rules);
}

/* Why each listed job's prediction is unavailable, after the table: never a guess. */
static void print_unavailable(const struct listed_job *jobs, size_t njobs)
{
    for (size_t i = 0; i < njobs; i++) {
        struct np_sum_prediction p;
        np_sum_predict(&jobs[i].sum, cli_sensitivity(), &p);
        if (!p.available)
            printf("%s: predicted sensitivity %s\n", jobs[i].id, p.why);
    }
}

int acct_list_jobs(const struct acct_jobs_filter *filter, bool as_json, struct np_err *err)
{
    char *argv[16], errbuf[256], *out = NULL, *save = NULL;
    struct listed_job *jobs = NULL;
    size_t njobs = 0, cap = 0;
    int argc = 0, rc;

    argv[argc++] = "sacct";
    argv[argc++] = "-X";
    argv[argc++] = "-n";
    argv[argc++] = "-P";
    argv[argc++] = "-o";
    argv[argc++] = "JobID,User,State,AdminComment";
    if (filter->user) {
        argv[argc++] = "-u";
        argv[argc++] = (char *)filter->user;
    } else {
        argv[argc++] = "-a"; /* sacct itself limits what a user may see */
    }
    if (filter->since) {
        argv[argc++] = "-S";
        argv[argc++] = (char *)filter->since;
    }
    if (filter->until) {
        argv[argc++] = "-E";
        argv[argc++] = (char *)filter->until;
    }
    argv[argc] = NULL;
    rc = acct_run(argv, &out, errbuf, sizeof(errbuf), err);
    if (rc != 0) {
        free(out);
        return rc < 0 ? rc
                      : np_err_set(err, -EIO, "sacct failed (exit %d): %s", rc,
                                   errbuf[0] ? errbuf : "no message");
    }
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        struct cli_jobs_row row;
        json_t *summary = NULL;
        struct np_sum sum;

        if (cli_parse_jobs_line(line, &row) != 0 ||
            cli_decode_admin_comment(row.comment, 0, &summary, NULL) < 0)
            continue; /* no numaplace summary: not one of ours */
        if (np_sum_decode(summary, &sum, NULL) != 0) {
            json_decref(summary);
            continue;
        }
        if (njobs == cap) {
            struct listed_job *grown = realloc(jobs, (cap ? cap * 2 : 64) * sizeof(*jobs));
            if (!grown) {
                json_decref(summary);
                np_sum_free(&sum);
                break;
            }
            jobs = grown;
            cap = cap ? cap * 2 : 64;
        }
        snprintf(jobs[njobs].id, sizeof(jobs[njobs].id), "%s", row.id);
        snprintf(jobs[njobs].user, sizeof(jobs[njobs].user), "%s", row.user);
        snprintf(jobs[njobs].state, sizeof(jobs[njobs].state), "%s", row.state);
        if (!np_sum_worst_local_share(&sum, &jobs[njobs].share))
            jobs[njobs].share = NAN;
        jobs[njobs].summary = summary;
        jobs[njobs].sum = sum;
        njobs++;
    }
    free(out);
    if (njobs)
        qsort(jobs, njobs, sizeof(*jobs), by_share);
    if (as_json) {
        json_t *arr = json_array();
        for (size_t i = 0; i < njobs; i++)
            json_array_append(arr, jobs[i].summary);
        json_dumpf(arr, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(arr);
    } else {
        printf("%-10s %-10s %-11s %-5s %-16s %-5s %-13s %-12s %s\n", "JOBID", "USER", "STATE",
               "NODES", "POLICY", "CLASS", "PREDICTED", "LOCAL(min)", "ADVICE");
        for (size_t i = 0; i < njobs; i++)
            print_job(&jobs[i]);
        print_unavailable(jobs, njobs);
        if (!njobs)
            printf("(no job with a numaplace summary in accounting for this selection)\n");
    }
    for (size_t i = 0; i < njobs; i++) {
        json_decref(jobs[i].summary);
        np_sum_free(&jobs[i].sum);
    }
    free(jobs);
    return 0;
}

/* `numaplace jobs [--user U] [--since T] [--until T]`: finished jobs, worst placed first. */
int cmd_jobs(int argc, char **argv)
{
    struct acct_jobs_filter filter = {0};
    struct np_err err = {0};

    for (int i = 1; i < argc; i++) {
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--user") == 0 && val)
            filter.user = argv[++i];
        else if (strcmp(argv[i], "--since") == 0 && val)
            filter.since = argv[++i];
        else if (strcmp(argv[i], "--until") == 0 && val)
            filter.until = argv[++i];
        else {
            fprintf(stderr,
                    "numaplace: jobs: unexpected \"%s\" (accepted: --user NAME, --since TIME, "
                    "--until TIME, in sacct's time forms, e.g. 2026-11-01 or now-7days)\n",
                    argv[i]);
            return 2;
        }
    }
    if (acct_list_jobs(&filter, cli.as_json, &err) < 0) {
        fprintf(stderr, "numaplace: jobs: %s\n", err.msg);
        return 1;
    }
    return 0;
}
