/* perf_event counters encoded by libpfm4, and the memory controllers' uncore PMUs counted
 * system-wide (see numaplace/perf.h). */
#include "numaplace/perf.h"
#include "numaplace/cpulist.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <hwloc.h>
#include <perfmon/pfmlib.h>
#include <perfmon/pfmlib_perf_event.h>

/* libpfm4 is initialised and every event encoded once: the encodings do not change while the
 * process lives, and doing it under pthread_once keeps np_perf_open() thread-safe without
 * relying on libpfm4's own locking. */
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_rc;
static char pfm_msg[NP_ERR_MSG_MAX];
static struct perf_event_attr pfm_attr[NP_PERF_NEVENTS];
static int pfm_flags[NP_PERF_NEVENTS];
static char pfm_encode_error[NP_PERF_NEVENTS][NP_PERF_REASON_MAX]; /* "" when encoded */

static int pfm_errno(int pfm_code)
{
    switch (pfm_code) {
    case PFM_ERR_NOMEM:
        return -ENOMEM;
    case PFM_ERR_NOTSUPP:
        return -EOPNOTSUPP;
    case PFM_ERR_NOTFOUND:
        return -ENOENT;
    case PFM_ERR_NOINIT:
        return -ENODEV;
    default:
        return -EINVAL;
    }
}

static void pfm_setup(void)
{
    const int rc = pfm_initialize();

    if (rc != PFM_SUCCESS) {
        pfm_rc = pfm_errno(rc);
        snprintf(pfm_msg, sizeof(pfm_msg), "libpfm4 cannot initialise: pfm_initialize: %s",
                 pfm_strerror(rc));
        return;
    }
    for (int e = 0; e < NP_PERF_NEVENTS; e++) {
        pfm_perf_encode_arg_t arg;
        int erc;

        memset(&arg, 0, sizeof(arg));
        arg.attr = &pfm_attr[e];
        arg.size = sizeof(arg);
        /* PLM0|PLM3: kernel and user time both belong to the job. */
        erc = pfm_get_os_event_encoding(np_perf_event_name((enum np_perf_event)e),
                                        PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
        if (erc != PFM_SUCCESS)
            snprintf(pfm_encode_error[e], sizeof(pfm_encode_error[e]),
                     "%s: pfm_get_os_event_encoding: %s", np_perf_event_name((enum np_perf_event)e),
                     pfm_strerror(erc));
        else
            pfm_flags[e] = arg.flags;
    }
}

int np_perf_init(struct np_err *err)
{
    pthread_once(&pfm_once, pfm_setup);
    return pfm_rc ? np_err_set(err, pfm_rc, "%s", pfm_msg) : 0;
}

void np_perf_counters_init(struct np_perf_counters *c)
{
    memset(c, 0, sizeof(*c));
    for (int e = 0; e < NP_PERF_NEVENTS; e++)
        c->fd[e] = -1;
}

static void close_all(struct np_perf_counters *c, const char *why)
{
    for (int e = 0; e < NP_PERF_NEVENTS; e++) {
        if (c->fd[e] < 0)
            continue;
        close(c->fd[e]);
        c->fd[e] = -1;
        snprintf(c->reason[e], sizeof(c->reason[e]), "%s", why);
    }
}

/* Give every requested event the same reason, for the calls that fail as a whole. */
static NP_PRINTF(4, 5) void requested_reason(struct np_perf_counters *c, unsigned mask,
                                             enum np_perf_why why, const char *fmt, ...)
{
    for (int e = 0; e < NP_PERF_NEVENTS; e++) {
        va_list ap;

        if (!(mask & (1u << e)))
            continue;
        c->why[e] = why;
        va_start(ap, fmt);
        vsnprintf(c->reason[e], sizeof(c->reason[e]), fmt, ap);
        va_end(ap);
    }
}

static const char *const why_names[NP_PERF_WHY_COUNT] = {
    [NP_PERF_WHY_NONE] = "none",
    [NP_PERF_WHY_NOT_PROBED] = "not_probed",
    [NP_PERF_WHY_PERF_OFF] = "perf_off",
    [NP_PERF_WHY_LIBPFM] = "libpfm_unavailable",
    [NP_PERF_WHY_EVENT_UNKNOWN] = "event_unknown",
    [NP_PERF_WHY_NO_PMU] = "no_pmu",
    [NP_PERF_WHY_EVENT_UNSUPPORTED] = "event_unsupported",
    [NP_PERF_WHY_PARANOID] = "perf_paranoid",
    [NP_PERF_WHY_OUT_OF_FDS] = "out_of_fds",
    [NP_PERF_WHY_PROCESS_GONE] = "process_gone",
    [NP_PERF_WHY_OTHER] = "other",
};

const char *np_perf_why_name(enum np_perf_why w)
{
    return (unsigned)w < NP_PERF_WHY_COUNT ? why_names[w] : NULL;
}

/* What an errno of perf_event_open() usually means, so the report says what to change (""
 * when nothing useful), and as a code into *@p why. */
static const char *open_hint(enum np_perf_event ev, int e, bool pmu_counts, enum np_perf_why *why)
{
    const bool hardware = (NP_PERF_HARDWARE_MASK >> ev) & 1u;

    *why = NP_PERF_WHY_OTHER;
    switch (e) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
        if (!hardware)
            return "";
        /* With cycles counting, the PMU is there but lacks this generic event. */
        *why = pmu_counts ? NP_PERF_WHY_EVENT_UNSUPPORTED : NP_PERF_WHY_NO_PMU;
        return pmu_counts ? "the hardware PMU does not provide this generic event"
                          : "no hardware PMU available to this kernel (virtual machine or PMU "
                            "not exposed)";
    case EACCES:
    case EPERM:
        *why = NP_PERF_WHY_PARANOID;
        return "not permitted by /proc/sys/kernel/perf_event_paranoid (lower it, or grant "
               "CAP_PERFMON)";
    case ESRCH:
        *why = NP_PERF_WHY_PROCESS_GONE;
        return "the process is gone";
    case EMFILE:
    case ENFILE:
        *why = NP_PERF_WHY_OUT_OF_FDS;
        return "out of file descriptors";
    case ENOSYS:
        return "no such system call here (a kernel without perf events, or an emulator: "
               "qemu-user)";
    default:
        return "";
    }
}

