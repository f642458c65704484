/*
 * numaplace/codec.h - the stored form of a job summary in Slurm's AdminComment.
 *
 * "NPS1:" + base64(zlib(compact JSON)), the way Princeton's jobstats stores "JS1:" summaries:
 * prefixed so other tools' comments are recognised and left alone, versioned by the prefix,
 * compressed because accounting keeps it for every job.
 */
#ifndef NUMAPLACE_CODEC_H
#define NUMAPLACE_CODEC_H

#include <stddef.h>

#include <jansson.h>

#include "numaplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NP_STORED_PREFIX "NPS1:"

/**
 * Encode @p summary (borrowed).
 * @param out receives a new NUL-terminated string (free with free())
 * @return its length, or -ENOMEM / -EINVAL (not serialisable) with @p err
 */
NP_API long np_stored_encode(const json_t *summary, char **out, struct np_err *err);

/**
 * Decode a stored summary. Leading/trailing white space is ignored.
 * @param out receives a new reference (json_decref it)
 * @return 0; -ENOMSG when @p text is not a numaplace summary (no prefix: e.g. another tool's
 *         AdminComment); -EPROTO for an unknown version; -EBADMSG for corrupt base64, zlib or
 *         JSON, each with @p err saying what was wrong and where
 */
NP_API int np_stored_decode(const char *text, json_t **out, struct np_err *err);

#ifdef __cplusplus
}
#endif

#endif /* NUMAPLACE_CODEC_H */
