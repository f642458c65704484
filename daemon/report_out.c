/* Reports to the spool and samples to the trace (see report_out.h). */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "safe_file.h"
#include "writer.h"
#include "numaplace/json_reals.h"

/* What became of the report @p name of @p j: logged, and a refusal holds it (*@p text taken).
 * @return whether it is held (the step stays in the registry, listed ending, until it is written)
 */
static bool report_outcome(struct np_daemon *d, struct np_daemon_job *j, const char *name,
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
    if (rc < 0 && *text) /* no text: out of memory before any write */
        d->totals.spool_write_failures++;
    if (!*text) {
        d->totals.reports_lost++;
        NPD_LOG(d, ERROR, "job %u.%s: cannot write its report %s/%s: out of memory", j->meta.job_id,
                np_step_name(j->meta.step_id), d->cfg.spool_dir, name);
    } else if (rc < 0) {
        /* A full or read-only spool: written later, once it takes it. */
        const bool held = report_hold_add(d, j, name, *text, len, err->msg);
        *text = NULL;
        return held;
    } else {
        /* From the report: a step restored with its final report has no figures of its own. */
        const json_t *rep = j->final_report;
        NPD_LOG(d, INFO, "job %u.%s: report %s/%s (%lld samples, helper %.4f s CPU)",
                j->meta.job_id, np_step_name(j->meta.step_id), d->cfg.spool_dir, name,
                (long long)json_integer_value(
                    json_object_get(json_object_get(rep, "sampling"), "count")),
                json_number_value(json_object_get(json_object_get(rep, "helper"), "cpu_time_s")));
    }
    if (rc >= 0 && d->report_hold.first)
        report_hold_retry(d); /* the spool took this one: it may take the held ones too */
    return false;
}

/* The writer's completion: on the loop thread, once the report is durable (or refused). */
static void report_written(void *ctx, struct writer_job *w)
{
    struct np_daemon *d = ctx;
    struct np_daemon_job *j = w->arg;

    report_outcome(d, j, w->name, &w->data, w->len, w->rc, &w->err);
    d->report_durable(d, j); /* or held: its step_end is answered either way */
}

bool report_out_write(struct np_daemon *d, struct np_daemon_job *j, bool complete)
{
    char name[256];
    struct np_err err = {0};
    char *text;
    size_t len = 0;
    bool held;
    int rc;

    /* Built once: a step restored with its final report (registry.c) is written from that. */
    if (!j->final_report) {
        j->meta.end_epoch = np_daemon_epoch_s();
        j->meta.tasks = j->tasks;
        j->final_report = np_report_new(&j->meta, &j->stats, complete);
    }
    if (!j->final_report) {
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
            return false;
        }
    }
    text = json_dumps(j->final_report, JSON_INDENT(2) | NP_JSON_REALS);
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
    held = report_outcome(d, j, name, &text, len, rc, &err);
    free(text);
    return held;
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
