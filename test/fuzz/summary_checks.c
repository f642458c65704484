/* The checks the summary harnesses share (summary_checks.h). */
#include "summary_checks.h"
#include "fuzz_common.h"
#include "numaplace/codec.h"
#include "numaplace/summary.h"
#include "numaplace/summary_model.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Dump flags that keep the members in their order: what the byte-for-byte promise is about. */
#define DUMP_FLAGS (JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17))

static char *dump(const json_t *j)
{
    char *text = json_dumps(j, DUMP_FLAGS);

    FUZZ_ASSERT(text != NULL);
    return text;
}

/*
 * The same JSON, members in the same order, where a number is equal to a number of the same
 * value: the model reads an integer where the schema has a real (60030 for 60030.0, as jq
 * writes it) and writes it back as a real, as numaplace wrote it.
 */
static bool same_json(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_is_integer(a) && json_is_integer(b)
                   ? json_integer_value(a) == json_integer_value(b)
                   : json_number_value(a) == json_number_value(b);
    if (json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!same_json(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    if (json_is_object(a)) {
        void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);
        for (; ia && ib; ia = json_object_iter_next((json_t *)a, ia),
                         ib = json_object_iter_next((json_t *)b, ib))
            if (strcmp(json_object_iter_key(ia), json_object_iter_key(ib)) != 0 ||
                !same_json(json_object_iter_value(ia), json_object_iter_value(ib)))
                return false;
        return !ia && !ib;
    }
    return json_equal(a, b);
}

/* Decode -> encode gives the input back (byte for byte once numaplace wrote it: checked on the
 * encoded form, which decodes again and encodes the same bytes). */
static void check_round_trip(const json_t *json, const struct np_sum *s)
{
    struct np_err err = {0};
    struct np_sum again;
    json_t *back = np_sum_encode(s), *back2;
    char *in = dump(json), *out, *out2;

    FUZZ_ASSERT(back != NULL);
    out = dump(back);
    if (!same_json(json, back)) {
        fprintf(stderr, "in:  %s\nout: %s\n", in, out);
        FUZZ_ASSERT(!"np_sum_encode(np_sum_decode(x)) is x, numbers by value");
    }
    FUZZ_ASSERT(np_sum_decode(back, &again, &err) == 0);
    back2 = np_sum_encode(&again);
    FUZZ_ASSERT(back2 != NULL);
    out2 = dump(back2);
    FUZZ_ASSERT(strcmp(out, out2) == 0);
    free(in);
    free(out);
    free(out2);
    json_decref(back);
    json_decref(back2);
    np_sum_free(&again);
}

/* The stored form of the summary decodes to the same JSON. */
static void check_stored(const json_t *json)
{
    struct np_err err = {0};
    json_t *back = NULL;
    char *stored = NULL;
    long len = np_stored_encode(json, &stored, &err);

    FUZZ_ASSERT(len > 0 && stored != NULL);
    FUZZ_ASSERT(np_stored_decode(stored, &back, &err) == 0);
    FUZZ_ASSERT(json_equal(json, back));
    json_decref(back);
    free(stored);
}

/* What the command does with a summary it read: print, advise, merge, recompute. */
static void use(const json_t *json, struct np_sum *s)
{
    struct np_err err = {0};
    json_t *advice = np_summary_advice(json), *node;
    struct np_sum other;
    const char *name;
    double share;

    FUZZ_ASSERT(np_summary_print(fuzz_devnull(), json) == 0);
    FUZZ_ASSERT(json_array_size(advice) > 0);
    json_decref(advice);
    (void)np_summary_worst_local_share(json, &share);
    json_object_foreach(json_object_get(json, "nodes"), name, node)
    {
        FUZZ_ASSERT(np_summary_node_reported(json, name));
    }
    FUZZ_ASSERT(np_sum_decode(json, &other, &err) == 0);
    if (np_sum_merge(s, &other, &err) == 0) {
        json_t *merged = np_sum_encode(s);
        struct np_sum m;
        FUZZ_ASSERT(merged != NULL);
        FUZZ_ASSERT(np_sum_decode(merged, &m, &err) == 0);
        np_sum_free(&m);
        json_decref(merged);
    }
    np_sum_free(&other);
    FUZZ_ASSERT(np_sum_recompute(s) == 0);
}

void fuzz_check_summary(const json_t *json)
{
    struct np_err err = {0};
    struct np_sum s;

    if (np_sum_decode(json, &s, &err) != 0) {
        FUZZ_ASSERT(err.code < 0 && err.msg[0] != '\0');
        return;
    }
    check_round_trip(json, &s);
    check_stored(json);
    use(json, &s);
    np_sum_free(&s);
}
