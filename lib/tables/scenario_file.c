/*
 * Scenario files (numaplace/scenario.h, docs/scenarios.md): strict decoding with json_unpack_ex
 * and JSON_STRICT. Members are first checked by name (so an unknown one is named with the
 * accepted ones, which jansson's own message does not list), then unpacked strictly, then each
 * value is checked with its path and range in the message.
 */
#include "numaplace/scenario_file.h"

#include "numaplace/output_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#define N_OF(a)  (sizeof(a) / sizeof((a)[0]))
#define BAD(...) np_err_set(err, -EINVAL, __VA_ARGS__)

static const char *const top_members[] = {
    "numaplace_scenario", "name", "description", "source", "nodes", "jobs", "requests", "runs"};
static const char *const job_members[] = {"benchmark", "input", "node",
                                          "copies",    "class", "threads"};
static const char *const request_members[] = {"delay_s", "from", "to", "pages"};

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a fraction";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "something else";
}

/* @p s for a message: at most @p size - 2 bytes (a cut \xHH stops it before), control and non-ASCII
 * bytes as \xHH (never raw). */
static const char *shown(const char *s, char *buf, size_t size)
{
    size_t n = 0;

    for (; *s && n + 5 < size; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c >= 0x7f)
            n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
        else
            buf[n++] = (char)c;
    }
    buf[n] = '\0';
    return buf;
}
/* shown() into a buffer that lives as long as the enclosing block (a message's arguments). */
#define SHOWN(s) shown((s), (char[77]){""}, 77) /* at most 75 bytes */

/* @p names (those with @p only[i], or all when @p only is NULL) joined with ", " into @p buf
 * (cut when long): the lists in messages come from the member tables, never written out again. */
static const char *joined(const char *const *names, const bool *only, size_t count, char *buf,
                          size_t size)
{
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < count && len < size; i++)
        if (!only || only[i])
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", names[i]);
    return buf;
}

/* "WHERE.NAME", in a buffer that lives as long as the enclosing block. */
static const char *member_path(const char *where, const char *name, char *buf, size_t size)
{
    np_strf(buf, size, "%s.%s", where, name);
    return buf;
}
#define AT(where, name) member_path((where), (name), (char[64]){""}, 64)

/* @p obj is an object, every member of it is one of @p names, and every required one
 * (names[i] with required[i]) is there. json_unpack_ex's JSON_STRICT check then agrees; this
 * gives the names. */
static int check_members(const json_t *obj, const char *const *names, const bool *required,
                         size_t count, const char *where, struct np_err *err)
{
    char accepted[256], needed[256];
    const char *key;
    json_t *v;

    joined(names, NULL, count, accepted, sizeof(accepted));
    joined(names, required, count, needed, sizeof(needed));
    if (!json_is_object(obj))
        return BAD("%s: expected an object with members %s, got %s", where, accepted,
                   json_kind(obj));
    json_object_foreach((json_t *)obj, key, v)
    {
        size_t i = 0;
        while (i < count && strcmp(key, names[i]) != 0)
            i++;
        if (i == count)
            return BAD("%s%sunknown member \"%s\": accepted members are %s", where,
                       *where ? ": " : "", SHOWN(key), accepted);
    }
    for (size_t i = 0; i < count; i++)
        if (required[i] && !json_object_get(obj, names[i]))
            return BAD("%s%s\"%s\" is missing (required members: %s)", where, *where ? ": " : "",
                       names[i], needed);
    return 0;
}

/* An integer member from @p lo to @p hi (@p v NULL: @p fallback). */
static int get_uint(const json_t *v, uint64_t fallback, uint64_t lo, uint64_t hi, const char *path,
                    uint64_t *out, struct np_err *err)
{
    json_int_t x;

    if (!v) {
        *out = fallback;
        return 0;
    }
    if (!json_is_integer(v))
        return BAD("%s: expected an integer from %" PRIu64 " to %" PRIu64 ", got %s", path, lo, hi,
                   json_kind(v));
    x = json_integer_value(v);
    if (x < 0 || (uint64_t)x < lo || (uint64_t)x > hi)
        return BAD("%s: %lld is out of range: accepted values are %" PRIu64 " to %" PRIu64, path,
                   (long long)x, lo, hi);
    *out = (uint64_t)x;
    return 0;
}

