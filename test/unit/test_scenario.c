/*
 * Scenario files (numaplace/scenario.h), data-driven like jansson's own suites: every
 * test/fixtures/data/scenarios/invalid/NAME.json must be refused with NAME.error's line in the
 * message; every valid/NAME.json must print (summary, then --jobs, then --runs) as NAME.expected,
 * where @ORDER_COUNT@, @ORDER_NAMES@ and @ORDER_LINES@ stand for the order table. Then the limits
 * that need large inputs, the loader, and the five shipped thesis sets against the thesis.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "np_test.h"
#include "numaplace/contention.h"
#include "numaplace/model.h"
#include "numaplace/scenario.h"
#include "numaplace/tables.h"
#include "numaplace/scenario_file.h"

#define MAX_CASES 256

static char *invalid_cases[MAX_CASES], *valid_cases[MAX_CASES];
static size_t ninvalid, nvalid;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The NAME of every NAME.json in scenarios/@p kind, sorted. */
static size_t list_cases(const char *kind, char **out)
{
    const char *root = getenv("NUMAPLACE_FIXTURES"); /* np_test_fixture asserts: not here */
    char path[4096];
    DIR *dir;
    struct dirent *e;
    size_t n = 0;

    snprintf(path, sizeof(path), "%s/data/scenarios/%s", root ? root : ".", kind);
    dir = opendir(path);
    if (!dir)
        return 0;
    while ((e = readdir(dir)) && n < MAX_CASES) {
        const size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0)
            out[n++] = strndup(e->d_name, len - 5);
    }
    closedir(dir);
    qsort(out, n, sizeof(*out), by_name);
    return n;
}

/* The whole of a fixture file (NUL-terminated, new), with its length. */
static char *read_fixture(const char *kind, const char *name, const char *ext, size_t *len)
{
    char rel[256];
    FILE *f;
    char *text = NULL;
    size_t size = 0;

    snprintf(rel, sizeof(rel), "scenarios/%s/%s%s", kind, name, ext);
    f = fopen(np_test_fixture(rel), "re");
    ck_assert_msg(f != NULL, "cannot open fixture %s", rel);
    text = malloc(1 << 20);
    ck_assert_ptr_nonnull(text);
    size = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    text[size] = '\0';
    if (len)
        *len = size;
    return text;
}

START_TEST(test_invalid)
{
    const char *name = invalid_cases[_i];
    size_t len;
    char *text = read_fixture("invalid", name, ".json", &len);
    char *expected = read_fixture("invalid", name, ".error", NULL);
    struct np_scenario s;
    struct np_err err = {0};
    int rc;

    expected[strcspn(expected, "\n")] = '\0';
    rc = np_scenario_parse(text, len, &s, &err);
    ck_assert_msg(rc == -EINVAL, "%s: parse returned %d (%s), expected -EINVAL", name, rc, err.msg);
    ck_assert_msg(strstr(err.msg, expected) != NULL, "%s: message\n  %s\ndoes not contain\n  %s",
                  name, err.msg, expected);
    ck_assert_ptr_null(s.jobs); /* a failed parse leaves nothing to free */
    ck_assert_ptr_null(s.runs);
    np_scenario_fini(&s);
    free(text);
    free(expected);
}
END_TEST