/* Open event @p e on @p pid counting from now (no enable race with the task) with inherit
 * (threads and children created from now on count too); in the cycles-instructions group when
 * @p grouped (@p group_fd its leader, or -1 to lead). The times tell whether the kernel
 * multiplexed the counter, so the read can scale it. @return the fd, or a negative errno. */
static int open_event(int e, pid_t pid, int group_fd, bool grouped)
{
    struct perf_event_attr attr = pfm_attr[e];
    int fd;

    attr.size = sizeof(attr);
    attr.disabled = 0;
    attr.inherit = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    if (grouped)
        attr.read_format |= PERF_FORMAT_GROUP;
    fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, group_fd,
                      (unsigned long)pfm_flags[e] | PERF_FLAG_FD_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int np_perf_open(struct np_perf_counters *c, pid_t pid, unsigned event_mask, struct np_err *err)
{
    int opened = 0, rc;
    bool pmu_counts = false;

    np_perf_counters_init(c);
    c->pid = pid;
    for (int e = 0; e < NP_PERF_NEVENTS; e++)
        if (!(event_mask & (1u << e)))
            snprintf(c->reason[e], sizeof(c->reason[e]), "not requested");
    if (event_mask & ~(unsigned)NP_PERF_ALL_MASK) {
        requested_reason(c, event_mask, NP_PERF_WHY_OTHER, "bad perf event mask 0x%x", event_mask);
        return np_err_set(err, -EINVAL, "perf event mask 0x%x has bits outside 0x%x", event_mask,
                          (unsigned)NP_PERF_ALL_MASK);
    }
    if (pid < 0) {
        requested_reason(c, event_mask, NP_PERF_WHY_OTHER, "bad pid %d", (int)pid);
        return np_err_set(err, -EINVAL, "perf: bad pid %d (a process id, or 0 for this process)",
                          (int)pid);
    }
    rc = np_perf_init(err);
    if (rc < 0) {
        requested_reason(c, event_mask, NP_PERF_WHY_LIBPFM, "%s", pfm_msg);
        return rc;
    }
    /* Checked first so a vanished process is -ESRCH even when no event would open anyway. */
    if (pid > 0 && kill(pid, 0) < 0 && errno == ESRCH) {
        requested_reason(c, event_mask, NP_PERF_WHY_PROCESS_GONE, "process %d is gone", (int)pid);
        return np_err_set(err, -ESRCH, "perf: no process %d", (int)pid);
    }

    /* Cycles lead a group with instructions when both are asked for and encoded. */
    c->cpi_grouped =
        (event_mask & (1u << NP_PERF_CYCLES)) && (event_mask & (1u << NP_PERF_INSTRUCTIONS)) &&
        !pfm_encode_error[NP_PERF_CYCLES][0] && !pfm_encode_error[NP_PERF_INSTRUCTIONS][0];
    for (int e = 0; e < NP_PERF_NEVENTS; e++) {
        const bool grouped = c->cpi_grouped && (e == NP_PERF_CYCLES || e == NP_PERF_INSTRUCTIONS);
        const char *hint;
        int fd, errnum;

        if (!(event_mask & (1u << e)))
            continue;
        if (pfm_encode_error[e][0]) {
            memcpy(c->reason[e], pfm_encode_error[e],
                   sizeof(c->reason[e])); /* same size, terminated */
            c->why[e] = NP_PERF_WHY_EVENT_UNKNOWN;
            continue;
        }
        fd = open_event(e, pid, e == NP_PERF_INSTRUCTIONS && grouped ? c->fd[NP_PERF_CYCLES] : -1,
                        grouped);
        if (fd < 0 && fd != -ESRCH && grouped && e == NP_PERF_INSTRUCTIONS) {
            /* The group was refused (a PMU that cannot hold both at once): cycles alone again,
             * and instructions its own fd, as every other event. */
            const int cycles = open_event(NP_PERF_CYCLES, pid, -1, false);

            close(c->fd[NP_PERF_CYCLES]);
            c->fd[NP_PERF_CYCLES] = cycles >= 0 ? cycles : -1;
            c->cpi_grouped = false;
            if (cycles < 0) {
                opened--;
                snprintf(c->reason[NP_PERF_CYCLES], sizeof(c->reason[NP_PERF_CYCLES]),
                         "%s: perf_event_open: %s", np_perf_event_name(NP_PERF_CYCLES),
                         strerror(-cycles));
                c->why[NP_PERF_CYCLES] = NP_PERF_WHY_OTHER;
            }
            fd = open_event(e, pid, -1, false);
        }
        if (fd >= 0) {
            c->fd[e] = fd;
            c->reason[e][0] = '\0';
            opened++;
            if (e == NP_PERF_CYCLES || e == NP_PERF_INSTRUCTIONS)
                pmu_counts = true;
            continue;
        }
        if (e == NP_PERF_CYCLES)
            c->cpi_grouped = false; /* no leader: instructions opens alone */
        errnum = -fd;
        if (errnum == ESRCH) {
            close_all(c, "");
            requested_reason(c, event_mask, NP_PERF_WHY_PROCESS_GONE, "process %d is gone",
                             (int)pid);
            return np_err_set(err, -ESRCH, "perf: no process %d (perf_event_open: %s)", (int)pid,
                              strerror(errnum));
        }
        hint = open_hint((enum np_perf_event)e, errnum, pmu_counts, &c->why[e]);
        snprintf(c->reason[e], sizeof(c->reason[e]), "%s: perf_event_open: %s%s%s",
                 np_perf_event_name((enum np_perf_event)e), strerror(errnum), *hint ? "; " : "",
                 hint);
    }
    return opened;
}

/* Fill @p out from one event's count and the group's (or its own) times, scaling a multiplexed
 * count; the rules of np_perf_read(). */
static int decode(uint64_t raw, uint64_t enabled, uint64_t running, struct np_perf_value *out)
{
    out->time_enabled_ns = enabled;
    out->time_running_ns = running;
    if (running == 0 && enabled > 0) {
        /* The task ran, but the event never had a hardware counter (others held them all):
         * there is nothing to scale, and 0 would be a count never made. */
        out->reason = "never on a hardware counter while the process ran (every counter was "
                      "taken: multiplexed out)";
        return -EAGAIN;
    }
    out->available = true;
    if (running == 0)
        out->value = 0; /* never scheduled: nothing to scale */
    else if (running >= enabled)
        out->value = raw;
    else /* multiplexed: an estimate, in floating point so raw x enabled cannot overflow */
        out->value = (uint64_t)((double)raw * (double)enabled / (double)running);
    return 0;
}

/* read(2) of exactly @p words counters' words from @p fd: 0, or a negative errno with
 * @p out->reason set. */
static int read_words(int fd, uint64_t *buf, size_t words, struct np_perf_value *out)
{
    ssize_t n;

    do
        n = read(fd, buf, words * sizeof(*buf));
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        const int errnum = errno;
        out->reason = "reading the perf counter failed";
        return -errnum;
    }
    if (n != (ssize_t)(words * sizeof(*buf))) {
        out->reason = "short read from the perf counter";
        return -EIO;
    }
    return 0;
}

