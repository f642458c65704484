/* A job summary's records (numaplace/summary_model.h), each described once by a table of its
 * members (record.h): decoding, encoding, freeing, copying and the member names in messages all
 * come from these tables. A member is its struct field, its enum id and its row here. */
#include "numaplace/summary_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "summary_priv.h"

/* ---- a step (`nodes.NAME.steps[]`) ---- */

#define F(m, nm, ty) NP_FIELD(struct np_sum_step, m, nm, ty)
static const struct np_field step_fields[NP_STEP_NMEMBERS] = {
    [NP_STEP_STEP] = F(step, "step", NP_F_STR),
    [NP_STEP_POLICY] = F(policy, "policy", NP_F_STR),
    [NP_STEP_APPLIED] = F(applied, "applied", NP_F_MAP),
    [NP_STEP_SENSITIVITY] = F(sensitivity, "sensitivity", NP_F_STR),
    [NP_STEP_CPUS] = F(cpus, "cpus", NP_F_STR),
    [NP_STEP_COMPLETE] = F(complete, "complete", NP_F_BOOL),
    [NP_STEP_DURATION_S] = F(duration_s, "duration_s", NP_F_REAL),
    [NP_STEP_LOCAL_NODES] =
        NP_FIELD_NUMS(struct np_sum_step, local_nodes, nlocal_nodes, "local_nodes", NP_F_NUMS),
    [NP_STEP_START] = F(start, "start", NP_F_STR),
    [NP_STEP_END] = F(end, "end", NP_F_STR),
    [NP_STEP_CLASS] = F(job_class, "class", NP_F_STR),
    [NP_STEP_CLASS_SOURCE] = F(class_source, "class_source", NP_F_STR),
    [NP_STEP_CPI] = F(cpi, "cpi", NP_F_REAL),
    [NP_STEP_LLC_MPKI] = F(llc_mpki, "llc_mpki", NP_F_REAL),
    [NP_STEP_BANDWIDTH] = F(bandwidth_bytes_per_s, "bandwidth_bytes_per_s", NP_F_REAL),
    [NP_STEP_COUNTERS_UNAVAILABLE] = F(counters_unavailable, "counters_unavailable", NP_F_STR),
    [NP_STEP_HELPER_SHARED_CPUS] = F(helper_shared_cpus, "helper_shared_cpus", NP_F_STR),
};
#undef F
static const struct np_record step_rec = NP_RECORD(struct np_sum_step, step_fields);

/* ---- migrations, and their triggers by name ---- */

#define F(m, nm) NP_FIELD(struct np_sum_trigger, m, nm, NP_F_INT)
static const struct np_field trigger_fields[] = {
    [NP_TRIG_REQUESTS] = F(requests, "requests"),
    [NP_TRIG_DRY_RUN] = F(dry_run, "dry_run"),
    [NP_TRIG_MOVED_PAGES] = F(moved_pages, "moved_pages"),
};
#undef F
static const struct np_record trigger_rec = NP_RECORD(struct np_sum_trigger, trigger_fields);
static const struct np_field trigger_elem = {.type = NP_F_RECORD, .rec = &trigger_rec};

#define F(m, nm, ty) NP_FIELD(struct np_sum_migrations, m, nm, ty)
static const struct np_field migr_fields[NP_MIGR_NMEMBERS] = {
    [NP_MIGR_IN_BYTES] = F(in_bytes, "in_bytes", NP_F_MAP),
    [NP_MIGR_OUT_BYTES] = F(out_bytes, "out_bytes", NP_F_MAP),
    [NP_MIGR_REQUESTS] = F(requests, "requests", NP_F_INT),
    [NP_MIGR_DRY_RUN_REQUESTS] = F(dry_run_requests, "dry_run_requests", NP_F_INT),
    [NP_MIGR_MOVING_S] = F(moving_s, "moving_s", NP_F_REAL),
    [NP_MIGR_FAILED_PAGES] = F(failed_pages, "failed_pages", NP_F_MAP),
    [NP_MIGR_TRIGGERS] = NP_FIELD_OBJECT(struct np_sum_migrations, triggers, ntriggers, "triggers",
                                         &trigger_elem, struct np_sum_trigger, name),
    [NP_MIGR_SOURCE] = F(source, "source", NP_F_STR),
};
#undef F
static const struct np_record migr_rec = NP_RECORD(struct np_sum_migrations, migr_fields);

