/*
 * fuzz_stored_summary: an AdminComment as the command reads it from accounting
 * (np_stored_decode: "NPS1:" + base64(zlib(JSON))), then the summary model as fuzz_summary_json.
 * Invariants: a refusal is one of the documented codes with a message; decompression stays
 * within the codec's bound (run with -malloc_limit_mb so an unbounded one is reported); an
 * accepted comment re-encodes to a comment that decodes to the same JSON.
 */
#include "fuzz_common.h"
#include "numaplace/summary.h"
#include "summary_checks.h"

#include <errno.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct np_err err = {0};
    char *text = fuzz_strndup(data, size);
    json_t *json = NULL;
    int rc = np_stored_decode(text, &json, &err);

    free(text);
    if (rc < 0) {
        FUZZ_ASSERT(rc == -ENOMSG || rc == -EPROTO || rc == -EBADMSG || rc == -ENOMEM);
        FUZZ_ASSERT(json == NULL && err.code == rc && err.msg[0] != '\0');
        return 0;
    }
    FUZZ_ASSERT(json != NULL);
    fuzz_check_summary(json);
    json_decref(json);
    return 0;
}
