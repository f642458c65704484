/* summary_checks.h - the checks the summary harnesses share (summary_checks.c). */
#ifndef NUMAPLACE_FUZZ_SUMMARY_CHECKS_H
#define NUMAPLACE_FUZZ_SUMMARY_CHECKS_H

#include <jansson.h>

/*
 * @p json (borrowed) as the command uses a stored summary: decoded to the model (np_sum_decode);
 * when that succeeds, encoded back to the same JSON (members in order, numbers by value: an
 * integer where the schema has a real comes back a real), and that encoding decoded and encoded
 * again byte for byte (the model's documented promise for what numaplace wrote), printed, advised
 * on, merged with itself and recomputed, and the stored form (np_stored_encode) decodes to the same
 * JSON.
 */
void fuzz_check_summary(const json_t *json);

#endif