/* ---- os_interference: a figure per member ---- */

#define F(k, nm)                                                                                   \
    [k] = {.name = (nm),                                                                           \
           .type = NP_F_CUSTOM,                                                                    \
           .off = offsetof(struct np_sum_os, fig) + (k) * sizeof(struct np_figure),                \
           .ops = &np_figure_ops[NP_FIGURE_PLAIN]}
static const struct np_field os_fields[NP_OS_NMEMBERS] = {
    F(NP_OS_KERNEL_TIME_SHARE, "kernel_time_share"),
    F(NP_OS_INVOLUNTARY_CS_PER_S, "involuntary_cs_per_s"),
    F(NP_OS_INTERRUPTS_PER_S, "interrupts_per_s"),
    F(NP_OS_SOFTIRQS_PER_S, "softirqs_per_s"),
    F(NP_OS_OTHER_CPU_TIME_S, "other_cpu_time_s"),
};
#undef F
static const struct np_record os_rec = NP_RECORD(struct np_sum_os, os_fields);

/* ---- pages_peak_bytes, pages_end_bytes: bytes per NUMA node, or unavailable ---- */

static int bytes_decode(const json_t *j, void *field, const char *what, struct np_err *err)
{
    struct np_sum_bytes *b = field;

    /* the unavailable form is a figure without a number */
    if (json_object_get(j, "unavailable"))
        return np_figure_decode(j, NP_FIGURE_PLAIN, &b->unavailable, what, err);
    b->is_map = true;
    return np_map_decode(j, &b->map, what, err);
}

static json_t *bytes_encode(const void *field)
{
    const struct np_sum_bytes *b = field;

    return b->is_map ? np_map_json(&b->map) : np_figure_json(&b->unavailable);
}

static void bytes_free(void *field)
{
    struct np_sum_bytes *b = field;

    np_map_free(&b->map);
    np_figure_free(&b->unavailable);
    b->is_map = false;
}

static const struct np_field_ops bytes_ops = {bytes_decode, bytes_encode, bytes_free};

/* ---- the timeline of a node's longest step ---- */

#define F(m, nm, ty) NP_FIELD(struct np_sum_timeline, m, nm, ty)
static const struct np_field event_fields[] = {
    NP_FIELD(struct np_sum_event, t, "t", NP_F_NUM),
    NP_FIELD(struct np_sum_event, label, "label", NP_F_STR),
};
static const struct np_record event_rec = NP_RECORD(struct np_sum_event, event_fields);
static const struct np_field event_elem = {.type = NP_F_RECORD, .rec = &event_rec};
static const struct np_field series_elem = {.type = NP_F_NUMS,
                                            .off = offsetof(struct np_sum_series, bytes.v),
                                            .count_off = offsetof(struct np_sum_series, bytes.n)};