static int get_unsigned(const json_t *v, unsigned fallback, unsigned lo, unsigned hi,
                        const char *path, unsigned *out, struct np_err *err)
{
    uint64_t x = 0;
    const int rc = get_uint(v, fallback, lo, hi, path, &x, err);

    if (rc == 0)
        *out = (unsigned)x;
    return rc;
}

/* 1..@p max characters of [A-Za-z0-9._-]: safe in a file name and in a tab-separated line. */
static int get_word(const json_t *v, const char *path, char *out, size_t max, struct np_err *err)
{
    const char *s = json_string_value(v);
    const size_t len = s ? strlen(s) : 0;

    if (!s)
        return BAD("%s: expected a string of 1 to %zu characters from A-Z a-z 0-9 . _ -, got %s",
                   path, max, json_kind(v));
    if (len == 0 || len > max ||
        strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                  "0123456789._-") != len)
        return BAD("%s: \"%s\" is not 1 to %zu characters from A-Z a-z 0-9 . _ -", path, SHOWN(s),
                   max);
    memcpy(out, s, len + 1);
    return 0;
}

/* An optional free-text member, copied (NULL when absent). */
static int get_text(const json_t *v, const char *path, char **out, struct np_err *err)
{
    const char *s = json_string_value(v);

    if (!v)
        return 0;
    if (!s)
        return BAD("%s: expected a string of at most %u bytes, got %s", path, NP_SCENARIO_TEXT_MAX,
                   json_kind(v));
    if (strlen(s) > NP_SCENARIO_TEXT_MAX)
        return BAD("%s: %zu bytes: accepted are at most %u", path, strlen(s), NP_SCENARIO_TEXT_MAX);
    *out = strdup(s);
    return *out ? 0 : np_err_set(err, -ENOMEM, "%s: out of memory", path);
}

/* An array member of @p lo..@p hi elements. */
static int get_array(const json_t *v, size_t lo, size_t hi, const char *path, struct np_err *err)
{
    if (!json_is_array(v))
        return BAD("%s: expected an array of %zu to %zu entries, got %s", path, lo, hi,
                   json_kind(v));
    if (json_array_size(v) < lo || json_array_size(v) > hi)
        return BAD("%s: %zu entries: accepted are %zu to %zu", path, json_array_size(v), lo, hi);
    return 0;
}

static int decode_job(const json_t *j, size_t i, unsigned nodes, struct np_scenario_job *job,
                      struct np_err *err)
{
    static const bool required[] = {true, false, true, false, false, false};
    json_t *benchmark = NULL, *input = NULL, *node = NULL, *copies = NULL, *cls = NULL;
    json_t *threads = NULL;
    json_error_t jerr;
    char where[48];
    int rc;

