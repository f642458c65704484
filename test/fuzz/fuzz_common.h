/*
 * fuzz_common.h - what the libFuzzer harnesses share: a NUL-terminated copy of the input, a
 * per-process scratch root for the readers that take a filesystem root, and an output sink.
 *
 * Each harness calls the project's own parsing code; these helpers only carry bytes to it.
 */
#ifndef NUMAPLACE_FUZZ_COMMON_H
#define NUMAPLACE_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Abort with a message: the fuzzer records the input as a crash. */
#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fuzz_fail(__FILE__, __LINE__, #cond);                                                  \
    } while (0)

__attribute__((noreturn)) void fuzz_fail(const char *file, int line, const char *what);

/* A new NUL-terminated copy of @p data (free()). Embedded NULs stay: C readers stop there. */
char *fuzz_strndup(const uint8_t *data, size_t size);

/* This process's scratch root (created on first use, removed at exit): "<tmp>/numaplace-fuzz.X". */
const char *fuzz_root(void);

/* Write @p data to @p relpath under fuzz_root(), creating its directories. Its full path is
 * returned (static buffer). Aborts if the write fails: that is the harness's fault, not input's. */
const char *fuzz_write(const char *relpath, const uint8_t *data, size_t size);

/* A stream that discards what is printed (opened once). */
FILE *fuzz_devnull(void);

#endif /* NUMAPLACE_FUZZ_COMMON_H */
