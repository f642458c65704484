/*
 * fuzz_summary_json: a job summary's JSON (`numaplace.summary/1`) as np_stored_decode hands it
 * to its readers (json_loadb with JSON_REJECT_DUPLICATES, then np_summary_validate). The JSON is
 * fuzzed directly so the fuzzer need not get through zlib; fuzz_stored_summary covers the codec.
 */
#include "fuzz_common.h"
#include "summary_checks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *json = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);

    if (!json)
        return 0;
    fuzz_check_summary(json);
    json_decref(json);
    return 0;
}
