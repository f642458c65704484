/* Per-process figures from /proc (see numaplace/procfs.h). */
#include "numaplace/procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void np_kept_file_init(struct np_kept_file *k)
{
    memset(k, 0, sizeof(*k));
}

static void close_fd(struct np_kept_file *k)
{
    if (k->open)
        close(k->fd);
    k->open = false;
}

void np_kept_file_close(struct np_kept_file *k)
{
    if (!k)
        return;
    close_fd(k);
    free(k->path);
    free(k->text);
    np_kept_file_init(k);
}

/* The whole file from offset 0 into k->text; @return its length, or -1 with errno. */
static ssize_t read_whole(struct np_kept_file *k)
{
    size_t have = 0;

    for (;;) {
        ssize_t n;
        if (have + 1 >= k->cap) {
            const size_t cap = k->cap ? k->cap * 2 : 8192;
            char *grown = realloc(k->text, cap);
            if (!grown)
                return -1;
            k->text = grown;
            k->cap = cap;
        }
        n = pread(k->fd, k->text + have, k->cap - 1 - have, (off_t)have);
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        have += (size_t)n;
    }
    k->text[have] = '\0';
    return (ssize_t)have;
}

/* The whole of @p path as read now, as a stream the caller fcloses: through the kept descriptor
 * (opened on first use; a failed read is retried once on a fresh one), or, with @p k NULL or an
 * empty reading, fopen(@p path) as before. @return the stream, or NULL with errno set (as fopen) */
