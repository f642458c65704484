/* The checks the summary harnesses share (summary_checks.h). */
#include "summary_checks.h"
#include "fuzz_common.h"
#include "numaplace/summary.h"

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

/* The summary's JSON read back from its text is valid again and written the same: what the
 * byte-for-byte promise is about (members in their order, reals as numaplace writes them). */
static void check_round_trip(const json_t *json)
{
    struct np_err err = {0};
    char *in = dump(json), *out;
    json_t *back = json_loads(in, JSON_DECODE_ANY, NULL);

    FUZZ_ASSERT(back != NULL);
    FUZZ_ASSERT(np_summary_validate(back, &err) == 0);
    out = dump(back);
    FUZZ_ASSERT(strcmp(in, out) == 0);
    free(in);
    free(out);
    json_decref(back);
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
static void use(const json_t *json)
{
    struct np_err err = {0};
    json_t *advice = np_summary_advice(json), *node, *s = json_deep_copy(json), *other;
    const char *name;
    double share;

    FUZZ_ASSERT(s != NULL);
    FUZZ_ASSERT(np_summary_print(fuzz_devnull(), json) == 0);
    FUZZ_ASSERT(json_array_size(advice) > 0);
    json_decref(advice);
    (void)np_summary_worst_local_share(json, &share);
    json_object_foreach(json_object_get(json, "nodes"), name, node)
    {
        FUZZ_ASSERT(np_summary_node_reported(json, name));
    }
    other = json_deep_copy(json);
    FUZZ_ASSERT(other != NULL);
    if (np_summary_merge(s, other, &err) == 0)
        FUZZ_ASSERT(np_summary_validate(s, &err) == 0);
    json_decref(other);
    FUZZ_ASSERT(np_summary_recompute(s) == 0);
    FUZZ_ASSERT(np_summary_validate(s, &err) == 0);
    json_decref(s);
}

void fuzz_check_summary(const json_t *json)
{
    struct np_err err = {0};

    if (np_summary_validate(json, &err) != 0) {
        FUZZ_ASSERT(err.code < 0 && err.msg[0] != '\0');
        return;
    }
    check_round_trip(json);
    check_stored(json);
    use(json);
}