    np_strf(where, sizeof(where), "jobs[%zu]", i);
    if ((rc = check_members(j, job_members, required, N_OF(job_members), where, err)) != 0)
        return rc;
    if (json_unpack_ex((json_t *)j, &jerr, JSON_STRICT, "{s:o, s?o, s:o, s?o, s?o, s?o}",
                       "benchmark", &benchmark, "input", &input, "node", &node, "copies", &copies,
                       "class", &cls, "threads", &threads) != 0)
        return BAD("%s: %s", where, jerr.text);
    if ((rc = get_word(benchmark, AT(where, "benchmark"), job->benchmark,
                       sizeof(job->benchmark) - 1, err)) != 0 ||
        (rc = get_unsigned(input, 0, 0, NP_SCENARIO_MAX_INPUT, AT(where, "input"), &job->input,
                           err)) != 0 ||
        (rc = get_unsigned(node, 0, 0, nodes - 1, AT(where, "node"), &job->node, err)) != 0 ||
        (rc = get_unsigned(copies, 1, 1, NP_SCENARIO_MAX_COPIES, AT(where, "copies"), &job->copies,
                           err)) != 0 ||
        (rc = get_unsigned(threads, 1, 1, NP_SCENARIO_MAX_THREADS, AT(where, "threads"),
                           &job->threads, err)) != 0)
        return rc;
    job->job_class = NP_CLASS_LOW;
    if (cls) {
        const char *path = AT(where, "class");
        if (!json_is_string(cls))
            return BAD("%s: expected a string (%s), got %s", path, np_class_names(),
                       json_kind(cls));
        if (np_class_from_name(json_string_value(cls), &job->job_class, NULL) != 0)
            return BAD("%s: invalid class \"%s\": accepted values are %s", path,
                       SHOWN(json_string_value(cls)), np_class_names());
    }
    return 0;
}

static int decode_jobs(const json_t *arr, struct np_scenario *s, struct np_err *err)
{
    size_t i, instances = 0;
    json_t *j;
    int rc;

    if ((rc = get_array(arr, 1, NP_SCENARIO_MAX_INSTANCES, "jobs", err)) != 0)
        return rc;
    s->jobs = calloc(json_array_size(arr), sizeof(*s->jobs));
    if (!s->jobs)
        return np_err_set(err, -ENOMEM, "jobs: out of memory");
    json_array_foreach((json_t *)arr, i, j)
    {
        if ((rc = decode_job(j, i, s->nodes, &s->jobs[i], err)) != 0)
            return rc;
        s->njobs++;
        instances += s->jobs[i].copies;
    }
    if (instances > NP_SCENARIO_MAX_INSTANCES)
        return BAD("jobs: %zu job instances after expanding copies: accepted are 1 to %u",
                   instances, NP_SCENARIO_MAX_INSTANCES);
    return 0;
}

static int decode_request(const json_t *j, size_t i, unsigned nodes,
                          struct np_scenario_request *req, struct np_err *err)
{
    static const bool required[] = {true, true, true, true};
    json_t *delay = NULL, *from = NULL, *to = NULL, *pages = NULL;
    json_error_t jerr;
    const char *path;
    char where[48];
    int rc;

    np_strf(where, sizeof(where), "requests[%zu]", i);
    if ((rc = check_members(j, request_members, required, N_OF(request_members), where, err)) != 0)
        return rc;
    if (json_unpack_ex((json_t *)j, &jerr, JSON_STRICT, "{s:o, s:o, s:o, s:o}", "delay_s", &delay,
                       "from", &from, "to", &to, "pages", &pages) != 0)
        return BAD("%s: %s", where, jerr.text);
    path = AT(where, "delay_s");
    if (!json_is_number(delay))
        return BAD("%s: expected seconds from 0 to %.0f, got %s", path, NP_SCENARIO_MAX_DELAY_S,
                   json_kind(delay));
    req->delay_s = json_number_value(delay);
    if (!(req->delay_s >= 0 && req->delay_s <= NP_SCENARIO_MAX_DELAY_S))
        return BAD("%s: %g is out of range: accepted values are 0 to %.0f seconds", path,
                   req->delay_s, NP_SCENARIO_MAX_DELAY_S);
    if ((rc = get_unsigned(from, 0, 0, nodes - 1, AT(where, "from"), &req->from, err)) != 0 ||
        (rc = get_unsigned(to, 0, 0, nodes - 1, AT(where, "to"), &req->to, err)) != 0)
        return rc;
    if (req->to == req->from)
        return BAD("%s: to = from = %u: a request moves pages between two different nodes",
                   AT(where, "to"), req->to);
    return get_uint(pages, 0, 1, NP_SCENARIO_MAX_PAGES, AT(where, "pages"), &req->pages, err);
}

