/*
 * fuzz_proto_request: a request line as numaplaced reads it from a client (np_proto_decode).
 * Invariants: every string field is NUL-terminated in its array; a decoded request encodes
 * (np_proto_encode) to one line within the size limit that decodes to the same request.
 */
#include "fuzz_common.h"
#include "numaplace/protocol.h"

#include <stdlib.h>
#include <string.h>

#define TERMINATED(field) FUZZ_ASSERT(memchr((field), '\0', sizeof(field)) != NULL)

static void check_terminated(const struct np_proto_request *r)
{
    TERMINATED(r->reg.cpus);
    TERMINATED(r->reg.policy_requested);
    TERMINATED(r->reg.sensitivity);
    TERMINATED(r->applied.policy);
    TERMINATED(r->applied.mode);
    TERMINATED(r->applied.nodes);
    TERMINATED(r->applied.cpus);
    TERMINATED(r->job_class);
    TERMINATED(r->migrate.order);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct np_proto_request req, again;
    struct np_err err = {0};
    char *line;
    int rc = np_proto_decode((const char *)data, size, &req, &err);

    if (rc < 0) {
        FUZZ_ASSERT(err.code == rc && err.msg[0] != '\0');
        return 0;
    }
    FUZZ_ASSERT(rc == 0 && req.version == NP_PROTO_VERSION);
    check_terminated(&req);
    line = np_proto_encode(&req);
    FUZZ_ASSERT(line != NULL);
    FUZZ_ASSERT(strlen(line) <= NP_PROTO_MAX_MSG);
    FUZZ_ASSERT(strchr(line, '\n') == line + strlen(line) - 1);
    rc = np_proto_decode(line, strlen(line), &again, &err);
    FUZZ_ASSERT(rc == 0);
    /* Both were zeroed whole before decoding, padding included. */
    FUZZ_ASSERT(memcmp(&req, &again, sizeof(req)) == 0);
    free(line);
    return 0;
}