/* The group's counts, read_format order: cycles then instructions, next to each other in
 * enum np_perf_event so out[] and rc[] of one pair are two consecutive entries. */
_Static_assert(NP_PERF_INSTRUCTIONS == NP_PERF_CYCLES + 1, "the CPI pair is adjacent");

/* The cycles-instructions group in one read: nr, time enabled, time running, then the two
 * counts. Fills out[0..1] and rc[0..1]. */
static void read_cpi_group(const struct np_perf_counters *c, struct np_perf_value *out, int *rc)
{
    uint64_t buf[5];
    int r;

    memset(out, 0, 2 * sizeof(*out));
    r = read_words(c->fd[NP_PERF_CYCLES], buf, 5, &out[0]);
    if (r == 0 && buf[0] != 2) {
        out[0].reason = "the perf group holds other than cycles and instructions";
        r = -EIO;
    }
    if (r < 0) {
        out[1] = out[0];
        rc[0] = rc[1] = r;
        return;
    }
    rc[0] = decode(buf[3], buf[1], buf[2], &out[0]);
    rc[1] = decode(buf[4], buf[1], buf[2], &out[1]);
}

static bool in_cpi_group(const struct np_perf_counters *c, int ev)
{
    return c->cpi_grouped && (ev == NP_PERF_CYCLES || ev == NP_PERF_INSTRUCTIONS);
}

