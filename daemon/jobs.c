/* One tracked step (see jobs.h). */
#include "jobs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "registry.h"
#include "report_out.h"
#include "sampling.h"
#include "server.h"

/* Bit n: some CPU of @p cpus is on NUMA node n. */
static uint64_t cpu_nodes_mask(const struct np_daemon *d, hwloc_const_bitmap_t cpus)
{
    uint64_t mask = 0;
    int cpu;

    if (!d->cpu_node || !cpus)
        return 0;
    hwloc_bitmap_foreach_begin(cpu, cpus)
    {
        if ((unsigned)cpu < d->ncpus && d->cpu_node[cpu] >= 0 && d->cpu_node[cpu] < 64)
            mask |= 1ull << d->cpu_node[cpu];
    }
    hwloc_bitmap_foreach_end();
    return mask;
}

struct np_daemon_job *job_new(struct np_daemon *d, uint32_t job_id, uint32_t step_id, uid_t uid,
                              const char *cpus, const char *policy, const char *sensitivity,
                              struct np_err *err)
{
    const struct np_helper_config *cfg = &d->cfg;
    struct np_daemon_job *j;
    bool high;
    int rc;

    if (d->registry.count >= cfg->max_jobs) {
        np_err_set(err, -ENOSPC, "the helper tracks %u steps already (max_jobs)",
                   d->registry.count);
        return NULL;
    }
    j = calloc(1, sizeof(*j));
    if (!j || np_sampler_init(&j->sampler, cfg->proc_root, d->perf_mask, d->perf_off_reason,
                              d->cpu_node, d->cpu_node ? d->ncpus : 0, cpus, err) < 0) {
        free(j);
        if (!err->code)
            np_err_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    np_sampler_set_fd_budget(&j->sampler, &d->fd_budget);
    np_jobstats_init(&j->stats);
    j->tasks = json_array();
    j->meta.job_id = job_id;
    j->meta.step_id = step_id;
    j->meta.uid = uid;
    j->meta.start_epoch = np_daemon_epoch_s();
    j->meta.interval_s = cfg->interval_ms / 1000.0;
    snprintf(j->meta.node, sizeof(j->meta.node), "%s", d->host);
    snprintf(j->meta.cpus, sizeof(j->meta.cpus), "%s", cpus);
    snprintf(j->meta.policy_requested, sizeof(j->meta.policy_requested), "%s", policy);
    snprintf(j->meta.sensitivity, sizeof(j->meta.sensitivity), "%s", sensitivity);
    high = strcmp(sensitivity, "high") == 0  ? cfg->class_high_is_high
           : strcmp(sensitivity, "low") == 0 ? cfg->class_low_is_high
                                             : cfg->class_default_high;
    job_set_class(j, high ? NP_CLASS_HIGH : NP_CLASS_LOW);
    job_set_class_source(j, strcmp(sensitivity, "high") == 0 || strcmp(sensitivity, "low") == 0
                                ? "label"
                                : "default");
    j->stats.migration_enabled = cfg->migration;
    j->meta.registered_nodes = cpu_nodes_mask(d, j->sampler.cpus);
    j->meta.local_nodes = j->stats.local_nodes = j->meta.registered_nodes;
    snprintf(j->meta.backends, sizeof(j->meta.backends), "%s", d->perf_mask ? "perf,proc" : "proc");
    j->registered_mono = np_monotonic_s();
    j->last_pages_mono = j->last_detail_mono = -1e9;
    if ((rc = registry_insert(&d->registry, j)) < 0) {
        job_free(j);
        if (rc == -EEXIST)
            np_err_set(err, rc, "job %u.%s is tracked already", job_id, np_step_name(step_id));
        else
            np_err_set(err, rc, "out of memory");
        return NULL;
    }
    return j;
}

void job_free(struct np_daemon_job *j)
{
    if (!j)
        return;
    np_sampler_fini(&j->sampler);
    np_jobstats_fini(&j->stats);
    json_decref(j->tasks);
    free(j);
}

/* Its report is durable (or held): the registry forgets it. */
static void job_forget(struct np_daemon *d, struct np_daemon_job *j)
{
    registry_remove(&d->registry, j);
    registry_note_end(d, j->meta.job_id, j->meta.step_id);
    job_free(j);
}

void job_finish(struct np_daemon *d, struct np_daemon_job *j, bool complete)
{
    if (!j->ended) {
        /* The final figures: perf totals include every exited thread and child. */
        np_node_counters_read(&d->counters, d->cfg.proc_root);
        sampling_sample_job(d, j, np_monotonic_s(), true, true);
        j->ended = true;
    }
    if (!j->finishing)
        advice_remember(d, j);
    /* The helper restarted during the step: its figures cover only the time since. */
    j->finishing = report_out_write(d, j, complete && !j->restored);
    if (j->traced)
        trace_line(d, np_trace_end_line(j->meta.job_id, j->meta.step_id, j->meta.end_epoch));
    /* Until its report is on disk it stays in the registry (and in registry.json): a crash
     * meanwhile brings it back as ended while the helper was down, and the report is written
     * then (a complete one already there is kept). */
    if (!j->finishing)
        job_forget(d, j);
}

void job_report_done(struct np_daemon *d, struct np_daemon_job *j)
{
    const uint64_t tag = j->reply_tag;

    job_forget(d, j);
    if (tag) /* the epilog reads the report right after: step_end is answered only now */
        server_answer_tag(d, tag, np_proto_reply_ok());
}

json_t *job_task_entry(const struct np_daemon_job *j, pid_t pid)
{
    json_t *t;
    size_t i;

    json_array_foreach(j->tasks, i, t)
    {
        if (json_integer_value(json_object_get(t, "pid")) == pid)
            return t;
    }
    return NULL;
}

void job_set_class(struct np_daemon_job *j, enum np_class cls)
{
    j->job_class = cls;
    snprintf(j->meta.job_class, sizeof(j->meta.job_class), "%s", np_class_name(cls));
}

void job_set_class_source(struct np_daemon_job *j, const char *source)
{
    snprintf(j->meta.class_source, sizeof(j->meta.class_source), "%s", source);
}

bool job_follow_effective_cpus(const struct np_daemon *d, struct np_daemon_job *j)
{
    hwloc_const_bitmap_t effective = np_sampler_effective_cpus(&j->sampler);
    const uint64_t nodes = cpu_nodes_mask(d, effective);
    char list[sizeof(j->meta.effective_cpus)];

    if (hwloc_bitmap_iszero(effective) ||
        hwloc_bitmap_list_snprintf(list, sizeof(list), effective) >= (int)sizeof(list))
        return false; /* not known yet, or too long to say whole: keep what was said */
    if (!nodes || (nodes == j->meta.local_nodes && strcmp(list, j->meta.effective_cpus) == 0))
        return false;
    snprintf(j->meta.effective_cpus, sizeof(j->meta.effective_cpus), "%s", list);
    /* the planner's move group and the report's local share follow where the tasks may run */
    j->meta.local_nodes = j->stats.local_nodes = nodes;
    job_note_helper_cpus(d, j);
    return true;
}

void job_note_helper_cpus(const struct np_daemon *d, struct np_daemon_job *j)
{
    hwloc_const_bitmap_t cpus = np_sampler_effective_cpus(&j->sampler);
    hwloc_bitmap_t shared, now;

    if (!d->helper_cpus || hwloc_bitmap_iszero(d->helper_cpus) || hwloc_bitmap_iszero(cpus) ||
        !(shared = hwloc_bitmap_alloc()))
        return;
    /* Once shared, the step says so: the helper may have moved since (a reload). Only of the
     * CPUs the tasks may run on: the registered ones were wider when the binding came later. */
    if (hwloc_bitmap_list_sscanf(shared, j->meta.shared_cpus) < 0)
        hwloc_bitmap_zero(shared);
    hwloc_bitmap_and(shared, shared, cpus);
    if ((now = hwloc_bitmap_alloc())) {
        hwloc_bitmap_and(now, d->helper_cpus, cpus);
        hwloc_bitmap_or(shared, shared, now);
        hwloc_bitmap_free(now);
    }
    hwloc_bitmap_list_snprintf(j->meta.helper_cpus, sizeof(j->meta.helper_cpus), d->helper_cpus);
    hwloc_bitmap_list_snprintf(j->meta.shared_cpus, sizeof(j->meta.shared_cpus), shared);
    hwloc_bitmap_free(shared);
}
