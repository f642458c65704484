/* `numaplace report` (the job's summary, or this node's per-step reports), `numaplace jobs` (the
 * finished jobs with a summary, worst local share first) and `numaplace replay` (numaplace(1)). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numaplace/report.h"
#include "numaplace/summary.h"

#include "accounting.h"
#include "cli.h"
#include "options.h"
#include "parse.h"
#include "numaplace/json_reals.h"

static int print_report(json_t *report, void *arg)
{
    (void)arg;
    if (cli.as_json)
        json_dumpf(report, stdout, JSON_INDENT(2) | NP_JSON_REALS);
    else
        np_report_print(stdout, report);
    putchar('\n');
    return 0;
}

/* @p uid (Slurm's or numaplaced's word, never a file's) as @p doc's "uid", a change said. */
static void uid_from(json_t *doc, uid_t uid, const char *who, const char *what)
{
    const json_t *said = json_object_get(doc, "uid");

    if (json_is_integer(said) && json_integer_value(said) != (json_int_t)uid)
        (void)cli_error(0, "warning: %s names uid %lld, but %s says uid %u: shown as uid %u", what,
                        (long long)json_integer_value(said), who, (unsigned)uid, (unsigned)uid);
    json_object_set_new(doc, "uid", json_integer((json_int_t)uid));
}

/* Name the summary's user from @p uid (Slurm's or numaplaced's), not from its reports. */
static void user_from(json_t *summary, uid_t uid, const char *who)
{
    const struct passwd *pw;

    uid_from(summary, uid, who, "the job's summary");
    pw = getpwuid(uid);
    if (pw)
        np_summary_set_user(summary, pw->pw_name, NULL);
    else
        json_object_del(summary, "user");
}

/* The per-step reports of this node's spool (`report --steps`, and JOBID.STEP). */
static int report_steps(const char *job_arg)
{
    struct np_err err = {0};
    struct acct_spool_reader reader;
    json_t *reports = json_array();
    int denied, bad, n;

    n = acct_spool_reports(cli.spool_dir, job_arg, reports, &denied, &bad, &reader, &err);
    if (n < 0) {
        json_decref(reports);
        return cli_error(1, "%s", err.msg);
    }
    if (reader.known && !reader.conflict) {
        json_t *report;
        size_t i;
        json_array_foreach(reports, i, report)
        {
            uid_from(report, reader.uid, "numaplaced (the file's read ACL)", "a report");
        }
    }
    if (cli.as_json && n) {
        json_dumpf(reports, stdout, JSON_INDENT(2) | NP_JSON_REALS);
        putchar('\n');
    } else {
        json_t *report;
        size_t i;
        json_array_foreach(reports, i, report)
        {
            print_report(report, NULL);
        }
    }
    json_decref(reports);
    if (denied && !n)
        return cli_error(
            1, "job %s is not yours: its reports are readable by its owner and root only", job_arg);
    if (!n && !bad)
        return cli_error(1, "no report for job %s in %s (it may still run: see `numaplace status`)",
                         job_arg, cli.spool_dir);
    return bad ? 1 : 0;
}

