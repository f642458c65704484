/* numaplaced's context: set up, torn down, and the small file helpers its parts share. */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "log.h"
#include "registry.h"
#include "report_hold.h"
#include "sampling.h"
#include "server.h"
#include "uncore_bw.h"
#include "writer.h"

void np_daemon_init(struct np_daemon *d)
{
    memset(d, 0, sizeof(*d));
    np_helper_config_defaults(&d->cfg);
    d->cfg.log_level = NP_LOG_INFO;
    d->log.fn = log_sink;
    d->log.arg = d;
    d->listen_fd = d->timer_fd = d->signal_fd = d->pid_fd = -1;
    for (int i = 0; i < NPD_MAX_CLIENTS; i++)
        d->clients[i].fd = -1;
    registry_init(&d->registry);
    d->started_cpus = hwloc_bitmap_alloc(); /* NULL (out of memory): the helper is not pinned */
    d->helper_cpus = hwloc_bitmap_alloc();
    snprintf(d->hw_off_reason, sizeof(d->hw_off_reason), "not probed yet");
}

void np_daemon_stop_writer(struct np_daemon *d)
{
    struct writer *w = d->writer;

    if (!w)
        return;
    /* Detached first: a save its completions start (a step forgotten, the journal past its
     * bound) is written here and now, not queued to a writer that no longer runs. */
    d->writer = NULL;
    writer_stop(w);
    writer_collect(w, d);
    writer_free(w);
}

void np_daemon_fini(struct np_daemon *d)
{
    np_daemon_stop_writer(d); /* its completions need the registry and the clients */
    registry_fini(&d->registry);
    uncore_bw_stop(d);
    report_hold_fini(d);
    server_close(d);
    http_stop(d);
    if (d->pid_fd >= 0) {
        unlink(d->cfg.pid_file);
        close(d->pid_fd);
        d->pid_fd = -1;
    }
    if (d->trace)
        fclose(d->trace);
    d->trace = NULL;
    if (d->signal_fd >= 0)
        close(d->signal_fd);
    if (d->timer_fd >= 0)
        close(d->timer_fd);
    d->signal_fd = d->timer_fd = -1;
    np_node_counters_fini(&d->counters);
    sampling_close_meminfo(d);
    np_topology_free(d->topology);
    d->topology = NULL;
    hwloc_bitmap_free(d->started_cpus);
    hwloc_bitmap_free(d->helper_cpus);
    d->started_cpus = d->helper_cpus = NULL;
    free(d->cpu_node);
    d->cpu_node = NULL;
    for (unsigned i = 0; i < d->noverrides; i++) {
        free(d->overrides[i][0]);
        free(d->overrides[i][1]);
    }
    d->noverrides = 0;
}

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
    if ((rc = np_daemon_mkdir_p(dir, 0755)) < 0) {
        NPD_LOG(d, ERROR, "cannot create %s: %s", dir, strerror(-rc));
        return rc;
    }
    d->pid_fd = open(d->cfg.pid_file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (d->pid_fd < 0 || flock(d->pid_fd, LOCK_EX | LOCK_NB) < 0) {
        rc = -errno;
        NPD_LOG(d, ERROR, "pid file %s: %s%s", d->cfg.pid_file, strerror(errno),
                errno == EWOULDBLOCK ? " (another numaplaced holds it)" : "");
        return rc;
    }
    snprintf(text, sizeof(text), "%d\n", (int)getpid());
    if (ftruncate(d->pid_fd, 0) < 0 || write(d->pid_fd, text, strlen(text)) < 0)
        NPD_LOG(d, WARNING, "pid file %s: %s", d->cfg.pid_file, strerror(errno));
    return 0;
}

double np_daemon_thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double np_daemon_epoch_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
