/* numaplaced's log sink (daemon.h). */

#include <errno.h>
#include <string.h>
#include <syslog.h>

#include "daemon.h"

void log_escape(const char *msg, char *out, size_t size)
{
    size_t o = 0;

    for (const unsigned char *p = (const unsigned char *)msg; *p && o + 5 < size; p++) {
        if (*p < 0x20 || *p == 0x7f)
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", *p);
        else
            out[o++] = (char)*p;
    }
    out[o] = '\0';
}

void log_sink(enum np_log_level level, const char *raw, void *arg)
{
    static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
    const struct np_daemon *d = arg;
    char msg[4 * NP_ERR_MSG_MAX];

    if ((int)level > d->cfg.log_level)
        return;
    log_escape(raw, msg, sizeof(msg));
    if (d->use_syslog) {
        syslog(prio[level], "%s", msg);
    } else {
        FILE *out = d->logfile ? d->logfile : stderr;
        struct timespec ts;
        struct tm tm;
        char when[32];
        clock_gettime(CLOCK_REALTIME, &ts);
        localtime_r(&ts.tv_sec, &tm);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
        fprintf(out, "%s.%03ld numaplaced: %s: %s\n", when, ts.tv_nsec / 1000000,
                np_log_level_name(level), msg);
        fflush(out);
    }
}

int log_open(struct np_daemon *d)
{
    log_close(d);
    d->use_syslog = strcmp(d->cfg.log, "syslog") == 0;
    if (d->use_syslog) {
        openlog("numaplaced", LOG_PID, LOG_DAEMON);
    } else if (strcmp(d->cfg.log, "stderr") != 0) {
        d->logfile = fopen(d->cfg.log, "ae");
        if (!d->logfile) {
            const int e = errno;
            fprintf(stderr, "numaplaced: cannot open log %s: %s\n", d->cfg.log, strerror(e));
            return -e;
        }
    }
    d->log.fn = log_sink;
    d->log.arg = d;
    return 0;
}

void log_close(struct np_daemon *d)
{
    if (d->logfile) {
        fclose(d->logfile);
        d->logfile = NULL;
    }
}
