/* Error and log plumbing shared by every module (see numaplace/common.h). */
#include "numaplace/common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int np_err_set(struct np_err *err, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    if (err) {
        err->code = code;
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    }
    va_end(ap);
    return code;
}

void np_strf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

const char *np_strerror(int code)
{
    if (code == 0)
        return "success";
    /* strerrordesc_np is thread-safe and returns static text (glibc >= 2.32). */
    const char *text = strerrordesc_np(code < 0 ? -code : code);
    return text ? text : "unknown error";
}

void np_logf(const struct np_log *log, enum np_log_level level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    if (!log || !log->fn)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    log->fn(level, line, log->arg);
}

const char *np_log_level_name(enum np_log_level level)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};

    return (unsigned)level <= NP_LOG_DEBUG ? names[level] : "unknown";
}

double np_clock_s(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double np_monotonic_s(void)
{
    return np_clock_s(CLOCK_MONOTONIC);
}

void np_sleep_s(double seconds)
{
    struct timespec left = {.tv_sec = (time_t)seconds};

    if (!(seconds > 0))
        return;
    left.tv_nsec = (long)((seconds - (double)left.tv_sec) * 1e9);
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
}
