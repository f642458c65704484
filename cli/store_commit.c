/* One part's read-merge-write against concurrent writers, and its confirmation (store.h). */
#include "store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "numaplace/summary.h"

#include "accounting.h"

/* sacct runs before slurmdbd counts as unreachable. */
#define SACCT_TRIES 3

/* A random share of @p s in [0, s): writers that collided do not collide again in step. */
static double jitter(double s)
{
    return s * (double)(random() % 1000) / 1000.0;
}

static double settle_s(void)
{
    const char *env = getenv("NUMAPLACE_STORE_SETTLE_S");
    char *end;
    double v;

    if (!env || !*env)
        return STORE_SETTLE_S;
    v = strtod(env, &end);
    return (*end || v < 0.5 || v > 60) ? STORE_SETTLE_S : v;
}

/* acct_sacct_job, tried again while it fails: a busy slurmdbd times sacct out now and then. */
static int sacct_job(uint32_t job_id, uid_t *uid, char **comment, bool *full, struct np_err *err)
{
    for (int tries = 1;; tries++) {
        const int rc = acct_sacct_job(job_id, uid, comment, full, err);
        if (rc != -EIO || tries == SACCT_TRIES)
            return rc;
        np_sleep_s(1 + jitter(1));
    }
}

static int another_tool(uint32_t job_id, struct np_err *err)
{
    return np_err_set(err, -EEXIST,
                      "job %" PRIu32 "'s AdminComment holds another tool's text: numaplace "
                      "does not overwrite it (the summary stays in the spool)",
                      job_id);
}

/* The job's stored AdminComment (@p text new, "" when empty) and our summary in it (@p summary
 * new, NULL when none or corrupt: a corrupt one of ours is replaced). A failing sacct is an
 * error, never "nothing stored": writing on it would drop every other node's part. */
static int read_stored(uint32_t job_id, char **text, json_t **summary, struct store_costs *costs,
                       struct np_err *err)
{
    const double t0 = np_monotonic_s();
    uid_t uid;
    int rc;

    *summary = NULL;
    rc = sacct_job(job_id, &uid, text, NULL, err);
    costs->reads++;
    costs->read_s += np_monotonic_s() - t0;
    if (rc < 0)
        return rc;
    if (!(*text)[0])
        return 0;
    rc = np_stored_decode(*text, summary, NULL);
    if (rc == -ENOMSG) {
        free(*text);
        *text = NULL;
        return another_tool(job_id, err);
    }
    if (rc < 0)
        *summary = NULL;
    return 0;
}

/* Every node of @p part is in @p stored. */
static bool holds_nodes_of(const json_t *stored, const json_t *part)
{
    const char *name;
    json_t *node;
    bool all =
        stored && np_summary_validate(stored, NULL) == 0 && np_summary_validate(part, NULL) == 0;

    json_object_foreach(all ? json_object_get(part, "nodes") : NULL, name, node)
    {
        all = all && np_summary_node_reported(stored, name); /* kept whole or folded */
    }
    return all;
}

int store_wait_for_record(uint32_t job_id, double max_s, struct np_err *err)
{
    const double until = np_monotonic_s() + max_s;

    for (;;) {
        uid_t uid;
        char *comment = NULL;
        bool full = false;
        const int rc = sacct_job(job_id, &uid, &comment, &full, err);

        free(comment);
        if (rc == 0 && full)
            return 0;
        if (rc < 0 && rc != -ENOENT)
            return rc;
        if (np_monotonic_s() > until)
            return np_err_set(err, -ENOENT,
                              "slurmdbd has no full record of job %" PRIu32 " after %.0f s", job_id,
                              max_s);
        np_sleep_s(0.25);
    }
}

long store_env_count(const char *name, long fallback)
{
    const char *v = getenv(name);
    char *end = NULL;
    const long n = v && *v ? strtol(v, &end, 10) : 0;

    return end && !*end && n > 0 ? n : fallback;
}

long store_max_nodes(void)
{
    return store_env_count("NUMAPLACE_STORE_MAX_NODES", STORE_MAX_NODES);
}

static int too_many_nodes(uint32_t job_id, struct np_err *err)
{
    char id[16], *out = NULL;
    char *argv[] = {"sacct", "-j", id, "-X", "-n", "-P", "-o", "NNodes", NULL};
    const long max = store_max_nodes();
    long n = 0;

    snprintf(id, sizeof(id), "%" PRIu32, job_id);
    for (int tries = 0; tries < SACCT_TRIES; tries++) {
        const int rc = acct_run(argv, &out, NULL, 0, NULL);
        n = rc == 0 ? strtol(out, NULL, 10) : 0;
        free(out);
        if (rc == 0)
            break;
        np_sleep_s(1 + jitter(1));
    }
    if (n <= max)
        return 0;
    return np_err_set(err, -EFBIG,
                      "%ld nodes, over the %ld whose nodes each store their part in the one "
                      "AdminComment (NUMAPLACE_STORE_MAX_NODES)%s",
                      n, max,
                      store_parts_dir() ? ""
                                        : ", and no parts directory for one merge "
                                          "(NUMAPLACE_PARTS_DIR): this node's reports stay in "
                                          "its spool");
}

/* One read-merge-write. 1: the read was too old to write on. */
static int write_merged(uint32_t job_id, const json_t *part, double settle,
                        struct store_costs *costs, struct np_err *err)
{
    const double t_read = np_monotonic_s();
    json_t *merged = NULL;
    char *text = NULL, *stored = NULL;
    double t0;
    long len;
    int rc;

