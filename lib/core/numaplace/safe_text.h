/*
 * numaplace/safe_text.h - text a user influenced (job names, users, reasons, what a task said)
 * shown on a terminal without its control characters acting: C0 controls and DEL as \xNN, the C1
 * controls a terminal obeys too (U+0080-U+009F in UTF-8) as \uNNNN. An ESC ] ... BEL sequence
 * cannot retitle the window, ESC [ 2J cannot clear the screen, CR cannot hide a line.
 */
#ifndef NUMAPLACE_SAFE_TEXT_H
#define NUMAPLACE_SAFE_TEXT_H

#include <stdio.h>

#include "numaplace/common.h"

/** Print @p s on one line: every control character escaped, newline and tab included. */
NP_API void np_print_text(FILE *out, const char *s);

/**
 * A stream that writes to @p out what it is given with control characters escaped as
 * np_print_text does, except newline and tab (the printers' own layout). New: fclose it (which
 * flushes it, not @p out); NULL when out of memory. JSON passes through unchanged in meaning:
 * jansson escapes C0 itself, and \u0080-\u009f is the same string.
 */
NP_API FILE *np_safe_text_stream(FILE *out);

#endif
