/* writer.h - durable writes off the loop (a registration must not wait for an fsync), in order on
 * a thread that sees only bytes and a path; the loop polls writer_fd and runs the completions. */
#ifndef NUMAPLACED_WRITER_H
#define NUMAPLACED_WRITER_H

#include <stddef.h>
#include <sys/types.h>

#include "numaplace/common.h"

struct writer;

/** One file to write, and what to do once it is written (or not). */
struct writer_job {
    struct writer_job *next; /**< the queue's */
    char dir[1024];          /**< a trusted directory (safe_dir_open) */
    char name[256];
    char *data; /**< owned (freed with the job); a completion may take it (set NULL) */
    size_t len;
    uid_t reader; /**< safe_write_at's (-1: none) */
    mode_t mode;
    /** On the loop thread, from writer_collect: @p ctx is writer_collect's. */
    void (*done)(void *ctx, struct writer_job *job);
    void *arg;         /**< the completion's (borrowed) */
    int rc;            /**< the outcome: safe_write's return */
    struct np_err err; /**< why, when rc < 0 */
};

/** A job for @p name in @p dir, @p data stolen. @return NULL (@p data freed) on failure */
struct writer_job *writer_job_new(const char *dir, const char *name, char *data, size_t len,
                                  uid_t reader, mode_t mode,
                                  void (*done)(void *ctx, struct writer_job *job), void *arg);

/** Start the thread. @return 0 or -errno (then *@p out is NULL) */
int writer_start(struct writer **out);

/** The eventfd the loop polls: readable when jobs are done. */
int writer_fd(const struct writer *w);

/** Queue @p job (stolen). Never blocks on the disk. */
void writer_submit(struct writer *w, struct writer_job *job);

/** Queue @p job (stolen) on @p w; with none, write it and run its completion here, with @p ctx. */
void writer_run(struct writer *w, struct writer_job *job, void *ctx);

/** Jobs queued or being written, not yet collected. */
unsigned writer_pending(struct writer *w);

/** On the loop thread: every done job's completion, in order; frees them. @return how many */
unsigned writer_collect(struct writer *w, void *ctx);

/** Write everything queued, then end the thread (completions still to collect). Idempotent. */
void writer_stop(struct writer *w);

/** writer_stop, then free what is left (uncollected jobs without their completion). NULL ok. */
void writer_free(struct writer *w);

/** Tests only: @p hook runs on the writer's thread before each write (to hold a write back). */
void writer_set_hook(struct writer *w, void (*hook)(void *arg, const struct writer_job *job),
                     void *arg);

#endif /* NUMAPLACED_WRITER_H */
