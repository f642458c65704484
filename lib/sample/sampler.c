/* The proc and perf backends for one job (see numaplace/sampler.h). */
#include "numaplace/sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t vmstat_value(const char *text, const char *name, bool *found)
{
    const size_t len = strlen(name);
    const char *p = text;

    while (p && *p) {
        if (strncmp(p, name, len) == 0 && p[len] == ' ') {
            *found = true;
            return strtoull(p + len + 1, NULL, 10);
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return 0;
}

/* The whole of a small file from offset 0 (pread: a kept descriptor reads it as of now),
 * NUL-terminated; @return its length or -1. */
static ssize_t read_whole(int fd, char *buf, size_t size)
{
    size_t have = 0;
    ssize_t n = 0;

    while (have + 1 < size && (n = pread(fd, buf + have, size - 1 - have, (off_t)have)) > 0)
        have += (size_t)n;
    buf[have] = '\0';
    return n < 0 ? -1 : (ssize_t)have;
}

static ssize_t slurp(const char *path, char *buf, size_t size)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    const ssize_t n = fd >= 0 ? read_whole(fd, buf, size) : -1;

    if (fd >= 0)
        close(fd);
    return n;
}

/* Read the node's page epoch under @p root (/proc/vmstat; /sys/kernel/mm/ksm/full_scans when
 * present). known stays false when /proc/vmstat or its pgmigrate_success line is missing. */
static void pages_epoch_read(const char *root, struct np_pages_epoch *out)
{
    char path[1200], text[16384];
    bool found = false, unused = false;

    memset(out, 0, sizeof(*out));
    root = root ? root : "";
    snprintf(path, sizeof(path), "%s/proc/vmstat", root);
    if (slurp(path, text, sizeof(text)) < 0)
        return;
    out->migrated = vmstat_value(text, "pgmigrate_success", &found);
    out->collapsed = vmstat_value(text, "thp_collapse_alloc", &unused);
    snprintf(path, sizeof(path), "%s/sys/kernel/mm/ksm/full_scans", root);
    if (slurp(path, text, sizeof(text)) > 0)
        out->ksm_scans = strtoull(text, NULL, 10);
    out->known = found;
}

static void close_kept(struct np_proc_cache *c, int *fd)
{
    if (*fd < 0)
        return;
    close(*fd);
    *fd = -1;
    if (c->budget)
        c->budget->left++;
}

static void close_all_kept(struct np_proc_cache *c, struct np_proc_entry *e)
{
    close_kept(c, &e->stat_fd);
    close_kept(c, &e->children_fd);
    close_kept(c, &e->status_fd);
}

/* Keep @p fd if the budget allows, else close it. */
static void keep(struct np_proc_cache *c, int *slot, int fd)
{
    if (c->budget && c->budget->left > 0) {
        c->budget->left--;
        *slot = fd;
    } else {
        close(fd);
    }
}

/* Close everything and free; accepts NULL. */
static void cache_fini(struct np_proc_cache *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->count; i++)
        close_all_kept(c, &c->entries[i]);
    free(c->entries);
    c->entries = NULL;
    c->count = c->cap = 0;
}

/* End an interval: forget the entries not read in it (their process is gone or left). */
static void cache_sweep(struct np_proc_cache *c)
{
    unsigned kept = 0;

    for (unsigned i = 0; i < c->count; i++) {
        if (c->entries[i].seen)
            c->entries[kept++] = c->entries[i];
        else
            close_all_kept(c, &c->entries[i]);
    }
    c->count = kept;
}

