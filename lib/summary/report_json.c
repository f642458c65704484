/* A report read into C data (numaplace/report_model.h), as leniently as the summary always read
 * it: a member of the wrong type counts as absent, and a figure says why it has no number. */
#include "numaplace/report_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The string, or NULL when @p j is none. */
static const char *str_of(const json_t *j)
{
    return json_string_value(j);
}

static bool dup_str(char **dst, const json_t *j)
{
    bool ok = true;

    *dst = np_strdup_or_null(str_of(j), &ok);
    return ok;
}

/*
 * A figure whose number is at @p value_key (and, for statistics, its peak and intervals):
 * absent when @p o is no object, unavailable with the report's reason, malformed without a
 * number.
 */
static int read_figure(const json_t *o, const char *value_key, const char *peak_key,
                       struct np_report_figure *f)
{
    json_t *unavail = NULL, *value = NULL, *peak = NULL, *intervals = NULL, *source = NULL;
    bool ok = true;

    memset(f, 0, sizeof(*f));
    if (!json_is_object(o))
        return 0;
    json_unpack((json_t *)o, "{s?o, s?o, s?o}", "unavailable", &unavail, value_key, &value,
                "source", &source);
    if (peak_key)
        json_unpack((json_t *)o, "{s?o, s?o}", peak_key, &peak, "intervals", &intervals);
    f->unavailable_member = unavail != NULL;
    f->source = np_strdup_or_null(str_of(source), &ok);
    if (json_is_string(unavail)) {
        f->state = NP_REPORT_FIGURE_UNAVAILABLE;
        f->reason = np_strdup_or_null(str_of(unavail), &ok);
    } else if (!json_is_number(value)) {
        f->state = NP_REPORT_FIGURE_MALFORMED;
    } else {
        f->state = NP_REPORT_FIGURE_VALUE;
        f->value = json_number_value(value);
    }
    if (json_is_number(peak)) {
        f->has_peak = true;
        f->peak = json_number_value(peak);
    }
    if (json_is_number(intervals)) {
        f->has_intervals = true;
        f->intervals = json_number_value(intervals);
    }
    return ok ? 0 : -ENOMEM;
}

static void figure_free(struct np_report_figure *f)
{
    free(f->reason);
    free(f->source);
    memset(f, 0, sizeof(*f));
}

/* The numeric members of @p obj (others are skipped, as the summary always did). */
static int numeric_map(const json_t *obj, struct np_map *m)
{
    const char *key;
    json_t *v;

    json_object_foreach((json_t *)obj, key, v)
    {
        struct np_num n;
        if (np_num_decode(v, false, &n, key, NULL) == 0 && np_map_set(m, key, n) != 0)
            return -ENOMEM;
    }
    return 0;
}

static int read_pages(const json_t *pages, struct np_report_pages *p, struct np_err *err)
{
    json_t *unavail = NULL, *source = NULL, *peak = NULL, *end = NULL, *total = NULL, *ls = NULL;

    p->peak_total_bytes = -1;
    if (!json_is_object(pages))
        return 0;
    json_unpack((json_t *)pages, "{s?o, s?o, s?o, s?o, s?o, s?o}", "unavailable", &unavail,
                "source", &source, "peak_bytes", &peak, "end_bytes", &end, "peak_total_bytes",
                &total, "local_share", &ls);
    if (!dup_str(&p->source, source))
        return np_err_set(err, -ENOMEM, "out of memory reading a report");
    if (json_is_string(unavail)) {
        p->state = NP_RPAGES_UNAVAILABLE;
        return dup_str(&p->reason, unavail)
                   ? 0
                   : np_err_set(err, -ENOMEM, "out of memory reading a report");
    }
    p->state = NP_RPAGES_READ;
    if (numeric_map(peak, &p->peak_bytes) != 0)
        return np_err_set(err, -ENOMEM, "out of memory reading a report");
    if (json_is_object(end)) {
        /* kept whole in the summary: every member must be a number */
        int rc;
        if ((rc = np_map_decode(end, &p->end_bytes, "the report's pages.end_bytes", err)) != 0)
            return rc;
        p->has_end_bytes = true;
    }
    if (json_is_number(total))
        p->peak_total_bytes = json_number_value(total);
    if (ls) {
        p->has_local_share = true;
        if (read_figure(ls, "value", NULL, &p->local_share) != 0)
            return np_err_set(err, -ENOMEM, "out of memory reading a report");
    }
    return 0;
}

