/* The trace (numaplace.trace/1): its lines, and the replay that rebuilds reports through
 * np_step_figures and np_report_new, as numaplaced does. */
#include "numaplace/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- trace ---- */

json_t *np_trace_job_line(const struct np_job_meta *meta)
{
    const bool helper_cpus = meta->helper_cpus[0];

    return json_pack("{s:s, s:s, s:I, s:I, s:I, s:s, s:f, s:f, s:s, s:s, s:s, s:s, s:O*, s:o*, "
                     "s:o*, s:s*, s:s*, "
                     "s:s*}",
                     "schema", NP_TRACE_SCHEMA, "event", "job", "job", (json_int_t)meta->job_id,
                     "step", (json_int_t)meta->step_id, "uid", (json_int_t)meta->uid, "node",
                     meta->node, "start", meta->start_epoch, "interval_s", meta->interval_s,
                     "policy", meta->policy_requested, "sensitivity", meta->sensitivity, "cpus",
                     meta->cpus, "backends", meta->backends, "tasks", meta->tasks, "local_nodes",
                     meta->local_nodes ? np_node_list_json(meta->local_nodes) : NULL,
                     "registered_nodes",
                     meta->registered_nodes ? np_node_list_json(meta->registered_nodes) : NULL,
                     "effective_cpus", meta->effective_cpus[0] ? meta->effective_cpus : NULL,
                     "helper_cpus", helper_cpus ? meta->helper_cpus : NULL, "shared_cpus",
                     helper_cpus ? meta->shared_cpus : NULL);
}

json_t *np_trace_sample_line(uint32_t job_id, uint32_t step_id, const struct np_sample *s,
                             double helper_cpu_s)
{
    return json_pack("{s:s, s:I, s:I, s:f, s:o}", "event", "sample", "job", (json_int_t)job_id,
                     "step", (json_int_t)step_id, "helper_cpu_s", helper_cpu_s, "sample",
                     np_sample_to_json(s));
}

void np_trace_sample_cpus(json_t *line, const struct np_job_meta *meta)
{
    if (!line)
        return;
    json_object_set_new(line, "effective_cpus", json_string(meta->effective_cpus));
    json_object_set_new(line, "local_nodes", np_node_list_json(meta->local_nodes));
}

json_t *np_trace_end_line(uint32_t job_id, uint32_t step_id, double end_epoch)
{
    return json_pack("{s:s, s:I, s:I, s:f}", "event", "end", "job", (json_int_t)job_id, "step",
                     (json_int_t)step_id, "end", end_epoch);
}

struct replay_job {
    struct np_job_meta meta;
    struct np_step_figures stats;
    json_t *tasks;
    bool used;
};

#define REPLAY_MAX_JOBS 256

static struct replay_job *find_job(struct replay_job *jobs, json_t *line)
{
    json_int_t job = json_integer_value(json_object_get(line, "job"));
    json_int_t step = json_integer_value(json_object_get(line, "step"));

    for (int i = 0; i < REPLAY_MAX_JOBS; i++)
        if (jobs[i].used && jobs[i].meta.job_id == (uint32_t)job &&
            jobs[i].meta.step_id == (uint32_t)step)
            return &jobs[i];
    return NULL;
}

static void copy_str(char *dst, size_t size, json_t *v)
{
    snprintf(dst, size, "%s", json_string_value(v) ? json_string_value(v) : "");
}

/* [n, ...] as a node mask (bits past 63 and non-numbers left out). */
static uint64_t node_mask(json_t *list)
{
    uint64_t mask = 0;
    size_t k;
    json_t *node;

    json_array_foreach(list, k, node)
    {
        const json_int_t n = json_integer_value(node);
        if (n >= 0 && n < 64)
            mask |= 1ull << n;
    }
    return mask;
}

/* The effective CPUs and their nodes of a job or sample line, when it has them (older traces
 * do not: local_nodes are then the registered CPUs' nodes). */
static void apply_cpus(struct replay_job *j, json_t *line)
{
    if (json_is_string(json_object_get(line, "effective_cpus")))
        copy_str(j->meta.effective_cpus, sizeof(j->meta.effective_cpus),
                 json_object_get(line, "effective_cpus"));
    if (json_is_array(json_object_get(line, "local_nodes")))
        j->meta.local_nodes = j->stats.local_nodes =
            node_mask(json_object_get(line, "local_nodes"));
}

static int emit(struct replay_job *j, bool complete, np_report_fn *fn, void *arg)
{
    json_t *rep;
    int stop;

    j->meta.tasks = j->tasks;
    rep = np_report_new(&j->meta, &j->stats, complete);
    if (!rep)
        return -ENOMEM;
    stop = fn ? fn(rep, arg) : 0;
    json_decref(rep);
    np_step_figures_fini(&j->stats);
    json_decref(j->tasks);
    memset(j, 0, sizeof(*j));
    return stop;
}

