/* The stored AdminComment form: round trips and every kind of corrupt input. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "np_test.h"
#include "numaplace/summary.h"

START_TEST(test_round_trip)
{
    json_t *summary = json_pack("{s:i, s:s, s:{s:f, s:[i,i,i]}}", "v", 1, "job", "4242", "node0",
                                "cpi", 1.25, "pages", 1, 2, 3);
    json_t *back = NULL;
    char *text = NULL;
    struct np_err err = {0};
    long len = np_stored_encode(summary, &text, &err);

    ck_assert_int_gt(len, 5);
    ck_assert_int_eq((long)strlen(text), len);
    ck_assert_int_eq(strncmp(text, NP_STORED_PREFIX, 5), 0);
    /* Only characters sacct and scontrol pass through untouched. */
    ck_assert_uint_eq(strspn(text + 5, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                       "0123456789+/="),
                      strlen(text + 5));
    ck_assert_int_eq(np_stored_decode(text, &back, &err), 0);
    ck_assert(json_equal(summary, back));
    json_decref(back);

    /* sacct output comes with white space around it. */
    {
        char *padded = malloc(strlen(text) + 4);
        sprintf(padded, "  %s\n", text);
        ck_assert_int_eq(np_stored_decode(padded, &back, &err), 0);
        ck_assert(json_equal(summary, back));
        json_decref(back);
        free(padded);
    }
    free(text);
    json_decref(summary);
}
END_TEST

START_TEST(test_large_summary_compresses)
{
    json_t *series = json_array();
    json_t *back = NULL;
    char *text = NULL;
    long len;

    for (int i = 0; i < 5000; i++)
        json_array_append_new(series, json_pack("{s:i,s:i}", "t", i, "n0", 1000 + i % 7));
    char *plain = json_dumps(series, JSON_COMPACT);

    len = np_stored_encode(series, &text, NULL);
    ck_assert_int_gt(len, 0);
    ck_assert_uint_lt((size_t)len, strlen(plain) / 4);
    free(plain);
    ck_assert_int_eq(np_stored_decode(text, &back, NULL), 0);
    ck_assert(json_equal(series, back));
    json_decref(back);
    json_decref(series);
    free(text);
}
END_TEST

/* zlib of some bytes, base64'd with the prefix, for inputs that pass base64 but not later. */
static char *stored_of_raw(const char *raw)
{
    char *text = NULL;
    uLongf zlen = compressBound((uLong)strlen(raw));
    unsigned char *z = malloc(zlen);
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 5;

    compress(z, &zlen, (const Bytef *)raw, (uLong)strlen(raw));
    text = malloc(5 + 4 * ((zlen + 2) / 3) + 1);
    memcpy(text, "NPS1:", 5);
    for (size_t i = 0; i < zlen; i += 3) {
        unsigned v = (unsigned)z[i] << 16 | (i + 1 < zlen ? (unsigned)z[i + 1] << 8 : 0) |
                     (i + 2 < zlen ? z[i + 2] : 0);
        text[o++] = a[v >> 18 & 63];
        text[o++] = a[v >> 12 & 63];
        text[o++] = i + 1 < zlen ? a[v >> 6 & 63] : '=';
        text[o++] = i + 2 < zlen ? a[v & 63] : '=';
    }
    text[o] = '\0';
    free(z);
    return text;
}

static const struct {
    const char *text;
    int code;
    const char *message;
} corrupt_cases[] = {
    {"", -ENOMSG, "no 'NPS1:' prefix"},
    {"JS1:H4sIAAAA", -ENOMSG, "no 'NPS1:' prefix"}, /* jobstats' summary: not ours, left alone */
    {"NPS2:abcd", -EPROTO, "version 2"},
    {"NPS1:ab$d", -EBADMSG, "invalid base64 at character 7"},
    {"NPS1:abc", -EBADMSG, "invalid base64"},
    {"NPS1:ab=d", -EBADMSG, "invalid base64"},
    {"NPS1:aGVsbG8gd29ybGQh", -EBADMSG, "not valid zlib data"}, /* "hello world!" */
    {NULL, -EBADMSG, "JSON error"},                             /* zlib of "{not json" */
};

START_TEST(test_corrupt_input)
{
    json_t *out = (json_t *)1;
    struct np_err err = {0};
    char *made = NULL;
    const char *text = corrupt_cases[_i].text;

    if (!text)
        text = made = stored_of_raw("{not json");
    ck_assert_int_eq(np_stored_decode(text, &out, &err), corrupt_cases[_i].code);
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(err.msg, corrupt_cases[_i].message), "message '%s' lacks '%s'", err.msg,
                  corrupt_cases[_i].message);
    free(made);
}
END_TEST

/* Decompression bombs: JSON of @p repeat @p item in an array, stored; decoded or refused. */
static const struct {
    const char *item; /* with its comma */
    unsigned repeat;
    int code;
} bomb_cases[] = {
    {"1000,", 16000, 0}, /* 80 kB in one array: many more values than a real summary, still read */
    /* fuzz_stored_summary: 16 MiB of "0," took over 500 MB to decode; now over the bound */
    {"0,", 5u << 20, -EBADMSG},
};

START_TEST(test_decompression_bomb)
{
    const unsigned n = bomb_cases[_i].repeat;
    const size_t item = strlen(bomb_cases[_i].item);
    struct np_err err = {0};
    char *raw = malloc(item * (size_t)n + 4), *text;
    json_t *out = NULL;

    ck_assert_ptr_nonnull(raw);
    raw[0] = '[';
    for (unsigned i = 0; i < n; i++)
        memcpy(raw + 1 + item * (size_t)i, bomb_cases[_i].item, item);
    memcpy(raw + 1 + item * (size_t)n, "0]", 3);
    text = stored_of_raw(raw);
    free(raw);
    ck_assert_int_eq(np_stored_decode(text, &out, &err), bomb_cases[_i].code);
    if (bomb_cases[_i].code == 0)
        ck_assert_uint_eq(json_array_size(out), n + 1);
    else
        ck_assert_msg(strstr(err.msg, "decompresses to more than the 1 MiB"), "%s", err.msg);
    json_decref(out);
    free(text);
}
END_TEST

START_TEST(test_null_input)
{
    json_t *out = NULL;
    struct np_err err = {0};

    ck_assert_int_eq(np_stored_decode(NULL, &out, &err), -ENOMSG);
    ck_assert_ptr_nonnull(strstr(err.msg, "empty"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("codec");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_large_summary_compresses);
    tcase_add_loop_test(tc, test_corrupt_input, 0,
                        sizeof(corrupt_cases) / sizeof(corrupt_cases[0]));
    tcase_add_loop_test(tc, test_decompression_bomb, 0,
                        (int)(sizeof(bomb_cases) / sizeof(bomb_cases[0])));
    tcase_add_test(tc, test_null_input);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