static const struct np_field timeline_fields[NP_TL_NMEMBERS] = {
    [NP_TL_T] = NP_FIELD_NUMS(struct np_sum_timeline, t.v, t.n, "t", NP_F_NUMS),
    [NP_TL_NODE_BYTES] = NP_FIELD_OBJECT(struct np_sum_timeline, node_bytes, nnode_bytes,
                                         "node_bytes", &series_elem, struct np_sum_series, node),
    [NP_TL_BANDWIDTH] = NP_FIELD_NUMS(struct np_sum_timeline, bandwidth.v, bandwidth.n,
                                      "bandwidth_bytes_per_s", NP_F_NUMS_OR_NULL),
    [NP_TL_CPI] = NP_FIELD_NUMS(struct np_sum_timeline, cpi.v, cpi.n, "cpi", NP_F_NUMS_OR_NULL),
    [NP_TL_EVENTS] = NP_FIELD_ARRAY(struct np_sum_timeline, events, nevents, "events", &event_elem),
    [NP_TL_EVERY_NTH_SAMPLE] = F(every_nth_sample, "every_nth_sample", NP_F_NUM),
    [NP_TL_BANDWIDTH_NOTE] = F(bandwidth_note, "bandwidth_note", NP_F_STR),
    [NP_TL_CPI_NOTE] = F(cpi_note, "cpi_note", NP_F_STR),
    [NP_TL_STEP] = F(step, "step", NP_F_STR),
    [NP_TL_DURATION_S] = F(duration_s, "duration_s", NP_F_NUM),
};
#undef F
static const struct np_record timeline_rec = NP_RECORD(struct np_sum_timeline, timeline_fields);

/* ---- a node (`nodes.NAME`) ---- */

static const struct np_field step_elem = {.type = NP_F_RECORD, .rec = &step_rec};

#define F(m, nm, ty)     NP_FIELD(struct np_sum_node, m, nm, ty)
#define FIG(m, nm, kind) NP_FIELD_FIGURE(struct np_sum_node, m, nm, kind)
static const struct np_field node_fields[NP_NODE_NMEMBERS] = {
    [NP_NODE_STEPS] = NP_FIELD_ARRAY(struct np_sum_node, steps, nsteps, "steps", &step_elem),
    [NP_NODE_STEP_COUNT] = F(step_count, "step_count", NP_F_INT),
    [NP_NODE_DURATION_S] = F(duration_s, "duration_s", NP_F_REAL),
    [NP_NODE_START] = F(start, "start", NP_F_STR),
    [NP_NODE_END] = F(end, "end", NP_F_STR),
    [NP_NODE_POLICY_REQUESTED] = F(policy_requested, "policy_requested", NP_F_STRS),
    [NP_NODE_POLICY_APPLIED] = F(policy_applied, "policy_applied", NP_F_MAP),
    [NP_NODE_SENSITIVITY] = F(sensitivity, "sensitivity", NP_F_STR),
    [NP_NODE_LOCAL_SHARE] = FIG(local_share, "local_share", NP_FIGURE_PLAIN),
    [NP_NODE_PAGES_PEAK_BYTES] =
        NP_FIELD_CUSTOM(struct np_sum_node, pages_peak_bytes, "pages_peak_bytes", &bytes_ops),
    [NP_NODE_PAGES_END_BYTES] =
        NP_FIELD_CUSTOM(struct np_sum_node, pages_end_bytes, "pages_end_bytes", &bytes_ops),
    [NP_NODE_CPI] = FIG(cpi, "cpi", NP_FIGURE_CPI),
    [NP_NODE_BANDWIDTH] = FIG(bandwidth, "bandwidth", NP_FIGURE_BANDWIDTH),
    [NP_NODE_MIGRATIONS] = NP_FIELD_RECORD(struct np_sum_node, migrations, "migrations", &migr_rec),
    [NP_NODE_PAGES_MOVED_BYTES] = F(pages_moved_bytes, "pages_moved_bytes", NP_F_INT),
    [NP_NODE_OS_INTERFERENCE] = NP_FIELD_RECORD(struct np_sum_node, os, "os_interference", &os_rec),
    [NP_NODE_TIMELINE] = NP_FIELD_RECORD(struct np_sum_node, timeline, "timeline", &timeline_rec),
};
#undef F
#undef FIG
static const struct np_record node_rec = NP_RECORD(struct np_sum_node, node_fields);

/* ---- the summary ---- */

