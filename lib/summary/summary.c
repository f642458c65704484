/* The json_t functions of numaplace/summary.h: each decodes the summary into C data
 * (numaplace/summary_model.h) once, works on that, and writes the result back into the caller's
 * object, members in the same order as before. */
#include "numaplace/summary.h"

#include <errno.h>
#include <stdlib.h>

#include "numaplace/summary_model.h"
#include "summary_priv.h"

/* Replace the members of @p json with those of @p s (the caller's reference stays valid). */
static int write_back(json_t *json, const struct np_sum *s)
{
    json_t *enc = np_sum_encode(s);
    int rc = -ENOMEM;

    if (enc && json_object_clear(json) == 0 && json_object_update(json, enc) == 0)
        rc = 0;
    json_decref(enc);
    return rc;
}

int np_summary_check(const json_t *summary, struct np_err *err)
{
    return np_sum_check(summary, err);
}

json_t *np_summary_new(uint32_t job_id)
{
    struct np_sum s;
    json_t *json;

    if (np_sum_init(&s, job_id) != 0)
        return NULL;
    json = np_sum_encode(&s);
    np_sum_free(&s);
    return json;
}

int np_summary_set_user(json_t *summary, const char *user, struct np_err *err)
{
    struct np_sum s;
    int rc = np_sum_decode(summary, &s, err);

    if (rc)
        return rc;
    rc = np_sum_set_user(&s, user, err);
    if (!rc && write_back(summary, &s) != 0)
        rc = np_err_set(err, -ENOMEM, "out of memory naming the user");
    np_sum_free(&s);
    return rc;
}

int np_summary_add_report(json_t *summary, json_t *report, struct np_err *err)
{
    struct np_sum s;
    int rc = np_sum_decode(summary, &s, err);

    if (rc)
        return rc;
    rc = np_sum_add_report(&s, report, err);
    /* also on failure: a refused report may have named the job's uid, as it always did */
    if (write_back(summary, &s) != 0 && rc == 0)
        rc = np_err_set(err, -ENOMEM, "out of memory adding a report");
    np_sum_free(&s);
    return rc;
}

int np_summary_expect_nodes(json_t *summary, const char *hostlist, struct np_err *err)
{
    struct np_sum s;
    int rc = np_sum_decode(summary, &s, err);

    if (rc)
        return rc;
    rc = np_sum_expect_nodes(&s, hostlist, err);
    if (!rc && write_back(summary, &s) != 0)
        rc = np_err_set(err, -ENOMEM, "out of memory listing the expected nodes");
    np_sum_free(&s);
    return rc;
}

int np_summary_merge(json_t *into, json_t *other, struct np_err *err)
{
    struct np_sum a, b;
    int rc = np_sum_decode(into, &a, err);

    if (rc)
        return rc;
    if (into == other) {
        rc = np_sum_recompute(&a);
    } else if ((rc = np_sum_decode(other, &b, err)) == 0) {
        rc = np_sum_merge(&a, &b, err);
        np_sum_free(&b);
    }
    if (!rc && write_back(into, &a) != 0)
        rc = np_err_set(err, -ENOMEM, "out of memory merging summaries");
    np_sum_free(&a);
    return rc;
}

int np_summary_validate(const json_t *summary, struct np_err *err)
{
    struct np_sum s;
    const int rc = np_sum_decode(summary, &s, err);

    np_sum_free(&s);
    return rc;
}

int np_summary_print(FILE *out, const json_t *summary)
{
    if (!out || np_summary_validate(summary, NULL) != 0)
        return -EINVAL;
    return np_summary_print_as(out, summary, NULL, false, NULL);
}

int np_summary_print_with(FILE *out, const json_t *summary, const struct np_sens_model *model)
{
    return np_summary_print_hostlist(out, summary, model, NULL);
}

int np_summary_print_hostlist(FILE *out, const json_t *summary, const struct np_sens_model *model,
                              np_hostlist_fn hostlist)
{
    if (!out || np_summary_validate(summary, NULL) != 0)
        return -EINVAL;
    return np_summary_print_as(out, summary, model, true, hostlist);
}

long np_summary_fit(json_t *summary, size_t max_bytes, char **stored, struct np_err *err)
{
    struct np_sum s;
    long len;
    int rc;

    if (!stored)
        return np_err_set(err, -EINVAL, "np_summary_fit needs somewhere to put the stored text");
    *stored = NULL;
    if ((rc = np_sum_decode(summary, &s, err)) != 0)
        return rc;
    len = np_sum_fit(&s, max_bytes, stored, err);
    /* trimmed even when it does not fit: the caller sees what was dropped */
    if (write_back(summary, &s) != 0 && len >= 0) {
        free(*stored);
        *stored = NULL;
        len = np_err_set(err, -ENOMEM, "out of memory fitting the summary");
    }
    np_sum_free(&s);
    return len;
}
