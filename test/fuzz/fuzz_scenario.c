/*
 * fuzz_scenario: a scenario file (numaplace migrate --script, numaplace scenario) as
 * np_scenario_parse decodes it, then the three printers.
 * Invariants: a refusal says why; an accepted scenario holds only what docs/scenarios.md allows
 * (names of the allowed characters, nodes in range, from != to, at most 1024 instances).
 */
#include "fuzz_common.h"
#include "numaplace/scenario.h"
#include "numaplace/scenario_file.h"

#include <errno.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is_word(const char *s)
{
    const size_t len = strlen(s);

    return len > 0 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                "0123456789._-") == len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct np_scenario s;
    struct np_err err = {0};
    const int rc = np_scenario_parse((const char *)data, size, &s, &err);
    FILE *out = fuzz_devnull();

    FUZZ_ASSERT(rc == 0 || (rc == -EINVAL && err.code == rc && err.msg[0] != '\0'));
    if (rc != 0) {
        FUZZ_ASSERT(s.jobs == NULL && s.requests == NULL && s.runs == NULL);
        return 0;
    }
    FUZZ_ASSERT(is_word(s.name) && s.nodes >= 1 && s.nodes <= NP_MAX_NODES);
    FUZZ_ASSERT(s.njobs >= 1 && np_scenario_instances(&s) <= NP_SCENARIO_MAX_INSTANCES);
    for (size_t i = 0; i < s.njobs; i++)
        FUZZ_ASSERT(is_word(s.jobs[i].benchmark) && s.jobs[i].node < s.nodes &&
                    s.jobs[i].copies >= 1 && s.jobs[i].threads >= 1);
    for (size_t i = 0; i < s.nrequests; i++)
        FUZZ_ASSERT(s.requests[i].from < s.nodes && s.requests[i].to < s.nodes &&
                    s.requests[i].from != s.requests[i].to && s.requests[i].pages >= 1 &&
                    s.requests[i].delay_s >= 0 && s.requests[i].delay_s <= NP_SCENARIO_MAX_DELAY_S);
    FUZZ_ASSERT(s.nruns >= 1);
    for (size_t i = 0; i < s.nruns; i++)
        FUZZ_ASSERT(s.runs[i] != NULL);
    FUZZ_ASSERT(np_scenario_print_summary(out, &s) == 0);
    FUZZ_ASSERT(np_scenario_print_jobs(out, &s) == 0);
    FUZZ_ASSERT(np_scenario_print_runs(out, &s) == 0);
    np_scenario_fini(&s);
    return 0;
}