int np_perf_read(const struct np_perf_counters *c, enum np_perf_event ev, struct np_perf_value *out)
{
    uint64_t buf[3]; /* value, time_enabled, time_running: the read_format set at the open */
    int rc;

    memset(out, 0, sizeof(*out));
    if (!c || (unsigned)ev >= NP_PERF_NEVENTS) {
        out->reason = "no such perf counter";
        return -EINVAL;
    }
    if (c->fd[ev] < 0) {
        out->reason = c->reason[ev][0] ? c->reason[ev] : "perf counter not open";
        return -EBADF;
    }
    if (in_cpi_group(c, ev)) {
        struct np_perf_value pair[2];
        int pair_rc[2];

        read_cpi_group(c, pair, pair_rc);
        *out = pair[ev - NP_PERF_CYCLES];
        return pair_rc[ev - NP_PERF_CYCLES];
    }
    rc = read_words(c->fd[ev], buf, 3, out);
    return rc < 0 ? rc : decode(buf[0], buf[1], buf[2], out);
}

void np_perf_read_all(const struct np_perf_counters *c, struct np_perf_value out[NP_PERF_NEVENTS],
                      int rc[NP_PERF_NEVENTS])
{
    for (int e = 0; e < NP_PERF_NEVENTS; e++) {
        if (!c || !in_cpi_group(c, e))
            rc[e] = np_perf_read(c, (enum np_perf_event)e, &out[e]);
        else if (e == NP_PERF_CYCLES) /* instructions come in the same read */
            read_cpi_group(c, &out[e], &rc[e]);
    }
}

void np_perf_close(struct np_perf_counters *c)
{
    if (c)
        close_all(c, "closed");
}

/* Memory-controller PMUs as libpfm4 names them, and counting them system-wide. */
/* Socket or channel 0 of each family: the others differ only in the index. Intel's CAS counts
 * are one 64 B line each (the thesis read the same counters with pcm-memory). */
#define IMC(pmu, generation)                                                                       \
    {                                                                                              \
        pmu, generation, pmu "::UNC_M_CAS_COUNT:RD", pmu "::UNC_M_CAS_COUNT:WR"                    \
    }
static const struct np_uncore_pmu pmus[] = {
    IMC("snbep_unc_imc0", "Sandy Bridge-EP"), IMC("ivbep_unc_imc0", "Ivy Bridge-EP"),
    IMC("hswep_unc_imc0", "Haswell-EP"),      IMC("bdx_unc_imc0", "Broadwell-X"),
    IMC("skx_unc_imc0", "Skylake-X"),
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
