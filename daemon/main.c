/* numaplaced(8): the command line into overrides, then set up, the loop, and tear down. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "daemon.h"
#include "safe_file.h"
#include "writer.h"

/* The one daemon of this process. Static: it is large (every client's buffer). */
static struct np_daemon daemon_state;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: numaplaced [--config FILE] [--KEY=VALUE ...]\n"
            "  runs in the foreground (for systemd and tests); every configuration key is also "
            "a flag, --KEY=VALUE\n"
            "  (dashes may replace underscores). Keys: %s.\n"
            "  --check-config validates and exits. Default config: %s. See numaplaced(8).\n",
            np_helper_config_keys(), NP_HELPER_DEFAULT_CONFIG);
}

/* @return 0, 1 for --help (exit 0 at once), or -EINVAL (said on stderr) */
static int parse_args(struct np_daemon *d, int argc, char **argv, bool *check_only)
{
    snprintf(d->config_path, sizeof(d->config_path), "%s", NP_HELPER_DEFAULT_CONFIG);
    for (int i = 1; i < argc; i++) {
        char key[128], *arg = argv[i], *value;

        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 1;
        }
        if (strcmp(arg, "--check-config") == 0) {
            *check_only = true;
            continue;
        }
        if (strcmp(arg, "--foreground") == 0 || strcmp(arg, "-F") == 0)
            continue; /* always in the foreground; accepted for habit */
        if (strncmp(arg, "--", 2) != 0) {
            fprintf(stderr, "numaplaced: unexpected argument \"%s\"\n", arg);
            usage(stderr);
            return -EINVAL;
        }
        arg += 2;
        value = strchr(arg, '=');
        if (!value) {
            if (i + 1 >= argc) {
                fprintf(stderr, "numaplaced: --%s needs a value\n", arg);
                return -EINVAL;
            }
            snprintf(key, sizeof(key), "%s", arg);
            value = argv[++i];
        } else {
            snprintf(key, sizeof(key), "%.*s", (int)(value - arg), arg);
            value++;
        }
        for (char *p = key; *p; p++)
            if (*p == '-')
                *p = '_';
        if (strcmp(key, "config") == 0) {
            snprintf(d->config_path, sizeof(d->config_path), "%s", value);
            continue;
        }
        if (d->noverrides == NPD_MAX_OVERRIDES) {
            fprintf(stderr, "numaplaced: too many flags\n");
            return -EINVAL;
        }
        d->overrides[d->noverrides][0] = strdup(key);
        d->overrides[d->noverrides][1] = strdup(value);
        d->noverrides++;
    }
    return 0;
}

/* A kill -9 between a temporary's creation and its rename left it; the pid file's lock is ours */
static void sweep_temporaries(struct np_daemon *d, const char *dir)
{
    struct np_err err = {0};
    const int removed = safe_dir_sweep(dir, &err);

    if (removed < 0)
        NPD_LOG(d, WARNING, "cannot look for temporary files left in %s: %s", dir, err.msg);
    else if (removed > 0)
        NPD_LOG(d, INFO, "removed %d temporary file(s) an earlier run left in %s", removed, dir);
}

/* Everything before the loop. @return 0, or the exit status */
static int set_up(struct np_daemon *d)
{
    int rc;

    gethostname(d->host, sizeof(d->host) - 1);
    d->started_mono = np_monotonic_s();
    NPD_LOG(d, INFO, "numaplaced starting (protocol %d, pid %d, config %s)", NP_PROTO_VERSION,
            (int)getpid(), d->config_path);
    if (geteuid() != 0)
        NPD_LOG(d, WARNING,
                "not running as root: other users' processes cannot be read or counted");
    const int fds_rc = loop_open_fds(d);
    if ((rc = np_daemon_mkdir_p(d->cfg.spool_dir, 0755)) < 0 ||
        (rc = np_daemon_mkdir_p(d->cfg.state_dir, 0700)) < 0)
        return NPD_LOG_RC(d, ERROR, 1, "cannot create the spool or state directory: %s",
                          strerror(-rc));
    if (np_daemon_write_pid_file(d) < 0 || server_open(d) < 0 || fds_rc < 0)
        return 1;
    sweep_temporaries(d, d->cfg.spool_dir);
    sweep_temporaries(d, d->cfg.state_dir);
    if (np_node_counters_init(&d->counters, 4096) < 0)
        return NPD_LOG_RC(d, ERROR, 1, "out of memory");
    sampling_pin_housekeeping(d);
    fd_budget_start(d);
    if (accept_shed_init() < 0)
        NPD_LOG(d, WARNING, "no spare descriptor: at the limit a waiting client is not shed");
    sampling_load_topology(d);
    migration_read_tier_figures(d);
    sampling_probe_perf(d);
    uncore_bw_start(d);
    trace_open(d);
    migration_start(d);
    http_start(d); /* a failure is logged and leaves metrics off: placement matters more */
    registry_restore(d);
    history_restore(d);
    /* After the restore (written here, before any request): from now on, on the writer's thread */
    if ((rc = writer_start(&d->writer)) < 0)
        NPD_LOG(d, WARNING,
                "cannot start the writer thread (%s): reports are written on the "
                "event loop",
                strerror(-rc));
    loop_set_timer(d);
    return NPD_LOG_RC(d, INFO, 0, "listening on %s; spool %s; interval %u ms", d->cfg.socket,
                      d->cfg.spool_dir, d->cfg.interval_ms);
}

static void tear_down(struct np_daemon *d)
{
    NPD_LOG(d, INFO,
            "stopping: %u step(s) still running and %u whose reports are held stay in "
            "%s/registry.json",
            d->registry.count - d->report_hold.count, d->report_hold.count, d->cfg.state_dir);
    migration_stop(d);
    np_daemon_stop_writer(d); /* every queued report written, its step_end answered */
    report_hold_retry(d);     /* one last try, here: the writer has stopped */
    registry_save(d);         /* with the steps whose reports are still held */
    report_hold_flush(d);
    np_daemon_fini(d);
    NPD_LOG(d, INFO, "stopped");
    log_close(d);
}

int main(int argc, char **argv)
{
    struct np_daemon *d = &daemon_state;
    bool check_only = false;
    int rc;

    np_daemon_init(d);
    rc = parse_args(d, argc, argv, &check_only);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (config_load(d, true) < 0)
        return 2;
    if (check_only) {
        printf("numaplaced: %s is valid\n", d->config_path);
        return 0;
    }
    if (log_open(d) < 0)
        return 1;
    if ((rc = set_up(d)) != 0)
        return rc;
    /* Type=notify: ready once the socket accepts and the registry is restored, so slurmd
     * (After= it) starts beside a numaplaced that answers (without NOTIFY_SOCKET, nothing). */
    if ((rc = sd_notify(0, "READY=1")) < 0)
        NPD_LOG(d, WARNING, "cannot tell systemd that numaplaced is ready: %s", strerror(-rc));
    loop_run(d);
    sd_notify(0, "STOPPING=1");
    tear_down(d);
    return 0;
}
