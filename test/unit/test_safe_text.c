/*
 * Text users influenced, on its way to root's terminal: control characters escaped, C0 and C1
 * alike, in one field (np_print_text) and through the stream the command prints everything with
 * (np_safe_text_stream), whose writes may split a two-byte C1 control anywhere.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/output_file.h"

static const struct {
    const char *in, *field, *stream;
} cases[] = {
    {"job-1", "job-1", "job-1"},
    {"\x1b]0;owned\a", "\\x1b]0;owned\\x07", "\\x1b]0;owned\\x07"},
    {"a\x1b[2Jb", "a\\x1b[2Jb", "a\\x1b[2Jb"},
    {"line\nnext\tcol\r", "line\\x0anext\\x09col\\x0d", "line\nnext\tcol\\x0d"},
    {"csi \xc2\x9b"
     "2J",
     "csi \\u009b2J", "csi \\u009b2J"},
    {"caf\xc3\xa9 \xc2\xa0nbsp", "caf\xc3\xa9 \xc2\xa0nbsp", "caf\xc3\xa9 \xc2\xa0nbsp"},
    {"del\x7f", "del\\x7f", "del\\x7f"},
    {"end \xc2", "end \xc2", "end \xc2"},
};

START_TEST(field_is_escaped)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);

    ck_assert_ptr_nonnull(out);
    np_print_text(out, cases[_i].in);
    fclose(out);
    ck_assert_str_eq(buf, cases[_i].field);
    free(buf);
}
END_TEST

/* Written one byte at a time: a C1 control split between two writes is still caught. */
START_TEST(stream_is_escaped)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len), *safe;

    ck_assert_ptr_nonnull(out);
    safe = np_safe_text_stream(out);
    ck_assert_ptr_nonnull(safe);
    setvbuf(safe, NULL, _IONBF, 0);
    for (const char *p = cases[_i].in; *p; p++)
        fputc(*p, safe);
    fclose(safe);
    fclose(out);
    ck_assert_str_eq(buf, cases[_i].stream);
    free(buf);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("safe_text");
    TCase *tc = tcase_create("safe_text");

    tcase_add_loop_test(tc, field_is_escaped, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_loop_test(tc, stream_is_escaped, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
