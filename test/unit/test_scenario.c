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
#include <unistd.h>

#include "np_test.h"
#include "numaplace/scenario.h"

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

static const struct {
    const char *text;
    bool json;
} sniff_cases[] = {
    {"{}", true},
    {" \n\t{\"a\": 1}", true},
    {"30 0 1 1000 best\n", false},
    {"# comment\n", false},
    {"", false},
    {"  ", false},
    {"[1]", false},
};

START_TEST(test_sniff)
{
    ck_assert_int_eq(np_scenario_text_is_json(sniff_cases[_i].text, strlen(sniff_cases[_i].text)),
                     sniff_cases[_i].json);
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
    tcase_add_loop_test(tc, test_sniff, 0, sizeof(sniff_cases) / sizeof(sniff_cases[0]));
    suite_add_tcase(suite, tc);
    if (ninvalid < 50 || nvalid < 2) {
        fprintf(stderr,
                "test_scenario: too few fixtures under scenarios/ (%zu invalid, %zu valid)\n",
                ninvalid, nvalid);
        return EXIT_FAILURE;
    }
    return np_test_run(suite);
}
