/* Memory-controller PMUs as libpfm4 names them, and counting them system-wide. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfmon/pfmlib.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <hwloc.h>

#include "numaplace/perf.h"
#include "numaplace/cpulist.h"

/* Socket or channel 0 of each family: the others differ only in the index. Intel's CAS counts
 * are one 64 B line each (the thesis read the same counters with pcm-memory). */
static const struct np_uncore_pmu pmus[] = {
    {"snbep_unc_imc0", "Sandy Bridge-EP", "snbep_unc_imc0::UNC_M_CAS_COUNT:RD",
     "snbep_unc_imc0::UNC_M_CAS_COUNT:WR"},
    {"ivbep_unc_imc0", "Ivy Bridge-EP", "ivbep_unc_imc0::UNC_M_CAS_COUNT:RD",
     "ivbep_unc_imc0::UNC_M_CAS_COUNT:WR"},
    {"hswep_unc_imc0", "Haswell-EP", "hswep_unc_imc0::UNC_M_CAS_COUNT:RD",
     "hswep_unc_imc0::UNC_M_CAS_COUNT:WR"},
    {"bdx_unc_imc0", "Broadwell-X", "bdx_unc_imc0::UNC_M_CAS_COUNT:RD",
     "bdx_unc_imc0::UNC_M_CAS_COUNT:WR"},
    {"skx_unc_imc0", "Skylake-X", "skx_unc_imc0::UNC_M_CAS_COUNT:RD",
     "skx_unc_imc0::UNC_M_CAS_COUNT:WR"},
};
#define NPMUS (sizeof(pmus) / sizeof(pmus[0]))

/* Intel's IMC PMUs exist on x86 machines only, and libpfm4 builds its tables of them only for
 * x86: elsewhere there is nothing to detect or encode, and the reason is the architecture. */
#if !defined(__x86_64__) && !defined(__i386__)
#if defined(__aarch64__)
#define THIS_ARCH "arm64"
#else
#define THIS_ARCH "an architecture other than x86"
#endif
#define NOT_X86                                                                                    \
    "numaplace counts memory controllers through Intel's IMC PMUs, which x86 machines alone "      \
    "have; this build is for " THIS_ARCH
#endif

const struct np_uncore_pmu *np_uncore_pmu_at(size_t i)
{
    return i < NPMUS ? &pmus[i] : NULL;
}

#ifndef NOT_X86
static int encode_one(const char *event, uint64_t *code, struct np_err *err)
{
    uint64_t *codes = NULL;
    int count = 0;
    const int rc = pfm_get_event_encoding(event, PFM_PLM0 | PFM_PLM3, NULL, NULL, &codes, &count);

    if (rc != PFM_SUCCESS || count < 1) {
        free(codes);
        return np_err_set(err,
                          rc == PFM_ERR_NOTFOUND  ? -ENOENT
                          : rc == PFM_ERR_NOTSUPP ? -EOPNOTSUPP
                                                  : -EINVAL,
                          "uncore event %s: libpfm4: %s (its PMU is neither detected here nor "
                          "forced with LIBPFM_FORCE_PMU)",
                          event, rc != PFM_SUCCESS ? pfm_strerror(rc) : "no code");
    }
    *code = codes[0];
    free(codes);
    return 0;
}
#endif

int np_uncore_encode(const struct np_uncore_pmu *p, uint64_t *read_code, uint64_t *write_code,
                     struct np_err *err)
{
#ifdef NOT_X86
    (void)read_code;
    (void)write_code;
    return np_err_set(err, -EOPNOTSUPP, "uncore event %s: %s", p->read_event, NOT_X86);
#else
    int rc = np_perf_init(err);

    if (rc < 0)
        return rc;
    rc = encode_one(p->read_event, read_code, err);
    return rc < 0 ? rc : encode_one(p->write_event, write_code, err);
#endif
}

const struct np_uncore_pmu *np_uncore_detect(char *why, size_t why_len)
{
#ifdef NOT_X86
    snprintf(why, why_len, "unavailable: no uncore memory-controller PMU (%s)", NOT_X86);
    return NULL;
#else
    struct np_err err = {0};

    if (np_perf_init(&err) < 0) {
        snprintf(why, why_len, "unavailable: no uncore memory-controller PMU (%s)", err.msg);
        return NULL;
    }
    for (int p = 0; p < PFM_PMU_MAX; p++) {
        pfm_pmu_info_t info;

        memset(&info, 0, sizeof(info));
        info.size = sizeof(info);
        if (pfm_get_pmu_info((pfm_pmu_t)p, &info) != PFM_SUCCESS || !info.is_present)
            continue;
        for (size_t i = 0; i < NPMUS; i++)
            if (strcmp(info.name, pmus[i].pmu) == 0)
                return &pmus[i];
    }
    snprintf(why, why_len,
             "unavailable: no uncore memory-controller PMU (libpfm4 detects none of its Intel "
             "IMC PMUs here; it has no AMD UMC or DF PMU)");
    return NULL;
#endif
}

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
