/* Counting the memory controllers system-wide (see numaplace/uncore.h). */
#include "numaplace/uncore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <hwloc.h>

#include "numaplace/cpulist.h"

#define BOX_MAX    1024          /* sockets x channels: far above any machine */
#define CAS_BYTES  64.0          /* one CAS moves one 64 B line */
#define IMC_PREFIX "uncore_imc_" /* the kernel's name; libpfm4's is snbep_unc_imc<N> etc. */

/* A small sysfs file's first line, trimmed; false when unreadable or empty. */
static bool read_line(const char *dir, const char *name, char *out, size_t len)
{
    char path[PATH_MAX];
    FILE *f;
    bool ok;

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
        !(f = fopen(path, "re")))
        return false;
    ok = fgets(out, (int)len, f) != NULL;
    fclose(f);
    if (ok)
        out[strcspn(out, "\n")] = '\0';
    return ok && *out;
}

static int open_counter(uint32_t type, uint64_t config, unsigned cpu)
{
    struct perf_event_attr attr;

    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = type;
    attr.config = config;
    /* System-wide on one CPU of the socket: an uncore PMU counts no task. */
    return (int)syscall(SYS_perf_event_open, &attr, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int add_box(struct np_uncore_reader *r, const char *pmu, uint32_t type, unsigned cpu,
                   const uint64_t config[2], struct np_err *err)
{
    struct np_uncore_box *b;

    if (r->nboxes == BOX_MAX)
        return np_err_set(err, -E2BIG, "more than %d memory-controller counters", BOX_MAX);
    b = &r->boxes[r->nboxes];
    memset(b, 0, sizeof(*b));
    snprintf(b->pmu, sizeof(b->pmu), "%s", pmu);
    b->cpu = cpu;
    b->bytes_per_s = -1;
    for (int i = 0; i < 2; i++) {
        b->fd[i] = open_counter(type, config[i], cpu);
        if (b->fd[i] < 0) {
            const int e = errno;
            if (i)
                close(b->fd[0]);
            return np_err_set(err, -e, "%s on CPU %u: perf_event_open: %s%s", pmu, cpu, strerror(e),
                              e == EACCES || e == EPERM
                                  ? " (system-wide counters need root or perf_event_paranoid <= 0)"
                                  : "");
        }
    }
    r->nboxes++;
    return 0;
}

/* One uncore_imc_<N> directory: its type and the CPUs (one per socket) to count on. */
static int open_pmu(struct np_uncore_reader *r, const char *dir, const char *pmu,
                    const uint64_t config[2], struct np_err *err)
{
    char text[256];
    char *end;
    unsigned long type;
    hwloc_bitmap_t cpus;
    int cpu, rc = 0;

    if (!read_line(dir, "type", text, sizeof(text)))
        return np_err_set(err, -ENOENT, "%s/type: unreadable", dir);
    errno = 0;
    type = strtoul(text, &end, 10);
    if (errno || *end || end == text || type > UINT32_MAX)
        return np_err_set(err, -EINVAL, "%s/type: \"%s\" is not a PMU type number", dir, text);
    if (!read_line(dir, "cpumask", text, sizeof(text)) || !np_cpu_list_bounded(text))
        return np_err_set(err, -EINVAL, "%s/cpumask: missing or not a CPU list", dir);
    if (!(cpus = hwloc_bitmap_alloc()))
        return np_err_set(err, -ENOMEM, "out of memory");
    if (hwloc_bitmap_list_sscanf(cpus, text) < 0 || hwloc_bitmap_iszero(cpus))
        rc = np_err_set(err, -EINVAL, "%s/cpumask: \"%s\" is not a CPU list", dir, text);
    hwloc_bitmap_foreach_begin(cpu, cpus)
    {
        if (rc == 0)
            rc = add_box(r, pmu, (uint32_t)type, (unsigned)cpu, config, err);
    }
    hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(cpus);
    return rc;
}

int np_uncore_open(struct np_uncore_reader *r, const char *sys_root, uint64_t read_config,
                   uint64_t write_config, struct np_err *err)
{
    const uint64_t config[2] = {read_config, write_config};
    struct np_err local = {0};
    char devices[PATH_MAX];
    struct dirent *e;
    DIR *dir;
    int rc = 0;

    memset(r, 0, sizeof(*r));
    if (!err)
        err = &local;
    snprintf(devices, sizeof(devices), "%s/bus/event_source/devices", sys_root);
    r->boxes = calloc(BOX_MAX, sizeof(*r->boxes));
    if (!r->boxes) {
        rc = np_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    if (!(dir = opendir(devices))) {
        rc = np_err_set(err, -errno, "%s: %s", devices, strerror(errno));
        goto out;
    }
    while (rc == 0 && (e = readdir(dir))) {
        const char *n = e->d_name;
        char pmu_dir[PATH_MAX];

        /* uncore_imc_<digits> only: the free-running client PMUs count differently. */
        if (strncmp(n, IMC_PREFIX, strlen(IMC_PREFIX)) != 0)
            continue;
        n += strlen(IMC_PREFIX);
        if (!*n || n[strspn(n, "0123456789")] != '\0' ||
            strlen(e->d_name) >= sizeof(r->boxes->pmu) ||
            snprintf(pmu_dir, sizeof(pmu_dir), "%s/%s", devices, e->d_name) >= (int)sizeof(pmu_dir))
            continue;
        rc = open_pmu(r, pmu_dir, e->d_name, config, err);
    }
    closedir(dir);
    if (rc == 0 && r->nboxes == 0)
        rc = np_err_set(err, -ENOENT, "no %s<N> PMU in %s", IMC_PREFIX, devices);
out:
    if (rc < 0) {
        snprintf(r->why, sizeof(r->why), "unavailable: %.240s", err->msg);
        np_uncore_close(r);
        return rc;
    }
    return (int)r->nboxes;
}

int np_uncore_sample(struct np_uncore_reader *r, double now_s)
{
    int rated = 0;

    for (size_t i = 0; i < r->nboxes; i++) {
        struct np_uncore_box *b = &r->boxes[i];
        uint64_t now[2];

        for (int k = 0; k < 2; k++) {
            const ssize_t got = read(b->fd[k], &now[k], sizeof(now[k]));
            if (got != (ssize_t)sizeof(now[k]))
                return got < 0 ? -errno : -EIO; /* a short read sets no errno */
        }
        if (b->last_t > 0 && now_s > b->last_t) {
            /* Unsigned differences: a counter that wrapped still gives the right delta. */
            const uint64_t lines = (now[0] - b->last[0]) + (now[1] - b->last[1]);
            b->bytes_per_s = (double)lines * CAS_BYTES / (now_s - b->last_t);
            b->interval_bytes = lines * (uint64_t)CAS_BYTES;
            rated++;
        } else {
            b->interval_bytes = 0;
        }
        memcpy(b->last, now, sizeof(now));
        b->last_t = now_s;
    }
    return rated;
}

void np_uncore_close(struct np_uncore_reader *r)
{
    for (size_t i = 0; i < r->nboxes; i++)
        for (int k = 0; k < 2; k++)
            close(r->boxes[i].fd[k]);
    free(r->boxes);
    r->boxes = NULL;
    r->nboxes = 0;
}
