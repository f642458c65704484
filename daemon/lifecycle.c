/* numaplaced's context set up and torn down: it starts and stops every part (daemon.h). */
#include "daemon.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writer.h"

void np_daemon_init(struct np_daemon *d)
{
    memset(d, 0, sizeof(*d));
    np_helper_config_defaults(&d->cfg);
    d->cfg.log_level = NP_LOG_INFO;
    d->log.fn = log_sink;
    d->log.arg = d;
    d->report_durable = job_report_done;
    d->listen_fd = d->timer_fd = d->signal_fd = d->pid_fd = -1;
    for (int i = 0; i < NPD_MAX_CLIENTS; i++)
        d->clients[i].fd = -1;
    registry_init(&d->registry);
    np_perf_counters_init(&d->perf_held);
    d->started_cpus = hwloc_bitmap_alloc(); /* NULL (out of memory): numaplaced is not pinned */
    d->helper_cpus = hwloc_bitmap_alloc();
    snprintf(d->hw_off_reason, sizeof(d->hw_off_reason), "not probed yet");
    d->hw_off_why = NP_PERF_WHY_NOT_PROBED;
    for (unsigned n = 0; n < NP_MAX_NODES; n++)
        d->hint.node_busy[n] = NAN;
}

void np_daemon_stop_writer(struct np_daemon *d)
{
    struct writer *w = d->writer;

    if (!w)
        return;
    /* Detached first: a save its completions start (a step forgotten, the journal past its
     * bound) is written here and now, not queued to a writer that no longer runs. */
    d->writer = NULL;
    writer_stop(w);
    writer_collect(w, d);
    writer_free(w);
}

void np_daemon_fini(struct np_daemon *d)
{
    np_daemon_stop_writer(d); /* its completions need the registry and the clients */
    registry_fini(&d->registry);
    uncore_bw_stop(d);
    report_hold_fini(d);
    server_close(d);
    http_stop(d);
    if (d->pid_fd >= 0) {
        unlink(d->cfg.pid_file);
        close(d->pid_fd);
        d->pid_fd = -1;
    }
    if (d->trace)
        fclose(d->trace);
    d->trace = NULL;
    if (d->signal_fd >= 0)
        close(d->signal_fd);
    if (d->timer_fd >= 0)
        close(d->timer_fd);
    d->signal_fd = d->timer_fd = -1;
    np_node_counters_fini(&d->counters);
    np_perf_close(&d->perf_held);
    sampling_close_meminfo(d);
    np_topology_free(d->topology);
    d->topology = NULL;
    hwloc_bitmap_free(d->started_cpus);
    hwloc_bitmap_free(d->helper_cpus);
    d->started_cpus = d->helper_cpus = NULL;
    free(d->cpu_node);
    d->cpu_node = NULL;
    for (unsigned i = 0; i < d->noverrides; i++) {
        free(d->overrides[i][0]);
        free(d->overrides[i][1]);
    }
    d->noverrides = 0;
}