static FILE *kept_file_open(struct np_kept_file *k, const char *path)
{
    ssize_t len = -1;

    if (!k)
        return fopen(path, "re");
    if (k->open && strcmp(k->path, path) != 0)
        close_fd(k); /* another root since */
    for (int attempt = 0; attempt < 2 && len < 0; attempt++) {
        if (!k->open) {
            char *copy = strdup(path);
            if (!copy || (k->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
                free(copy);
                return fopen(path, "re"); /* its error, as a fresh reader sees it */
            }
            free(k->path);
            k->path = copy;
            k->open = true;
        }
        if ((len = read_whole(k)) < 0)
            close_fd(k); /* replaced or gone: the next attempt opens it afresh */
    }
    /* An empty file (fmemopen refuses a size of 0) or a failed read: as a fresh reader sees it. */
    return len > 0 ? fmemopen(k->text, (size_t)len, "r") : fopen(path, "re");
}

/* strtoull(p, &end, 10) for the numbers of a stat line, without its locale and overflow work:
 * blanks, an optional sign (a minus negates, as strtoull does), digits. @return the end, or @p p
 * when there is no number. */
static const char *decimal(const char *p, uint64_t *value)
{
    const char *q = p;
    uint64_t v = 0;
    bool minus = false;

    while (*q == ' ' || *q == '\t' || *q == '\n')
        q++;
    if (*q == '-' || *q == '+')
        minus = *q++ == '-';
    if (*q < '0' || *q > '9')
        return p;
    while (*q >= '0' && *q <= '9')
        v = v * 10 + (uint64_t)(*q++ - '0');
    *value = minus ? 0 - v : v;
    return q;
}

int np_proc_stat_parse(const char *line, struct np_proc_stat *out, struct np_err *err)
{
    const char *open = strchr(line, '(');
    const char *close = strrchr(line, ')');
    char *pid_end;
    const long pid = strtol(line, &pid_end, 10);

    memset(out, 0, sizeof(*out));
    if (!open || !close || close < open || pid_end == line)
        return np_err_set(err, -EINVAL, "malformed /proc stat line: no '(comm)' after the pid");
    out->pid = (pid_t)pid;
    snprintf(out->comm, sizeof(out->comm), "%.*s", (int)(close - open - 1), open + 1);
    /* Fields 3.. after the comm: state ppid pgrp session tty tpgid flags minflt cminflt majflt
     * cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime vsize
     * rss ... processor (39th field). Read by hand, not sscanf: numaplaced parses this line for
     * every process every interval, and sscanf was a tenth of its time. */
    {
        enum {
            STATE = 3,
            PPID,
            FLAGS = 9,
            MINFLT,
            MAJFLT = 12,
            UTIME = 14,
            STIME,
            THREADS = 20,
            START = 22,
            RSS = 24,
            PROCESSOR = 39
        };
        /* The fields kept, in order: how many of them parsed is what the error names. */
        static const int kept[] = {STATE, PPID,    FLAGS, MINFLT, MAJFLT,   UTIME,
                                   STIME, THREADS, START, RSS,    PROCESSOR};
        uint64_t value[PROCESSOR + 1] = {0};
        const char *p = close + 1;
        int n = 0;

        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (*p) {
            out->state = *p++;
            n = 1;
            for (int field = PPID; field <= PROCESSOR; field++) {
                const char *end = decimal(p, &value[field]);
                if (end == p)
                    break;
                p = end;
                if (n < (int)(sizeof(kept) / sizeof(kept[0])) && field == kept[n])
                    n++;
            }
        }
        if (n < 10)
            return np_err_set(err, -EINVAL,
                              "malformed /proc stat line for pid %ld: %d of the fields after "
                              "the comm parsed",
                              pid, n);
        out->ppid = (pid_t)value[PPID];
        out->flags = (unsigned long)value[FLAGS];
        out->minflt = value[MINFLT];
        out->majflt = value[MAJFLT];
        out->utime_ticks = value[UTIME];
        out->stime_ticks = value[STIME];
        out->num_threads = (long)value[THREADS];
        out->starttime_ticks = value[START];
        out->rss_pages = value[RSS];
        out->processor = n >= 11 ? (int)value[PROCESSOR] : -1;
    }
    return 0;
}

/* What a failed open or read of @p path says: the process is gone (@p gone), or why not. */
static int read_failed(struct np_err *err, pid_t pid, const char *path, bool gone)
{
    const int e = errno;

    return gone ? np_err_set(err, -ESRCH, "no process %d (%s)", (int)pid, path)
                : np_err_set(err, -e, "cannot read %s: %s", path, strerror(e));
}

static FILE *open_proc(const char *root, pid_t pid, const char *file, char *path, size_t len,
                       int *rc, struct np_err *err)
{
    FILE *f;

    snprintf(path, len, "%s/proc/%d/%s", root && *root ? root : "", (int)pid, file);
    f = fopen(path, "re");
    if (!f)
        *rc = read_failed(err, pid, path, errno == ENOENT || errno == ESRCH);
    return f;
}

int np_proc_stat_read_fd(int fd, pid_t pid, const char *path, struct np_proc_stat *out,
                         struct np_err *err)
{
    char line[2048];
    /* From offset 0: a kept descriptor shows the figures of now, with no open(2) each time. */
    const ssize_t n = pread(fd, line, sizeof(line) - 1, 0);

    if (n < 0)
        return read_failed(err, pid, path, errno == ESRCH);
    if (n == 0)
        return np_err_set(err, -EINVAL, "%s is empty", path);
    line[n] = '\0';
    line[strcspn(line, "\n")] = '\0';
    return np_proc_stat_parse(line, out, err);
}

int np_proc_stat_open(const char *root, pid_t pid, char *path, size_t size, struct np_err *err)
{
    int fd;

    snprintf(path, size, "%s/proc/%d/stat", root && *root ? root : "", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd >= 0 ? fd : read_failed(err, pid, path, errno == ENOENT || errno == ESRCH);
}

int np_proc_stat_read(const char *root, pid_t pid, struct np_proc_stat *out, struct np_err *err)
{
    char path[4096];
    const int fd = np_proc_stat_open(root, pid, path, sizeof(path), err);
    int rc;

    if (fd < 0)
        return fd;
    rc = np_proc_stat_read_fd(fd, pid, path, out, err);
    close(fd);
    return rc;
}

void np_proc_status_parse_line(const char *line, struct np_proc_status *out)
{
    unsigned long long v;
    long id;

    /* Most of the ~55 lines are none of these: a cheap look at the first letter before sscanf. */
    switch (line[0]) {
    case 'T':
        if (sscanf(line, "Tgid: %ld", &id) == 1)
            out->tgid = (pid_t)id;
        break;
    case 'P':
        if (sscanf(line, "PPid: %ld", &id) == 1)
            out->ppid = (pid_t)id;
        break;
    case 'U':
        if (sscanf(line, "Uid: %ld", &id) == 1)
            out->uid = (uid_t)id;
        break;
    case 'V':
        if (sscanf(line, "VmRSS: %llu", &v) == 1)
            out->vm_rss_kb = v;
        break;
    case 'v':
        if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1)
            out->voluntary_ctxt_switches = v;
        break;
    case 'n':
        if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
            out->nonvoluntary_ctxt_switches = v;
        break;
    case 'C':
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0)
            snprintf(out->cpus_allowed_list, sizeof(out->cpus_allowed_list), "%s",
                     line + 18 + strspn(line + 18, " \t"));
        break;
    case 'M':
        if (strncmp(line, "Mems_allowed_list:", 18) == 0)
            snprintf(out->mems_allowed_list, sizeof(out->mems_allowed_list), "%s",
                     line + 18 + strspn(line + 18, " \t"));
        break;
    default:
        break;
    }
}

