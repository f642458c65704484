/* The page's per-step families (see metrics_text.h). Each step's series carry its jobid and step;
 * its user is on numaplace_step_info only, which PromQL joins on those two labels. */
#include "metrics_text.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "daemon.h"
#include "numaplace/names.h"
#include "registry.h"
#include "user_names.h"

/* Never looked up here: the name a thread found since the step registered (user_names.h), its
 * uid's number until then. */
static void resolve_user(struct np_daemon_job *j)
{
    if (j->user_known)
        return;
    j->user_known = user_name_get(j->meta.uid, j->user, sizeof(j->user));
    if (j->user_known)
        return;
    snprintf(j->user, sizeof(j->user), "%u", (unsigned)j->meta.uid);
    user_name_want(j->meta.uid); /* asked already at registration, unless restored from disk */
}

/* The step's identity labels, opened: jobid, step. */
static void step_labels(struct metrics_text *t, const char *name, const struct np_daemon_job *j)
{
    char jobid[16];

    snprintf(jobid, sizeof(jobid), "%u", j->meta.job_id);
    metrics_series(t, name);
    metrics_label(t, true, "jobid", jobid);
    metrics_label(t, false, "step", np_step_name(j->meta.step_id));
}

/* The running steps that get series, in the registry's order (jobid, step): all, none
 * (metrics_step_series = off) or the first metrics_step_series, into @p shown (room for every
 * step); the rest counted in @p left. @return how many are shown */
static unsigned shown_steps(const struct np_daemon *d, struct np_daemon_job **shown, unsigned *left)
{
    const struct np_metrics_config *mc = &d->cfg.metrics;
    const unsigned cap = mc->step_series_off   ? 0
                         : mc->step_series_max ? mc->step_series_max
                                               : d->registry.count;
    unsigned n = 0;

    *left = 0;
    for (unsigned i = 0; i < d->registry.count; i++) {
        struct np_daemon_job *j = registry_at(&d->registry, i);
        if (j->ended)
            continue;
        if (n < cap)
            shown[n++] = j;
        else
            (*left)++;
    }
    return n;
}

static void render_memory(struct metrics_text *t, struct np_daemon_job *const *js, unsigned shown,
                          const unsigned *os, unsigned count)
{
    char node[16];

    metrics_family(t, "numaplace_step_memory_bytes", "gauge",
                   "A running step's memory on each NUMA node, in bytes (its last numa_maps "
                   "reading).");
    for (unsigned k = 0; k < shown; k++) {
        const struct np_daemon_job *j = js[k];
        if (!j->stats.page_samples)
            continue;
        for (unsigned n = 0; n < count; n++) {
            snprintf(node, sizeof(node), "%u", os[n]);
            step_labels(t, "numaplace_step_memory_bytes", j);
            metrics_label(t, false, "node", node);
            metrics_value_u64(t, true, j->stats.pages_end[os[n]]);
        }
    }
    metrics_family(t, "numaplace_step_local_ratio", "gauge",
                   "Share (0..1) of a running step's memory on its CPUs' NUMA nodes.");
    for (unsigned k = 0; k < shown; k++) {
        const struct np_daemon_job *j = js[k];
        if (!j->stats.local_nodes || !j->stats.local_share_readings)
            continue;
        step_labels(t, "numaplace_step_local_ratio", j);
        metrics_value_f(t, true, j->stats.local_share_last);
    }
}

static void render_info(struct metrics_text *t, struct np_daemon_job *const *js, unsigned shown)
{
    metrics_family(t, "numaplace_step_info", "gauge",
                   "Always 1: a running step's user, class and requested placement policy (join "
                   "on jobid and step).");
    for (unsigned k = 0; k < shown; k++) {
        struct np_daemon_job *j = js[k];
        resolve_user(j);
        step_labels(t, "numaplace_step_info", j);
        metrics_label(t, false, "user", j->user);
        metrics_label_code(t, false, "class", np_class_name(j->job_class));
        metrics_label_code(t, false, "policy",
                           j->meta.policy_requested[0] ? j->meta.policy_requested : "unknown");
        metrics_value_u64(t, true, 1);
    }
}

/* Counters where the step's hardware counters count; absent where they do not (the reason is
 * numaplace_counters_info's). */
static void render_counters(struct metrics_text *t, struct np_daemon_job *const *js, unsigned shown)
{
    static const struct {
        const char *name, *help;
        size_t offset;
        bool traffic; /* counted with the misses, else with cycles and instructions */
    } counters[] = {
        {"numaplace_step_cycles_total", "CPU cycles of a running step's processes.",
         offsetof(struct np_step_figures, cycles_total), false},
        {"numaplace_step_instructions_total", "Instructions a running step's processes retired.",
         offsetof(struct np_step_figures, instructions_total), false},
        {"numaplace_step_memory_traffic_bytes_total",
         "A running step's memory traffic, in bytes (its LLC misses x 64 B).",
         offsetof(struct np_step_figures, traffic_bytes_total), true},
    };

    for (size_t c = 0; c < sizeof(counters) / sizeof(counters[0]); c++) {
        metrics_family(t, counters[c].name, "counter", counters[c].help);
        for (unsigned k = 0; k < shown; k++) {
            const struct np_daemon_job *j = js[k];
            const struct np_step_figures *st = &j->stats;
            if (!(counters[c].traffic ? st->bw_intervals : st->counted_intervals))
                continue;
            step_labels(t, counters[c].name, j);
            metrics_value_u64(t, true, *(const uint64_t *)((const char *)st + counters[c].offset));
        }
    }
}

void metrics_render_steps(struct np_daemon *d, struct metrics_text *t, const unsigned *os,
                          unsigned count)
{
    struct np_daemon_job **js = malloc((d->registry.count + 1) * sizeof(struct np_daemon_job *));
    unsigned left = 0, shown = 0;

    if (!js)
        t->oom = true;
    else
        shown = shown_steps(d, js, &left);
    render_memory(t, js, shown, os, count);
    render_info(t, js, shown);
    render_counters(t, js, shown);
    free(js);
    metrics_single_u64(t, "numaplace_step_series_left_out", "gauge",
                       "Running steps without series of their own on this page "
                       "(metrics_step_series).",
                       left);
}