static int read_migrations(const json_t *m, struct np_report_migrations *mg, struct np_err *err)
{
    json_t *in = NULL, *in_old = NULL, *out = NULL, *out_old = NULL, *moving = NULL, *failed = NULL,
           *requests = NULL, *source = NULL, *unavail = NULL, *q;
    size_t i;

    if (!json_is_object(m))
        return 0;
    json_unpack((json_t *)m, "{s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o}", "pages_in_bytes", &in,
                "pages_in", &in_old, "pages_out_bytes", &out, "pages_out", &out_old, "moving_s",
                &moving, "failed_pages", &failed, "requests", &requests, "source", &source,
                "unavailable", &unavail);
    if (unavail)
        return 0;
    mg->present = true;
    /* reports before the *_bytes names wrote pages_in / pages_out (also bytes) */
    if (numeric_map(in ? in : in_old, &mg->in_bytes) != 0 ||
        numeric_map(out ? out : out_old, &mg->out_bytes) != 0 ||
        numeric_map(failed, &mg->failed_pages) != 0 || !dup_str(&mg->source, source))
        return np_err_set(err, -ENOMEM, "out of memory reading a report");
    mg->moving_s = json_is_number(moving) ? json_number_value(moving) : 0;
    if (!json_array_size(requests))
        return 0;
    mg->requests = calloc(json_array_size(requests), sizeof(*mg->requests));
    if (!mg->requests)
        return np_err_set(err, -ENOMEM, "out of memory reading a report");
    json_array_foreach(requests, i, q)
    {
        struct np_report_request *r = &mg->requests[mg->nrequests++];
        json_t *trigger = NULL, *dry = NULL, *moved = NULL;
        json_unpack(q, "{s?o, s?o, s?o}", "trigger", &trigger, "dry_run", &dry, "moved_pages",
                    &moved);
        r->dry_run = json_is_true(dry);
        {
            struct np_num n = {0}; /* a moved_pages that is no number counts 0 */
            np_num_decode(moved, false, &n, "moved_pages", NULL);
            r->moved_pages = np_num_int_value(&n);
        }
        if (!dup_str(&r->trigger, trigger))
            return np_err_set(err, -ENOMEM, "out of memory reading a report");
    }
    return 0;
}

static int read_os(const json_t *os, struct np_report *r)
{
    static const struct {
        const char *key, *value_key;
    } members[NP_OS_NMEMBERS] = {
        [NP_OS_KERNEL_TIME_SHARE] = {"kernel_time_share", "value"},
        [NP_OS_INVOLUNTARY_CS_PER_S] = {"involuntary_cs_per_s", "value"},
        [NP_OS_INTERRUPTS_PER_S] = {"interrupts_on_cpus", "per_s"},
        [NP_OS_SOFTIRQS_PER_S] = {"softirqs_on_cpus", "per_s"},
        [NP_OS_OTHER_CPU_TIME_S] = {"other_cpu_time_s", "value"},
    };

    for (int k = 0; k < NP_OS_NMEMBERS; k++) {
        json_t *f = NULL;
        if (json_is_object(os))
            json_unpack((json_t *)os, "{s?o}", members[k].key, &f);
        if (read_figure(f, members[k].value_key, NULL, &r->os[k]) != 0)
            return -ENOMEM;
    }
    return 0;
}

