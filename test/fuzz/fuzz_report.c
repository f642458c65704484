/*
 * fuzz_report: a step's report (`numaplace.report/1`) as the command reads it from the spool
 * (cli_load_report: json_loadb with no flags) and uses it: its text (np_report_print), and
 * folding it into a job summary (np_sum_add_report, which reads it leniently), whose JSON must
 * then decode and encode back byte for byte.
 */
#include "fuzz_common.h"
#include "numaplace/summary.h"
#include "numaplace/summary_model.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_fold(const json_t *report)
{
    struct np_err err = {0};
    struct np_sum s, again;
    json_t *json, *back;
    char *a, *b;

    FUZZ_ASSERT(np_sum_init(&s, 1) == 0);
    if (np_sum_add_report(&s, report, &err) != 0) {
        FUZZ_ASSERT(err.code < 0 && err.msg[0] != '\0');
        np_sum_free(&s);
        return;
    }
    json = np_sum_encode(&s);
    FUZZ_ASSERT(json != NULL);
    FUZZ_ASSERT(np_sum_decode(json, &again, &err) == 0);
    back = np_sum_encode(&again);
    FUZZ_ASSERT(back != NULL);
    a = json_dumps(json, JSON_COMPACT | JSON_REAL_PRECISION(17));
    b = json_dumps(back, JSON_COMPACT | JSON_REAL_PRECISION(17));
    FUZZ_ASSERT(a && b);
    if (strcmp(a, b) != 0) {
        fprintf(stderr, "folded:  %s\nagain:   %s\n", a, b);
        FUZZ_ASSERT(!"a folded summary decodes and encodes back byte for byte");
    }
    np_summary_print(fuzz_devnull(), json);
    free(a);
    free(b);
    json_decref(json);
    json_decref(back);
    np_sum_free(&again);
    np_sum_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *report = json_loadb((const char *)data, size, 0, &jerr);

    if (!report)
        return 0;
    np_report_print(fuzz_devnull(), report);
    check_fold(report);
    json_decref(report);
    return 0;
}
