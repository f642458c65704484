/* The small helpers numaplaced's parts share, and its log sink (daemon.h). */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <syslog.h>

int np_daemon_mkdir_p(const char *path, mode_t mode)
{
    char tmp[1024];

    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    if (mkdir(tmp, mode) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

void np_daemon_dirname(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, size, "%.*s", slash && slash != path ? (int)(slash - path) : 1, path);
}

int np_daemon_write_pid_file(struct np_daemon *d)
{
    char dir[1024], text[32];
    int rc;

    if (!d->cfg.pid_file[0])
        return 0;
    np_daemon_dirname(d->cfg.pid_file, dir, sizeof(dir));
    if ((rc = np_daemon_mkdir_p(dir, 0755)) < 0)
        return NPD_LOG_RC(d, ERROR, rc, "cannot create %s: %s", dir, strerror(-rc));
    d->pid_fd = open(d->cfg.pid_file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (d->pid_fd < 0 || flock(d->pid_fd, LOCK_EX | LOCK_NB) < 0) {
        rc = -errno;
        return NPD_LOG_RC(d, ERROR, rc, "pid file %s: %s%s", d->cfg.pid_file, strerror(errno),
                          errno == EWOULDBLOCK ? " (another numaplaced holds it)" : "");
    }
    snprintf(text, sizeof(text), "%d\n", (int)getpid());
    if (ftruncate(d->pid_fd, 0) < 0 || write(d->pid_fd, text, strlen(text)) < 0)
        NPD_LOG(d, WARNING, "pid file %s: %s", d->cfg.pid_file, strerror(errno));
    return 0;
}

/* accept_shed: the spare descriptor (daemon.h) */
static int spare = -1;
static unsigned long shed;

int accept_shed_init(void)
{
    if (spare < 0)
        spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return spare < 0 ? -errno : 0;
}

int accept_shed(int listen_fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    int fd = accept4(listen_fd, addr, len, flags);

    if (fd >= 0 || (errno != EMFILE && errno != ENFILE))
        return fd;
    if (spare >= 0) {
        close(spare);
        spare = -1;
    }
    fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        shed++;
    }
    accept_shed_init();
    errno = EMFILE;
    return -1;
}

unsigned long accept_shed_count(void)
{
    return shed;
}

/* ---- the log sink ---- */

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
