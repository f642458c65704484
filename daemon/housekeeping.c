/* The helper's CPUs: housekeeping, never nohz_full or isolated (see housekeeping.h). */
#include "housekeeping.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int read_cpu_list(const char *root, const char *name, hwloc_bitmap_t out)
{
    char path[1200], text[4096] = "";
    FILE *f;

    hwloc_bitmap_zero(out);
    snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/%s", root ? root : "", name);
    f = fopen(path, "re");
    if (!f)
        return 0; /* an older kernel, or none configured */
    if (!fgets(text, sizeof(text), f))
        text[0] = '\0';
    fclose(f);
    text[strcspn(text, "\n")] = '\0';
    if (!text[0] || strcmp(text, "(null)") == 0) /* what some kernels print for none */
        return 0;
    if (hwloc_bitmap_list_sscanf(out, text) < 0) {
        hwloc_bitmap_zero(out);
        return -EINVAL;
    }
    return 0;
}

int housekeeping_quiet_cpus(const char *root, hwloc_bitmap_t nohz, hwloc_bitmap_t isolated)
{
    const int a = read_cpu_list(root, "nohz_full", nohz);
    const int b = read_cpu_list(root, "isolated", isolated);

    return a < 0 ? a : b;
}

int housekeeping_choose(hwloc_const_bitmap_t wanted, hwloc_const_bitmap_t started,
                        hwloc_const_bitmap_t quiet, hwloc_bitmap_t out)
{
    hwloc_bitmap_andnot(out, hwloc_bitmap_iszero(wanted) ? started : wanted, quiet);
    if (!hwloc_bitmap_iszero(out))
        return 0;
    hwloc_bitmap_andnot(out, started, quiet);
    if (!hwloc_bitmap_iszero(out))
        return 1;
    hwloc_bitmap_copy(out, started);
    return 2;
}