static int decode_requests(const json_t *arr, struct np_scenario *s, struct np_err *err)
{
    size_t i;
    json_t *j;
    int rc;

    if (!arr)
        return 0;
    if ((rc = get_array(arr, 0, NP_SCENARIO_MAX_REQUESTS, "requests", err)) != 0)
        return rc;
    if (json_array_size(arr) == 0)
        return 0;
    s->requests = calloc(json_array_size(arr), sizeof(*s->requests));
    if (!s->requests)
        return np_err_set(err, -ENOMEM, "requests: out of memory");
    json_array_foreach((json_t *)arr, i, j)
    {
        if ((rc = decode_request(j, i, s->nodes, &s->requests[i], err)) != 0)
            return rc;
        s->nrequests++;
    }
    return 0;
}

/* The orders to run the set under; without the member, every order once in the table's order. */
static int decode_runs(const json_t *arr, struct np_scenario *s, struct np_err *err)
{
    size_t i, count = 0;
    json_t *j;

    while (np_order_at(count))
        count++;
    if (arr) {
        int rc;
        if ((rc = get_array(arr, 1, NP_SCENARIO_MAX_RUNS, "runs", err)) != 0)
            return rc;
        count = json_array_size(arr);
    }
    s->runs = calloc(count + 1, sizeof(const struct np_order_ops *)); /* + 1: never 0 bytes */
    if (!s->runs)
        return np_err_set(err, -ENOMEM, "runs: out of memory");
    for (i = 0; !arr && i < count; i++)
        s->runs[s->nruns++] = np_order_at(i);
    json_array_foreach((json_t *)arr, i, j)
    {
        if (!json_is_string(j))
            return BAD("runs[%zu]: expected an order name (%s), got %s", i, np_order_names(),
                       json_kind(j));
        s->runs[i] = np_order_lookup(json_string_value(j));
        if (!s->runs[i])
            return BAD("runs[%zu]: unknown migration order \"%s\": accepted values are %s", i,
                       SHOWN(json_string_value(j)), np_order_names());
        s->nruns++;
    }
    return 0;
}

static int decode(const json_t *root, struct np_scenario *s, struct np_err *err)
{
    static const bool required[] = {true, true, false, false, true, true, false, false};
    json_t *version = NULL, *name = NULL, *description = NULL, *source = NULL, *nodes = NULL;
    json_t *jobs = NULL, *requests = NULL, *runs = NULL;
    json_error_t jerr;
    int rc;

    if (!json_is_object(root))
        return BAD("a scenario is a JSON object with members %s, %s, ..., got %s", top_members[0],
                   top_members[1], json_kind(root));
    /* The version first: a later schema's new members are then reported as such. */
    version = json_object_get(root, "numaplace_scenario");
    if (version && !json_is_integer(version))
        return BAD("numaplace_scenario: expected the schema version %d, got %s",
                   NP_SCENARIO_VERSION, json_kind(version));
    if (version && json_integer_value(version) != NP_SCENARIO_VERSION)
        return BAD("numaplace_scenario: version %lld is not read by this numaplace: accepted "
                   "value is %d",
                   (long long)json_integer_value(version), NP_SCENARIO_VERSION);
    if ((rc = check_members(root, top_members, required, N_OF(top_members), "", err)) != 0)
        return rc;
    if (json_unpack_ex((json_t *)root, &jerr, JSON_STRICT,
                       "{s:o, s:o, s?o, s?o, s:o, s:o, s?o, s?o}", "numaplace_scenario", &version,
                       "name", &name, "description", &description, "source", &source, "nodes",
                       &nodes, "jobs", &jobs, "requests", &requests, "runs", &runs) != 0)
        return BAD("scenario: %s", jerr.text);
    if ((rc = get_word(name, "name", s->name, NP_SCENARIO_NAME_MAX, err)) != 0 ||
        (rc = get_text(description, "description", &s->description, err)) != 0 ||
        (rc = get_text(source, "source", &s->source, err)) != 0 ||
        (rc = get_unsigned(nodes, 0, 1, NP_MAX_NODES, "nodes", &s->nodes, err)) != 0 ||
        (rc = decode_jobs(jobs, s, err)) != 0 || (rc = decode_requests(requests, s, err)) != 0)
        return rc;
    return decode_runs(runs, s, err);
}

