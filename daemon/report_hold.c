/* Reports held while the spool refuses them (see report_hold.h). */
#include "report_hold.h"

#include <stdlib.h>
#include <string.h>

#include "safe_file.h"

struct np_held_report {
    struct np_held_report *next;
    char name[256];
    char *text; /* owned, len bytes (no terminator) */
    size_t len;
    uid_t owner;
    uint32_t job_id, step_id;
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

void report_hold_add(struct np_daemon *d, const char *name, char *text, size_t len, uid_t owner,
                     uint32_t job_id, uint32_t step_id, const char *why)
{
    struct np_report_hold *hold = &d->report_hold;
    struct np_held_report *h = NULL;

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
        return;
    }
    snprintf(h->name, sizeof(h->name), "%s", name);
    h->text = text;
    h->len = len;
    h->owner = owner;
    h->job_id = job_id;
    h->step_id = step_id;
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
    d->totals.reports_held++;
    hold->bytes += len;
}

void report_hold_retry(struct np_daemon *d)
{
    struct np_report_hold *hold = &d->report_hold;
    unsigned written = 0;

    while (hold->first) {
        struct np_held_report *h = hold->first;
        struct np_err err = {0};

        if (safe_write(d->cfg.spool_dir, h->name, h->text, h->len, h->owner, 0600, &err) < 0) {
            d->totals.spool_write_failures++;
            remind(d, err.msg);
            break;
        }
        NPD_LOG(d, INFO, "job %u.%s: report %s/%s (held until now)", h->job_id,
                np_step_name(h->step_id), d->cfg.spool_dir, h->name);
        hold->first = h->next;
        hold->count--;
        hold->bytes -= h->len;
        held_free(h);
        written++;
    }
    if (!hold->first)
        hold->last = NULL;
    if (written && !hold->first)
        NPD_LOG(d, INFO, "spool %s takes reports again: %u held report(s) written",
                d->cfg.spool_dir, written);
}

void report_hold_flush(struct np_daemon *d)
{
    report_hold_retry(d);
    for (struct np_held_report *h = d->report_hold.first; h; h = h->next, d->totals.reports_lost++)
        NPD_LOG(d, ERROR, "job %u.%s: its report %s is lost: the spool %s still refuses it",
                h->job_id, np_step_name(h->step_id), h->name, d->cfg.spool_dir);
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
