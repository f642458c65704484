/* Control characters escaped on their way to a terminal (see safe_text.h). */
#include "numaplace/safe_text.h"

#include <stdbool.h>
#include <stdlib.h>

/* One byte of text; @p lead: the previous byte was 0xc2 and was held back. @return whether
 * this byte is held back in its turn (a 0xc2 that may start a C1 control). */
static bool put_byte(FILE *out, unsigned char c, bool *lead, bool keep_layout)
{
    if (*lead) {
        *lead = false;
        if (c >= 0x80 && c <= 0x9f) {
            fprintf(out, "\\u%04x", c);
            return false;
        }
        fputc(0xc2, out);
    }
    if (c == 0xc2) {
        *lead = true;
        return true;
    }
    if ((c < 0x20 || c == 0x7f) && !(keep_layout && (c == '\n' || c == '\t')))
        fprintf(out, "\\x%02x", c);
    else
        fputc(c, out);
    return false;
}

void np_print_text(FILE *out, const char *s)
{
    bool lead = false;

    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        put_byte(out, *p, &lead, false);
    if (lead)
        fputc(0xc2, out);
}

struct safe_stream {
    FILE *out;
    bool lead;
};

static ssize_t safe_write(void *cookie, const char *buf, size_t size)
{
    struct safe_stream *s = cookie;

    for (size_t i = 0; i < size; i++)
        put_byte(s->out, (unsigned char)buf[i], &s->lead, true);
    return ferror(s->out) ? -1 : (ssize_t)size;
}

static int safe_close(void *cookie)
{
    struct safe_stream *s = cookie;
    int rc;

    if (s->lead)
        fputc(0xc2, s->out);
    rc = fflush(s->out);
    free(s);
    return rc;
}

FILE *np_safe_text_stream(FILE *out)
{
    struct safe_stream *s = calloc(1, sizeof(*s));
    FILE *f;

    if (!s)
        return NULL;
    s->out = out;
    f = fopencookie(s, "w", (cookie_io_functions_t){.write = safe_write, .close = safe_close});
    if (!f)
        free(s);
    return f;
}
