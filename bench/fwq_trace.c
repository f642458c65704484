/* fwq_trace: see fwq_trace.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fwq_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRACEFS "/sys/kernel/tracing"
#define SWITCH  "events/sched/sched_switch"

/* Where a tracefs may be mounted already (the second is debugfs's automount of it). */
static const char *const tracefs_dirs[] = {TRACEFS, "/sys/kernel/debug/tracing"};

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf;

    if (!f)
        return NULL;
    buf = calloc(1, 65536);
    if (buf) {
        size_t n = fread(buf, 1, 65535, f);
        buf[n] = '\0';
    }
    fclose(f);
    return buf;
}

/* The child of read_private: never returns. */
static void private_child(int out)
{
    const char *step = "unshare(CLONE_NEWNS)";

    signal(SIGINT, SIG_DFL); /* fwq's handler cleans up after the parent, not this child */
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    if (unshare(CLONE_NEWNS) == 0) {
        step = "making the mounts private (mount --make-rprivate /)";
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0) {
            step = "mount -t tracefs nodev " TRACEFS;
            if (mount("nodev", TRACEFS, "tracefs", 0, NULL) == 0) {
                const char *id_text = slurp(TRACEFS "/" SWITCH "/id");
                const char *format = slurp(TRACEFS "/" SWITCH "/format");
                if (id_text && format) {
                    if (write(out, id_text, strlen(id_text) + 1) < 0 ||
                        write(out, format, strlen(format)) < 0)
                        _exit(1);
                    _exit(0);
                }
                dprintf(out, "the tracefs mounted has no " SWITCH);
                _exit(1);
            }
        }
    }
    dprintf(out, "%s: %s", step, strerror(errno));
    _exit(1);
}

/*
 * No tracefs mounted: a child process takes a mount namespace of its own, mounts tracefs there
 * and sends the tracepoint's id and format back. The mount lives only in that namespace, which
 * ends with the child however it ends (an error, a signal to either process), so nothing is left
 * mounted and no other process sees a mount come and go. The perf event needs only the id.
 * @return 0 with both texts (the caller frees them), or -errno with the reason in @p why.
 */
static int read_private(char **id_text, char **format, char *why, size_t why_len)
{
    size_t cap = 131072, n = 0;
    char *buf = calloc(1, cap + 1);
    int fds[2], status = 0;
    pid_t pid;

    if (!buf || pipe2(fds, O_CLOEXEC) < 0) {
        free(buf);
        snprintf(why, why_len, "no tracefs mounted, and no pipe to mount one: %s", strerror(errno));
        return -ENOMEM;
    }
    fflush(NULL); /* the child exits with _exit, but never copy unwritten output */
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        private_child(fds[1]);
    }
    if (pid < 0)
        snprintf(buf, cap, "fork: %s", strerror(errno));
    close(fds[1]);
    while (pid > 0 && n < cap) {
        ssize_t got = read(fds[0], buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    close(fds[0]);
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        strlen(buf) >= n) {
        snprintf(why, why_len,
                 "no tracefs mounted, and mounting one in a private mount namespace failed: %s",
                 buf[0] ? buf : "the child ended without a reason");
        free(buf);
        return -ENOENT;
    }
    *format = strdup(buf + strlen(buf) + 1); /* "ID\n\0FORMAT": the id ends at the first NUL */
    if (!*format) {
        free(buf);
        snprintf(why, why_len, "out of memory for the sched_switch format");
        return -ENOMEM;
    }
    *id_text = buf;
    return 0;
}

