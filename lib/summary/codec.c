/* The stored form of a job summary: "NPS1:" + base64(zlib(JSON)) (see numaplace/summary.h). */
#include <stdint.h>
#include <zlib.h>

#include "numaplace/json_reals.h"
#include "summary_priv.h"

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void base64_encode(const unsigned char *in, size_t len, char *out)
{
    size_t o = 0;

    for (size_t i = 0; i < len; i += 3) {
        const uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0) |
                           (i + 2 < len ? in[i + 2] : 0);
        out[o++] = b64_alphabet[v >> 18 & 63];
        out[o++] = b64_alphabet[v >> 12 & 63];
        out[o++] = i + 1 < len ? b64_alphabet[v >> 6 & 63] : '=';
        out[o++] = i + 2 < len ? b64_alphabet[v & 63] : '=';
    }
    out[o] = '\0';
}

static int b64_value(int c)
{
    const char *p = c ? strchr(b64_alphabet, c) : NULL;
    return p ? (int)(p - b64_alphabet) : -1;
}

/* @return decoded length, or -1 with *bad set to the offending offset. */
static long base64_decode(const char *in, size_t len, unsigned char *out, size_t *bad)
{
    size_t o = 0;

    if (len % 4) {
        *bad = len;
        return -1;
    }
    for (size_t i = 0; i < len; i += 4) {
        int v[4];
        for (int k = 0; k < 4; k++) {
            const bool pad = in[i + k] == '=' && i + 4 == len && k >= 2;
            v[k] = pad ? 0 : b64_value((unsigned char)in[i + k]);
            if (v[k] < 0 || (pad && k == 2 && in[i + 3] != '=')) {
                *bad = i + (size_t)k;
                return -1;
            }
        }
        out[o++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
        if (in[i + 2] != '=')
            out[o++] = (unsigned char)((v[1] & 15) << 4 | v[2] >> 2);
        if (in[i + 3] != '=')
            out[o++] = (unsigned char)((v[2] & 3) << 6 | v[3]);
    }
    return (long)o;
}

/* Values, nesting and members per array or object of the JSON text, counted without building it:
 * a value is the root or follows a '[', '{', ':' or ','; strings are skipped. A count is an upper
 * bound ("[]" counts one member), which is all a limit needs. */
static int check_shape(const char *json, size_t len, struct np_err *err)
{
    size_t members[NP_STORED_MAX_DEPTH + 1] = {1}, values = 1;
    unsigned depth = 0;
    bool in_string = false;

    for (size_t i = 0; i < len; i++) {
        const char c = json[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
            continue;
        }
        switch (c) {
        case '"':
            in_string = true;
            break;
        case '[':
        case '{':
            if (++depth > NP_STORED_MAX_DEPTH)
                return np_err_set(err, -EBADMSG,
                                  "stored summary is corrupt: nested deeper than the %d levels a "
                                  "summary has",
                                  NP_STORED_MAX_DEPTH);
            members[depth] = 1;
            values++;
            break;
        case ']':
        case '}':
            if (depth)
                depth--;
            break;
        case ',':
            values++;
            if (++members[depth] > NP_STORED_MAX_MEMBERS)
                return np_err_set(err, -EBADMSG,
                                  "stored summary is corrupt: an array or object of more than the "
                                  "%d members a summary has",
                                  NP_STORED_MAX_MEMBERS);
            break;
        default:
            break;
        }
        if (values > NP_STORED_MAX_VALUES || values > len / NP_STORED_MIN_BYTES_PER_VALUE + 16)
            return np_err_set(err, -EBADMSG,
                              "stored summary is corrupt: more than %s JSON values in %zu bytes "
                              "(a summary has at most %d, and %d bytes or more per value)",
                              values > NP_STORED_MAX_VALUES ? "the" : "its", len,
                              NP_STORED_MAX_VALUES, NP_STORED_MIN_BYTES_PER_VALUE);
    }
    return 0;
}

long np_stored_encode(const json_t *summary, char **out, struct np_err *err)
{
    char *json = json_dumps(summary, JSON_COMPACT | JSON_SORT_KEYS | NP_JSON_REALS);
    const size_t prefix = strlen(NP_STORED_PREFIX);
    unsigned char *z;
    uLongf zlen;
    char *text;
    long rc;

    *out = NULL;
    if (!json)
        return np_err_set(err, -EINVAL, "summary cannot be serialised as JSON");
    zlen = compressBound((uLong)strlen(json));
    z = malloc(zlen);
    if (!z || compress2(z, &zlen, (const Bytef *)json, (uLong)strlen(json), 9) != Z_OK) {
        rc = np_err_set(err, -ENOMEM, "cannot compress the summary");
    } else if (!(text = malloc(prefix + 4 * ((zlen + 2) / 3) + 1))) {
        rc = np_err_set(err, -ENOMEM, "out of memory encoding the summary");
    } else {
        memcpy(text, NP_STORED_PREFIX, prefix);
        base64_encode(z, zlen, text + prefix);
        *out = text;
        rc = (long)strlen(text);
    }
    free(json);
    free(z);
    return rc;
}

int np_stored_decode(const char *text, json_t **out, struct np_err *err)
{
    const size_t prefix = strlen(NP_STORED_PREFIX);
    unsigned char *z = NULL;
    char *json = NULL;
    size_t len, bad = 0;
    long zlen;
    uLongf jlen;
    json_error_t jerr;
    int rc = 0;

    *out = NULL;
    if (!text)
        return np_err_set(err, -ENOMSG, "no stored summary (empty AdminComment)");
    while (isspace((unsigned char)*text))
        text++;
    if (strncmp(text, "NPS", 3) == 0 && text[3] != '1' && isdigit((unsigned char)text[3]))
        return np_err_set(err, -EPROTO,
                          "stored summary has version %c; this numaplace reads version 1", text[3]);
    if (strncmp(text, NP_STORED_PREFIX, prefix) != 0)
        return np_err_set(err, -ENOMSG,
                          "AdminComment does not hold a numaplace summary (no '%s' prefix)",
                          NP_STORED_PREFIX);
    text += prefix;
    len = strlen(text);
    while (len && isspace((unsigned char)text[len - 1]))
        len--;
    z = malloc(len / 4 * 3 + 3);
    if (!z)
        return np_err_set(err, -ENOMEM, "out of memory decoding the summary");
    zlen = base64_decode(text, len, z, &bad);
    if (zlen < 0) {
        rc = np_err_set(err, -EBADMSG,
                        "stored summary is corrupt: invalid base64 at character %zu of %zu",
                        bad + prefix, len + prefix);
        goto out;
    }
    /* Grow the output until it fits, up to the bound: never more than it allows. */
    for (jlen = (uLongf)zlen * 8 + 64;; jlen *= 2) {
        if (jlen > NP_STORED_MAX_JSON_BYTES)
            jlen = NP_STORED_MAX_JSON_BYTES;
        uLongf got = jlen;
        int zrc;
        free(json);
        if (!(json = malloc(jlen + 1))) {
            rc = np_err_set(err, -ENOMEM, "out of memory decompressing the summary");
            goto out;
        }
        if ((zrc = uncompress((Bytef *)json, &got, z, (uLong)zlen)) == Z_OK) {
            json[got] = '\0';
            jlen = got;
            break;
        }
        if (zrc != Z_BUF_ERROR || jlen >= NP_STORED_MAX_JSON_BYTES) {
            rc = np_err_set(err, -EBADMSG, "stored summary is corrupt: %s",
                            zrc == Z_BUF_ERROR ? "decompresses to more than the "
                                                 "1 MiB a summary can have"
                                               : "not valid zlib data");
            goto out;
        }
    }
    /* Its shape before jansson builds it: memory then stays a small multiple of its size. */
    if ((rc = check_shape(json, jlen, err)) < 0)
        goto out;
    *out = json_loadb(json, jlen, JSON_REJECT_DUPLICATES, &jerr);
    if (!*out)
        rc = np_err_set(err, -EBADMSG, "stored summary is corrupt: JSON error at line %d: %s",
                        jerr.line, jerr.text);
out:
    free(z);
    free(json);
    return rc;
}