/* Index of @p pid, or of where it would go. */
static unsigned position(const struct np_proc_cache *c, pid_t pid)
{
    unsigned lo = 0, hi = c->count;

    while (lo < hi) {
        const unsigned mid = lo + (hi - lo) / 2;
        if (c->entries[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The entry of @p pid read in this interval, or NULL. */
static struct np_proc_entry *find(struct np_proc_cache *c, pid_t pid)
{
    const unsigned at = position(c, pid);

    return at < c->count && c->entries[at].pid == pid && c->entries[at].seen ? &c->entries[at]
                                                                             : NULL;
}

static struct np_proc_entry *insert(struct np_proc_cache *c, pid_t pid, struct np_err *err)
{
    const unsigned at = position(c, pid);
    struct np_proc_entry *e;

    if (at < c->count && c->entries[at].pid == pid)
        return &c->entries[at];
    if (c->count == c->cap) {
        const unsigned cap = c->cap ? c->cap * 2 : 16;
        struct np_proc_entry *grown = realloc(c->entries, cap * sizeof(*grown));
        if (!grown) {
            np_err_set(err, -ENOMEM, "out of memory");
            return NULL;
        }
        c->entries = grown;
        c->cap = cap;
    }
    memmove(&c->entries[at + 1], &c->entries[at], (c->count - at) * sizeof(*e));
    c->count++;
    e = &c->entries[at];
    memset(e, 0, sizeof(*e));
    e->pid = pid;
    e->stat_fd = e->children_fd = e->status_fd = -1;
    return e;
}

/* Read /proc/<pid>/stat through the kept descriptor, or open it (and keep it if the budget
 * allows). A process that is not the one the entry knew (another start time) starts afresh.
 * @return the entry (valid until the next read of another pid), or NULL when the process cannot
 *        be read (gone: err->code -ESRCH) or out of memory */
static struct np_proc_entry *cache_stat(struct np_proc_cache *c, pid_t pid, struct np_proc_stat *st,
                                        struct np_err *err)
{
    const unsigned at = position(c, pid);
    struct np_proc_entry *e = at < c->count && c->entries[at].pid == pid ? &c->entries[at] : NULL;
    char path[1200];
    int fd;

    if (e && e->stat_fd >= 0) {
        snprintf(path, sizeof(path), "/proc/%d/stat (kept open)", (int)pid);
        if (np_proc_stat_read_fd(e->stat_fd, pid, path, st, NULL) == 0 &&
            st->starttime_ticks == e->starttime_ticks) {
            e->seen = true;
            return e;
        }
        /* Its process is gone (or the file was replaced): look the pid up afresh. */
        close_all_kept(c, e);
    }
    fd = np_proc_stat_open(c->root, pid, path, sizeof(path), err);
    if (fd < 0)
        return NULL;
    if (np_proc_stat_read_fd(fd, pid, path, st, err) < 0) {
        close(fd);
        return NULL;
    }
    if (!e && !(e = insert(c, pid, err))) {
        close(fd);
        return NULL;
    }
    if (e->starttime_ticks != st->starttime_ticks) {
        /* Another process than the one known by this pid (or the first look): start afresh. */
        close_kept(c, &e->children_fd);
        close_kept(c, &e->status_fd);
        e->have_pages = false;
        e->starttime_ticks = st->starttime_ticks;
    }
    e->seen = true;
    if (e->stat_fd < 0)
        keep(c, &e->stat_fd, fd);
    else
        close(fd);
    return e;
}

/* The readers below go through the entry of a pid read in this interval (cache_stat);
 * another pid is read afresh, as without a cache. */

/* The children of @p pid, as np_proc_children: with @p threads == 1 through the kept
 * main-thread file (opened and kept if the budget allows). */
static int cache_children(struct np_proc_cache *c, pid_t pid, long threads, pid_t *out,
                          unsigned max, bool *threads_cut, struct np_err *err)
{
    struct np_proc_entry *e = find(c, pid);
    unsigned found = 0;

    *threads_cut = false;
    if (!e) /* not read in this interval: nothing kept to read through */
        return np_proc_children(c->root, pid, threads, out, max, threads_cut, err);
    if (threads == 1 && e->children_fd < 0 && c->budget && c->budget->left > 0) {
        char path[1200];
        int fd;
        snprintf(path, sizeof(path), "%s/proc/%d/task/%d/children", c->root, (int)e->pid,
                 (int)e->pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0)
            keep(c, &e->children_fd, fd);
    }
    if (threads == 1 && e->children_fd >= 0) {
        if (np_proc_children_read_fd(e->children_fd, out, max, &found) == 0)
            return (int)found;
        close_kept(c, &e->children_fd);
    }
    /* Several threads, not kept, or the kept file unreadable: walk the threads as before. */
    return np_proc_children(c->root, e->pid, threads, out, max, threads_cut, err);
}

/* The status file through @p fd, from offset 0, into @p out; @return 0 or -errno. */
static int read_status_fd(int fd, struct np_proc_status *out)
{
    char text[8192], *line, *save = NULL;
    const ssize_t have = read_whole(fd, text, sizeof(text));

    if (have <= 0)
        return -ESRCH; /* as a kept file of an exited process reads */
    if ((size_t)have + 1 == sizeof(text))
        return -EFBIG; /* its last lines (the context switches) may be cut: the line reader */
    memset(out, 0, sizeof(*out));
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        np_proc_status_parse_line(line, out);
    return 0;
}

/* Context switches of @p pid, and its threads' affinity to @p cpus_allowed, as
 * np_proc_ctxt_switches: with @p threads == 1 through its kept status file (opened and kept if
 * the budget allows), read every detail interval. */
static int cache_ctxt_switches(struct np_proc_cache *c, pid_t pid, long threads,
                               uint64_t *voluntary, uint64_t *involuntary,
                               np_cpu_list_fn *cpus_allowed, void *arg, struct np_err *err)
{
    struct np_proc_entry *e = find(c, pid);
    struct np_proc_status ps;

    if (!e)
        return np_proc_ctxt_switches(c->root, pid, threads, voluntary, involuntary, cpus_allowed,
                                     arg, err);
    if (threads == 1 && e->status_fd < 0 && c->budget && c->budget->left > 0) {
        char path[1200];
        int fd;
        snprintf(path, sizeof(path), "%s/proc/%d/status", c->root, (int)e->pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0)
            keep(c, &e->status_fd, fd);
    }
    if (threads == 1 && e->status_fd >= 0) {
        if (read_status_fd(e->status_fd, &ps) == 0) {
            *voluntary = ps.voluntary_ctxt_switches;
            *involuntary = ps.nonvoluntary_ctxt_switches;
            if (cpus_allowed)
                cpus_allowed(np_proc_status_cpus_allowed(&ps), arg);
            return 0;
        }
        close_kept(c, &e->status_fd);
    }
    /* Several threads, not kept, or the kept file unreadable: read as before. */
    return np_proc_ctxt_switches(c->root, e->pid, threads, voluntary, involuntary, cpus_allowed,
                                 arg, err);
}

/* Pages per node of @p pid (anonymous and file, in bytes, added to @p node_bytes): its last
 * numa_maps reading when that still holds for @p st and @p epoch, else a new reading.
 * @return 0, -ESRCH, or -errno with @p err (nothing added) */
static int cache_pages(struct np_proc_cache *c, pid_t pid, const struct np_proc_stat *st,
                       const struct np_pages_epoch *epoch, uint64_t *node_bytes, struct np_err *err)
{
    struct np_proc_entry unkept = {.pid = pid}, *e = find(c, pid);
    struct np_numa_usage usage;
    int rc;

    if (!e) /* not read in this interval: a reading of its own, not kept */
        e = &unkept;

    /* Pages per node change by the process's own faults (minflt, majflt), by its resident size
     * shrinking (unmapped, reclaimed, swapped) or by the kernel moving pages (migration, huge
     * page collapse, KSM merging): none of these, the reading holds. */
    if (e->have_pages && e->reuses < NP_PROC_CACHE_MAX_REUSE && epoch->known &&
        e->pages_epoch.known && e->pages_minflt == st->minflt && e->pages_majflt == st->majflt &&
        e->pages_rss == st->rss_pages && e->pages_epoch.migrated == epoch->migrated &&
        e->pages_epoch.collapsed == epoch->collapsed &&
        e->pages_epoch.ksm_scans == epoch->ksm_scans) {
        for (int n = 0; n < NP_SAMPLE_MAX_NODES; n++)
            node_bytes[n] += e->node_bytes[n];
        e->reuses++;
        return 0;
    }
    e->have_pages = false;
    if ((rc = np_numa_maps_usage(c->root, e->pid, &usage, err)) < 0)
        return rc;
    for (int n = 0; n < NP_SAMPLE_MAX_NODES; n++) {
        e->node_bytes[n] = usage.anon_bytes[n] + usage.file_bytes[n];
        node_bytes[n] += e->node_bytes[n];
    }
    e->have_pages = true;
    e->reuses = 0;
    e->pages_minflt = st->minflt;
    e->pages_majflt = st->majflt;
    e->pages_rss = st->rss_pages;
    e->pages_epoch = *epoch;
    return 0;
}

int np_sampler_init(struct np_sampler *s, const char *root, unsigned perf_mask,
                    const char *perf_off_reason, const int *cpu_node, unsigned ncpu_node,
                    const char *cpus, struct np_err *err)
{
    int rc = 0;

    memset(s, 0, sizeof(*s));
    snprintf(s->root, sizeof(s->root), "%s", root ? root : "");
    s->perf_mask = perf_mask;
    snprintf(s->perf_off_reason, sizeof(s->perf_off_reason), "%s",
             perf_off_reason && *perf_off_reason ? perf_off_reason : "perf backend not enabled");
    s->cpu_node = cpu_node;
    s->ncpu_node = cpu_node ? ncpu_node : 0;
    s->cpus = hwloc_bitmap_alloc();
    s->effective_cpus = hwloc_bitmap_alloc();
    if (!s->cpus || !s->effective_cpus)
        rc = np_err_set(err, -ENOMEM, "out of memory");
    else if (cpus && *cpus && hwloc_bitmap_list_sscanf(s->cpus, cpus) < 0)
        rc = np_err_set(err, -EINVAL, "job CPU list \"%s\" is not a CPU list like 0-3,8", cpus);
    if (rc < 0) {
        np_sampler_fini(s);
        return rc;
    }
    /* an empty cache; it keeps no descriptor until np_sampler_set_fd_budget gives it some */
    np_strf(s->cache.root, sizeof(s->cache.root), "%s", s->root);
    s->t0 = np_monotonic_s();
    return 0;
}

void np_sampler_set_fd_budget(struct np_sampler *s, struct np_fd_budget *budget)
{
    s->cache.budget = budget;
}

void np_sampler_fini(struct np_sampler *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < s->ntasks; i++)
        np_perf_close(&s->tasks[i].perf);
    free(s->tasks);
    free(s->pids);
    free(s->starttimes);
    hwloc_bitmap_free(s->cpus);
    hwloc_bitmap_free(s->effective_cpus);
    cache_fini(&s->cache);
    memset(s, 0, sizeof(*s));
}

void np_sampler_drop_perf(struct np_sampler *s, const char *reason)
{
    for (unsigned i = 0; i < s->ntasks; i++)
        np_perf_close(&s->tasks[i].perf);
    s->perf_mask = 0;
    snprintf(s->perf_off_reason, sizeof(s->perf_off_reason), "%s", reason);
}

int np_sampler_add_task(struct np_sampler *s, pid_t pid, struct np_err *err)
{
    struct np_proc_stat st;
    struct np_sampler_task *t;
    int rc;

    for (unsigned i = 0; i < s->ntasks; i++)
        if (s->tasks[i].pid == pid && !s->tasks[i].gone)
            return 0;
    if ((rc = np_proc_stat_read(s->root, pid, &st, err)) < 0)
        return rc;
    if (s->ntasks == s->cap) {
        unsigned cap = s->cap ? s->cap * 2 : 8;
        struct np_sampler_task *grown = realloc(s->tasks, cap * sizeof(*grown));
        if (!grown)
            return np_err_set(err, -ENOMEM, "out of memory");
        s->tasks = grown;
        s->cap = cap;
    }
    t = &s->tasks[s->ntasks++];
    memset(t, 0, sizeof(*t));
    t->pid = pid;
    t->starttime_ticks = st.starttime_ticks;
    t->last_node = -1;
    np_perf_counters_init(&t->perf);
    if (s->perf_mask) {
        struct np_err perr = {0};
        np_perf_open(&t->perf, pid, s->perf_mask, &perr); /* per-event reasons kept in t->perf */
    }
    if (hwloc_bitmap_iszero(s->cpus)) {
        /* No step CPUs registered: the tasks' affinity is the job's CPU set. */
        struct np_proc_status ps;
        hwloc_bitmap_t mine = hwloc_bitmap_alloc();
        if (mine && np_proc_status_read(s->root, pid, &ps, NULL) == 0 &&
            hwloc_bitmap_list_sscanf(mine, ps.cpus_allowed_list) == 0)
            hwloc_bitmap_or(s->cpus, s->cpus, mine);
        hwloc_bitmap_free(mine);
    }
    return 0;
}

hwloc_const_bitmap_t np_sampler_effective_cpus(const struct np_sampler *s)
{
    return s->effective_cpus && !hwloc_bitmap_iszero(s->effective_cpus) ? s->effective_cpus
                                                                        : s->cpus;
}

/* One process found this interval: what pass 1 read, for the passes after it. */
struct seen_process {
    pid_t pid;
    long threads;
    uint64_t starttime_ticks;
    uint64_t minflt, majflt, rss_pages; /* whether its last numa_maps reading still holds */
};

static struct seen_process seen(const struct np_proc_stat *st, pid_t pid)
{
    return (struct seen_process){pid,        st->num_threads, st->starttime_ticks,
                                 st->minflt, st->majflt,      st->rss_pages};
}

/* Pass 1, every interval: /proc/<pid>/stat only (one read), added into @p out. */
static void add_stat(const struct np_proc_stat *st, struct np_sample *out)
{
    const double tick = (double)sysconf(_SC_CLK_TCK);
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

    out->utime_s += (double)st->utime_ticks / tick;
    out->stime_s += (double)st->stime_ticks / tick;
    out->minflt += st->minflt;
    out->majflt += st->majflt;
    out->rss_bytes += st->rss_pages * page;
}

/* The union of a job's processes' affinity at a detail interval, as np_proc_ctxt_switches gives
 * it thread by thread; unknown for good once one list could not be read. */
struct affinity_union {
    hwloc_bitmap_t allowed, one;
    bool unknown;
};

static void affinity_add(const char *list, void *arg)
{
    struct affinity_union *u = arg;

    if (u->unknown || !list || !u->allowed || !u->one ||
        hwloc_bitmap_list_sscanf(u->one, list) < 0 || hwloc_bitmap_iszero(u->one))
        u->unknown = true;
    else
        hwloc_bitmap_or(u->allowed, u->allowed, u->one);
}

/* Pass 2, every detail interval: context switches of every thread, their affinity (into @p u)
 * and NUMA balancing. */
static void add_detail(struct np_sampler *s, const struct seen_process *p, bool balancing,
                       struct affinity_union *u, struct np_sample *out)
{
    struct np_err err = {0};
    uint64_t vol = 0, invol = 0;

    /* Through its kept status file (np_proc_cache). A process gone since pass 1 runs nowhere:
     * its affinity is not needed. */
    if (cache_ctxt_switches(&s->cache, p->pid, p->threads, &vol, &invol, affinity_add, u, &err) ==
        0) {
        out->voluntary_cs += vol;
        out->involuntary_cs += invol;
    }
    if (balancing && out->have_balancing) {
        uint64_t migrated = 0, faults = 0;
        if (np_proc_numa_balancing(s->root, p->pid, &migrated, &faults, &err) == 0) {
            out->balancing_pages_migrated += migrated;
            out->balancing_faults += faults;
        } else if (err.code != -ESRCH) {
            out->have_balancing = false;
            np_strf(out->balancing_reason, sizeof(out->balancing_reason), "%s", err.msg);
        }
    }
}

/* Pass 3, when pages are due: numa_maps, which walks the page tables (the costly read), unless
 * the process's last reading still holds (np_proc_cache). */
static void add_pages(struct np_sampler *s, const struct seen_process *p,
                      const struct np_pages_epoch *epoch, struct np_sample *out)
{
    const struct np_proc_stat st = {
        .minflt = p->minflt, .majflt = p->majflt, .rss_pages = p->rss_pages};
    struct np_err err = {0};

    if (out->have_pages && cache_pages(&s->cache, p->pid, &st, epoch, out->node_bytes, &err) < 0 &&
        err.code != -ESRCH) {
        out->have_pages = false;
        np_strf(out->pages_reason, sizeof(out->pages_reason), "%s", err.msg);
    }
}

static void read_perf(struct np_sampler *s, struct np_sample *out)
{
    bool any[NP_PERF_NEVENTS] = {false};

    for (unsigned i = 0; i < s->ntasks; i++) {
        struct np_sampler_task *t = &s->tasks[i];
        struct np_perf_value v[NP_PERF_NEVENTS];
        int rc[NP_PERF_NEVENTS];
        bool ok[NP_PERF_NEVENTS];

        np_perf_read_all(&t->perf, v, rc);
        for (int e = 0; e < NP_PERF_NEVENTS; e++) {
            ok[e] = rc[e] == 0;
            if (ok[e]) {
                out->perf[e] += v[e].value;
                out->perf_enabled_ns[e] += v[e].time_enabled_ns;
                out->perf_running_ns[e] += v[e].time_running_ns;
                any[e] = true;
            } else if (!out->perf_reason[e][0]) {
                snprintf(out->perf_reason[e], sizeof(out->perf_reason[e]), "%s",
                         v[e].reason ? v[e].reason : "not opened");
            }
        }
        /* Misses since the last look go to the node of the CPU the task last ran on. */
        if (ok[NP_PERF_LLC_LOAD_MISSES] && ok[NP_PERF_LLC_STORE_MISSES]) {
            uint64_t misses = v[NP_PERF_LLC_LOAD_MISSES].value + v[NP_PERF_LLC_STORE_MISSES].value;
            if (misses >= t->misses_seen && t->last_node >= 0 &&
                t->last_node < NP_SAMPLE_MAX_NODES) {
                s->misses_by_node[t->last_node] += misses - t->misses_seen;
                t->misses_seen = misses;
            }
        }
    }
    for (int e = 0; e < NP_PERF_NEVENTS; e++) {
        out->have_perf[e] = any[e];
        if (any[e])
            out->perf_reason[e][0] = '\0';
    }
    out->have_misses_by_node =
        out->have_perf[NP_PERF_LLC_LOAD_MISSES] && out->have_perf[NP_PERF_LLC_STORE_MISSES];
    memcpy(out->misses_by_node, s->misses_by_node, sizeof(out->misses_by_node));
}

void np_sampler_node_figures(const struct np_sampler *s, const struct np_node_counters *nc,
                             struct np_sample *out)
{
    out->have_irq = out->have_cpu_busy = false;
    out->interrupts = out->softirqs = 0;
    out->cpus_busy_s = 0;
    if (!nc || hwloc_bitmap_iszero(s->cpus)) {
        const char *why = nc ? "the job's CPUs are unknown" : "node counters not read";
        snprintf(out->irq_reason, sizeof(out->irq_reason), "%s", why);
        snprintf(out->cpu_busy_reason, sizeof(out->cpu_busy_reason), "%s", why);
    } else {
        const double tick = (double)sysconf(_SC_CLK_TCK);
        int cpu;
        out->have_irq = nc->have_irq;
        out->have_cpu_busy = nc->have_busy;
        snprintf(out->irq_reason, sizeof(out->irq_reason), "%s", nc->irq_reason);
        snprintf(out->cpu_busy_reason, sizeof(out->cpu_busy_reason), "%s", nc->busy_reason);
        hwloc_bitmap_foreach_begin(cpu, s->cpus)
        {
            if ((unsigned)cpu >= nc->max_cpus)
                break;
            if (nc->irq_read) {
                out->interrupts += nc->interrupts[cpu];
                out->softirqs += nc->softirqs[cpu];
            }
            out->cpus_busy_s += (double)nc->busy_ticks[cpu] / tick;
        }
        hwloc_bitmap_foreach_end();
    }
}

int np_sampler_sample(struct np_sampler *s, double now, const struct np_node_counters *nc,
                      bool pages_due, bool detail_due, struct np_sample *out)
{
    struct seen_process *procs = malloc(NP_SAMPLER_MAX_PROCESSES * sizeof(*procs));
    pid_t *children = malloc(NP_SAMPLER_MAX_PROCESSES * sizeof(*children));
    const bool balancing = nc && nc->balancing;
    unsigned head = 0, tail = 0;
    bool cut = false, read_pages;
    pid_t wide_pid = 0; /* the first process whose threads were not all walked */
    struct affinity_union u = {NULL, NULL, true}; /* the processes' affinity, at detail intervals */
    struct np_pages_epoch epoch = {0};

    np_sample_init(out);
    out->t = now - s->t0;
    if (!procs || !children) {
        free(procs);
        free(children);
        snprintf(out->proc_reason, sizeof(out->proc_reason), "out of memory");
        return 0;
    }
    out->have_proc = true;

    /* Pass 1: the tasks (checked against their start time: a reused pid is not ours), then
     * their descendants, breadth first; each process has one parent, so none is seen twice. */
    for (unsigned i = 0; i < s->cache.count; i++)
        s->cache.entries[i].seen = false; /* until read again in this interval */
    for (unsigned i = 0; i < s->ntasks; i++) {
        struct np_sampler_task *t = &s->tasks[i];
        struct np_proc_stat st;
        struct np_proc_entry *e;

        if (t->gone)
            continue;
        e = cache_stat(&s->cache, t->pid, &st, NULL);
        if (!e || st.starttime_ticks != t->starttime_ticks || st.state == 'Z') {
            t->gone = true; /* exited, or its pid now belongs to someone else */
            if (e)
                e->seen = false; /* not ours: its files are closed at the sweep */
            continue;
        }
        add_stat(&st, out);
        t->last_node = st.processor >= 0 && (unsigned)st.processor < s->ncpu_node
                           ? s->cpu_node[st.processor]
                           : -1;
        if (tail < NP_SAMPLER_MAX_PROCESSES)
            procs[tail++] = seen(&st, t->pid);
        else
            cut = true;
    }
    /* Every child of every process: a parent may have thousands (a step forking wide must not
     * hide its processes, their pages and their CPU time); the one bound is the step's. */
    while (head < tail) {
        const struct seen_process parent = procs[head++];
        const unsigned room = NP_SAMPLER_MAX_PROCESSES - tail;
        bool threads_cut = false;
        const int n = cache_children(&s->cache, parent.pid, parent.threads, children,
                                     NP_SAMPLER_MAX_PROCESSES, &threads_cut, NULL);

        if (n > 0 && (unsigned)n > room)
            cut = true;
        if (threads_cut && !wide_pid)
            wide_pid = parent.pid;
        for (int c = 0; c < n && c < NP_SAMPLER_MAX_PROCESSES; c++) {
            struct np_proc_stat st;
            if (tail >= NP_SAMPLER_MAX_PROCESSES) {
                cut = true;
                break;
            }
            if (cache_stat(&s->cache, children[c], &st, NULL)) {
                add_stat(&st, out);
                procs[tail++] = seen(&st, children[c]);
            }
        }
    }
    out->processes = tail;
    {
        pid_t *pids = realloc(s->pids, (tail ? tail : 1) * sizeof(pid_t));
        uint64_t *starts = NULL;

        if (pids) {
            s->pids = pids;
            starts = realloc(s->starttimes, (tail ? tail : 1) * sizeof(uint64_t));
        }
        if (starts)
            s->starttimes = starts;
        s->npids = pids && starts ? tail : 0; /* out of memory: nothing to migrate this time */
        for (unsigned i = 0; i < s->npids; i++) {
            s->pids[i] = procs[i].pid;
            s->starttimes[i] = procs[i].starttime_ticks;
        }
    }
    free(children);
    out->processes_cut = cut || wide_pid;
    if (cut && wide_pid)
        snprintf(out->proc_reason, sizeof(out->proc_reason),
                 "more than %d processes, and process %d has more than %d threads: the rest, and "
                 "the children of its other threads, are left out",
                 NP_SAMPLER_MAX_PROCESSES, (int)wide_pid, NP_PROC_MAX_THREADS_WALKED);
    else if (cut)
        snprintf(out->proc_reason, sizeof(out->proc_reason),
                 "more than %d processes: the rest are left out", NP_SAMPLER_MAX_PROCESSES);
    else if (wide_pid)
        snprintf(out->proc_reason, sizeof(out->proc_reason),
                 "process %d has more than %d threads: the children of the rest are left out",
                 (int)wide_pid, NP_PROC_MAX_THREADS_WALKED);

    /* Pages are read when due, or at once when the resident size moved by more than 1% (and
     * 1 MiB) since the last reading: allocation is what changes pages per node most. */
    read_pages =
        tail > 0 && (pages_due || !s->pages_read ||
                     (out->rss_bytes > s->rss_at_pages ? out->rss_bytes - s->rss_at_pages
                                                       : s->rss_at_pages - out->rss_bytes) >
                         (s->rss_at_pages / 100 > (1u << 20) ? s->rss_at_pages / 100 : (1u << 20)));
    out->have_pages = read_pages;
    out->have_cs = detail_due && tail > 0;
    out->have_balancing = detail_due && balancing;
    if (!balancing)
        snprintf(out->balancing_reason, sizeof(out->balancing_reason), "%s",
                 nc ? nc->balancing_reason : "node counters not read");
    if (read_pages)
        pages_epoch_read(s->root, &epoch);
    if (detail_due)
        u = (struct affinity_union){hwloc_bitmap_alloc(), hwloc_bitmap_alloc(), false};
    for (unsigned i = 0; i < tail; i++) {
        if (detail_due)
            add_detail(s, &procs[i], balancing, &u, out);
        if (read_pages)
            add_pages(s, &procs[i], &epoch, out);
    }
    /* The registered CPUs narrowed to the processes' affinity. Empty means "the registered
     * CPUs": the affinity is unknown, or binds the processes outside what was registered (a
     * step's tasks never run there; trust the registration). */
    if (detail_due && tail > 0 && !u.unknown && u.allowed && !hwloc_bitmap_iszero(u.allowed))
        hwloc_bitmap_and(s->effective_cpus, s->cpus, u.allowed);
    else if (detail_due && tail > 0)
        hwloc_bitmap_zero(s->effective_cpus);
    hwloc_bitmap_free(u.allowed);
    hwloc_bitmap_free(u.one);
    cache_sweep(&s->cache);
    if (read_pages && out->have_pages) {
        s->pages_read = true;
        s->rss_at_pages = out->rss_bytes;
    }
    free(procs);
    if (tail == 0) {
        /* Nothing left to read: zeros would look like a job that used nothing. */
        out->have_proc = out->have_cs = out->have_balancing = out->have_pages = false;
        snprintf(out->proc_reason, sizeof(out->proc_reason),
                 "no live process (the step's tasks have exited)");
        snprintf(out->pages_reason, sizeof(out->pages_reason),
                 "no live process (the step's tasks have exited)");
    }

    if (s->perf_mask) {
        read_perf(s, out);
    } else {
        for (int e = 0; e < NP_PERF_NEVENTS; e++)
            snprintf(out->perf_reason[e], sizeof(out->perf_reason[e]), "%s", s->perf_off_reason);
    }

    np_sampler_node_figures(s, nc, out);
    return (int)out->processes;
}
