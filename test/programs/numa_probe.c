/*
 * numa_probe: run as a Slurm task, reports what the task got, one line of key=value pairs:
 *   rank cpus mode nodes mems_allowed env_policy env_mode env_nodes env_sensitivity
 * With --touch MiB it first allocates and touches that much memory and adds pages=N:count,...
 * (that mapping's pages per node, from /proc/self/numa_maps); --hold SECONDS keeps it alive.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "numaplace/placement.h"

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "";
}

static void list(hwloc_const_bitmap_t set, char *buf, size_t len)
{
    if (hwloc_bitmap_iszero(set))
        snprintf(buf, len, "-");
    else
        hwloc_bitmap_list_snprintf(buf, len, set);
}

/* Pages per node of the mapping at @p addr, from numa_maps' N<node>=<pages> fields. */
static void pages_of(void *addr, char *buf, size_t len)
{
    FILE *f = fopen("/proc/self/numa_maps", "r");
    char line[4096], want[32];

    snprintf(buf, len, "unavailable");
    if (!f)
        return;
    snprintf(want, sizeof(want), "%lx ", (unsigned long)addr);
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, want, strlen(want)) != 0)
            continue;
        buf[0] = '\0';
        for (char *tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n")) {
            unsigned node;
            unsigned long count;
            if (sscanf(tok, "N%u=%lu", &node, &count) == 2) {
                size_t used = strlen(buf);
                snprintf(buf + used, len - used, "%s%u:%lu", used ? "," : "", node, count);
            }
        }
        break;
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    unsigned long touch_mib = 0, hold = 0;
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    char cpus_text[256], nodes_text[256], allowed_text[256], pages[512] = "";
    enum np_mode mode = NP_MODE_DEFAULT;
    cpu_set_t set;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--touch") && i + 1 < argc)
            touch_mib = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--hold") && i + 1 < argc)
            hold = strtoul(argv[++i], NULL, 10);
        else {
            fprintf(stderr,
                    "numa_probe: unknown argument '%s' (accepted: --touch MiB, --hold "
                    "SECONDS)\n",
                    argv[i]);
            return 2;
        }
    }
    if (touch_mib) {
        const size_t bytes = touch_mib << 20;
        char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED) {
            perror("numa_probe: mmap");
            return 1;
        }
        for (size_t off = 0; off < bytes; off += 4096)
            buf[off] = 1;
        pages_of(buf, pages, sizeof(pages));
    }
    sched_getaffinity(0, sizeof(set), &set);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            hwloc_bitmap_set(cpus, (unsigned)c);
    np_mempolicy_get(&mode, nodes, NULL);
    np_mems_allowed(allowed, NULL);
    list(cpus, cpus_text, sizeof(cpus_text));
    list(nodes, nodes_text, sizeof(nodes_text));
    list(allowed, allowed_text, sizeof(allowed_text));
    printf("rank=%s cpus=%s mode=%s nodes=%s mems_allowed=%s env_policy=%s env_mode=%s "
           "env_nodes=%s env_sensitivity=%s%s%s\n",
           getenv("SLURM_PROCID") ? getenv("SLURM_PROCID") : "-", cpus_text, np_mode_name(mode),
           nodes_text, allowed_text, env("NUMAPLACE_POLICY"), env("NUMAPLACE_MODE"),
           env("NUMAPLACE_NODES"), env("NUMAPLACE_SENSITIVITY"), touch_mib ? " pages=" : "", pages);
    fflush(stdout);
    if (hold)
        sleep((unsigned)hold);
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(nodes);
    hwloc_bitmap_free(allowed);
    return 0;
}
