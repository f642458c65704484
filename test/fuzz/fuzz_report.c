/*
 * fuzz_report: a step's report (`numaplace.report/1`) as the command reads it from the spool
 * (cli_load_report: json_loadb with no flags) and uses it: its text (np_report_print), and
 * folding it into a job summary (np_summary_add_report, which reads it leniently), which must then
 * be a valid summary that reads back byte for byte.
 */
#include "fuzz_common.h"
#include "numaplace/summary.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_fold(const json_t *report)
{
    struct np_err err = {0};
    json_t *json = np_summary_new(1), *back;
    char *a, *b;

    FUZZ_ASSERT(json != NULL);
    if (np_summary_add_report(json, (json_t *)report, &err) != 0) {
        FUZZ_ASSERT(err.code < 0 && err.msg[0] != '\0');
        json_decref(json);
        return;
    }
    FUZZ_ASSERT(np_summary_validate(json, &err) == 0);
    a = json_dumps(json, JSON_COMPACT | JSON_REAL_PRECISION(17));
    FUZZ_ASSERT(a != NULL);
    back = json_loads(a, 0, NULL);
    FUZZ_ASSERT(back != NULL && np_summary_validate(back, &err) == 0);
    b = json_dumps(back, JSON_COMPACT | JSON_REAL_PRECISION(17));
    FUZZ_ASSERT(b != NULL);
    if (strcmp(a, b) != 0) {
        fprintf(stderr, "folded:  %s\nagain:   %s\n", a, b);
        FUZZ_ASSERT(!"a folded summary reads back byte for byte");
    }
    np_summary_print(fuzz_devnull(), json);
    free(a);
    free(b);
    json_decref(json);
    json_decref(back);
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
