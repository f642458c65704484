/* What decoding a stored summary may cost (a 23 KB AdminComment, 16 MiB of "[0,0,..."
 * once decompressed, made jansson allocate 400 MB). jansson's allocations are counted through
 * json_set_alloc_funcs; the peak is checked against the decoded size. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "np_test.h"
#include "numaplace/summary.h"

/* Every jansson block carries its size in front, so free() can count it back. */
static size_t live_bytes, peak_bytes;

static void *counting_malloc(size_t size)
{
    max_align_t *block = malloc(sizeof(max_align_t) + size);

    if (!block)
        return NULL;
    memcpy(block, &size, sizeof(size));
    live_bytes += size;
    if (live_bytes > peak_bytes)
        peak_bytes = live_bytes;
    return block + 1;
}

static void counting_free(void *p)
{
    max_align_t *block = p ? (max_align_t *)p - 1 : NULL;
    size_t size;

    if (!block)
        return;
    memcpy(&size, block, sizeof(size));
    live_bytes -= size;
    free(block);
}

/* "NPS1:" + base64(zlib(@p json)): a comment anyone with `scontrol update` rights could set. */
static char *stored_from(const char *json, size_t len)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uLongf zlen = compressBound((uLong)len);
    unsigned char *z = malloc(zlen);
    char *text;
    size_t o = strlen(NP_STORED_PREFIX);

    ck_assert_int_eq(compress2(z, &zlen, (const Bytef *)json, (uLong)len, 9), Z_OK);
    text = malloc(o + 4 * (zlen / 3 + 1) + 1);
    memcpy(text, NP_STORED_PREFIX, o);
    for (size_t i = 0; i < zlen; i += 3) {
        const uint32_t v = (uint32_t)z[i] << 16 | (i + 1 < zlen ? (uint32_t)z[i + 1] << 8 : 0) |
                           (i + 2 < zlen ? z[i + 2] : 0);
        text[o++] = b64[v >> 18 & 63];
        text[o++] = b64[v >> 12 & 63];
        text[o++] = i + 1 < zlen ? b64[v >> 6 & 63] : '=';
        text[o++] = i + 2 < zlen ? b64[v & 63] : '=';
    }
    text[o] = '\0';
    free(z);
    return text;
}

/* A JSON array of @p n copies of @p element ("0", "[]", ...), or @p n nested arrays. */
static char *array_of(const char *element, size_t n, size_t *len)
{
    const size_t el = strlen(element);
    char *json = malloc(n * (el + 1) + 3), *p = json;

    *p++ = '[';
    for (size_t i = 0; i < n; i++) {
        memcpy(p, element, el);
        p += el;
        *p++ = i + 1 < n ? ',' : ']';
    }
    *p = '\0';
    *len = (size_t)(p - json);
    return json;
}

static char *nested(size_t n, size_t *len)
{
    char *json = malloc(2 * n + 1);

    memset(json, '[', n);
    memset(json + n, ']', n);
    json[2 * n] = '\0';
    *len = 2 * n;
    return json;
}

/* Hostile comments: each refused as corrupt, at a cost far below what it would have built. */
static const struct {
    const char *what, *element;
    size_t n;
    bool nest;
} hostile[] = {
    {"16 MiB of [0,0,... (the issue's 23 KB comment)", "0", 8u << 20, false},
    {"1 MiB of [0,0,... (under the size limit)", "0", (1u << 19) - 1, false},
    {"131,073 members of one array", "\"abcdefgh\"", 131073, false},
    {"nested 100,000 deep", NULL, 100000, true},
};

START_TEST(test_hostile_comment_is_cheap)
{
    size_t len;
    char *json = hostile[_i].nest ? nested(hostile[_i].n, &len)
                                  : array_of(hostile[_i].element, hostile[_i].n, &len);
    char *stored = stored_from(json, len);
    struct np_err err = {0};
    json_t *out = NULL;

    fprintf(stderr, "%s: a comment of %zu bytes\n", hostile[_i].what, strlen(stored));
    free(json);
    peak_bytes = live_bytes;
    ck_assert_int_eq(np_stored_decode(stored, &out, &err), -EBADMSG);
    ck_assert_ptr_null(out);
    /* jansson built nothing of it (before: 400 MB for the first) */
    ck_assert_msg(peak_bytes - live_bytes < 64 * 1024, "%s: jansson peaked at %zu bytes (%s)",
                  hostile[_i].what, peak_bytes - live_bytes, err.msg);
    free(stored);
}
END_TEST

/* The densest comment that passes: its cost is a small multiple of its decoded size. */
START_TEST(test_accepted_comment_costs_a_small_multiple)
{
    size_t len;
    /* "100," is 4 bytes a value: the densest the limits accept */
    char *json = array_of("100", NP_STORED_MAX_MEMBERS, &len);
    char *stored = stored_from(json, len);
    struct np_err err = {0};
    json_t *out = NULL;
    const size_t before = live_bytes;

    peak_bytes = live_bytes;
    ck_assert_msg(np_stored_decode(stored, &out, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(json_array_size(out), NP_STORED_MAX_MEMBERS);
    fprintf(stderr, "decoded %zu bytes; jansson peak %zu bytes (%.1fx)\n", len, peak_bytes - before,
            (double)(peak_bytes - before) / (double)len);
    ck_assert_uint_le(peak_bytes - before, 16 * len);
    json_decref(out);
    free(json);
    free(stored);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("codec_memory");
    TCase *tc = tcase_create("codec_memory");

    json_set_alloc_funcs(counting_malloc, counting_free); /* before jansson allocates anything */
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_hostile_comment_is_cheap, 0,
                        (int)(sizeof(hostile) / sizeof(hostile[0])));
    tcase_add_test(tc, test_accepted_comment_costs_a_small_multiple);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