int np_scenario_parse(const char *text, size_t len, struct np_scenario *out, struct np_err *err)
{
    json_error_t jerr;
    json_t *root;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!text)
        return BAD("no scenario text");
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        /* jansson's text quotes the input near the error ("invalid token near '...'") */
        return BAD("not valid JSON: line %d, column %d: %s", jerr.line, jerr.column,
                   shown(jerr.text, (char[sizeof(jerr.text) * 4]){""}, sizeof(jerr.text) * 4));
    rc = decode(root, out, err);
    json_decref(root);
    if (rc != 0)
        np_scenario_fini(out);
    return rc;
}

int np_scenario_read(FILE *in, const char *name, struct np_scenario *out, struct np_err *err)
{
    /* One byte past the limit, so a larger input is refused rather than cut. */
    char *text = malloc(NP_SCENARIO_MAX_BYTES + 1);
    size_t len;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!text)
        return np_err_set(err, -ENOMEM, "%s: out of memory", name);
    len = fread(text, 1, NP_SCENARIO_MAX_BYTES + 1, in);
    if (ferror(in))
        rc = np_err_set(err, -EIO, "%s: cannot read: %s", name, strerror(errno));
    else if (len > NP_SCENARIO_MAX_BYTES)
        rc = np_err_set(err, -EFBIG, "%s: larger than %u bytes, the most a scenario may be", name,
                        NP_SCENARIO_MAX_BYTES);
    else if ((rc = np_scenario_parse(text, len, out, err)) != 0 && err) {
        char msg[NP_ERR_MSG_MAX];
        snprintf(msg, sizeof(msg), "%s", err->msg);
        np_err_set(err, rc, "%s: %s", name, msg);
    }
    free(text);
    return rc;
}

int np_scenario_load(const char *path, struct np_scenario *out, struct np_err *err)
{
    const int fd = np_open_regular(path, 0, err);
    FILE *in;
    int rc;

    memset(out, 0, sizeof(*out));
    if (fd < 0)
        return fd;
    in = fdopen(fd, "r");
    if (!in) {
        close(fd);
        return np_err_set(err, -ENOMEM, "%s: out of memory", path);
    }
    rc = np_scenario_read(in, path, out, err);
    fclose(in);
    return rc;
}

/* What `numaplace scenario` prints (numaplace/scenario.h): a readable summary, and the job
 * instances and run orders as plain lines for the runner script, so no shell parses JSON. */
static int done(FILE *out)
{
    return ferror(out) ? -EIO : 0;
}

/* "505.mcf_r" or "502.gcc_r input 2", then " x4", " high", " 8 threads" where not the default. */
static void print_job(FILE *out, const struct np_scenario_job *job)
{
    fprintf(out, "%s", job->benchmark);
    if (job->input)
        fprintf(out, " input %u", job->input);
    if (job->copies > 1)
        fprintf(out, " x%u", job->copies);
    if (job->job_class != NP_CLASS_LOW)
        fprintf(out, " %s", np_class_name(job->job_class));
    if (job->threads > 1)
        fprintf(out, " %u threads", job->threads);
}