static const struct np_field skip_fields[] = {
    [NP_SKIP_NODE] = NP_FIELD(struct np_sum_skip, node, "node", NP_F_STR),
    [NP_SKIP_STEP] = NP_FIELD(struct np_sum_skip, step, "step", NP_F_STR),
    [NP_SKIP_REASON] = NP_FIELD(struct np_sum_skip, reason, "reason", NP_F_STR),
};
static const struct np_record skip_rec = NP_RECORD(struct np_sum_skip, skip_fields);
static const struct np_field skip_elem = {.type = NP_F_RECORD, .rec = &skip_rec};

static const struct np_field trim_fields[] = {
    [NP_TRIM_WHAT] = NP_FIELD(struct np_sum_trim, what, "what", NP_F_STR),
    [NP_TRIM_STORED_BYTES_BEFORE] =
        NP_FIELD(struct np_sum_trim, stored_bytes_before, "stored_bytes_before", NP_F_INT),
};
static const struct np_record trim_rec = NP_RECORD(struct np_sum_trim, trim_fields);
static const struct np_field trim_elem = {.type = NP_F_RECORD, .rec = &trim_rec};

#define F(m, nm, ty) NP_FIELD(struct np_sum_totals, m, nm, ty)
static const struct np_field totals_fields[NP_TOT_NMEMBERS] = {
    [NP_TOT_NODES] = F(nodes, "nodes", NP_F_INT),
    [NP_TOT_STEPS] = F(steps, "steps", NP_F_INT),
    [NP_TOT_MISSING_NODES] = F(missing_nodes, "missing_nodes", NP_F_INT),
    [NP_TOT_SKIPPED] = F(skipped, "skipped", NP_F_INT),
    [NP_TOT_PAGES_MOVED_BYTES] = F(pages_moved_bytes, "pages_moved_bytes", NP_F_INT),
    [NP_TOT_MIGRATION_REQUESTS] = F(migration_requests, "migration_requests", NP_F_INT),
    [NP_TOT_LOCAL_SHARE] =
        NP_FIELD_FIGURE(struct np_sum_totals, local_share, "local_share", NP_FIGURE_PLAIN),
    [NP_TOT_KERNEL_TIME_SHARE] = NP_FIELD_FIGURE(struct np_sum_totals, kernel_time_share,
                                                 "kernel_time_share", NP_FIGURE_PLAIN),
};
#undef F
static const struct np_record totals_rec = NP_RECORD(struct np_sum_totals, totals_fields);

static const struct np_field node_elem = {.type = NP_F_RECORD, .rec = &node_rec};

#define F(m, nm, ty) NP_FIELD(struct np_sum, m, nm, ty)
static const struct np_field sum_fields[NP_SUM_NMEMBERS] = {
    [NP_SUM_SCHEMA] = F(schema, "schema", NP_F_STR),
    [NP_SUM_JOB_ID] = F(job_id, "job_id", NP_F_INT),
    [NP_SUM_UID] = F(uid, "uid", NP_F_INT),
    [NP_SUM_USER] = F(user, "user", NP_F_STR),
    [NP_SUM_POLICY_REQUESTED] = F(policy_requested, "policy_requested", NP_F_STRS),
    [NP_SUM_POLICY_APPLIED] = F(policy_applied, "policy_applied", NP_F_MAP),
    [NP_SUM_SENSITIVITY] = F(sensitivity, "sensitivity", NP_F_STR),
    [NP_SUM_START] = F(start, "start", NP_F_STR),
    [NP_SUM_END] = F(end, "end", NP_F_STR),
    [NP_SUM_NODES] = NP_FIELD_OBJECT(struct np_sum, nodes, nnodes, "nodes", &node_elem,
                                     struct np_sum_node, name),
    [NP_SUM_TOTALS] = NP_FIELD_RECORD(struct np_sum, totals, "totals", &totals_rec),
    [NP_SUM_MISSING_NODES] = F(missing_nodes, "missing_nodes", NP_F_STRS),
    [NP_SUM_SKIPPED] = NP_FIELD_ARRAY(struct np_sum, skipped, nskipped, "skipped", &skip_elem),
    [NP_SUM_TRIMMED] = NP_FIELD_ARRAY(struct np_sum, trimmed, ntrimmed, "trimmed", &trim_elem),
    [NP_SUM_NODES_FOLDED] =
        NP_FIELD_CUSTOM(struct np_sum, folded, "nodes_folded", &np_sum_folded_ops),
};
#undef F
static const struct np_record sum_rec = {.fields = sum_fields,
                                         .n = NP_SUM_NMEMBERS,
                                         .keys_off = offsetof(struct np_sum, keys),
                                         .root = "summary"};

