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

#define NP_STORED_PREFIX "NPS1:"

/*
 * What a stored summary may decode to (docs/summary-schema.md, "Decoding limits"). Its stored
 * text is at most 65,535 bytes (slurmdbd's TEXT column; numaplace writes at most 60,000), so
 * about 45 kB of zlib. A summary's JSON compresses 2.6-3.6x (measured on the suite's summaries;
 * a many-node one with repeated keys perhaps 10x): at most ~450 kB. Its values average 20-25
 * bytes; its deepest path (nodes.N.timeline.events[i].t) is 6 levels; its longest arrays are a
 * job's node names (`missing_nodes`) and a node's `steps`. A comment past any of these is not a
 * summary numaplace wrote and is refused as corrupt before jansson builds it, so decoding costs a
 * small multiple of the decoded size (values x about 50 bytes: at most ~13x).
 */
#define NP_STORED_MAX_JSON_BYTES      (1u << 20) /* twice the ~450 kB an honest one can reach */
#define NP_STORED_MAX_VALUES          131072     /* 1 MiB at 8 bytes a value */
#define NP_STORED_MIN_BYTES_PER_VALUE 4          /* "0," is 2: only a crafted text packs them */
#define NP_STORED_MAX_DEPTH           16         /* 6 used */
#define NP_STORED_MAX_MEMBERS         16384      /* node names of a 16,384-node job */

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
 *         JSON, or JSON past the NP_STORED_MAX_* limits, each with @p err saying what was wrong
 *         and where
 */
NP_API int np_stored_decode(const char *text, json_t **out, struct np_err *err);

#endif /* NUMAPLACE_CODEC_H */
