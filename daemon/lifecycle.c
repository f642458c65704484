/* numaplaced's context set up and torn down, its configuration loaded and reloaded (daemon.h). */
#include "daemon.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>

#include "writer.h"
#include "user_names.h"

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
    np_uncore_close(&d->uncore);
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
    free(d->tier_latency);
    d->tier_latency = NULL;
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

/* ---- the configuration ---- */

int config_load(struct np_daemon *d, bool initial)
{
    struct np_helper_config cfg;
    struct np_err err = {0};
    int rc;

    np_helper_config_defaults(&cfg);
    rc = np_helper_config_load(&cfg, d->config_path, &d->log, &err);
    if (rc == -ENOENT && strcmp(d->config_path, NP_HELPER_DEFAULT_CONFIG) == 0)
        rc = 0; /* no file at the default path: defaults and flags */
    /* Any bad value refuses the whole file: a reload that took the good keys and put the bad
     * one back at its default would change the running configuration without saying so. */
    if (rc < 0)
        return NPD_LOG_RC(d, ERROR, rc, "%s", err.msg);
    for (unsigned i = 0; i < d->noverrides; i++)
        if (np_helper_config_set(&cfg, d->overrides[i][0], d->overrides[i][1], &err) < 0)
            return NPD_LOG_RC(d, ERROR, -EINVAL, "--%s: %s", d->overrides[i][0], err.msg);
    if (!initial &&
        (strcmp(cfg.socket, d->cfg.socket) != 0 || strcmp(cfg.pid_file, d->cfg.pid_file) != 0 ||
         strcmp(cfg.proc_root, d->cfg.proc_root) != 0)) {
        NPD_LOG(d, WARNING,
                "reload: socket, pid_file and proc_root changes take effect at restart");
        memcpy(cfg.socket, d->cfg.socket, sizeof(cfg.socket));
        memcpy(cfg.pid_file, d->cfg.pid_file, sizeof(cfg.pid_file));
        memcpy(cfg.proc_root, d->cfg.proc_root, sizeof(cfg.proc_root));
    }
    d->cfg = cfg;
    admin_group_want(d->cfg.admin_group); /* looked up off the loop, before set-class asks */
    auto_class_load(d);
    hint_load(d);
    return 0;
}

int config_reload(struct np_daemon *d)
{
    const struct np_metrics_config old_metrics = d->cfg.metrics;
    const bool perf_before = d->cfg.perf;
    int rc;

    NPD_LOG(d, INFO, "SIGHUP: reloading %s", d->config_path);
    if ((rc = config_load(d, false)) < 0)
        return NPD_LOG_RC(d, ERROR, rc, "reload failed; the previous configuration stays");
    log_open(d);
    np_daemon_mkdir_p(d->cfg.spool_dir, 0755);
    np_daemon_mkdir_p(d->cfg.state_dir, 0700);
    trace_open(d);
    sampling_probe_perf(d);
    uncore_bw_reload(d, perf_before);
    sampling_pin_housekeeping(d);
    for (unsigned i = 0; i < d->registry.count; i++)
        job_note_helper_cpus(d, registry_at(&d->registry, i));
    migration_start(d);
    http_reload(d, &old_metrics);
    return NPD_LOG_RC(d, INFO, 0, "reloaded: interval %u ms, backends %s", d->cfg.interval_ms,
                      d->perf_mask ? "perf,proc" : "proc");
}