/* ---- the interface ---- */

int np_sum_check(const json_t *summary, struct np_err *err)
{
    const char *schema = json_string_value(json_object_get(summary, "schema"));

    if (!json_is_object(summary))
        return np_err_set(err, -EINVAL, "a summary must be a JSON object");
    if (!schema)
        return np_err_set(err, -EINVAL, "not a numaplace summary (no \"schema\")");
    if (strncmp(schema, "numaplace.summary/", strlen("numaplace.summary/")) != 0)
        return np_err_set(err, -EINVAL, "not a numaplace summary (schema %s; expected %s)", schema,
                          NP_SUMMARY_SCHEMA);
    if (strcmp(schema, NP_SUMMARY_SCHEMA) != 0)
        return np_err_set(err, -EPROTO, "summary schema %s; this numaplace reads %s", schema,
                          NP_SUMMARY_SCHEMA);
    if (!json_is_integer(json_object_get(summary, "job_id")) ||
        !json_is_object(json_object_get(summary, "nodes")))
        return np_err_set(err, -EINVAL,
                          "malformed summary: it needs an integer \"job_id\" and a \"nodes\" "
                          "object");
    return 0;
}

int np_sum_decode(const json_t *json, struct np_sum *s, struct np_err *err)
{
    int rc;

    memset(s, 0, sizeof(*s));
    if ((rc = np_sum_check(json, err)) != 0)
        return rc;
    rc = np_rec_decode(&sum_rec, json, s, "", err);
    if (rc) {
        char msg[NP_ERR_MSG_MAX];
        /* name the summary: the message reaches users of `numaplace report` and the epilog's log */
        snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
        np_err_set(err, rc, "summary of job %lld: %s",
                   (long long)json_integer_value(json_object_get(json, "job_id")), msg);
        np_sum_free(s);
    }
    return rc;
}

json_t *np_sum_encode(const struct np_sum *s)
{
    return np_rec_encode(&sum_rec, s);
}

void np_sum_free(struct np_sum *s)
{
    if (!s)
        return;
    np_rec_free(&sum_rec, s);
    memset(s, 0, sizeof(*s));
}

void np_sum_node_free(struct np_sum_node *n)
{
    if (!n)
        return;
    free(n->name);
    np_rec_free(&node_rec, n);
    memset(n, 0, sizeof(*n));
}

void np_sum_node_drop(struct np_sum_node *n, unsigned member)
{
    np_rec_drop(&node_rec, n, member);
}

int np_sum_node_copy(struct np_sum_node *dst, const struct np_sum_node *src)
{
    memset(dst, 0, sizeof(*dst));
    if (src->name && !(dst->name = strdup(src->name)))
        return -ENOMEM;
    if (np_rec_copy(&node_rec, dst, src) != 0) {
        np_sum_node_free(dst);
        return -ENOMEM;
    }
    return 0;
}

int np_sum_timeline_decode(const json_t *j, struct np_sum_timeline *tl, const char *what,
                           struct np_err *err)
{
    return np_rec_decode(&timeline_rec, j, tl, what, err);
}

void np_sum_timeline_free(struct np_sum_timeline *tl)
{
    np_rec_free(&timeline_rec, tl);
    memset(tl, 0, sizeof(*tl));
}
