/* Reports to the spool, held in memory while it refuses them, and samples to the trace. */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "safe_file.h"
#include "writer.h"
#include "numaplace/json_reals.h"

struct np_held_report {
    struct np_held_report *next;
    char name[256];
    char *text; /* owned, len bytes (no terminator); NULL while the writer has it */
    size_t len;
    struct np_daemon_job *job; /* borrowed: in the registry while its report is held */
};

static void held_free(struct np_held_report *h)
{
    free(h->text);
    free(h);
}

static void remind(struct np_daemon *d, const char *why)
{
    struct np_report_hold *hold = &d->report_hold;
    const double now = np_monotonic_s();

    if (now - hold->reminded < NPD_HOLD_REMIND_S)
        return;
    NPD_LOG(d, WARNING, "spool %s still refuses reports (%s): %u held in memory (%zu bytes)",
            d->cfg.spool_dir, why, hold->count, hold->bytes);
    hold->reminded = now;
}

bool report_hold_add(struct np_daemon *d, struct np_daemon_job *j, const char *name, char *text,
                     size_t len, const char *why)
{
    struct np_report_hold *hold = &d->report_hold;
    struct np_held_report *h = NULL;
    const uint32_t job_id = j->meta.job_id, step_id = j->meta.step_id;

    if (hold->count < NPD_HOLD_MAX && hold->bytes + len <= NPD_HOLD_MAX_BYTES)
        h = calloc(1, sizeof(*h));
    if (!h) {
        d->totals.reports_lost++;
        NPD_LOG(d, ERROR,
                "job %u.%s: its report %s is lost: the spool %s refuses it (%s) and %u reports "
                "(%zu bytes) are held already",
                job_id, np_step_name(step_id), name, d->cfg.spool_dir, why, hold->count,
                hold->bytes);
        free(text);
        return false;
    }
    snprintf(h->name, sizeof(h->name), "%s", name);
    h->text = text;
    h->len = len;
    h->job = j;
    j->report_held = true;
    if (!hold->count) {
        hold->first = h;
        NPD_LOG(d, ERROR,
                "job %u.%s: cannot write its report %s/%s: %s; held in memory with any that "
                "follow (at most %u) until the spool takes them",
                job_id, np_step_name(step_id), d->cfg.spool_dir, name, why, NPD_HOLD_MAX);
        hold->reminded = np_monotonic_s();
    } else {
        hold->last->next = h;
        NPD_LOG(d, DEBUG, "job %u.%s: report held (%s)", job_id, np_step_name(step_id), why);
        remind(d, why);
    }
    hold->last = h;
    hold->count++;
    hold->written = 0;
    d->totals.reports_held++;
    hold->bytes += len;
    return true;
}

/* The oldest is written: out of the hold, its step forgotten (its end journaled). */
static void held_written(struct np_daemon *d)
{
    struct np_report_hold *hold = &d->report_hold;
    struct np_held_report *h = hold->first;
    struct np_daemon_job *j = h->job;

    NPD_LOG(d, INFO, "job %u.%s: report %s/%s (held until now)", j->meta.job_id,
            np_step_name(j->meta.step_id), d->cfg.spool_dir, h->name);
    hold->first = h->next;
    if (!hold->first)
        hold->last = NULL;
    hold->count--;
    hold->bytes -= h->len;
    hold->written++;
    held_free(h);
    j->report_held = false;
    d->report_durable(d, j);
    if (!hold->first)
        NPD_LOG(d, INFO, "spool %s takes reports again: %u held report(s) written",
                d->cfg.spool_dir, hold->written);
}

static void held_refused(struct np_daemon *d, const char *why)
{
    d->totals.spool_write_failures++;
    remind(d, why);
}

static void submit_oldest(struct np_daemon *d);

/* The writer's completion, on the loop thread. */
static void retry_done(void *ctx, struct writer_job *w)
{
    struct np_daemon *d = ctx;
    struct np_report_hold *hold = &d->report_hold;

    hold->retrying = false;
    if (w->rc < 0) {
        hold->first->text = w->data; /* held again; retried at the next interval */
        w->data = NULL;
        held_refused(d, w->err.msg);
        return;
    }
    held_written(d);
    if (hold->first && d->writer) /* the spool takes them again: the next one now */
        submit_oldest(d);
}