int fwq_trace_open(struct fwq_trace *t, const int *cpus, int ncpu, size_t data_pages, char *why,
                   size_t why_len)
{
    long page = sysconf(_SC_PAGESIZE);
    char path[256], *id_text = NULL, *format = NULL;
    struct perf_event_attr attr;
    const char *dir = NULL;
    int rc = 0;

    memset(t, 0, sizeof(*t));
    for (int i = 0; i < FWQ_TRACE_MAX_CPUS; i++)
        t->fd[i] = -1;
    if (ncpu > FWQ_TRACE_MAX_CPUS) {
        snprintf(why, why_len, "more than %d job CPUs", FWQ_TRACE_MAX_CPUS);
        return -E2BIG;
    }
    for (size_t d = 0; d < sizeof(tracefs_dirs) / sizeof(tracefs_dirs[0]) && !id_text; d++) {
        snprintf(path, sizeof(path), "%s/" SWITCH "/id", tracefs_dirs[d]);
        id_text = slurp(path);
        dir = tracefs_dirs[d];
    }
    if (id_text) {
        snprintf(path, sizeof(path), "%s/" SWITCH "/format", dir);
        format = slurp(path);
        snprintf(t->tracefs, sizeof(t->tracefs), "the tracefs at %s", dir);
    } else {
        rc = read_private(&id_text, &format, why, why_len);
        if (rc < 0)
            return rc;
        snprintf(path, sizeof(path), "%s/" SWITCH "/format (mounted privately)", TRACEFS);
        snprintf(t->tracefs, sizeof(t->tracefs),
                 "a tracefs fwq mounted in a private mount namespace, gone again");
    }
    if (!format || fwq_switch_layout_parse(format, &t->layout) < 0) {
        snprintf(why, why_len, "%s: no prev_pid, next_pid and next_comm fields", path);
        rc = -EINVAL;
        goto out;
    }
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.config = strtoull(id_text, NULL, 10);
    attr.sample_period = 1;
    attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
    attr.disabled = 1;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    /* poll() says a ring is half full: the caller drains it before records are lost */
    attr.watermark = 1;
    attr.wakeup_watermark = (uint32_t)(data_pages * (size_t)page / 2);
    t->ring_bytes = (data_pages + 1) * (size_t)page;
    for (int i = 0; i < ncpu; i++) {
        t->fd[i] = (int)syscall(SYS_perf_event_open, &attr, -1, cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
        if (t->fd[i] < 0) {
            rc = -errno;
            snprintf(why, why_len, "perf_event_open(sched:sched_switch, CPU %d): %s", cpus[i],
                     strerror(errno));
            goto out;
        }
        t->ncpu = i + 1;
        t->ring[i] = mmap(NULL, t->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd[i], 0);
        if (t->ring[i] == MAP_FAILED) {
            t->ring[i] = NULL;
            rc = -errno;
            snprintf(why, why_len, "mmap of the perf ring (%zu bytes): %s", t->ring_bytes,
                     strerror(errno));
            goto out;
        }
    }
out:
    free(id_text);
    free(format);
    if (rc < 0)
        fwq_trace_close(t);
    return rc;
}

void fwq_trace_enable(struct fwq_trace *t, int on)
{
    for (int i = 0; i < t->ncpu; i++)
        ioctl(t->fd[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

static int append(struct fwq_trace *t, int i, const struct fwq_switch *sw)
{
    if (t->nev[i] == t->cap[i]) {
        size_t ncap = t->cap[i] ? t->cap[i] * 2 : 4096;
        struct fwq_switch *grown = realloc(t->ev[i], ncap * sizeof(*grown));
        if (!grown)
            return -ENOMEM;
        t->ev[i] = grown;
        t->cap[i] = ncap;
    }
    t->ev[i][t->nev[i]++] = *sw;
    return 0;
}

int fwq_trace_drain(struct fwq_trace *t, int i)
{
    struct perf_event_mmap_page *meta = t->ring[i];
    const unsigned char *data;
    uint64_t head, tail, size;
    unsigned char rec[65536];
    int rc = 0;

    if (!meta)
        return -EBADF;
    data = (const unsigned char *)meta + meta->data_offset;
    size = meta->data_size;
    head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    tail = meta->data_tail;
    while (tail < head && rc == 0) {
        struct perf_event_header hdr;
        size_t off = tail % size, first;

        /* a record may wrap around the ring's end: copy it out whole */
        first = size - off < sizeof(hdr) ? size - off : sizeof(hdr);
        memcpy(&hdr, data + off, first);
        memcpy((unsigned char *)&hdr + first, data, sizeof(hdr) - first);
        if (hdr.size < sizeof(hdr)) /* a u16: always fits rec */
            break;
        first = size - off < hdr.size ? size - off : hdr.size;
        memcpy(rec, data + off, first);
        memcpy(rec + first, data, hdr.size - first);
        tail += hdr.size;
        if (hdr.type == PERF_RECORD_LOST && hdr.size >= sizeof(hdr) + 16) {
            uint64_t n;
            memcpy(&n, rec + sizeof(hdr) + 8, 8);
            t->lost += n;
        } else if (hdr.type == PERF_RECORD_SAMPLE && hdr.size >= sizeof(hdr) + 12) {
            uint64_t time;
            uint32_t raw_size;
            struct fwq_switch sw;
            memcpy(&time, rec + sizeof(hdr), 8);
            memcpy(&raw_size, rec + sizeof(hdr) + 8, 4);
            if (sizeof(hdr) + 12 + raw_size <= hdr.size &&
                fwq_switch_decode(rec + sizeof(hdr) + 12, raw_size, &t->layout, time, &sw) == 0)
                rc = append(t, i, &sw);
        }
    }
    __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
    return rc;
}

void fwq_trace_clear(struct fwq_trace *t)
{
    for (int i = 0; i < FWQ_TRACE_MAX_CPUS; i++)
        t->nev[i] = 0;
    t->lost = 0;
}

void fwq_trace_close(struct fwq_trace *t)
{
    for (int i = 0; i < t->ncpu; i++) {
        if (t->ring[i])
            munmap(t->ring[i], t->ring_bytes);
        if (t->fd[i] >= 0)
            close(t->fd[i]);
        t->ring[i] = NULL;
        t->fd[i] = -1;
    }
    for (int i = 0; i < FWQ_TRACE_MAX_CPUS; i++) {
        free(t->ev[i]);
        t->ev[i] = NULL;
        t->nev[i] = t->cap[i] = 0;
    }
    t->ncpu = 0;
}