/* The job summary: from Slurm accounting, else merged from this node's spool. */
static int report_summary(uint32_t job_id, const char *job_arg, const char *plot,
                          const char *plot_node)
{
    struct np_err err = {0}, acct_err = {0};
    json_t *summary = NULL;
    uid_t uid = 0;
    int rc;
    char source[NP_ERR_MSG_MAX + 1200]; /* the spool's path and what accounting said */

    rc = acct_load_summary(job_id, &summary, &uid, &acct_err);
    if (rc == 0) {
        user_from(summary, uid, "Slurm (sacct)");
        if (!acct_may_read(uid)) {
            json_decref(summary);
            return cli_error(1,
                             "job %s is not yours: its report is readable by its owner, Slurm "
                             "operators and root only",
                             job_arg);
        }
        snprintf(source, sizeof(source), "Slurm accounting (the job's AdminComment)");
    } else {
        /* Not in accounting (yet, or the site stores none): this node's spool serves. */
        json_t *reports = json_array();
        struct acct_spool_reader reader;
        int denied = 0, bad = 0;
        const int n =
            acct_spool_reports(cli.spool_dir, job_arg, reports, &denied, &bad, &reader, &err);

        if (n > 0) {
            json_t *report;
            size_t i;
            summary = np_summary_new(job_id);
            json_array_foreach(reports, i, report)
            {
                if (np_summary_add_report(summary, report, &err) < 0)
                    fprintf(stderr, "numaplace: a report left out: %s\n", err.msg);
            }
            /* sacct knew the job (no summary stored): Slurm names the user; else numaplaced */
            if (rc == -ENOMSG)
                user_from(summary, uid, "Slurm (sacct)");
            else if (reader.known && !reader.conflict)
                user_from(summary, reader.uid, "numaplaced (the reports' read ACL)");
            else if (geteuid() != 0)
                user_from(summary, getuid(), "the reader of these reports");
        }
        json_decref(reports);
        if (!summary) {
            if (denied)
                return cli_error(
                    1, "job %s is not yours: its reports are readable by its owner and root only",
                    job_arg);
            return cli_error(1, "no report for job %s: %s; and none in this node's spool %s%s",
                             job_arg, acct_err.msg, cli.spool_dir,
                             n < 0 ? " (unreadable)"
                                   : " (it may still run: see `numaplace status`)");
        }
        snprintf(source, sizeof(source), "this node's spool %s (accounting: %.300s)", cli.spool_dir,
                 acct_err.msg);
    }
    if (cli.as_json) {
        json_dumpf(summary, stdout, JSON_INDENT(2) | NP_JSON_REALS);
        putchar('\n');
    } else {
        np_summary_print_hostlist(stdout, summary, cli_sensitivity(), acct_hostlist_of_names);
        printf("source: %s\n", source);
    }
    rc = 0;
    if (plot && np_summary_plot(summary, plot_node, plot, &err) < 0)
        rc = cli_error(1, "--plot %s: %s", plot, err.msg);
    else if (plot && !cli.as_json)
        printf("plot: %s\n", plot);
    json_decref(summary);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    const char *job_arg = argc > 1 ? argv[1] : NULL;
    char *end;
    unsigned long id;

    if (!job_arg)
        return cli_error(2, "report needs one JOBID or JOBID.STEP");
    id = strtoul(job_arg, &end, 10);
    if (!id || id > UINT32_MAX || (*end && *end != '.') || !isdigit((unsigned char)job_arg[0]))
        return cli_error(
            2, "report: \"%s\" is not a job id (JOBID or JOBID.STEP, e.g. 42 or 42.batch)",
            job_arg);
    /* A step that just ended (srun returned) may have its report on the way to the spool. */
    cli_wait_for_steps_to_end((uint32_t)id, 5.0, true);
    if (cli.opt[CLI_REPORT_STEPS] || *end == '.')
        return report_steps(job_arg);
    return report_summary((uint32_t)id, job_arg, cli.opt[CLI_REPORT_PLOT],
                          cli.opt[CLI_REPORT_NODE]);
}

/* A listed job until the list is sorted: its line, or for --json where its stored text is in a
 * temporary file; never its decoded summary (memory would grow with the number of jobs). */
struct listed_job {
    double share;
    char *line;   /* owned: the text line (NULL with --json) */
    char *why;    /* owned: why its predicted sensitivity is unavailable, else NULL */
    long offset;  /* --json: where its AdminComment is in the spill file, to decode again */
    size_t bytes; /* and its length */
};

struct job_list {
    struct listed_job *jobs;
    size_t njobs, cap;
    FILE *spill; /* --json: the AdminComments, out of memory until they are printed */
};

static int by_share(const void *a, const void *b)
{
    const struct listed_job *x = a, *y = b;
    if (isnan(x->share) != isnan(y->share))
        return isnan(x->share) ? 1 : -1; /* unknown shares last */
    return (x->share > y->share) - (x->share < y->share);
}

