/* Each interval's work over the node and every step (daemon.h). */
#include "daemon.h"

/* /proc/interrupts costs more than all else node-wide and a report uses only a job's first and
 * last reading (its final sample, or the one that finds its processes gone, reads it): read it
 * every interval only for the trace, else when a job has no reading yet. */
static bool irq_wanted(struct np_daemon *d)
{
    if (d->trace)
        return true;
    for (unsigned i = 0; i < d->registry.count; i++)
        if (!registry_at(&d->registry, i)->finishing &&
            registry_at(&d->registry, i)->stats.irq_samples == 0)
            return true;
    return false;
}

static void read_node_counters(struct np_daemon *d)
{
    if (irq_wanted(d))
        np_node_counters_read_irq(&d->counters, d->cfg.proc_root);
    else
        np_node_counters_skip_irq(&d->counters);
    np_node_counters_read_cpu(&d->counters, d->cfg.proc_root);
}

void sampling_tick(struct np_daemon *d)
{
    const double now = np_monotonic_s();
    double cpu0;

    if (d->registry.count == 0) {
        /* still every interval: status and metrics show the node's traffic now, not a rate
         * from when the last job ran (nor, at the next job, one averaged over the idle hours) */
        uncore_bw_tick(d);
        if (d->cfg.auto_load == NP_AUTO_LOAD_CPU_BUSY) /* the CPU-busy proxy reads it */
            np_node_counters_read_cpu(&d->counters, d->cfg.proc_root);
        hint_tick(d);
        return;
    }
    cpu0 = np_daemon_thread_cpu_s();
    read_node_counters(d);
    uncore_bw_tick(d);
    hint_tick(d);
    d->totals.sampling_cpu_s += np_daemon_thread_cpu_s() - cpu0;
    for (unsigned i = 0; i < d->registry.count;) {
        struct np_daemon_job *j = registry_at(&d->registry, i);
        if (j->finishing) { /* ended: its report is with the writer */
            i++;
            continue;
        }
        sampling_sample_job(d, j, now, true, false);
        /* Tasks all gone and no step_end came: the plugin's message was lost; end it anyway. */
        if (j->stats.last.processes == 0 &&
            now - j->registered_mono > 2.0 * d->cfg.interval_ms / 1000.0) {
            NPD_LOG(d, INFO, "job %u.%s: its processes are gone without a step_end; ending it",
                    j->meta.job_id, np_step_name(j->meta.step_id));
            const unsigned before = d->registry.count;
            j->ended = true;
            job_finish(d, j, true);
            if (d->registry.count == before)
                i++;  /* finishing: it stays until its report is durable */
            continue; /* else the next step moved into slot i */
        }
        i++;
    }
    if (d->cfg.migration)
        migration_run_triggers(d);
}
