/* summary_checks.h - the checks the summary harnesses share (summary_checks.c). */
#ifndef NUMAPLACE_FUZZ_SUMMARY_CHECKS_H
#define NUMAPLACE_FUZZ_SUMMARY_CHECKS_H

#include <jansson.h>

/*
 * @p json (borrowed) as the command uses a stored summary: checked (np_summary_validate); when
 * valid, its text read back is valid and written byte for byte the same, it is printed, advised
 * on, merged with itself and recomputed (staying valid), and the stored form (np_stored_encode)
 * decodes to the same JSON.
 */
void fuzz_check_summary(const json_t *json);

#endif
