/* A job's figures at one instant, their JSON form (the trace the replay backend reads) and the
 * perf events' names (declared in numaplace/procfs.h). */
#include "numaplace/procfs.h"

#include <errno.h>
#include <string.h>

void np_sample_init(struct np_sample *s)
{
    memset(s, 0, sizeof(*s));
}

/* {"unavailable": reason} for a group that was tried and failed. */
static json_t *unavailable(const char *reason)
{
    return json_pack("{s:s}", "unavailable", reason[0] ? reason : "not measured");
}

json_t *np_node_map_json(const uint64_t values[NP_SAMPLE_MAX_NODES])
{
    json_t *obj = json_object();

    for (int n = 0; obj && n < NP_SAMPLE_MAX_NODES; n++)
        if (values[n]) {
            char key[8];
            snprintf(key, sizeof(key), "%d", n);
            json_object_set_new(obj, key, json_integer((json_int_t)values[n]));
        }
    return obj;
}

json_t *np_node_list_json(uint64_t mask)
{
    json_t *arr = json_array();

    for (int n = 0; arr && n < 64; n++)
        if (mask >> n & 1)
            json_array_append_new(arr, json_integer(n));
    return arr;
}

json_t *np_sample_to_json(const struct np_sample *s)
{
    json_t *obj = json_pack("{s:f, s:i}", "t", s->t, "processes", (int)s->processes);
    json_t *perf;

    if (!obj)
        return NULL;
    if (s->have_proc) /* the context switches only when read (have_cs) */
        json_object_set_new(
            obj, "proc",
            json_pack("{s:f, s:f, s:I, s:I, s:I, s:o*, s:o*}", "utime_s", s->utime_s, "stime_s",
                      s->stime_s, "minflt", (json_int_t)s->minflt, "majflt", (json_int_t)s->majflt,
                      "rss_bytes", (json_int_t)s->rss_bytes, "voluntary_cs",
                      s->have_cs ? json_integer((json_int_t)s->voluntary_cs) : NULL,
                      "involuntary_cs",
                      s->have_cs ? json_integer((json_int_t)s->involuntary_cs) : NULL));
    else if (s->proc_reason[0])
        json_object_set_new(obj, "proc", unavailable(s->proc_reason));
    if (s->have_pages)
        json_object_set_new(obj, "pages",
                            json_pack("{s:o}", "node_bytes", np_node_map_json(s->node_bytes)));
    else if (s->pages_reason[0])
        json_object_set_new(obj, "pages", unavailable(s->pages_reason));
    if (s->have_irq)
        json_object_set_new(obj, "irq",
                            json_pack("{s:I, s:I}", "interrupts", (json_int_t)s->interrupts,
                                      "softirqs", (json_int_t)s->softirqs));
    else if (s->irq_reason[0])
        json_object_set_new(obj, "irq", unavailable(s->irq_reason));
    if (s->have_cpu_busy)
        json_object_set_new(obj, "cpu_busy", json_pack("{s:f}", "busy_s", s->cpus_busy_s));
    else if (s->cpu_busy_reason[0])
        json_object_set_new(obj, "cpu_busy", unavailable(s->cpu_busy_reason));
    if (s->have_balancing)
        json_object_set_new(obj, "numa_balancing",
                            json_pack("{s:I, s:I}", "pages_migrated",
                                      (json_int_t)s->balancing_pages_migrated, "faults",
                                      (json_int_t)s->balancing_faults));
    else if (s->balancing_reason[0])
        json_object_set_new(obj, "numa_balancing", unavailable(s->balancing_reason));
    perf = json_object();
    for (int e = 0; perf && e < NP_PERF_NEVENTS; e++) {
        const char *label = np_perf_event_label((enum np_perf_event)e);
        if (s->have_perf[e])
            json_object_set_new(perf, label, json_integer((json_int_t)s->perf[e]));
        else if (s->perf_reason[e][0])
            json_object_set_new(perf, label, unavailable(s->perf_reason[e]));
    }
    if (perf && json_object_size(perf))
        json_object_set_new(obj, "perf", perf);
    else
        json_decref(perf);
    if (s->have_misses_by_node)
        json_object_set_new(obj, "misses_by_node", np_node_map_json(s->misses_by_node));
    return obj;
}

/* A group member: NULL when absent, an "unavailable" reason copied out, or the object. */
static json_t *group(json_t *obj, const char *key, bool *have, char *reason, size_t size)
{
    json_t *g = json_object_get(obj, key);
    const char *why;

    *have = false;
    reason[0] = '\0';
    if (!json_is_object(g))
        return NULL;
    why = json_string_value(json_object_get(g, "unavailable"));
    if (why) {
        snprintf(reason, size, "%s", why);
        return NULL;
    }
    *have = true;
    return g;
}