int np_proc_status_read(const char *root, pid_t pid, struct np_proc_status *out, struct np_err *err)
{
    char path[4096], line[1024];
    int rc = 0;
    FILE *f = open_proc(root, pid, "status", path, sizeof(path), &rc, err);

    memset(out, 0, sizeof(*out));
    if (!f)
        return rc;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        np_proc_status_parse_line(line, out);
    }
    fclose(f);
    return 0;
}

int np_proc_cpu_counters(const char *root, const char *file, struct np_kept_file *kept,
                         uint64_t *per_cpu, unsigned max_cpus, struct np_err *err)
{
    char path[4096];
    char *line = NULL;
    size_t cap = 0;
    int columns[1024], ncols = 0, top = 0;
    bool empty;
    FILE *f;

    memset(per_cpu, 0, max_cpus * sizeof(*per_cpu));
    snprintf(path, sizeof(path), "%s/proc/%s", root && *root ? root : "", file);
    f = kept_file_open(kept, path);
    if (!f)
        return np_err_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
    empty = getline(&line, &cap, f) < 0;
    for (char *save = NULL, *tok = empty ? NULL : strtok_r(line, " \t\n", &save);
         tok && ncols < 1024; tok = strtok_r(NULL, " \t\n", &save)) {
        int cpu;
        if (sscanf(tok, "CPU%d", &cpu) == 1 && cpu >= 0)
            columns[ncols++] = cpu;
    }
    if (ncols == 0) {
        free(line);
        fclose(f);
        return np_err_set(err, -EINVAL, empty ? "%s is empty" : "%s: no CPU columns in its header",
                          path);
    }
    while (getline(&line, &cap, f) >= 0) {
        char *p = strchr(line, ':');
        uint64_t values[1024];
        int n = 0;

        if (!p)
            continue;
        for (p++; n < ncols; n++) {
            char *end;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p < '0' || *p > '9')
                break;
            values[n] = strtoull(p, &end, 10);
            p = end;
        }
        if (n < ncols)
            continue; /* a global count (ERR, MIS), not one per CPU */
        for (int c = 0; c < ncols; c++) {
            if ((unsigned)columns[c] < max_cpus)
                per_cpu[columns[c]] += values[c];
            if (columns[c] + 1 > top)
                top = columns[c] + 1;
        }
    }
    free(line);
    fclose(f);
    return top;
}

int np_proc_cpu_ticks(const char *root, struct np_kept_file *kept, uint64_t *busy_ticks,
                      uint64_t *total_ticks, unsigned max_cpus, struct np_err *err)
{
    char path[4096], line[512];
    int top = 0;
    FILE *f;

    memset(busy_ticks, 0, max_cpus * sizeof(*busy_ticks));
    if (total_ticks)
        memset(total_ticks, 0, max_cpus * sizeof(*total_ticks));
    snprintf(path, sizeof(path), "%s/proc/stat", root && *root ? root : "");
    f = kept_file_open(kept, path);
    if (!f)
        return np_err_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
    while (fgets(line, sizeof(line), f)) {
        unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal = 0;
        unsigned cpu;

        if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
            continue;
        if (sscanf(line + 3, "%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &user, &nice, &sys,
                   &idle, &iowait, &irq, &softirq, &steal) < 8) {
            fclose(f);
            return np_err_set(err, -EINVAL, "%s: malformed line \"%.40s\"", path, line);
        }
        if (cpu < max_cpus) {
            busy_ticks[cpu] = user + nice + sys + irq + softirq;
            if (total_ticks)
                total_ticks[cpu] = busy_ticks[cpu] + idle + iowait + steal;
        }
        if ((int)cpu + 1 > top)
            top = (int)cpu + 1;
    }
    fclose(f);
    if (top == 0)
        return np_err_set(err, -EINVAL, "%s has no per-CPU lines", path);
    return top;
}