/* @p text with every @p from replaced by @p to (new). */
static char *replace(const char *text, const char *from, const char *to)
{
    size_t size = strlen(text) + 1, n = 0;
    char *out;
    const char *p;

    for (p = text; (p = strstr(p, from)); p += strlen(from))
        size += strlen(to);
    out = malloc(size);
    ck_assert_ptr_nonnull(out);
    for (p = text; *p;) {
        if (strncmp(p, from, strlen(from)) == 0) {
            memcpy(out + n, to, strlen(to));
            n += strlen(to);
            p += strlen(from);
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = '\0';
    return out;
}

/* The expected text with the order table filled in, so a new order changes no fixture. */
static char *expand_orders(char *expected)
{
    char count[16], lines[512] = "";
    size_t n = 0, len = 0;
    char *a, *b, *c;

    while (np_order_at(n)) {
        len += (size_t)snprintf(lines + len, sizeof(lines) - len, "%s%s", n ? "\n" : "",
                                np_order_at(n)->name);
        n++;
    }
    snprintf(count, sizeof(count), "%zu", n);
    a = replace(expected, "@ORDER_COUNT@", count);
    b = replace(a, "@ORDER_NAMES@", np_order_names());
    c = replace(b, "@ORDER_LINES@", lines);
    free(a);
    free(b);
    free(expected);
    return c;
}

START_TEST(test_valid)
{
    const char *name = valid_cases[_i];
    size_t len, outlen = 0;
    char *text = read_fixture("valid", name, ".json", &len);
    char *expected = expand_orders(read_fixture("valid", name, ".expected", NULL));
    char *got = NULL;
    FILE *out = open_memstream(&got, &outlen);
    struct np_scenario s;
    struct np_err err = {0};

    ck_assert_msg(np_scenario_parse(text, len, &s, &err) == 0, "%s: %s", name, err.msg);
    ck_assert_int_eq(np_scenario_print_summary(out, &s), 0);
    fputs("--jobs\n", out);
    ck_assert_int_eq(np_scenario_print_jobs(out, &s), 0);
    fputs("--runs\n", out);
    ck_assert_int_eq(np_scenario_print_runs(out, &s), 0);
    fclose(out);
    ck_assert_msg(strcmp(got, expected) == 0, "%s: printed\n%s\nexpected\n%s", name, got, expected);
    np_scenario_fini(&s);
    np_scenario_fini(&s); /* twice: fini empties it */
    free(got);
    free(text);
    free(expected);
}
END_TEST

/* Limits that need inputs too large for a fixture: @p count entries in jobs or requests. */
static const struct {
    const char *what; /* "jobs" or "requests" */
    size_t count;
    int rc;
    const char *message;
} size_cases[] = {
    {"jobs", 1024, 0, ""},
    {"jobs", 1025, -EINVAL, "jobs: 1025 entries: accepted are 1 to 1024"},
    {"requests", 10000, 0, ""},
    {"requests", 10001, -EINVAL, "requests: 10001 entries: accepted are 0 to 10000"},
};

static char *many(const char *what, size_t count, size_t *len)
{
    const bool jobs = strcmp(what, "jobs") == 0;
    char *text = NULL;
    FILE *f = open_memstream(&text, len);

    fprintf(f, "{\"numaplace_scenario\": 1, \"name\": \"many\", \"nodes\": 2, \"jobs\": [");
    for (size_t i = 0; i < (jobs ? count : 1); i++)
        fprintf(f, "%s{\"benchmark\": \"b%zu\", \"node\": %zu}", i ? ", " : "", i, i % 2);
    fprintf(f, "], \"requests\": [");
    for (size_t i = 0; i < (jobs ? 0 : count); i++)
        fprintf(f, "%s{\"delay_s\": 1, \"from\": 0, \"to\": 1, \"pages\": %zu}", i ? ", " : "",
                i + 1);
    fprintf(f, "]}");
    fclose(f);
    return text;
}

START_TEST(test_sizes)
{
    size_t len;
    char *text = many(size_cases[_i].what, size_cases[_i].count, &len);
    struct np_scenario s;
    struct np_err err = {0};
    const int rc = np_scenario_parse(text, len, &s, &err);

    ck_assert_msg(rc == size_cases[_i].rc, "%s x %zu: %d (%s)", size_cases[_i].what,
                  size_cases[_i].count, rc, err.msg);
    ck_assert_msg(strstr(err.msg, size_cases[_i].message), "%s", err.msg);
    if (rc == 0)
        ck_assert_uint_eq(strcmp(size_cases[_i].what, "jobs") == 0 ? s.njobs : s.nrequests,
                          size_cases[_i].count);
    np_scenario_fini(&s);
    free(text);
}
END_TEST

/* The loader: the size limit, files that are not there or not files, the path in messages. */
START_TEST(test_load)
{
    char dir[] = "/tmp/np_scenario_XXXXXX", path[64];
    struct np_scenario s;
    struct np_err err = {0};
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/big.json", dir);
    f = fopen(path, "we");
    fprintf(f, "{\"numaplace_scenario\": 1, \"name\": \"big\", \"nodes\": 1, \"jobs\": "
               "[{\"benchmark\": \"x\", \"node\": 0}], \"description\": \"d\"");
    /* White space up to the limit still loads; one byte more does not. */
    for (long i = ftell(f); i < NP_SCENARIO_MAX_BYTES - 1; i++)
        fputc(' ', f);
    fputc('}', f);
    fclose(f);
    ck_assert_msg(np_scenario_load(path, &s, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(s.name, "big");
    np_scenario_fini(&s);
    f = fopen(path, "ae");
    fputc('\n', f);
    fclose(f);
    ck_assert_int_eq(np_scenario_load(path, &s, &err), -EFBIG);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "larger than 4194304 bytes"), "%s",
                  err.msg);
    ck_assert_ptr_null(s.jobs);
    unlink(path);
    ck_assert_int_eq(np_scenario_load(path, &s, &err), -ENOENT);
    ck_assert_msg(strstr(err.msg, path) != NULL, "%s", err.msg);
    ck_assert_int_eq(np_scenario_load(dir, &s, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "not a regular file") != NULL, "%s", err.msg);
    /* A FIFO is refused at once, not waited on for a writer. */
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ck_assert_int_eq(np_scenario_load(path, &s, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "not a regular file") != NULL, "%s", err.msg);
    unlink(path);
    /* A decoding error names the file too. */
    f = fopen(path, "we");
    fprintf(f, "{\"numaplace_scenario\": 1}");
    fclose(f);
    ck_assert_int_eq(np_scenario_load(path, &s, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "\"name\" is missing"), "%s", err.msg);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* A stream (stdin, a pipe): read to its end, the name in messages. */
START_TEST(test_read)
{
    static const char ok[] = "{\"numaplace_scenario\": 1, \"name\": \"p\", \"nodes\": 2, "
                             "\"jobs\": [{\"benchmark\": \"x\", \"node\": 1}]}";
    static const char bad[] = "{\"numaplace_scenario\": 1, \"name\": \"p\", \"nodes\": 2, "
                              "\"jobs\": [{\"benchmark\": \"x\", \"node\": 2}]}";
    struct np_scenario s;
    struct np_err err = {0};
    FILE *in = fmemopen((void *)ok, sizeof(ok) - 1, "r");

    ck_assert_int_eq(np_scenario_read(in, "-", &s, &err), 0);
    fclose(in);
    ck_assert_uint_eq(s.jobs[0].node, 1);
    np_scenario_fini(&s);
    in = fmemopen((void *)bad, sizeof(bad) - 1, "r");
    ck_assert_int_eq(np_scenario_read(in, "-", &s, &err), -EINVAL);
    fclose(in);
    ck_assert_str_eq(err.msg, "-: jobs[0].node: 2 is out of range: accepted values are 0 to 1");
}
END_TEST

/* The thesis's five dynamic sets as shipped (data/scenarios/), against the thesis
 * (docs/model.md, "The thesis's experiments") and the model table. */
static const struct {
    unsigned set;
    size_t njobs, requests;
    unsigned per_node[4]; /* job instances whose CPUs and memory start on each node */
    uint64_t min_pages, max_pages;
    struct np_scenario_request first, last;
    const char *runs;
} shipped_cases[] = {
    {1,
     16,
     25,
     {8, 8, 0, 0},
     1000,
     20000,
     {30, 0, 1, 20000},
     {30, 3, 0, 10000},
     "best random random random worst"},
    {2,
     32,
     100,
     {8, 8, 8, 8},
     1000,
     400000,
     {30, 0, 1, 200000},
     {30, 2, 0, 1000},
     "best random random random worst"},
    {3,
     32,
     100,
     {8, 8, 8, 8},
     10000,
     100000,
     {30, 0, 1, 100000},
     {30, 1, 0, 10000},
     "best random random random random worst"},
    {4,
     32,
     100,
     {8, 8, 8, 8},
     1000000,
     3000000,
     {30, 0, 1, 2000000},
     {30, 3, 1, 2000000},
     "best random random random worst best-plus worst-plus"},
    {5,
     32,
     100,
     {8, 8, 8, 8},
     1000000,
     3000000,
     {30, 0, 1, 2000000},
     {30, 3, 1, 2000000},
     "best best-plus worst worst-plus"},
};

static void load_shipped(unsigned set, struct np_scenario *s)
{
    const char *dir = getenv("NUMAPLACE_SCENARIOS");
    struct np_err err = {0};
    char path[4096];

    ck_assert_msg(dir != NULL, "NUMAPLACE_SCENARIOS is not set (run the tests through ctest)");
    snprintf(path, sizeof(path), "%s/thesis-set-%u.json", dir, set);
    ck_assert_msg(np_scenario_load(path, s, &err) == 0, "%s", err.msg);
}

static bool same_request(const struct np_scenario_request *a, const struct np_scenario_request *b)
{
    return a->delay_s == b->delay_s && a->from == b->from && a->to == b->to && a->pages == b->pages;
}

START_TEST(test_shipped)
{
    const char *table = getenv("NUMAPLACE_MODEL_DATA");
    struct np_scenario s;
    struct np_model model = {0};
    struct np_err err = {0};
    unsigned per_node[4] = {0};
    uint64_t lo = UINT64_MAX, hi = 0;
    char runs[256] = "", name[32];
    size_t len = 0;

    load_shipped(shipped_cases[_i].set, &s);
    snprintf(name, sizeof(name), "thesis-set-%u", shipped_cases[_i].set);
    ck_assert_str_eq(s.name, name);
    ck_assert_uint_eq(s.nodes, 4);
    ck_assert_uint_eq(s.njobs, shipped_cases[_i].njobs);
    ck_assert_uint_eq(np_scenario_instances(&s), shipped_cases[_i].njobs);
    ck_assert_uint_eq(s.nrequests, shipped_cases[_i].requests);
    ck_assert_msg(s.source && strstr(s.source, "theovaka/Resource_Manager") &&
                      strstr(s.source, "automatic_migration.txt") &&
                      strstr(s.source, "d1703a1f70e3893c6821aee83b6a8ee6e6ae6f16"),
                  "%s: the source names the repository, the file and the commit", name);
    ck_assert_int_eq(np_model_load(table, &model, &err), 0);
    for (size_t i = 0; i < s.njobs; i++) {
        /* Every job low, input 0, a benchmark of the model table; OpenMP's default thread count
         * (one per CPU of the node, 16) for the OpenMP codes, one thread for the rest. */
        ck_assert_int_eq(s.jobs[i].job_class, NP_CLASS_LOW);
        ck_assert_uint_eq(s.jobs[i].input, 0);
        ck_assert_uint_eq(s.jobs[i].threads, np_contention_is_openmp(s.jobs[i].benchmark) ? 16 : 1);
        ck_assert_msg(np_model_find(&model, s.jobs[i].benchmark, NULL) != NULL,
                      "%s: jobs[%zu] %s is not in the model table", name, i, s.jobs[i].benchmark);
        per_node[s.jobs[i].node] += s.jobs[i].copies;
    }
    np_model_free(&model);
    for (unsigned n = 0; n < 4; n++)
        ck_assert_uint_eq(per_node[n], shipped_cases[_i].per_node[n]);
    for (size_t i = 0; i < s.nrequests; i++) {
        ck_assert(s.requests[i].delay_s == 30);
        lo = s.requests[i].pages < lo ? s.requests[i].pages : lo;
        hi = s.requests[i].pages > hi ? s.requests[i].pages : hi;
    }
    ck_assert_uint_eq(lo, shipped_cases[_i].min_pages);
    ck_assert_uint_eq(hi, shipped_cases[_i].max_pages);
    ck_assert(same_request(&s.requests[0], &shipped_cases[_i].first));
    ck_assert(same_request(&s.requests[s.nrequests - 1], &shipped_cases[_i].last));
    for (size_t i = 0; i < s.nruns; i++)
        len +=
            (size_t)snprintf(runs + len, sizeof(runs) - len, "%s%s", i ? " " : "", s.runs[i]->name);
    ck_assert_str_eq(runs, shipped_cases[_i].runs);
    np_scenario_fini(&s);
}
END_TEST

/* What the thesis says of the series beyond their ranges: set 2 never asks 1 -> 3; set 4 comes
 * back to zero after every group of 8; set 5's file is set 4's. */
START_TEST(test_shipped_series)
{
    struct np_scenario set2, set4, set5;
    long long net[4] = {0};

    load_shipped(2, &set2);
    load_shipped(4, &set4);
    load_shipped(5, &set5);
    for (size_t i = 0; i < set2.nrequests; i++)
        ck_assert(!(set2.requests[i].from == 1 && set2.requests[i].to == 3));
    for (size_t i = 0; i < set4.nrequests; i++) {
        net[set4.requests[i].from] -= (long long)set4.requests[i].pages;
        net[set4.requests[i].to] += (long long)set4.requests[i].pages;
        if (i % 8 == 7 || i == set4.nrequests - 1)
            for (unsigned n = 0; n < 4; n++)
                ck_assert_msg(net[n] == 0, "set 4: node %u at %lld pages after request %zu", n,
                              net[n], i);
    }
    ck_assert_uint_eq(set5.nrequests, set4.nrequests);
    for (size_t i = 0; i < set4.nrequests; i++)
        ck_assert(same_request(&set4.requests[i], &set5.requests[i]));
    np_scenario_fini(&set2);
    np_scenario_fini(&set4);
    np_scenario_fini(&set5);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("scenario");
    TCase *tc = tcase_create("scenario");

    ninvalid = list_cases("invalid", invalid_cases);
    nvalid = list_cases("valid", valid_cases);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_invalid, 0, (int)ninvalid);
    tcase_add_loop_test(tc, test_valid, 0, (int)nvalid);
    tcase_add_loop_test(tc, test_sizes, 0, sizeof(size_cases) / sizeof(size_cases[0]));
    tcase_add_test(tc, test_load);
    tcase_add_test(tc, test_read);
    tcase_add_loop_test(tc, test_shipped, 0, sizeof(shipped_cases) / sizeof(shipped_cases[0]));
    tcase_add_test(tc, test_shipped_series);
    suite_add_tcase(suite, tc);
    if (ninvalid < 50 || nvalid < 2) {
        fprintf(stderr,
                "test_scenario: too few fixtures under scenarios/ (%zu invalid, %zu valid)\n",
                ninvalid, nvalid);
        return EXIT_FAILURE;
    }
    return np_test_run(suite);
}
