/*
 * numaplace/common.h - conventions shared by every libnumaplace module.
 *
 * Errors: every function that can fail returns 0 (or a non-negative count) on success and a
 * negative errno on failure, like hwloc and libpfm4; np_strerror() turns the code into text.
 * Where the reason is worth more than an errno (bad input, a missing counter), the function
 * also takes a `struct np_err *` (which may be NULL) and writes a one-line message naming the
 * input and, for bad values, the accepted ones.
 *
 * Ownership: each function says whether a pointer it returns is new (the caller frees it with
 * the named destructor), borrowed (valid while its owner lives) or whether an argument is
 * stolen. Every destructor accepts NULL.
 *
 * Logging: the library does not log. Where a function has more than one thing to report
 * (a config with several bad keys), it calls the caller's sink, `struct np_log`: slurm_info in
 * the plugin, syslog in the daemon, stderr in tests. A NULL sink discards.
 */
#ifndef NUMAPLACE_COMMON_H
#define NUMAPLACE_COMMON_H

#include <stddef.h>
#include <time.h>

#if defined(__GNUC__)
#define NP_API               __attribute__((visibility("default")))
#define NP_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define NP_API
#define NP_PRINTF(fmt, args)
#endif

/** Room for one explanatory line; longer messages are cut, never overflowed. */
#define NP_ERR_MSG_MAX 1024

/** An error code with the line that explains it. Zero-initialise before use. */
struct np_err {
    int code;                 /**< negative errno, 0 when nothing failed */
    char msg[NP_ERR_MSG_MAX]; /**< one line, no trailing newline */
};

/**
 * Record an error. @p err may be NULL (then only the code is returned).
 * @return @p code, so callers can write `return np_err_set(err, -EINVAL, "...")`.
 */
NP_API int np_err_set(struct np_err *err, int code, const char *fmt, ...) NP_PRINTF(3, 4);

/** snprintf for text that may be cut (a member's path in a message, cut when long): as snprintf,
 *  but a cut is what the caller asked for, so the compiler does not warn of it. */
NP_API void np_strf(char *buf, size_t size, const char *fmt, ...) NP_PRINTF(3, 4);

/** Text for a negative errno (or 0). Borrowed, static storage. */
NP_API const char *np_strerror(int code);

enum np_log_level {
    NP_LOG_ERROR = 0,
    NP_LOG_WARNING = 1,
    NP_LOG_INFO = 2,
    NP_LOG_DEBUG = 3,
};

typedef void np_log_fn(enum np_log_level level, const char *msg, void *arg);

/** The caller's log sink. fn == NULL (or a NULL struct pointer) discards messages. */
struct np_log {
    np_log_fn *fn;
    void *arg;
};

/** Format and hand one message to @p log; @p log may be NULL. */
NP_API void np_logf(const struct np_log *log, enum np_log_level level, const char *fmt, ...)
    NP_PRINTF(3, 4);

/** Name of a level ("error", "warning", "info", "debug"). Borrowed. */
NP_API const char *np_log_level_name(enum np_log_level level);

/** clock_gettime(@p clock) in seconds: CLOCK_THREAD_CPUTIME_ID for what numaplaced spends on a
 *  job, CLOCK_REALTIME for the wall clock. */
NP_API double np_clock_s(clockid_t clock);

/** CLOCK_MONOTONIC in seconds: deadlines and durations. */
NP_API double np_monotonic_s(void);

/** Sleep @p seconds (nothing when not above 0), resumed after a signal that did not end us. */
NP_API void np_sleep_s(double seconds);

#endif /* NUMAPLACE_COMMON_H */
