/* Reports to the spool and samples to the trace (see report_out.h). */
#include "report_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void report_out_write(struct np_daemon *d, struct np_daemon_job *j, bool complete)
{
    char path[2048], tmp[2100];
    json_t *report;
    int fd;

    j->meta.end_epoch = np_daemon_epoch_s();
    j->meta.tasks = j->tasks;
    report = np_report_new(&j->meta, &j->stats, complete);
    if (!report) {
        NPD_LOG(d, ERROR, "job %u.%s: out of memory building its report", j->meta.job_id,
                np_step_name(j->meta.step_id));
        return;
    }
    snprintf(path, sizeof(path), "%s/%u.%s.%s.json", d->cfg.spool_dir, j->meta.job_id,
             np_step_name(j->meta.step_id), d->host);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || json_dumpfd(report, fd, JSON_INDENT(2)) < 0 || write(fd, "\n", 1) != 1 ||
        fchown(fd, j->meta.uid, (gid_t)-1) < 0 || fsync(fd) < 0 || rename(tmp, path) < 0)
        NPD_LOG(d, ERROR, "job %u.%s: cannot write its report %s: %s", j->meta.job_id,
                np_step_name(j->meta.step_id), path, strerror(errno));
    else
        NPD_LOG(d, INFO, "job %u.%s: report %s (%u samples, helper %.4f s CPU)", j->meta.job_id,
                np_step_name(j->meta.step_id), path, j->stats.samples, j->stats.helper_cpu_s);
    if (fd >= 0)
        close(fd);
    json_decref(report);
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
        json_dumpf(line, d->trace, JSON_COMPACT);
        fputc('\n', d->trace);
        fflush(d->trace);
    }
    json_decref(line);
}
