/* config.h - numaplaced's configuration: the file, then the command line's --KEY=VALUE flags. */
#ifndef NUMAPLACED_CONFIG_H
#define NUMAPLACED_CONFIG_H

#include <stdbool.h>

struct np_daemon;

/**
 * Load d->config_path over the defaults and apply d->overrides. No file at the default path is
 * fine. At a reload (@p initial false) a file with bad values keeps its good keys, and socket,
 * pid_file and proc_root keep their running values (they take effect at restart).
 * @return 0, or -errno with the reason logged (d->cfg unchanged)
 */
int config_load(struct np_daemon *d, bool initial);

/** SIGHUP: load again and apply what can change while running (log, dirs, trace, perf,
 *  housekeeping CPUs, the migration worker, the metrics endpoint). A failed load keeps the
 *  running configuration. The caller (the loop) re-arms its timer on success: the interval may
 *  have changed. @return 0 reloaded, or -errno (logged) */
int config_reload(struct np_daemon *d);

#endif /* NUMAPLACED_CONFIG_H */
