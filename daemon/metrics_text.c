/* Prometheus's text format into a growing buffer (see metrics_text.h). */
#include "metrics_text.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void grow(struct metrics_text *t, size_t more)
{
    size_t cap = t->cap ? t->cap : 4096;
    char *buf;

    if (t->oom || t->len + more + 1 <= t->cap)
        return;
    while (cap < t->len + more + 1)
        cap *= 2;
    buf = realloc(t->buf, cap);
    if (!buf) {
        t->oom = true;
        return;
    }
    t->buf = buf;
    t->cap = cap;
}

static void put(struct metrics_text *t, const char *s, size_t n)
{
    grow(t, n);
    if (t->oom)
        return;
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

void metrics_putf(struct metrics_text *t, const char *fmt, ...)
{
    va_list ap, again;
    int n;

    va_start(ap, fmt);
    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n >= 0)
        grow(t, (size_t)n);
    if (n >= 0 && !t->oom) {
        vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, again);
        t->len += (size_t)n;
    }
    va_end(again);
}

/* Length of the valid UTF-8 sequence at @p s (1 to 4), or 0. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n;
    unsigned min;

    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0)
        n = 2, min = 0x80;
    else if ((s[0] & 0xf0) == 0xe0)
        n = 3, min = 0x800;
    else if ((s[0] & 0xf8) == 0xf0)
        n = 4, min = 0x10000;
    else
        return 0;
    unsigned cp = s[0] & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    return cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : n;
}

/** Append @p s as a label value: backslash, double quote and newline escaped; other control
 *  characters and bytes that are not UTF-8 become '?' (the page must stay parseable). */
static void metrics_append_label_value(struct metrics_text *t, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        const size_t n = utf8_len(p);
        if (*p == '\\' || *p == '"')
            put(t, *p == '\\' ? "\\\\" : "\\\"", 2);
        else if (*p == '\n')
            put(t, "\\n", 2);
        else if (n == 0 || *p < 0x20 || *p == 0x7f)
            put(t, "?", 1);
        else {
            put(t, (const char *)p, n);
            p += n;
            continue;
        }
        p++;
    }
}

void metrics_family(struct metrics_text *t, const char *name, const char *type, const char *help)
{
    metrics_putf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void metrics_series(struct metrics_text *t, const char *name)
{
    put(t, name, strlen(name));
}

void metrics_label(struct metrics_text *t, bool first, const char *key, const char *value)
{
    metrics_putf(t, "%s%s=\"", first ? "{" : ",", key);
    metrics_append_label_value(t, value);
    put(t, "\"", 1);
}

void metrics_label_code(struct metrics_text *t, bool first, const char *key, const char *value)
{
    char code[64];
    size_t n = 0;
    bool ok = *value != '\0';

    for (const char *p = value; *p && ok; p++) {
        const char c = *p;
        ok = n + 1 < sizeof(code) &&
             ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-');
        if (ok)
            code[n++] = c == '-' ? '_' : c;
    }
    code[n] = '\0';
    metrics_label(t, first, key, ok ? code : "other");
}

void metrics_value_u64(struct metrics_text *t, bool labelled, uint64_t v)
{
    metrics_putf(t, "%s %" PRIu64 "\n", labelled ? "}" : "", v);
}

void metrics_value_f(struct metrics_text *t, bool labelled, double v)
{
    if (isnan(v))
        metrics_putf(t, "%s NaN\n", labelled ? "}" : "");
    else if (isinf(v))
        metrics_putf(t, "%s %sInf\n", labelled ? "}" : "", v > 0 ? "+" : "-");
    else
        metrics_putf(t, "%s %.10g\n", labelled ? "}" : "", v);
}

void metrics_single_u64(struct metrics_text *t, const char *name, const char *type,
                        const char *help, uint64_t v)
{
    metrics_family(t, name, type, help);
    metrics_series(t, name);
    metrics_value_u64(t, false, v);
}

void metrics_single_f(struct metrics_text *t, const char *name, const char *type, const char *help,
                      double v)
{
    metrics_family(t, name, type, help);
    metrics_series(t, name);
    metrics_value_f(t, false, v);
}
