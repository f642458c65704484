/*
 * fuzz_proto_reply: a reply as the plugin and the command read it from numaplaced
 * (np_proto_call: json_loadb of what arrived, then np_proto_reply_check).
 * Invariants: a refused or malformed reply gives an error with a message; an accepted one is a
 * version-1 object with "ok": true, and its advice (np_proto_hint_decode) either decodes with
 * only measured nodes loaded or is refused with a message.
 */
#include "fuzz_common.h"
#include "numaplace/protocol.h"

#include <errno.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct np_err err = {0};
    json_error_t jerr;
    json_t *reply;
    int rc;

    if (size > NP_PROTO_MAX_REPLY)
        return 0;
    /* The same flags as np_proto_call. */
    reply = json_loadb((const char *)data, size, 0, &jerr);
    if (!reply)
        return 0;
    rc = np_proto_reply_check(reply, &err);
    if (rc == 0) {
        FUZZ_ASSERT(json_integer_value(json_object_get(reply, "v")) == NP_PROTO_VERSION);
        FUZZ_ASSERT(json_is_true(json_object_get(reply, "ok")));
        /* The advise reply the step side decodes: a node it accepts is in range and a
         * proxy's never counts as loaded. */
        struct np_proto_hint advice;
        struct np_err aerr = {0};
        if (np_proto_hint_decode(reply, &advice, &aerr) == 0) {
            for (unsigned n = 0; n < NP_PROTO_ADVICE_MAX_NODES; n++)
                FUZZ_ASSERT(!advice.node[n].loaded || advice.node[n].measured);
        } else {
            FUZZ_ASSERT(aerr.code == -EPROTO && aerr.msg[0] != '\0');
        }
    } else {
        FUZZ_ASSERT(rc == -EPROTO || rc == -EREMOTEIO);
        FUZZ_ASSERT(err.code == rc && err.msg[0] != '\0');
    }
    json_decref(reply);
    return 0;
}
