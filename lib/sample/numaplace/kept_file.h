/*
 * numaplace/kept_file.h - a node-wide /proc file (/proc/stat, /proc/interrupts, a sysctl) kept
 * open between intervals and read again from offset 0 with pread: the kernel regenerates it at
 * each read, and the open(2), close(2) and stdio set-up each time cost more than some of these
 * files' text. The text is handed to the file's usual parser as a stdio stream (fmemopen), so a
 * kept read parses exactly as a fresh one.
 * Ownership: the kept file owns its descriptor and text; np_kept_file_close frees both.
 */
#ifndef NUMAPLACE_KEPT_FILE_H
#define NUMAPLACE_KEPT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "numaplace/common.h"

/** A zeroed one is closed (np_kept_file_init is the same). */
struct np_kept_file {
    bool open; /**< fd is ours */
    int fd;
    char *path; /**< owned: the file fd reads (another path given opens that one) */
    char *text; /**< owned: the last reading, NUL-terminated */
    size_t cap;
};

/** Nothing open yet. */
NP_API void np_kept_file_init(struct np_kept_file *k);

/** Close and free; the file is opened again at the next read. Accepts NULL. */
NP_API void np_kept_file_close(struct np_kept_file *k);

/**
 * The whole of @p path as read now, as a stream the caller fcloses: through the kept descriptor
 * (opened on first use; a failed read is retried once on a fresh one), or, with @p k NULL or an
 * empty reading, fopen(@p path) as before.
 * @return the stream, or NULL with errno set (as fopen)
 */
NP_API FILE *np_kept_file_open(struct np_kept_file *k, const char *path);

#endif /* NUMAPLACE_KEPT_FILE_H */