static void print_jobs_by_node(FILE *out, const struct np_scenario *s)
{
    for (unsigned node = 0; node < s->nodes; node++) {
        size_t instances = 0, printed = 0;
        for (size_t i = 0; i < s->njobs; i++)
            if (s->jobs[i].node == node)
                instances += s->jobs[i].copies;
        fprintf(out, "  node %u: %zu instance(s)%s", node, instances, instances ? ": " : "\n");
        for (size_t i = 0; instances && i < s->njobs; i++)
            if (s->jobs[i].node == node) {
                fprintf(out, "%s", printed++ ? ", " : "");
                print_job(out, &s->jobs[i]);
            }
        if (instances)
            fputc('\n', out);
    }
}

static void print_requests(FILE *out, const struct np_scenario *s)
{
    uint64_t lo = UINT64_MAX, hi = 0, total = 0;
    double delay_lo = NP_SCENARIO_MAX_DELAY_S, delay_hi = 0, delays = 0;
    long long net[NP_MAX_NODES] = {0};

    fprintf(out, "requests: %zu", s->nrequests);
    if (!s->nrequests) {
        fputc('\n', out);
        return;
    }
    for (size_t i = 0; i < s->nrequests; i++) {
        const struct np_scenario_request *r = &s->requests[i];
        lo = r->pages < lo ? r->pages : lo;
        hi = r->pages > hi ? r->pages : hi;
        total += r->pages;
        delay_lo = r->delay_s < delay_lo ? r->delay_s : delay_lo;
        delay_hi = r->delay_s > delay_hi ? r->delay_s : delay_hi;
        delays += r->delay_s;
        net[r->from] -= (long long)r->pages;
        net[r->to] += (long long)r->pages;
    }
    fprintf(out,
            ", %" PRIu64 " to %" PRIu64 " pages each, %" PRIu64 " in all (%.1f MiB at 4 KiB a "
            "page)\n",
            lo, hi, total, (double)total * 4096 / 1048576.0);
    if (delay_lo == delay_hi)
        fprintf(out, "  delays %g s each, %g s in all before the last request\n", delay_lo, delays);
    else
        fprintf(out, "  delays %g to %g s, %g s in all before the last request\n", delay_lo,
                delay_hi, delays);
    fprintf(out, "  net pages asked per node (in - out):");
    for (unsigned node = 0; node < s->nodes; node++)
        fprintf(out, "%s node %u %+lld", node ? "," : "", node, net[node]);
    fputc('\n', out);
}

int np_scenario_print_summary(FILE *out, const struct np_scenario *s)
{
    fprintf(out, "scenario %s: %u node(s), %zu job(s) as written, %zu instance(s)\n", s->name,
            s->nodes, s->njobs, np_scenario_instances(s));
    if (s->description) {
        fputs("description: ", out);
        np_print_text(out, s->description);
        fputc('\n', out);
    }
    if (s->source) {
        fputs("source: ", out);
        np_print_text(out, s->source);
        fputc('\n', out);
    }
    fprintf(out, "jobs (CPUs and first memory on the node):\n");
    print_jobs_by_node(out, s);
    print_requests(out, s);
    fprintf(out, "runs: %zu:", s->nruns);
    for (size_t i = 0; i < s->nruns; i++)
        fprintf(out, "%s %s", i ? "," : "", s->runs[i]->name);
    fputc('\n', out);
    return done(out);
}

int np_scenario_print_jobs(FILE *out, const struct np_scenario *s)
{
    size_t index = 0;

    for (size_t i = 0; i < s->njobs; i++)
        for (unsigned copy = 0; copy < s->jobs[i].copies; copy++)
            fprintf(out, "%zu\t%s\t%u\t%u\t%s\t%u\n", index++, s->jobs[i].benchmark,
                    s->jobs[i].input, s->jobs[i].node, np_class_name(s->jobs[i].job_class),
                    s->jobs[i].threads);
    return done(out);
}

int np_scenario_print_runs(FILE *out, const struct np_scenario *s)
{
    for (size_t i = 0; i < s->nruns; i++)
        fprintf(out, "%s\n", s->runs[i]->name);
    return done(out);
}
