/* numaplaced's CPUs: housekeeping, never nohz_full or isolated (see housekeeping.h). */
#include "housekeeping.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/procfs.h"

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

/* Whether /proc/<pid>/comm under @p root is "slurmd". */
static bool is_slurmd(const char *root, pid_t pid)
{
    char path[1200], comm[32] = "";
    FILE *f;

    snprintf(path, sizeof(path), "%s/proc/%ld/comm", root ? root : "", (long)pid);
    f = fopen(path, "re");
    if (!f)
        return false;
    if (!fgets(comm, sizeof(comm), f))
        comm[0] = '\0';
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    return strcmp(comm, "slurmd") == 0;
}

int housekeeping_slurmd_cpus(const char *root, hwloc_bitmap_t out)
{
    char path[1100];
    hwloc_bitmap_t one = hwloc_bitmap_alloc();
    struct dirent *e;
    DIR *dir;
    int found = 0;

    hwloc_bitmap_zero(out);
    snprintf(path, sizeof(path), "%s/proc", root ? root : "");
    dir = opendir(path);
    if (!dir || !one) {
        if (dir)
            closedir(dir);
        hwloc_bitmap_free(one);
        return 0;
    }
    while (found >= 0 && (e = readdir(dir))) {
        char *end;
        const long pid = strtol(e->d_name, &end, 10);
        struct np_proc_status st;
        const char *list;

        if (*end || pid <= 0 || !is_slurmd(root, (pid_t)pid) ||
            np_proc_status_read(root, (pid_t)pid, &st, NULL) < 0 || is_slurmd(root, st.ppid))
            continue;
        list = np_proc_status_cpus_allowed(&st);
        if (!list || hwloc_bitmap_list_sscanf(one, list) < 0 || hwloc_bitmap_iszero(one) ||
            (found && !hwloc_bitmap_isequal(one, out)))
            found = -EINVAL;
        else
            found = 1;
        hwloc_bitmap_copy(out, one);
    }
    closedir(dir);
    hwloc_bitmap_free(one);
    if (found < 0)
        hwloc_bitmap_zero(out);
    return found;
}