int np_proc_children_read_fd(int fd, pid_t *out, unsigned max, unsigned *found)
{
    char buf[4096], *p, *end;
    off_t at = 0;
    ssize_t n;

    /* pread from 0: a kept descriptor lists the children of now. */
    while ((n = pread(fd, buf, sizeof(buf) - 1, at)) > 0) {
        /* A read ends at a pid boundary only by chance: keep a cut number for the next one. */
        buf[n] = '\0';
        at += n;
        for (p = buf;; p = end) {
            long child = strtol(p, &end, 10);
            if (end == p)
                break;
            if (*end == '\0' && n == (ssize_t)sizeof(buf) - 1) {
                /* Possibly cut: re-read it. A number filling the whole buffer is no pid, and
                 * re-reading it would never end: the file is not read further. */
                if (p == buf)
                    return 0;
                at -= end - p;
                break;
            }
            if (*found < max)
                out[*found] = (pid_t)child;
            (*found)++;
        }
    }
    return n < 0 ? -errno : 0;
}

/* Read every interval for every process, and almost always empty: plain read(2), no stdio. */
static int read_children(const char *file, pid_t *out, unsigned max, unsigned *found)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC), rc;

    if (fd < 0)
        return -errno;
    rc = np_proc_children_read_fd(fd, out, max, found);
    close(fd);
    return rc;
}

int np_proc_children(const char *root, pid_t pid, long threads, pid_t *out, unsigned max,
                     bool *threads_cut, struct np_err *err)
{
    char path[4096];
    struct dirent *de;
    unsigned found = 0, walked = 0;
    DIR *dir;

    if (threads_cut)
        *threads_cut = false;

    snprintf(path, sizeof(path), "%s/proc/%d/task", root && *root ? root : "", (int)pid);
    if (threads == 1) {
        char file[4400];
        snprintf(file, sizeof(file), "%s/%d/children", path, (int)pid);
        if (read_children(file, out, max, &found) == 0)
            return (int)found;
        found = 0; /* the main thread is gone or the list changed: walk the threads */
    }
    dir = opendir(path);
    if (!dir)
        return read_failed(err, pid, path, errno == ENOENT);
    while ((de = readdir(dir))) {
        char file[4400];

        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        /* One open a thread each interval: a process of 100,000 threads must not cost 100,000 */
        if (walked++ == NP_PROC_MAX_THREADS_WALKED) {
            if (threads_cut)
                *threads_cut = true;
            break;
        }
        snprintf(file, sizeof(file), "%s/%s/children", path, de->d_name);
        read_children(file, out, max, &found); /* a thread that ended meanwhile has none */
    }
    closedir(dir);
    return (int)found;
}

const char *np_proc_status_cpus_allowed(const struct np_proc_status *ps)
{
    /* a list that filled the field may have been cut: not known, rather than narrower */
    return strlen(ps->cpus_allowed_list) + 1 < sizeof(ps->cpus_allowed_list) ? ps->cpus_allowed_list
                                                                             : NULL;
}

int np_proc_ctxt_switches(const char *root, pid_t pid, long threads, uint64_t *voluntary,
                          uint64_t *involuntary, np_cpu_list_fn *cpus_allowed, void *arg,
                          struct np_err *err)
{
    char path[4096];
    struct dirent *de;
    DIR *dir;

