/* A sampler's processes from one interval to the next (see numaplace/proc_cache.h). */
#include "numaplace/proc_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numaplace/numa_maps.h"

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

void np_pages_epoch_read(const char *root, struct np_pages_epoch *out)
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

void np_proc_cache_init(struct np_proc_cache *c, const char *root, struct np_fd_budget *budget)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->root, sizeof(c->root), "%s", root ? root : "");
    c->budget = budget;
}

void np_proc_cache_fini(struct np_proc_cache *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->count; i++)
        close_all_kept(c, &c->entries[i]);
    free(c->entries);
    c->entries = NULL;
    c->count = c->cap = 0;
}

void np_proc_cache_begin(struct np_proc_cache *c)
{
    for (unsigned i = 0; i < c->count; i++)
        c->entries[i].seen = false;
}

void np_proc_cache_sweep(struct np_proc_cache *c)
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

struct np_proc_entry *np_proc_cache_stat(struct np_proc_cache *c, pid_t pid,
                                         struct np_proc_stat *st, struct np_err *err)
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

int np_proc_cache_children(struct np_proc_cache *c, pid_t pid, long threads, pid_t *out,
                           unsigned max, bool *threads_cut, struct np_err *err)
{
    struct np_proc_entry *e = find(c, pid);
    unsigned found = 0;

    if (threads_cut)
        *threads_cut = false;
    if (!e) /* not read in this interval: nothing kept to read through */
        return np_proc_children(c->root, pid, threads, out, max, threads_cut, err);
    if (threads == 1 && e->children_fd < 0) {
        char path[1200];
        int fd;
        snprintf(path, sizeof(path), "%s/proc/%d/task/%d/children", c->root, (int)e->pid,
                 (int)e->pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
            const int rc = np_proc_children_read_fd(fd, out, max, &found);
            keep(c, &e->children_fd, fd);
            if (rc == 0)
                return (int)found;
            close_kept(c, &e->children_fd);
        }
    } else if (threads == 1) {
        if (np_proc_children_read_fd(e->children_fd, out, max, &found) == 0)
            return (int)found;
        close_kept(c, &e->children_fd);
    }
    /* Several threads, or the main thread's file unreadable: walk the threads as before. */
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

int np_proc_cache_ctxt_switches(struct np_proc_cache *c, pid_t pid, long threads,
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

int np_proc_cache_pages(struct np_proc_cache *c, pid_t pid, const struct np_proc_stat *st,
                        const struct np_pages_epoch *epoch, uint64_t *node_bytes,
                        struct np_err *err)
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
