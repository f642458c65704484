/* One tracked step, the object (daemon.h; its life in the registry: job_life.c). */
#include "daemon.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t job_cpu_nodes_mask(const struct np_daemon *d, hwloc_const_bitmap_t cpus)
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

void job_free(struct np_daemon_job *j)
{
    if (!j)
        return;
    np_sampler_fini(&j->sampler);
    np_step_figures_fini(&j->stats);
    json_decref(j->final_report);
    free(j->final_report_text);
    json_decref(j->tasks);
    free(j);
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
    j->meta.prediction.known = false; /* auto_class_consider sets it after its source */
}

bool job_follow_effective_cpus(const struct np_daemon *d, struct np_daemon_job *j)
{
    hwloc_const_bitmap_t effective = np_sampler_effective_cpus(&j->sampler);
    const uint64_t nodes = job_cpu_nodes_mask(d, effective);
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
    /* Once shared, the step says so: numaplaced may have moved since (a reload). Only of the
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