    rc = read_stored(job_id, &text, &merged, costs, err);
    free(text);
    if (rc < 0)
        return rc;
    t0 = np_monotonic_s();
    if (!merged)
        merged = json_deep_copy(part);
    else if ((rc = np_summary_merge(merged, (json_t *)part, err)) < 0) {
        json_decref(merged);
        return rc;
    }
    len = np_summary_fit(merged, NP_SUMMARY_STORED_MAX, &stored, err);
    json_decref(merged);
    costs->merge_s += np_monotonic_s() - t0;
    if (len < 0)
        return (int)len;
    /* Others confirm on the promise that a write lands within SETTLE of its read. */
    if (np_monotonic_s() - t_read > settle / 2) {
        free(stored);
        return 1;
    }
    t0 = np_monotonic_s();
    rc = acct_set_admin_comment(job_id, stored, err);
    costs->writes++;
    costs->write_s += np_monotonic_s() - t0;
    costs->stored_bytes = len;
    free(stored);
    if (rc == 0 && np_monotonic_s() - t_read > settle)
        rc = 2;
    return rc;
}

/* A large job's part left for its one merge (store.h). */
static int deposit(uint32_t job_id, const json_t *part, struct store_costs *costs, double start,
                   struct np_err *err)
{
    const int rc = store_parts_deposit(store_parts_dir(), job_id, part, err);

    costs->deposited = rc == 0;
    costs->total_s = np_monotonic_s() - start;
    return rc;
}

int store_commit(uint32_t job_id, const json_t *part, const struct store_limits *limits,
                 struct store_costs *costs, const struct np_log *log, struct np_err *err)
{
    const double settle = settle_s(), start = np_monotonic_s();
    double until;
    struct acct_controller_job controller;
    long controller_nodes = 0;
    int rc;

    memset(costs, 0, sizeof(*costs));
    srandom((unsigned)(getpid() ^ time(NULL)));
    /* slurmctld may still hold another tool's AdminComment that slurmdbd has not got yet. */
    if (acct_controller_job(job_id, &controller, NULL) == 0) {
        const bool other =
            controller.admin_comment[0] &&
            strncmp(controller.admin_comment, NP_STORED_PREFIX, strlen(NP_STORED_PREFIX)) != 0;
        controller_nodes = controller.num_nodes;
        acct_controller_job_free(&controller);
        if (other)
            return another_tool(job_id, err);
    }
    /* A large job by slurmctld's count goes to its merge without polling slurmdbd (thousands of
     * nodes would load it); the count shrinks as nodes end, and then the record's decides. */
    if (!limits->merged && store_parts_dir() && controller_nodes > store_max_nodes())
        return deposit(job_id, part, costs, start, err);
    rc = store_wait_for_record(job_id, limits->record_wait_s, err);
    costs->record_wait_s = np_monotonic_s() - start;
    if (rc < 0)
        return rc;
    rc = limits->merged ? 0 : too_many_nodes(job_id, err);
    if (rc == -EFBIG && store_parts_dir()) /* one merge stores the job's parts */
        return deposit(job_id, part, costs, start, err);
    if (rc < 0)
        return rc;
    until = np_monotonic_s() + limits->total_s;
    while (np_monotonic_s() < until) {
        char *previous = NULL;
        bool lost = false;

        rc = write_merged(job_id, part, settle, costs, err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            np_logf(log, NP_LOG_INFO,
                    "job %" PRIu32 ": the read was over %.1f s old before the write: read again",
                    job_id, settle / 2);
            continue;
        }
        if (rc == 2)
            np_logf(log, NP_LOG_WARNING,
                    "job %" PRIu32 ": a write landed over %.1f s after its read (slurmdbd slow?): "
                    "other nodes' parts may need their retry (numaplace store --pending)",
                    job_id, settle);
        /* Confirmed: two reads SETTLE apart, the same, both with the part (store.h). */
        while (!lost && np_monotonic_s() < until) {
            char *text = NULL;
            json_t *check = NULL;

            np_sleep_s(settle + jitter(settle / 4));
            rc = read_stored(job_id, &text, &check, costs, err);
            if (rc < 0) {
                free(previous);
                return rc;
            }
            lost = !holds_nodes_of(check, part);
            json_decref(check);
            if (!lost && previous && strcmp(previous, text) == 0) {
                free(previous);
                free(text);
                costs->total_s = np_monotonic_s() - start;
                return 0;
            }
            free(previous);
            previous = text;
        }
        free(previous);
        if (lost) /* overwritten by a writer that read before our write: again, spread out */
            np_sleep_s(jitter(settle));
    }
    costs->total_s = np_monotonic_s() - start;
    return np_err_set(err, -ETIMEDOUT,
                      "job %" PRIu32 ": this node's part not confirmed within %.0f s (%d writes): "
                      "concurrent writers",
                      job_id, limits->total_s, costs->writes);
}

void store_costs_format(const struct store_costs *costs, char *buf, size_t len)
{
    snprintf(buf, len,
             "%d writes, %d reads; per read %.3f s, merge %.3f s, write %.3f s; waited %.1f s for "
             "the job's record, %.1f s in all",
             costs->writes, costs->reads, costs->reads ? costs->read_s / costs->reads : 0.0,
             costs->writes ? costs->merge_s / costs->writes : 0.0,
             costs->writes ? costs->write_s / costs->writes : 0.0, costs->record_wait_s,
             costs->total_s);
}
