/* The descriptor reserve and the steps' budget above it (daemon.h). */
#include "daemon.h"

#include <dirent.h>
#include <errno.h>
#include <sys/resource.h>

enum fd_verdict fd_verdict(const struct fd_use *u, long perf_need)
{
    if (u->limit <= 0)
        return FD_OK;
    if (u->open + u->reserve >= u->limit)
        return FD_REFUSE;
    /* The kept files the samplers may still open count as taken: later, from the same pool. */
    if (perf_need > 0 && u->open + u->reserve + u->kept_left + perf_need > u->limit)
        return FD_NO_PERF;
    return FD_OK;
}

long fd_count_entries(const char *path)
{
    DIR *dir = opendir(path);
    long n = 0;

    if (!dir)
        return -errno;
    for (const struct dirent *e; (e = readdir(dir));)
        if (e->d_name[0] != '.')
            n++;
    closedir(dir);
    return n;
}

long fd_count_open(const char *fd_dir)
{
    const long n = fd_count_entries(fd_dir);

    return n > 0 ? n - 1 : n; /* the directory's own descriptor, closed now */
}

long fd_reserve_left(const struct np_daemon *d)
{
    const struct np_kept_file *node[] = {&d->counters.interrupts_file, &d->counters.softirqs_file,
                                         &d->counters.stat_file, &d->counters.balancing_file};
    long clients = 0, files = 0;

    for (int i = 0; i < NPD_MAX_CLIENTS; i++)
        clients += d->clients[i].fd >= 0;
    for (size_t i = 0; i < sizeof(node) / sizeof(node[0]); i++)
        files += node[i]->open;
    for (unsigned n = 0; d->meminfo_files && n < NP_MAX_NODES; n++)
        files += d->meminfo_files[n].open;
    return NPD_FD_RESERVE - clients - (files < NPD_FD_NODE_FILES ? files : NPD_FD_NODE_FILES);
}

long fd_perf_need(unsigned perf_mask)
{
    return __builtin_popcount(perf_mask);
}

enum fd_verdict fd_check(const struct np_daemon *d, long perf_need, char *why, size_t why_size)
{
    const long open = fd_count_open("/proc/self/fd");
    const struct fd_use u = {open < 0 ? d->fd_limit : open, fd_reserve_left(d), d->fd_limit,
                             d->fd_budget.left};
    const enum fd_verdict v = fd_verdict(&u, perf_need);

    if (v == FD_REFUSE)
        snprintf(why, why_size,
                 "descriptor budget: %ld of %ld open, %ld more kept for reports and registry "
                 "saves",
                 u.open, u.limit, u.reserve);
    else if (v == FD_NO_PERF)
        snprintf(why, why_size,
                 "descriptor budget: %ld of %ld open, %ld more kept for reports and registry "
                 "saves, %ld for kept /proc files: no room for %ld perf counters a task, so /proc "
                 "only",
                 u.open, u.limit, u.reserve, u.kept_left, perf_need);
    return v;
}

void fd_budget_start(struct np_daemon *d)
{
    struct rlimit lim;
    long above;

    d->fd_budget.left = 0;
    if (getrlimit(RLIMIT_NOFILE, &lim) < 0)
        return;
    if (lim.rlim_cur < lim.rlim_max) {
        struct rlimit raised = {lim.rlim_max, lim.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
            lim = raised;
    }
    d->fd_limit =
        lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur > (1UL << 30) ? 1L << 30 : (long)lim.rlim_cur;
    /* A quarter of what is above the reserve for kept /proc files; the rest for perf. */
    above = d->fd_limit - NPD_FD_RESERVE;
    d->fd_budget.left = above > 0 ? above / 4 : 0;
    if (above <= 0)
        NPD_LOG(d, WARNING,
                "descriptor limit %ld is within the %d kept for reports and registry saves: every "
                "registration will be refused (raise LimitNOFILE)",
                d->fd_limit, NPD_FD_RESERVE);
    NPD_LOG(d, INFO,
            "descriptors: %ld, %d kept for reports and registry saves, up to %ld for kept /proc "
            "files",
            d->fd_limit, NPD_FD_RESERVE, d->fd_budget.left);
}
