/* `numaplace report` (the job's summary, or this node's per-step reports) and `numaplace replay`
 * (numaplace(1)). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
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
#include "numaplace/json_reals.h"

static int print_report(json_t *report, void *arg)
{
    (void)arg;
    if (cli.as_json) {
        json_dumpf(report, stdout, JSON_INDENT(2) | NP_JSON_REALS);
        putchar('\n');
    } else {
        np_report_print(stdout, report);
        putchar('\n');
    }
    return 0;
}

/* The job's uid is what Slurm or numaplaced says, never what a file says: @p uid (Slurm's, or the
 * reader numaplaced named) replaces the "uid" of @p doc (a report or a summary), and a
 * disagreement is shown. */
static void uid_from(json_t *doc, uid_t uid, const char *who, const char *what)
{
    const json_t *said = json_object_get(doc, "uid");

    if (json_is_integer(said) && json_integer_value(said) != (json_int_t)uid)
        fprintf(stderr,
                "numaplace: warning: %s names uid %lld, but %s says uid %u: shown as uid %u\n",
                what, (long long)json_integer_value(said), who, (unsigned)uid, (unsigned)uid);
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
        fprintf(stderr, "numaplace: %s\n", err.msg);
        json_decref(reports);
        return 1;
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
    if (denied && !n) {
        fprintf(stderr,
                "numaplace: job %s is not yours: its reports are readable by its owner "
                "and root only\n",
                job_arg);
        return 1;
    }
    if (!n && !bad) {
        fprintf(stderr,
                "numaplace: no report for job %s in %s (it may still run: see "
                "`numaplace status`)\n",
                job_arg, cli.spool_dir);
        return 1;
    }
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
    if (rc == 0)
        user_from(summary, uid, "Slurm (sacct)");
    if (rc == 0 && !acct_may_read(uid)) {
        fprintf(stderr,
                "numaplace: job %s is not yours: its report is readable by its owner, Slurm "
                "operators and root only\n",
                job_arg);
        json_decref(summary);
        return 1;
    }
    if (rc == 0) {
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
                fprintf(stderr,
                        "numaplace: job %s is not yours: its reports are readable by its owner "
                        "and root only\n",
                        job_arg);
            else
                fprintf(stderr,
                        "numaplace: no report for job %s: %s; and none in this node's spool %s%s\n",
                        job_arg, acct_err.msg, cli.spool_dir,
                        n < 0 ? " (unreadable)" : " (it may still run: see `numaplace status`)");
            return 1;
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
    if (plot) {
        if (np_summary_plot(summary, plot_node, plot, &err) < 0) {
            fprintf(stderr, "numaplace: --plot %s: %s\n", plot, err.msg);
            rc = 1;
        } else if (!cli.as_json) {
            printf("plot: %s\n", plot);
        }
    }
    json_decref(summary);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    const char *job_arg = NULL, *plot = NULL, *plot_node = NULL;
    bool steps = false;
    char *end;
    unsigned long id;

    steps = cli.opt[CLI_REPORT_STEPS] != NULL;
    plot = cli.opt[CLI_REPORT_PLOT];
    plot_node = cli.opt[CLI_REPORT_NODE];
    job_arg = argc > 1 ? argv[1] : NULL;
    if (!job_arg) {
        fprintf(stderr, "numaplace: report needs one JOBID or JOBID.STEP\n");
        return 2;
    }
    id = strtoul(job_arg, &end, 10);
    if (!id || id > UINT32_MAX || (*end && *end != '.') || !isdigit((unsigned char)job_arg[0])) {
        fprintf(stderr,
                "numaplace: report: \"%s\" is not a job id (JOBID or JOBID.STEP, e.g. 42 or "
                "42.batch)\n",
                job_arg);
        return 2;
    }
    /* A step that just ended (srun returned) may have its report on the way to the spool. */
    cli_wait_for_steps_to_end((uint32_t)id, 5.0, true);
    if (steps || *end == '.')
        return report_steps(job_arg);
    return report_summary((uint32_t)id, job_arg, plot, plot_node);
}

int cmd_replay(int argc, char **argv)
{
    struct np_err err = {0};
    FILE *in;
    int n;

    if (argc != 2) {
        fprintf(stderr, "numaplace: replay needs one TRACE file\n");
        return 2;
    }
    in = strcmp(argv[1], "-") == 0 ? stdin : fopen(argv[1], "re");
    if (!in) {
        fprintf(stderr, "numaplace: cannot read %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    n = np_trace_replay(in, argv[1], print_report, NULL, &err);
    if (in != stdin)
        fclose(in);
    if (n < 0) {
        fprintf(stderr, "numaplace: %s\n", err.msg);
        return 1;
    }
    if (n == 0)
        fprintf(stderr, "numaplace: %s holds no job\n", argv[1]);
    return 0;
}