int np_trace_replay(FILE *in, const char *name, np_report_fn *fn, void *arg, struct np_err *err)
{
    struct replay_job *jobs = calloc(REPLAY_MAX_JOBS, sizeof(*jobs));
    char *line = NULL;
    size_t cap = 0;
    unsigned lineno = 0;
    int reports = 0, rc = 0;

    if (!jobs)
        return np_err_set(err, -ENOMEM, "out of memory");
    while (rc == 0 && getline(&line, &cap, in) >= 0) {
        json_error_t jerr;
        json_t *obj;
        const char *event;
        struct replay_job *j;

        lineno++;
        if (line[strspn(line, " \t\r\n")] == '\0')
            continue;
        obj = json_loads(line, 0, &jerr);
        event = json_string_value(json_object_get(obj, "event"));
        if (!obj || !event) {
            rc = np_err_set(err, -EINVAL, "%s:%u: not a trace line (%s)", name, lineno,
                            obj ? "no \"event\"" : jerr.text);
            json_decref(obj);
            break;
        }
        j = find_job(jobs, obj);
        if (strcmp(event, "job") == 0) {
            const char *schema = json_string_value(json_object_get(obj, "schema"));
            if (!schema || strcmp(schema, NP_TRACE_SCHEMA) != 0) {
                rc = np_err_set(err, -EINVAL, "%s:%u: trace schema %s; this numaplace reads %s",
                                name, lineno, schema ? schema : "missing", NP_TRACE_SCHEMA);
            } else if (!j) {
                for (int i = 0; i < REPLAY_MAX_JOBS && !j; i++)
                    if (!jobs[i].used)
                        j = &jobs[i];
                if (!j) {
                    rc = np_err_set(err, -EINVAL, "%s:%u: more than %d jobs open at once", name,
                                    lineno, REPLAY_MAX_JOBS);
                } else {
                    j->used = true;
                    np_step_figures_init(&j->stats);
                    j->meta.job_id = (uint32_t)json_integer_value(json_object_get(obj, "job"));
                    j->meta.step_id = (uint32_t)json_integer_value(json_object_get(obj, "step"));
                    j->meta.uid = (uid_t)json_integer_value(json_object_get(obj, "uid"));
                    j->meta.start_epoch = json_number_value(json_object_get(obj, "start"));
                    j->meta.interval_s = json_number_value(json_object_get(obj, "interval_s"));
                    copy_str(j->meta.node, sizeof(j->meta.node), json_object_get(obj, "node"));
                    copy_str(j->meta.policy_requested, sizeof(j->meta.policy_requested),
                             json_object_get(obj, "policy"));
                    copy_str(j->meta.sensitivity, sizeof(j->meta.sensitivity),
                             json_object_get(obj, "sensitivity"));
                    copy_str(j->meta.cpus, sizeof(j->meta.cpus), json_object_get(obj, "cpus"));
                    copy_str(j->meta.helper_cpus, sizeof(j->meta.helper_cpus),
                             json_object_get(obj, "helper_cpus"));
                    copy_str(j->meta.shared_cpus, sizeof(j->meta.shared_cpus),
                             json_object_get(obj, "shared_cpus"));
                    snprintf(j->meta.backends, sizeof(j->meta.backends), "replay of %s",
                             json_string_value(json_object_get(obj, "backends"))
                                 ? json_string_value(json_object_get(obj, "backends"))
                                 : "?");
                    j->tasks = json_incref(json_object_get(obj, "tasks"));
                    j->meta.registered_nodes = node_mask(json_object_get(obj, "registered_nodes"));
                    apply_cpus(j, obj);
                }
            }
        } else if (strcmp(event, "sample") == 0) {
            struct np_sample s;
            struct np_err serr = {0};
            if (!j) {
                rc = np_err_set(err, -EINVAL, "%s:%u: sample for a job with no \"job\" line", name,
                                lineno);
            } else if (np_sample_from_json(json_object_get(obj, "sample"), &s, &serr) < 0) {
                rc = np_err_set(err, -EINVAL, "%s:%u: %s", name, lineno, serr.msg);
            } else {
                apply_cpus(j, obj); /* before the sample, as numaplaced does */
                if (np_step_figures_add(&j->stats, &s) < 0)
                    rc = np_err_set(err, -EINVAL, "%s:%u: sample goes back in time", name, lineno);
                else
                    j->stats.helper_cpu_s = json_number_value(json_object_get(obj, "helper_cpu_s"));
            }
        } else if (strcmp(event, "end") == 0) {
            if (!j) {
                rc = np_err_set(err, -EINVAL, "%s:%u: end of a job with no \"job\" line", name,
                                lineno);
            } else {
                j->meta.end_epoch = json_number_value(json_object_get(obj, "end"));
                rc = emit(j, true, fn, arg);
                if (rc >= 0)
                    reports++;
            }
        } else {
            rc = np_err_set(err, -EINVAL, "%s:%u: unknown event \"%s\"; accepted: job, sample, end",
                            name, lineno, event);
        }
        json_decref(obj);
    }
    for (int i = 0; i < REPLAY_MAX_JOBS; i++)
        if (jobs[i].used) {
            if (rc == 0) {
                jobs[i].meta.end_epoch = jobs[i].meta.start_epoch + jobs[i].stats.last.t;
                if (emit(&jobs[i], false, fn, arg) >= 0)
                    reports++;
            } else {
                np_step_figures_fini(&jobs[i].stats);
                json_decref(jobs[i].tasks);
            }
        }
    free(line);
    free(jobs);
    return rc < 0 ? rc : reports;
}
