/* numaplaced's configuration: load and reload (daemon.h). */

#include <errno.h>
#include <string.h>

#include "daemon.h"
#include "user_names.h"

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
    if (rc < 0) {
        NPD_LOG(d, ERROR, "%s", err.msg);
        return rc;
    }
    for (unsigned i = 0; i < d->noverrides; i++)
        if (np_helper_config_set(&cfg, d->overrides[i][0], d->overrides[i][1], &err) < 0) {
            NPD_LOG(d, ERROR, "--%s: %s", d->overrides[i][0], err.msg);
            return -EINVAL;
        }
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
    if ((rc = config_load(d, false)) < 0) {
        NPD_LOG(d, ERROR, "reload failed; the previous configuration stays");
        return rc;
    }
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
    NPD_LOG(d, INFO, "reloaded: interval %u ms, backends %s", d->cfg.interval_ms,
            d->perf_mask ? "perf,proc" : "proc");
    return 0;
}
