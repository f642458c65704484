/* The standard process_* families of the page (see metrics_text.h), from numaplaced's own /proc
 * files under proc_root: libmicrohttpd has none, and Prometheus users query these names for any
 * exporter. A file that cannot be read leaves its series out. */
#include "metrics_text.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "numaplace/procfs.h"

static const char *root_of(const struct np_daemon *d)
{
    return strcmp(d->cfg.proc_root, "/") == 0 ? "" : d->cfg.proc_root;
}

/* The first "@p key N" line of @p path under the root, N in @p out. @return 0 or -1 */
static int read_keyed(const struct np_daemon *d, const char *path, const char *key,
                      unsigned long long *out)
{
    char full[2048], line[512];
    const size_t klen = strlen(key);
    FILE *f;
    int rc = -1;

    snprintf(full, sizeof(full), "%s%s", root_of(d), path);
    f = fopen(full, "re");
    if (!f)
        return -1;
    while (rc < 0 && fgets(line, sizeof(line), f))
        if (strncmp(line, key, klen) == 0 && sscanf(line + klen, " %llu", out) == 1)
            rc = 0;
    fclose(f);
    return rc;
}

static long open_fds(const struct np_daemon *d)
{
    char path[2048];
    DIR *dir;
    const struct dirent *e;
    long n = 0;

    snprintf(path, sizeof(path), "%s/proc/%d/fd", root_of(d), (int)getpid());
    dir = opendir(path);
    if (!dir)
        return -1;
    while ((e = readdir(dir)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(dir);
    return n;
}

void metrics_render_process(const struct np_daemon *d, struct metrics_text *t)
{
    const double tick = (double)sysconf(_SC_CLK_TCK);
    const pid_t pid = getpid();
    struct np_proc_stat st;
    struct np_proc_status status = {0};
    unsigned long long btime, max_fds;
    char path[64];
    const long fds = open_fds(d);
    const bool have_stat = np_proc_stat_read(root_of(d), pid, &st, NULL) == 0 && tick > 0;

    if (have_stat)
        metrics_single_f(t, "process_cpu_seconds_total", "counter",
                         "User and system CPU time numaplaced used (all its threads), in seconds.",
                         (double)(st.utime_ticks + st.stime_ticks) / tick);
    if (have_stat && read_keyed(d, "/proc/stat", "btime", &btime) == 0) {
        metrics_family(t, "process_start_time_seconds", "gauge",
                       "When numaplaced started, in seconds since the epoch.");
        metrics_series(t, "process_start_time_seconds");
        metrics_putf(t, " %.2f\n", (double)btime + (double)st.starttime_ticks / tick);
    }
    if (np_proc_status_read(root_of(d), pid, &status, NULL) == 0 && status.vm_rss_kb)
        metrics_single_u64(t, "process_resident_memory_bytes", "gauge",
                           "numaplaced's resident memory, in bytes.", status.vm_rss_kb * 1024);
    if (fds >= 0)
        metrics_single_u64(t, "process_open_fds", "gauge", "File descriptors numaplaced has open.",
                           (uint64_t)fds);
    snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
    if (read_keyed(d, path, "Max open files", &max_fds) == 0)
        metrics_single_u64(t, "process_max_fds", "gauge",
                           "numaplaced's limit of open file descriptors (its soft RLIMIT_NOFILE).",
                           max_fds);
}