    *voluntary = *involuntary = 0;
    if (threads == 1) {
        struct np_proc_status ps;
        int rc = np_proc_status_read(root, pid, &ps, err);
        if (rc == 0) {
            *voluntary = ps.voluntary_ctxt_switches;
            *involuntary = ps.nonvoluntary_ctxt_switches;
            if (cpus_allowed)
                cpus_allowed(np_proc_status_cpus_allowed(&ps), arg);
        }
        return rc;
    }
    snprintf(path, sizeof(path), "%s/proc/%d/task", root && *root ? root : "", (int)pid);
    dir = opendir(path);
    if (!dir)
        return read_failed(err, pid, path, errno == ENOENT);
    while ((de = readdir(dir))) {
        char file[4400], line[1024];
        bool listed = false;
        FILE *f;

        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        snprintf(file, sizeof(file), "%s/%s/status", path, de->d_name);
        f = fopen(file, "re");
        if (!f)
            continue; /* the thread ended meanwhile */
        while (fgets(line, sizeof(line), f)) {
            unsigned long long v;
            if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1) {
                *voluntary += v;
            } else if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1) {
                *involuntary += v;
            } else if (cpus_allowed && !listed && strncmp(line, "Cpus_allowed_list:", 18) == 0) {
                const size_t len = strcspn(line, "\n");
                if (line[len] == '\n') { /* the whole line, not a cut one */
                    line[len] = '\0';
                    cpus_allowed(line + 18 + strspn(line + 18, " \t"), arg);
                    listed = true;
                }
            }
        }
        fclose(f);
        if (cpus_allowed && !listed)
            cpus_allowed(NULL, arg);
    }
    closedir(dir);
    return 0;
}

int np_proc_numa_balancing(const char *root, pid_t pid, uint64_t *pages_migrated, uint64_t *faults,
                           struct np_err *err)
{
    char path[4096], line[256];
    int rc = 0, found = 0;
    FILE *f = open_proc(root, pid, "sched", path, sizeof(path), &rc, err);

    *pages_migrated = *faults = 0;
    if (!f)
        return rc;
    while (fgets(line, sizeof(line), f)) {
        unsigned long long v;
        if (sscanf(line, "numa_pages_migrated : %llu", &v) == 1) {
            *pages_migrated = v;
            found++;
        } else if (sscanf(line, "total_numa_faults : %llu", &v) == 1) {
            *faults = v;
            found++;
        }
    }
    fclose(f);
    if (found < 2)
        return np_err_set(err, -ENOENT,
                          "%s has no numa_pages_migrated / total_numa_faults (no "
                          "NUMA balancing in this kernel)",
                          path);
    return 0;
}

int np_numa_balancing_enabled(const char *root, struct np_kept_file *kept, struct np_err *err)
{
    char path[4096];
    int value = 0;
    FILE *f;

    snprintf(path, sizeof(path), "%s/proc/sys/kernel/numa_balancing", root && *root ? root : "");
    f = kept_file_open(kept, path);
    if (!f)
        return np_err_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
    if (fscanf(f, "%d", &value) != 1)
        value = 0;
    fclose(f);
    return value != 0;
}

bool np_kernel_tiering(const char *root, char *why, size_t why_len)
{
    static const char demotion[] = "/sys/kernel/mm/numa/demotion_enabled",
                      balancing[] = "/proc/sys/kernel/numa_balancing";
    char path[4096];
    unsigned mode = 0;
    FILE *f;

    why[0] = '\0';
    snprintf(path, sizeof(path), "%s%s", root && *root ? root : "", demotion);
    if ((f = fopen(path, "re")) != NULL) {
        char word[16] = "";
        if (fscanf(f, "%15s", word) == 1 && strcmp(word, "true") == 0)
            snprintf(why, why_len, "the kernel demotes pages itself (%s is true)", demotion);
        fclose(f);
    }
    snprintf(path, sizeof(path), "%s%s", root && *root ? root : "", balancing);
    if (!why[0] && (f = fopen(path, "re")) != NULL) {
        if (fscanf(f, "%u", &mode) == 1 && (mode & 2u))
            snprintf(why, why_len, "NUMA balancing promotes pages itself (%s is %u: tiering mode)",
                     balancing, mode);
        fclose(f);
    }
    return why[0] != '\0';
}

