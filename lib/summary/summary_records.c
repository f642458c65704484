/* A job summary's records (numaplace/summary_model.h), each described once by its member list
 * there, from which its table of members (record.h) is made here: decoding, encoding, freeing,
 * copying and the member names in messages all come from these tables. */
#include "numaplace/summary_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "summary_priv.h"

#define T struct np_sum_step
NP_RECORD_OF(step, NP_STEP_MEMBERS);
#undef T
#define T struct np_sum_trigger
NP_RECORD_OF(trigger, NP_TRIG_MEMBERS);
#undef T
static const struct np_field trigger_elem = {.type = NP_F_RECORD, .rec = &trigger_rec};
#define T struct np_sum_migrations
NP_RECORD_OF(migr, NP_MIGR_MEMBERS);
#undef T
#define T struct np_sum_os
NP_RECORD_OF(os, NP_OS_MEMBERS);
#undef T

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

static const struct np_field event_fields[] = {
    NP_FIELD(struct np_sum_event, t, "t", NP_F_NUM),
    NP_FIELD(struct np_sum_event, label, "label", NP_F_STR),
};
static const struct np_record event_rec = NP_RECORD(struct np_sum_event, event_fields);
static const struct np_field event_elem = {.type = NP_F_RECORD, .rec = &event_rec};
static const struct np_field series_elem = {.type = NP_F_NUMS,
                                            .off = offsetof(struct np_sum_series, bytes.v),
                                            .count_off = offsetof(struct np_sum_series, bytes.n)};
#define T struct np_sum_timeline
NP_RECORD_OF(timeline, NP_TL_MEMBERS);
#undef T

/* ---- a node (`nodes.NAME`) and the summary ---- */

static const struct np_field step_elem = {.type = NP_F_RECORD, .rec = &step_rec};
#define T struct np_sum_node
NP_RECORD_OF(node, NP_NODE_MEMBERS);
#undef T
static const struct np_field node_elem = {.type = NP_F_RECORD, .rec = &node_rec};
#define T struct np_sum_skip
NP_RECORD_OF(skip, NP_SKIP_MEMBERS);
#undef T
static const struct np_field skip_elem = {.type = NP_F_RECORD, .rec = &skip_rec};
#define T struct np_sum_trim
NP_RECORD_OF(trim, NP_TRIM_MEMBERS);
#undef T
static const struct np_field trim_elem = {.type = NP_F_RECORD, .rec = &trim_rec};
#define T struct np_sum_totals
NP_RECORD_OF(totals, NP_TOT_MEMBERS);
#undef T
#define T struct np_sum
static const struct np_field sum_fields[] = {NP_SUM_MEMBERS(NP_ROW)};
static const struct np_record sum_rec = {
    .fields = sum_fields, .n = NP_SUM_NMEMBERS, .keys_off = offsetof(T, keys), .root = "summary"};
#undef T

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
