/* Reports to the spool and samples to the trace (see report_out.h). */
#include "report_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "report_hold.h"
#include "safe_file.h"
#include "writer.h"
#include "numaplace/json_reals.h"

/* What became of the report @p name of @p j: logged, and a refusal holds it (*@p text taken). */
static void report_outcome(struct np_daemon *d, const struct np_daemon_job *j, const char *name,
                           char **text, size_t len, int rc, const struct np_err *err)
{
    if (rc == SAFE_WRITE_NO_ACL && strcmp(d->spool_without_acl, d->cfg.spool_dir) != 0) {
        /* once per spool: every report there is the same */
        snprintf(d->spool_without_acl, sizeof(d->spool_without_acl), "%s", d->cfg.spool_dir);
        NPD_LOG(d, WARNING,
                "the spool %s refuses POSIX ACLs: reports there are readable by root only (users "
                "read their summary from accounting with `numaplace report JOBID`, not their "
                "per-step reports)",
                d->cfg.spool_dir);
    }
    if (!*text)
        NPD_LOG(d, ERROR, "job %u.%s: cannot write its report %s/%s: out of memory", j->meta.job_id,
                np_step_name(j->meta.step_id), d->cfg.spool_dir, name);
    else if (rc < 0) {
        /* A full or read-only spool: written on a later interval, once it takes it. */
        report_hold_add(d, name, *text, len, j->meta.uid, j->meta.job_id, j->meta.step_id,
                        err->msg);
        *text = NULL;
    } else
        NPD_LOG(d, INFO, "job %u.%s: report %s/%s (%u samples, helper %.4f s CPU)", j->meta.job_id,
                np_step_name(j->meta.step_id), d->cfg.spool_dir, name, j->stats.samples,
                j->stats.helper_cpu_s);
}

/* The writer's completion: on the loop thread, once the report is durable (or refused). */
static void report_written(void *ctx, struct writer_job *w)
{
    struct np_daemon *d = ctx;
    struct np_daemon_job *j = w->arg;

    report_outcome(d, j, w->name, &w->data, w->len, w->rc, &w->err);
    d->report_durable(d, j);
}

bool report_out_write(struct np_daemon *d, struct np_daemon_job *j, bool complete)
{
    char name[256];
    struct np_err err = {0};
    json_t *report;
    char *text;
    size_t len = 0;
    int rc;

    j->meta.end_epoch = np_daemon_epoch_s();
    j->meta.tasks = j->tasks;
    report = np_report_new(&j->meta, &j->stats, complete);
    if (!report) {
        NPD_LOG(d, ERROR, "job %u.%s: out of memory building its report", j->meta.job_id,
                np_step_name(j->meta.step_id));
        return false;
    }
    snprintf(name, sizeof(name), "%u.%s.%s.json", j->meta.job_id, np_step_name(j->meta.step_id),
             d->host);
    /* A crash between writing a step's report and saving the registry brings the step back as
     * "ended while the helper was down": its complete report must not become an empty one. */
    if (!complete) {
        char path[2048];
        snprintf(path, sizeof(path), "%s/%s", d->cfg.spool_dir, name);
        if (access(path, F_OK) == 0) {
            NPD_LOG(d, INFO, "job %u.%s: its report %s is already written; kept", j->meta.job_id,
                    np_step_name(j->meta.step_id), path);
            json_decref(report);
            return false;
        }
    }
    text = json_dumps(report, JSON_INDENT(2) | NP_JSON_REALS);
    json_decref(report);
    if (text) {
        len = strlen(text);
        text[len++] = '\n'; /* the terminator becomes the file's last newline */
    }
    if (text && d->writer) {
        /* Serialised here, flushed there: the loop answers other clients meanwhile. */
        struct writer_job *w =
            writer_job_new(d->cfg.spool_dir, name, text, len, j->meta.uid, 0600, report_written, j);
        if (w) {
            writer_submit(d->writer, w);
            return true;
        }
        text = NULL; /* freed by writer_job_new */
    }
    rc = text ? safe_write(d->cfg.spool_dir, name, text, len, j->meta.uid, 0600, &err) : -ENOMEM;
    report_outcome(d, j, name, &text, len, rc, &err);
    free(text);
    return false;
}

int trace_open(struct np_daemon *d)
{
    if (d->trace) {
        fclose(d->trace);
        d->trace = NULL;
    }
    if (!d->cfg.record[0])
        return 0;
    d->trace = fopen(d->cfg.record, "ae");
    if (!d->trace) {
        const int e = errno;
        NPD_LOG(d, ERROR, "cannot open the trace %s: %s", d->cfg.record, strerror(e));
        return -e;
    }
    NPD_LOG(d, INFO, "recording every sample to %s", d->cfg.record);
    return 0;
}

void trace_line(struct np_daemon *d, json_t *line)
{
    if (d->trace && line) {
        json_dumpf(line, d->trace, JSON_COMPACT | NP_JSON_REALS);
        fputc('\n', d->trace);
        fflush(d->trace);
    }
    json_decref(line);
}