static void submit_oldest(struct np_daemon *d)
{
    struct np_report_hold *hold = &d->report_hold;
    struct np_held_report *h = hold->first;
    struct writer_job *w;
    char *copy = malloc(h->len);

    /* A copy, not the held text: writer_job_new frees what it is given when it fails. */
    if (!copy)
        return;
    memcpy(copy, h->text, h->len);
    w = writer_job_new(d->cfg.spool_dir, h->name, copy, h->len, h->job->meta.uid, 0600, retry_done,
                       NULL);
    if (!w)
        return;
    free(h->text);
    h->text = NULL;
    hold->retrying = true;
    writer_submit(d->writer, w);
}

void report_hold_retry(struct np_daemon *d)
{
    struct np_report_hold *hold = &d->report_hold;

    if (!hold->first || hold->retrying)
        return;
    if (d->writer) {
        submit_oldest(d); /* fsync and rename on the writer's thread, never on the loop */
        return;
    }
    while (hold->first) {
        struct np_held_report *h = hold->first;
        struct np_err err = {0};

        if (safe_write(d->cfg.spool_dir, h->name, h->text, h->len, h->job->meta.uid, 0600, &err) <
            0) {
            held_refused(d, err.msg);
            break;
        }
        held_written(d);
    }
}

void report_hold_flush(struct np_daemon *d)
{
    const bool kept = !d->registry.save_failing;

    for (struct np_held_report *h = d->report_hold.first; h; h = h->next) {
        const struct np_daemon_job *j = h->job;
        if (kept) {
            NPD_LOG(d, WARNING,
                    "job %u.%s: its report %s is still held (the spool %s refuses it): kept in "
                    "%s/registry.json, written when numaplaced starts again",
                    j->meta.job_id, np_step_name(j->meta.step_id), h->name, d->cfg.spool_dir,
                    d->cfg.state_dir);
        } else {
            d->totals.reports_lost++;
            NPD_LOG(d, ERROR,
                    "job %u.%s: its report %s is lost: the spool %s still refuses it and "
                    "registry.json could not keep it",
                    j->meta.job_id, np_step_name(j->meta.step_id), h->name, d->cfg.spool_dir);
        }
    }
    report_hold_fini(d);
}

void report_hold_fini(struct np_daemon *d)
{
    struct np_held_report *h = d->report_hold.first;

    while (h) {
        struct np_held_report *next = h->next;
        held_free(h);
        h = next;
    }
    memset(&d->report_hold, 0, sizeof(d->report_hold));
}

/* What became of @p j's report @p name, logged; a refusal holds it (*@p text taken): true. */
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

void report_node_tiers(const struct np_daemon *d, unsigned *tier)
{
    memset(tier, 0, NP_SAMPLE_MAX_NODES * sizeof(*tier));
    for (unsigned n = 0; d->topology && n < np_topology_node_count(d->topology); n++) {
        const struct np_numa_node *node = np_topology_node(d->topology, n);
        if (node->os_index < NP_SAMPLE_MAX_NODES)
            tier[node->os_index] = node->tier;
    }
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
        j->meta.end_epoch = np_clock_s(CLOCK_REALTIME);
        j->meta.tasks = j->tasks;
        report_node_tiers(d, j->meta.node_tier);
        j->final_report = np_report_new(&j->meta, &j->stats, complete);
    }
    if (!j->final_report)
        return NPD_LOG_RC(d, ERROR, false, "job %u.%s: out of memory building its report",
                          j->meta.job_id, np_step_name(j->meta.step_id));
    snprintf(name, sizeof(name), "%u.%s.%s.json", j->meta.job_id, np_step_name(j->meta.step_id),
             d->host);
    /* A crash between writing a step's report and saving the registry brings the step back as
     * "ended while the helper was down": its complete report must not become an empty one. */
    if (!complete) {
        char path[2048];
        snprintf(path, sizeof(path), "%s/%s", d->cfg.spool_dir, name);
        if (access(path, F_OK) == 0)
            return NPD_LOG_RC(d, INFO, false, "job %u.%s: its report %s is already written; kept",
                              j->meta.job_id, np_step_name(j->meta.step_id), path);
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
        return NPD_LOG_RC(d, ERROR, -e, "cannot open the trace %s: %s", d->cfg.record, strerror(e));
    }
    return NPD_LOG_RC(d, INFO, 0, "recording every sample to %s", d->cfg.record);
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
