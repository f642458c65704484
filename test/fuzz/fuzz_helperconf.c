/*
 * fuzz_helperconf: numaplaced.conf as the helper loads it (np_helper_config_load, from a
 * scratch file holding the input) over the defaults.
 * Invariants: a refusal names a line and says why; every string setting is NUL-terminated in
 * its array; the socket path fits sun_path.
 */
#include "fuzz_common.h"
#include "numaplace/helperconf.h"

#include <errno.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TERMINATED(field) FUZZ_ASSERT(memchr((field), '\0', sizeof(field)) != NULL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct np_helper_config cfg;
    struct np_err err = {0};
    const char *path = fuzz_write("numaplaced.conf", data, size);
    int rc;

    np_helper_config_defaults(&cfg);
    rc = np_helper_config_load(&cfg, path, NULL, &err);
    FUZZ_ASSERT(rc == 0 || (rc == -EINVAL && err.code == rc && err.msg[0] != '\0'));
    TERMINATED(cfg.socket);
    TERMINATED(cfg.state_dir);
    TERMINATED(cfg.spool_dir);
    TERMINATED(cfg.pid_file);
    TERMINATED(cfg.log);
    TERMINATED(cfg.housekeeping_cpus);
    TERMINATED(cfg.record);
    TERMINATED(cfg.proc_root);
    TERMINATED(cfg.migration_order);
    TERMINATED(cfg.admin_group);
    return 0;
}
