/* fwq_stats: see fwq_stats.h. */
#include "fwq_stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const uint32_t fwq_threshold_ns[FWQ_THRESHOLDS] = {10000, 100000, 1000000};

size_t fwq_rotation_config(unsigned round, unsigned position, size_t nconfigs)
{
    return nconfigs ? ((size_t)round + position) % nconfigs : 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least @p permille of the sample at or below it
 * (integer arithmetic: 0.99 * 1000 is not exactly 990 in floating point). */
static uint32_t nearest_rank(const uint32_t *sorted, size_t n, unsigned permille)
{
    size_t rank = (n * permille + 999) / 1000;

    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

int fwq_detour_stats(const uint32_t *durations_ns, size_t n, uint32_t fastest_ns, uint32_t *scratch,
                     struct fwq_detour_stats *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < n; i++) {
        if (durations_ns[i] < fastest_ns)
            return -EINVAL;
        scratch[i] = durations_ns[i] - fastest_ns;
        out->quantum_total_ns += durations_ns[i];
        out->detour_total_ns += scratch[i];
        for (int t = 0; t < FWQ_THRESHOLDS; t++)
            out->over[t] += scratch[i] > fwq_threshold_ns[t];
    }
    out->quanta = n;
    if (n == 0)
        return 0;
    qsort(scratch, n, sizeof(*scratch), cmp_u32);
    out->p50_ns = nearest_rank(scratch, n, 500);
    out->p99_ns = nearest_rank(scratch, n, 990);
    out->p999_ns = nearest_rank(scratch, n, 999);
    out->max_ns = scratch[n - 1];
    return 0;
}

uint32_t fwq_rebase(uint32_t duration_ns, uint32_t own_fastest_ns, uint32_t common_fastest_ns)
{
    const uint64_t rebased = (uint64_t)duration_ns - own_fastest_ns + common_fastest_ns;

    return rebased > UINT32_MAX ? UINT32_MAX : (uint32_t)rebased;
}

static const char *const source_names[FWQ_SRC_COUNT] = {
    [FWQ_SRC_NUMAPLACED] = "numaplaced",
    [FWQ_SRC_NUMAD] = "numad",
    [FWQ_SRC_KWORKER] = "kworker",
    [FWQ_SRC_KSOFTIRQD] = "ksoftirqd",
    [FWQ_SRC_KTHREAD] = "other kernel threads",
    [FWQ_SRC_BENCH] = "this benchmark",
    [FWQ_SRC_OTHER] = "other processes",
};

const char *fwq_source_name(enum fwq_source src)
{
    return (unsigned)src < FWQ_SRC_COUNT ? source_names[src] : "?";
}

/* comm prefixes, first match wins; an exact name ends with '\0' in the comparison. */
static const struct {
    const char *prefix;
    bool exact;
    enum fwq_source src;
} source_table[] = {
    {"numaplaced", true, FWQ_SRC_NUMAPLACED},
    {"numad", true, FWQ_SRC_NUMAD},
    {"fwq", true, FWQ_SRC_BENCH},
    {"kworker/", false, FWQ_SRC_KWORKER},
    {"ksoftirqd/", false, FWQ_SRC_KSOFTIRQD},
    {"rcu", false, FWQ_SRC_KTHREAD},
    {"migration/", false, FWQ_SRC_KTHREAD},
    {"khugepaged", true, FWQ_SRC_KTHREAD},
    {"kcompactd", false, FWQ_SRC_KTHREAD},
    {"kswapd", false, FWQ_SRC_KTHREAD},
    {"watchdog", false, FWQ_SRC_KTHREAD},
    {"cpuhp/", false, FWQ_SRC_KTHREAD},
    {"irq/", false, FWQ_SRC_KTHREAD},
    {"jbd2/", false, FWQ_SRC_KTHREAD},
    {"kthreadd", true, FWQ_SRC_KTHREAD},
    {"swapper/", false, FWQ_SRC_KTHREAD},
};

enum fwq_source fwq_source_of(const char *comm)
{
    for (size_t i = 0; i < sizeof(source_table) / sizeof(source_table[0]); i++) {
        size_t len = strlen(source_table[i].prefix);
        if (strncmp(comm, source_table[i].prefix, len) == 0 &&
            (!source_table[i].exact || comm[len] == '\0'))
            return source_table[i].src;
    }
    return FWQ_SRC_OTHER;
}

/* The "offset:N;" and "size:N;" of the line declaring @p decl ("pid_t next_pid;"). */
static int field_of(const char *text, const char *decl, unsigned *offset, unsigned *size)
{
    const char *line = strstr(text, decl), *p;
    char *end;
    unsigned long v;

    if (!line)
        return -EINVAL;
    p = strstr(line, "offset:");
    if (!p || strchr(line, '\n') < p)
        return -EINVAL;
    v = strtoul(p + 7, &end, 10);
    if (end == p + 7 || *end != ';' || v > 4096)
        return -EINVAL;
    *offset = (unsigned)v;
    p = strstr(end, "size:");
    if (!p)
        return -EINVAL;
    v = strtoul(p + 5, &end, 10);
    if (end == p + 5 || *end != ';' || v == 0 || v > 64)
        return -EINVAL;
    *size = (unsigned)v;
    return 0;
}

int fwq_switch_layout_parse(const char *format_text, struct fwq_switch_layout *out)
{
    unsigned prev_size, next_size;

    memset(out, 0, sizeof(*out));
    if (field_of(format_text, " prev_pid;", &out->prev_pid, &prev_size) < 0 ||
        field_of(format_text, " next_pid;", &out->next_pid, &next_size) < 0 ||
        field_of(format_text, " next_comm[", &out->next_comm, &out->comm_size) < 0 ||
        prev_size != 4 || next_size != 4)
        return -EINVAL;
    out->min_size = out->prev_pid + 4;
    if (out->next_pid + 4 > out->min_size)
        out->min_size = out->next_pid + 4;
    if (out->next_comm + out->comm_size > out->min_size)
        out->min_size = out->next_comm + out->comm_size;
    return 0;
}

int fwq_switch_decode(const void *raw, size_t len, const struct fwq_switch_layout *layout,
                      uint64_t t_ns, struct fwq_switch *out)
{
    const unsigned char *r = raw;
    size_t comm =
        layout->comm_size < sizeof(out->next_comm) ? layout->comm_size : sizeof(out->next_comm) - 1;

    if (len < layout->min_size)
        return -EINVAL;
    out->t_ns = t_ns;
    memcpy(&out->prev_pid, r + layout->prev_pid, 4);
    memcpy(&out->next_pid, r + layout->next_pid, 4);
    memset(out->next_comm, 0, sizeof(out->next_comm));
    memcpy(out->next_comm, r + layout->next_comm, comm);
    out->next_comm[sizeof(out->next_comm) - 1] = '\0';
    return 0;
}

/* The quantum holding time @p t: the last i with stamps[i] <= t (0 <= i < n). */
static size_t quantum_at(const uint64_t *stamps, size_t n, uint64_t t)
{
    size_t lo = 0, hi = n; /* answer in [lo, hi) */

    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (stamps[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void add_piece(const uint64_t *stamps, size_t n, uint64_t from, uint64_t to,
                      enum fwq_source src, uint64_t ns_by_source[FWQ_SRC_COUNT], uint8_t *mask)
{
    if (from < stamps[0])
        from = stamps[0];
    if (to > stamps[n])
        to = stamps[n];
    if (to <= from)
        return;
    ns_by_source[src] += to - from;
    for (size_t q = quantum_at(stamps, n, from); q < n && stamps[q] < to; q++)
        mask[q] |= (uint8_t)(1u << src);
}

static enum fwq_source source_of_task(const struct fwq_switch *sw, const int32_t *daemon_tids,
                                      size_t ndaemon_tids)
{
    enum fwq_source src = fwq_source_of(sw->next_comm);

    if (src != FWQ_SRC_NUMAPLACED && src != FWQ_SRC_NUMAD)
        return src;
    for (size_t i = 0; i < ndaemon_tids; i++)
        if (daemon_tids[i] == sw->next_pid)
            return src;
    return FWQ_SRC_OTHER;
}

void fwq_attribute(const uint64_t *stamps, size_t n, const struct fwq_switch *ev, size_t nev,
                   int32_t fwq_tid, const int32_t *daemon_tids, size_t ndaemon_tids,
                   uint64_t ns_by_source[FWQ_SRC_COUNT], uint8_t *mask)
{
    bool away = false;
    uint64_t since = 0;
    enum fwq_source running = FWQ_SRC_OTHER;

    if (n == 0)
        return;
    for (size_t i = 0; i < nev; i++) {
        if (away) {
            add_piece(stamps, n, since, ev[i].t_ns, running, ns_by_source, mask);
            since = ev[i].t_ns;
        }
        if (ev[i].next_pid == fwq_tid) {
            away = false;
        } else if (away || ev[i].prev_pid == fwq_tid) {
            away = true;
            since = ev[i].t_ns;
            running = source_of_task(&ev[i], daemon_tids, ndaemon_tids);
        }
    }
    if (away) /* still away when the record ended: up to the last stamp */
        add_piece(stamps, n, since, stamps[n], running, ns_by_source, mask);
}

int fwq_cpu_list_parse(const char *text, int *cpus, int max)
{
    int count = 0;
    const char *p = text;

    if (!text || !*text)
        return -EINVAL;
    for (;;) {
        char *end;
        unsigned long lo, hi;

        /* decimal only, no leading zeros: numaplaced refuses "08" (hwloc would read octal) */
        if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9'))
            return -EINVAL;
        lo = strtoul(p, &end, 10);
        hi = lo;
        if (*end == '-') {
            p = end + 1;
            if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9'))
                return -EINVAL;
            hi = strtoul(p, &end, 10);
        }
        if (lo > 65535 || hi > 65535 || hi < lo)
            return -EINVAL;
        for (unsigned long c = lo; c <= hi; c++) {
            if (count >= max)
                return -E2BIG;
            cpus[count++] = (int)c;
        }
        if (*end == '\0')
            return count;
        if (*end != ',')
            return -EINVAL;
        p = end + 1;
    }
}
