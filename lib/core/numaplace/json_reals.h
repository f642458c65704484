/* How numaplace writes JSON reals. */
#ifndef NUMAPLACE_JSON_REALS_H
#define NUMAPLACE_JSON_REALS_H

#include <jansson.h>

/* 17 significant digits, as printf's %.17g. jansson before 2.15 writes that by default; 2.15
 * (Debian unstable) writes the shortest text that reads back the same number. Asked for 17
 * digits, both write the same bytes (but for reals from 1e16 to 1e17), so a summary's stored
 * size, and what np_summary_fit trims to fit AdminComment, do not depend on the node's jansson. */
#define NP_JSON_REALS JSON_REAL_PRECISION(17)

#endif /* NUMAPLACE_JSON_REALS_H */
