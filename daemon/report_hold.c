/* Reports held while the spool refuses them (see report_hold.h). */
#include "daemon.h"

#include <stdlib.h>
#include <string.h>

#include "safe_file.h"
#include "writer.h"

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