static int get_u64(json_t *g, const char *key, uint64_t *out, struct np_err *err)
{
    json_t *v = json_object_get(g, key);

    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return np_err_set(err, -EINVAL, "sample member \"%s\" must be a non-negative integer", key);
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static int get_real(json_t *g, const char *key, double *out, struct np_err *err)
{
    json_t *v = json_object_get(g, key);

    if (!json_is_number(v) || json_number_value(v) < 0)
        return np_err_set(err, -EINVAL, "sample member \"%s\" must be a non-negative number", key);
    *out = json_number_value(v);
    return 0;
}

static int get_node_map(json_t *map, const char *what, uint64_t *values, struct np_err *err)
{
    const char *key;
    json_t *v;

    if (!json_is_object(map))
        return np_err_set(err, -EINVAL, "sample member \"%s\" must be an object of node: value",
                          what);
    json_object_foreach(map, key, v)
    {
        char *end;
        long node = strtol(key, &end, 10);
        if (*end || node < 0 || node >= NP_SAMPLE_MAX_NODES || !json_is_integer(v) ||
            json_integer_value(v) < 0)
            return np_err_set(err, -EINVAL,
                              "sample member \"%s\": \"%s\" must be a node number from 0 to %d "
                              "with a non-negative integer",
                              what, key, NP_SAMPLE_MAX_NODES - 1);
        values[node] = (uint64_t)json_integer_value(v);
    }
    return 0;
}

int np_sample_from_json(json_t *obj, struct np_sample *s, struct np_err *err)
{
    json_t *g, *perf;
    uint64_t processes = 0;
    int rc;

    np_sample_init(s);
    if (!json_is_object(obj))
        return np_err_set(err, -EINVAL, "a sample must be a JSON object");
    if ((rc = get_real(obj, "t", &s->t, err)) < 0 ||
        (rc = get_u64(obj, "processes", &processes, err)) < 0)
        return rc;
    s->processes = (unsigned)processes;
    if ((g = group(obj, "proc", &s->have_proc, s->proc_reason, sizeof(s->proc_reason))) &&
        ((rc = get_real(g, "utime_s", &s->utime_s, err)) < 0 ||
         (rc = get_real(g, "stime_s", &s->stime_s, err)) < 0 ||
         (rc = get_u64(g, "minflt", &s->minflt, err)) < 0 ||
         (rc = get_u64(g, "majflt", &s->majflt, err)) < 0 ||
         (rc = get_u64(g, "rss_bytes", &s->rss_bytes, err)) < 0))
        return rc;
    if (g && json_object_get(g, "involuntary_cs")) {
        if ((rc = get_u64(g, "voluntary_cs", &s->voluntary_cs, err)) < 0 ||
            (rc = get_u64(g, "involuntary_cs", &s->involuntary_cs, err)) < 0)
            return rc;
        s->have_cs = true;
    }
    if ((g = group(obj, "pages", &s->have_pages, s->pages_reason, sizeof(s->pages_reason))) &&
        (rc = get_node_map(json_object_get(g, "node_bytes"), "pages.node_bytes", s->node_bytes,
                           err)) < 0)
        return rc;
    if ((g = group(obj, "irq", &s->have_irq, s->irq_reason, sizeof(s->irq_reason))) &&
        ((rc = get_u64(g, "interrupts", &s->interrupts, err)) < 0 ||
         (rc = get_u64(g, "softirqs", &s->softirqs, err)) < 0))
        return rc;
    if ((g = group(obj, "cpu_busy", &s->have_cpu_busy, s->cpu_busy_reason,
                   sizeof(s->cpu_busy_reason))) &&
        (rc = get_real(g, "busy_s", &s->cpus_busy_s, err)) < 0)
        return rc;
    if ((g = group(obj, "numa_balancing", &s->have_balancing, s->balancing_reason,
                   sizeof(s->balancing_reason))) &&
        ((rc = get_u64(g, "pages_migrated", &s->balancing_pages_migrated, err)) < 0 ||
         (rc = get_u64(g, "faults", &s->balancing_faults, err)) < 0))
        return rc;
    perf = json_object_get(obj, "perf");
    for (int e = 0; json_is_object(perf) && e < NP_PERF_NEVENTS; e++) {
        json_t *v = json_object_get(perf, np_perf_event_label((enum np_perf_event)e));
        if (json_is_integer(v) && json_integer_value(v) >= 0) {
            s->have_perf[e] = true;
            s->perf[e] = (uint64_t)json_integer_value(v);
        } else if (json_is_object(v) && json_is_string(json_object_get(v, "unavailable"))) {
            snprintf(s->perf_reason[e], sizeof(s->perf_reason[e]), "%s",
                     json_string_value(json_object_get(v, "unavailable")));
        } else if (v) {
            return np_err_set(err, -EINVAL,
                              "sample member \"perf.%s\" must be a count or {\"unavailable\": "
                              "reason}",
                              np_perf_event_label((enum np_perf_event)e));
        }
    }
    g = json_object_get(obj, "misses_by_node");
    if (g) {
        if ((rc = get_node_map(g, "misses_by_node", s->misses_by_node, err)) < 0)
            return rc;
        s->have_misses_by_node = true;
    }
    return 0;
}

static const struct {
    const char *name, *label;
} events[NP_PERF_NEVENTS] = {
    [NP_PERF_CYCLES] = {"perf::CYCLES", "cycles"},
    [NP_PERF_INSTRUCTIONS] = {"perf::INSTRUCTIONS", "instructions"},
    [NP_PERF_LLC_LOAD_MISSES] = {"perf::LLC-LOAD-MISSES", "llc_load_misses"},
    [NP_PERF_LLC_STORE_MISSES] = {"perf::LLC-STORE-MISSES", "llc_store_misses"},
    [NP_PERF_TASK_CLOCK] = {"perf::TASK-CLOCK", "task_clock_ns"},
    [NP_PERF_CONTEXT_SWITCHES] = {"perf::CONTEXT-SWITCHES", "context_switches"},
    [NP_PERF_PAGE_FAULTS] = {"perf::PAGE-FAULTS", "page_faults"},
};

const char *np_perf_event_name(enum np_perf_event ev)
{
    return (unsigned)ev < NP_PERF_NEVENTS ? events[ev].name : NULL;
}

const char *np_perf_event_label(enum np_perf_event ev)
{
    return (unsigned)ev < NP_PERF_NEVENTS ? events[ev].label : NULL;
}