int np_node_meminfo(const char *root, unsigned node, struct np_kept_file *kept,
                    uint64_t *total_bytes, uint64_t *free_bytes, struct np_err *err)
{
    char path[4096], line[256];
    int found = 0;
    FILE *f;

    *total_bytes = *free_bytes = 0;
    snprintf(path, sizeof(path), "%s/sys/devices/system/node/node%u/meminfo",
             root && *root ? root : "", node);
    f = kept_file_open(kept, path);
    if (!f)
        return np_err_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
    while (fgets(line, sizeof(line), f)) {
        unsigned n;
        unsigned long long kb;
        if (sscanf(line, "Node %u MemTotal: %llu kB", &n, &kb) == 2) {
            *total_bytes = kb * 1024;
            found++;
        } else if (sscanf(line, "Node %u MemFree: %llu kB", &n, &kb) == 2) {
            *free_bytes = kb * 1024;
            found++;
        }
    }
    fclose(f);
    return found == 2 ? 0 : np_err_set(err, -EINVAL, "%s has no MemTotal/MemFree lines", path);
}

/* The kernel prints white space, '=' and backslashes in a path as octal escapes (\040): undo
 * in place, so the path is the file's real name. */
static char *unescape(char *path)
{
    char *w = path;

    for (const char *r = path; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 | (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    return path;
}

int np_numa_maps_parse_line(char *line, struct np_numa_mapping *out)
{
    char *save = NULL, *tok, *end;

    memset(out, 0, sizeof(*out));
    out->page_kb = (unsigned long)sysconf(_SC_PAGESIZE) / 1024;
    line[strcspn(line, "\n")] = '\0';
    tok = strtok_r(line, " ", &save);
    if (!tok)
        return -EINVAL;
    errno = 0;
    out->start = (uintptr_t)strtoull(tok, &end, 16);
    if (errno || end == tok || *end)
        return -EINVAL;
    tok = strtok_r(NULL, " ", &save);
    if (!tok)
        return -EINVAL; /* truncated after the address */
    snprintf(out->policy, sizeof(out->policy), "%s", tok);
    while ((tok = strtok_r(NULL, " ", &save))) {
        unsigned node;
        unsigned long long value;
        char tail;

        if (sscanf(tok, "N%u=%llu%c", &node, &value, &tail) == 2) {
            if (node < NP_NUMA_MAPS_MAX_NODES)
                out->pages[node] = value;
        } else if (sscanf(tok, "kernelpagesize_kB=%llu%c", &value, &tail) == 1 && value) {
            out->page_kb = (unsigned long)value;
        } else if (strncmp(tok, "file=", 5) == 0) {
            out->path = unescape(tok + 5);
        } else if (strncmp(tok, "anon=", 5) == 0 || strcmp(tok, "heap") == 0 ||
                   strcmp(tok, "stack") == 0) {
            out->anon = true;
        } else if (strcmp(tok, "huge") == 0) {
            out->hugetlb = true;
        }
        /* anything else (dirty=, mapped=, active=, new kernels' tokens): ignored */
    }
    return 0;
}

int np_numa_maps_each(const char *root, pid_t pid, np_numa_maps_fn *fn, void *arg,
                      unsigned *skipped, struct np_err *err)
{
    char path[4096];
    char *line = NULL;
    size_t cap = 0;
    unsigned bad = 0;
    int rc = 0;
    FILE *f = open_proc(root, pid, "numa_maps", path, sizeof(path), &rc, err);

    if (!f)
        return rc;
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        struct np_numa_mapping m;
        if (np_numa_maps_parse_line(line, &m) < 0) {
            bad++;
            continue;
        }
        rc = fn(&m, arg);
    }
    free(line);
    fclose(f);
    if (skipped)
        *skipped = bad;
    return rc;
}

static int add_usage(const struct np_numa_mapping *m, void *arg)
{
    struct np_numa_usage *u = arg;

    u->mappings++;
    for (int n = 0; n < NP_NUMA_MAPS_MAX_NODES; n++) {
        const uint64_t bytes = m->pages[n] * m->page_kb * 1024;
        if (!bytes)
            continue;
        if (m->path && !m->anon)
            u->file_bytes[n] += bytes;
        else
            u->anon_bytes[n] += bytes;
        u->total_bytes += bytes;
        if (n > u->max_node)
            u->max_node = n;
    }
    return 0;
}

int np_numa_maps_usage(const char *root, pid_t pid, struct np_numa_usage *out, struct np_err *err)
{
    memset(out, 0, sizeof(*out));
    out->max_node = -1;
    return np_numa_maps_each(root, pid, add_usage, out, &out->skipped_lines, err);
}