int np_report_model_decode(const json_t *json, bool full, struct np_report *r, struct np_err *err)
{
    json_t *schema = NULL, *node = NULL, *step = NULL, *start = NULL, *end = NULL, *sens = NULL,
           *cpus = NULL, *policy = NULL, *job = NULL, *uid = NULL, *dur = NULL, *complete = NULL,
           *local = NULL, *cpi = NULL, *bw = NULL, *pages = NULL, *migr = NULL, *os = NULL,
           *tl = NULL, *requested = NULL, *tasks = NULL, *t, *job_class = NULL,
           *class_source = NULL, *perf = NULL;
    static const char *const perf_names[NP_RPERF_N] = {"cycles", "instructions", "llc_load_misses",
                                                       "llc_store_misses"};
    size_t i;
    int rc;

    memset(r, 0, sizeof(*r));
    if (!json_is_object(json))
        return np_err_set(err, -EINVAL, "a report must be a JSON object");
    json_unpack((json_t *)json, "{s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o}",
                "schema", &schema, "node", &node, "step", &step, "start", &start, "end", &end,
                "sensitivity", &sens, "cpus", &cpus, "policy", &policy, "job_id", &job, "uid", &uid,
                "duration_s", &dur, "complete", &complete);
    json_unpack((json_t *)json, "{s?o, s?o, s?o, s?o, s?o, s?o, s?o}", "local_nodes", &local, "cpi",
                &cpi, "bandwidth", &bw, "pages", &pages, "migrations", &migr, "os_interference",
                &os, "timeline", &tl);
    json_unpack((json_t *)json, "{s?o, s?o, s?o}", "class", &job_class, "class_source",
                &class_source, "perf_counts", &perf);
    if (json_is_object(policy))
        json_unpack(policy, "{s?o, s?o}", "requested", &requested, "tasks", &tasks);
    if (!dup_str(&r->schema, schema) || !dup_str(&r->node, node) || !dup_str(&r->step, step) ||
        !dup_str(&r->start, start) || !dup_str(&r->end, end) || !dup_str(&r->sensitivity, sens) ||
        !dup_str(&r->cpus, cpus) || !dup_str(&r->policy_requested, requested) ||
        !dup_str(&r->job_class, job_class) || !dup_str(&r->class_source, class_source) ||
        !dup_str(&r->helper_shared_cpus,
                 json_object_get(json_object_get(json, "helper"), "shared_cpus")) ||
        !dup_str(&r->emulated_cpu,
                 json_object_get(json_object_get(json, "sampling"), "emulated_cpu")))
        goto oom;
    r->has_job_id = json_is_integer(job);
    r->job_id = json_integer_value(job);
    r->has_uid = json_is_integer(uid);
    r->uid = json_integer_value(uid);
    r->duration_s = json_is_number(dur) ? json_number_value(dur) : 0;
    r->complete = json_is_true(complete);
    if (!full)
        return 0;
    if (json_array_size(tasks)) {
        r->tasks = calloc(json_array_size(tasks), sizeof(*r->tasks));
        if (!r->tasks)
            goto oom;
        json_array_foreach(tasks, i, t)
        {
            if (!dup_str(&r->tasks[r->ntasks++].policy, json_object_get(t, "policy")))
                goto oom;
        }
    }
    if (json_is_array(local)) {
        r->has_local_nodes = true;
        r->local_nodes.v = calloc(json_array_size(local) + 1, sizeof(*r->local_nodes.v));
        if (!r->local_nodes.v)
            goto oom;
        json_array_foreach(local, i, t)
        {
            if ((rc = np_num_decode(t, false, &r->local_nodes.v[i], "the report's local_nodes",
                                    err)) != 0)
                goto fail;
            r->local_nodes.n++;
        }
    }
    if (read_figure(cpi, "mean", "p95", &r->cpi) != 0 ||
        read_figure(bw, "mean_bytes_per_s", "peak_bytes_per_s", &r->bandwidth) != 0 ||
        read_os(os, r) != 0)
        goto oom;
    for (int k = 0; k < NP_RPERF_N; k++)
        if (read_figure(json_is_object(perf) ? json_object_get(perf, perf_names[k]) : NULL, "value",
                        NULL, &r->perf[k]) != 0)
            goto oom;
    if ((rc = read_pages(pages, &r->pages, err)) != 0 ||
        (rc = read_migrations(migr, &r->migrations, err)) != 0)
        goto fail;
    if (json_is_object(tl)) {
        r->has_timeline = true;
        if ((rc = np_sum_timeline_decode(tl, &r->timeline, "the report's timeline", err)) != 0)
            goto fail;
    }
    return 0;
oom:
    rc = np_err_set(err, -ENOMEM, "out of memory reading a report");
fail:
    np_report_model_free(r);
    return rc;
}

void np_report_model_free(struct np_report *r)
{
    if (!r)
        return;
    free(r->schema);
    free(r->node);
    free(r->step);
    free(r->start);
    free(r->end);
    free(r->sensitivity);
    free(r->cpus);
    free(r->policy_requested);
    free(r->job_class);
    free(r->class_source);
    free(r->helper_shared_cpus);
    free(r->emulated_cpu);
    for (int k = 0; k < NP_RPERF_N; k++)
        figure_free(&r->perf[k]);
    for (size_t i = 0; i < r->ntasks; i++)
        free(r->tasks[i].policy);
    free(r->tasks);
    free(r->local_nodes.v);
    figure_free(&r->cpi);
    figure_free(&r->bandwidth);
    free(r->pages.reason);
    free(r->pages.source);
    np_map_free(&r->pages.peak_bytes);
    np_map_free(&r->pages.end_bytes);
    figure_free(&r->pages.local_share);
    np_map_free(&r->migrations.in_bytes);
    np_map_free(&r->migrations.out_bytes);
    np_map_free(&r->migrations.failed_pages);
    for (size_t i = 0; i < r->migrations.nrequests; i++)
        free(r->migrations.requests[i].trigger);
    free(r->migrations.requests);
    free(r->migrations.source);
    for (int k = 0; k < NP_OS_NMEMBERS; k++)
        figure_free(&r->os[k]);
    np_sum_timeline_free(&r->timeline);
    memset(r, 0, sizeof(*r));
}
