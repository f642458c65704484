/* perf_event counters encoded by libpfm4 (see numaplace/perf.h). */
#include "numaplace/perf.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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
static void requested_reason(struct np_perf_counters *c, unsigned mask, enum np_perf_why why,
                             const char *fmt, ...) NP_PRINTF(4, 5);

static void requested_reason(struct np_perf_counters *c, unsigned mask, enum np_perf_why why,
                             const char *fmt, ...)
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

    for (int e = 0; e < NP_PERF_NEVENTS; e++) {
        struct perf_event_attr attr;
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
        attr = pfm_attr[e];
        attr.size = sizeof(attr);
        attr.disabled = 0; /* counting starts at the open: no enable race with the task */
        attr.inherit = 1;  /* threads and children created from now on are counted too */
        /* Each its own fd: PERF_FORMAT_GROUP is refused with inherit. The times tell whether the
         * kernel multiplexed the counter, so the read can scale it. */
        attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1,
                          (unsigned long)pfm_flags[e] | PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0) {
            c->fd[e] = fd;
            c->reason[e][0] = '\0';
            opened++;
            if (e == NP_PERF_CYCLES || e == NP_PERF_INSTRUCTIONS)
                pmu_counts = true;
            continue;
        }
        errnum = errno;
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

int np_perf_read(const struct np_perf_counters *c, enum np_perf_event ev, struct np_perf_value *out)
{
    uint64_t buf[3]; /* value, time_enabled, time_running: the read_format set at the open */
    ssize_t n;

    memset(out, 0, sizeof(*out));
    if (!c || (unsigned)ev >= NP_PERF_NEVENTS) {
        out->reason = "no such perf counter";
        return -EINVAL;
    }
    if (c->fd[ev] < 0) {
        out->reason = c->reason[ev][0] ? c->reason[ev] : "perf counter not open";
        return -EBADF;
    }
    do
        n = read(c->fd[ev], buf, sizeof(buf));
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        const int errnum = errno;
        out->reason = "reading the perf counter failed";
        return -errnum;
    }
    if (n != (ssize_t)sizeof(buf)) {
        out->reason = "short read from the perf counter";
        return -EIO;
    }
    out->raw = buf[0];
    out->time_enabled_ns = buf[1];
    out->time_running_ns = buf[2];
    if (buf[2] == 0 && buf[1] > 0) {
        /* The task ran, but the event never had a hardware counter (others held them all):
         * there is nothing to scale, and 0 would be a count never made. */
        out->reason = "never on a hardware counter while the process ran (every counter was "
                      "taken: multiplexed out)";
        return -EAGAIN;
    }
    out->available = true;
    if (buf[2] == 0)
        out->value = 0; /* never scheduled: nothing to scale */
    else if (buf[2] >= buf[1])
        out->value = buf[0];
    else /* multiplexed: an estimate, in floating point so raw x enabled cannot overflow */
        out->value = (uint64_t)((double)buf[0] * (double)buf[1] / (double)buf[2]);
    return 0;
}

void np_perf_close(struct np_perf_counters *c)
{
    if (c)
        close_all(c, "closed");
}
