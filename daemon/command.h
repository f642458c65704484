/* command.h - run a program without a shell, for a bounded time, and keep its output. */
#ifndef NUMAPLACED_COMMAND_H
#define NUMAPLACED_COMMAND_H

#include <stddef.h>

#include "numaplace/common.h"

/**
 * Run argv[0] (found on PATH) with @p argv, stdin and stderr on /dev/null, its signal mask and
 * dispositions reset; keep the first @p size - 1 bytes of its stdout in @p out (NUL-terminated;
 * the rest is read and dropped). Past @p timeout_ms it is killed.
 * @return its exit status (0-255; 128+N when killed by signal N), or -errno with @p err
 *         (-ETIMEDOUT when it ran too long)
 */
int command_run(char *const argv[], int timeout_ms, char *out, size_t size, struct np_err *err);

#endif /* NUMAPLACED_COMMAND_H */