/* One line of the job list (new), and in @p why (new) why its prediction is unavailable. */
static char *job_line(const struct cli_jobs_row *row, const json_t *s, double local, char **why)
{
    const struct np_sens_model *model = cli_sensitivity();
    json_t *advice = np_summary_advice_with(s, model);
    const char *sens = json_string_value(json_object_get(s, "sensitivity"));
    char share[16], rules[128] = "", policies[64] = "", predicted[24], *line = NULL;
    struct np_summary_prediction p;

    snprintf(share, sizeof(share), "%.0f%%", 100 * local);
    for (size_t k = 0; k < json_array_size(advice); k++) {
        const char *rule = json_string_value(json_object_get(json_array_get(advice, k), "rule"));
        if (strlen(rules) + strlen(rule) + 2 < sizeof(rules))
            snprintf(rules + strlen(rules), sizeof(rules) - strlen(rules), "%s%s", k ? "," : "",
                     rule);
    }
    json_decref(advice);
    for (size_t k = 0; k < json_array_size(json_object_get(s, "policy_requested")); k++)
        snprintf(policies + strlen(policies), sizeof(policies) - strlen(policies), "%s%s",
                 k ? "," : "",
                 json_string_value(json_array_get(json_object_get(s, "policy_requested"), k)));
    np_summary_predict(s, model, &p);
    snprintf(predicted, sizeof(predicted), "%.1fx %s", p.slowdown, p.sensitive ? "high" : "low");
    *why = p.available ? NULL : strdup(p.why);
    if (asprintf(&line, "%-10.31s %-10.63s %-11.31s %-5zu %-16s %-5s %-13s %-12s %s", row->id,
                 row->user, row->state, np_summary_node_count(s), policies[0] ? policies : "-",
                 sens ? sens : "-", p.available ? predicted : "unavailable",
                 isnan(local) ? "unavailable" : share, rules) < 0)
        return NULL;
    return line;
}

/* One line of sacct's output: decoded, summed up, and let go before the next. */
static int list_one(char *text, void *arg)
{
    struct job_list *list = arg;
    struct cli_jobs_row row;
    json_t *summary = NULL;
    struct listed_job job = {0};
    bool kept;

    if (cli_parse_jobs_line(text, &row) != 0 ||
        cli_decode_admin_comment(row.comment, 0, &summary, NULL) < 0)
        return 0; /* no numaplace summary: not one of ours */
    if (np_summary_validate(summary, NULL) != 0) {
        json_decref(summary);
        return 0;
    }
    if (!np_summary_worst_local_share(summary, &job.share))
        job.share = NAN;
    if (list->spill) {
        job.offset = ftell(list->spill);
        job.bytes = strlen(row.comment);
        kept = job.offset >= 0 && fwrite(row.comment, 1, job.bytes, list->spill) == job.bytes;
    } else {
        job.line = job_line(&row, summary, job.share, &job.why);
        kept = job.line != NULL;
    }
    json_decref(summary);
    if (kept && list->njobs == list->cap) {
        const size_t cap = list->cap ? list->cap * 2 : 64;
        struct listed_job *grown = realloc(list->jobs, cap * sizeof(*grown));
        if (grown) {
            list->jobs = grown;
            list->cap = cap;
        }
        kept = grown != NULL;
    }
    if (!kept) {
        free(job.line);
        free(job.why);
        return 0;
    }
    list->jobs[list->njobs++] = job;
    return 0;
}

static void free_list(struct job_list *list)
{
    for (size_t i = 0; i < list->njobs; i++) {
        free(list->jobs[i].line);
        free(list->jobs[i].why);
    }
    free(list->jobs);
    if (list->spill)
        fclose(list->spill);
}

/* A job's AdminComment back from the spill file (new string, NULL on failure). */
static char *spilled(FILE *spill, const struct listed_job *job)
{
    char *text = malloc(job->bytes + 1);

    if (!text || fseek(spill, job->offset, SEEK_SET) < 0 ||
        fread(text, 1, job->bytes, spill) != job->bytes) {
        free(text);
        return NULL;
    }
    text[job->bytes] = '\0';
    return text;
}

/* Why predictions are unavailable: each reason once, with its count of jobs and the first. */
static void print_unavailable(const struct job_list *list)
{
    for (size_t i = 0; i < list->njobs; i++) {
        const char *why = list->jobs[i].why;
        size_t count = 0, seen_before = 0;
        if (!why)
            continue;
        for (size_t k = 0; k < i && !seen_before; k++)
            seen_before = list->jobs[k].why && strcmp(list->jobs[k].why, why) == 0;
        if (seen_before)
            continue;
        for (size_t k = i; k < list->njobs; k++)
            count += list->jobs[k].why && strcmp(list->jobs[k].why, why) == 0;
        printf("predicted sensitivity unavailable for %zu job(s) (first: %.*s): %s\n", count,
               (int)strcspn(list->jobs[i].line, " "), list->jobs[i].line, why);
    }
}

/* `numaplace jobs [--user U] [--since T] [--until T]`: finished jobs with a summary, worst placed
 * first; no --user: every user the caller may see; --since and --until as sacct's -S and -E. */
int cmd_jobs(int argc, char **argv)
{
    char *sacct[16] = {"sacct", "-X", "-n", "-P", "-o", "JobID,User,State,AdminComment"};
    static char *const flag[] = {
        [CLI_JOBS_USER] = "-u", [CLI_JOBS_SINCE] = "-S", [CLI_JOBS_UNTIL] = "-E"};
    char errbuf[256];
    struct job_list list = {0};
    struct np_err err = {0};
    int nargs = 6, rc;

    (void)argc;
    (void)argv;
    if (!cli.opt[CLI_JOBS_USER])
        sacct[nargs++] = "-a"; /* every user: sacct itself limits what a user may see */
    for (size_t k = 0; k < sizeof(flag) / sizeof(flag[0]); k++)
        if (cli.opt[k]) {
            sacct[nargs++] = flag[k];
            sacct[nargs++] = (char *)cli.opt[k];
        }
    sacct[nargs] = NULL;
    if (cli.as_json && !(list.spill = tmpfile()))
        return cli_error(1, "jobs: cannot make a temporary file: %s", strerror(errno));
    rc = acct_run_lines(sacct, list_one, &list, errbuf, sizeof(errbuf), &err);
    if (rc != 0) {
        free_list(&list);
        if (rc > 0)
            np_err_set(&err, -EIO, "sacct failed (exit %d): %s", rc,
                       errbuf[0] ? errbuf : "no message");
        return cli_error(1, "jobs: %s", err.msg);
    }
    if (list.njobs)
        qsort(list.jobs, list.njobs, sizeof(*list.jobs), by_share);
    if (cli.as_json) {
        /* one summary decoded at a time, written out and let go */
        printf("[");
        for (size_t i = 0, n = 0; i < list.njobs; i++) {
            json_t *summary = NULL;
            char *comment = spilled(list.spill, &list.jobs[i]);
            const int bad = !comment || cli_decode_admin_comment(comment, 0, &summary, NULL) < 0;
            free(comment);
            if (bad)
                continue;
            printf("%s\n", n++ ? "," : "");
            json_dumpf(summary, stdout, JSON_INDENT(2) | NP_JSON_REALS);
            json_decref(summary);
        }
        printf("%s]\n", list.njobs ? "\n" : "");
    } else {
        printf("%-10s %-10s %-11s %-5s %-16s %-5s %-13s %-12s %s\n", "JOBID", "USER", "STATE",
               "NODES", "POLICY", "CLASS", "PREDICTED", "LOCAL(min)", "ADVICE");
        for (size_t i = 0; i < list.njobs; i++)
            printf("%s\n", list.jobs[i].line);
        print_unavailable(&list);
        if (!list.njobs)
            printf("(no job with a numaplace summary in accounting for this selection)\n");
    }
    free_list(&list);
    return 0;
}

int cmd_replay(int argc, char **argv)
{
    struct np_err err = {0};
    FILE *in;
    int n;

    if (argc != 2)
        return cli_error(2, "replay needs one TRACE file");
    in = strcmp(argv[1], "-") == 0 ? stdin : fopen(argv[1], "re");
    if (!in)
        return cli_error(1, "cannot read %s: %s", argv[1], strerror(errno));
    n = np_trace_replay(in, argv[1], print_report, NULL, &err);
    if (in != stdin)
        fclose(in);
    if (n < 0)
        return cli_error(1, "%s", err.msg);
    if (n == 0)
        fprintf(stderr, "numaplace: %s holds no job\n", argv[1]);
    return 0;
}
