/*
 * numa_probe: run as a Slurm task, reports what the task got, one line of key=value pairs:
 *   rank cpus mode nodes mems_allowed env_policy env_mode env_nodes env_sensitivity
 * straight from the kernel (sched_getaffinity, get_mempolicy), not through libnumaplace, so it
 * checks the library instead of repeating it. mode is the kernel's name for the task's policy:
 * default, preferred, bind, interleave, local, preferred-many (or "mode-<n>" for a newer one).
 *
 *   --touch MiB     first mmap and write every page of that much memory, then add
 *                   pages=<node>:<count>,... (that mapping's pages per node from
 *                   /proc/self/numa_maps, in base pages of sysconf(_SC_PAGESIZE), converted
 *                   from the mapping's kernelpagesize_kB) and page_kb=<kernelpagesize_kB>
 *   --hold SECONDS  stay alive that long after reporting (for helper tests)
 *   --json          the same fields as one JSON object
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_NODES                4096
#define WORD_BITS                (8 * sizeof(unsigned long))
#define MASK_WORDS               (MAX_NODES / WORD_BITS)
#define MPOL_F_MEMS_ALLOWED_FLAG 4 /* get_mempolicy flag: the cpuset's allowed nodes */

struct field {
    const char *key;
    char value[1024];
};

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "";
}

/* Appends "a" or "a-b" ranges of the set bits to buf; "-" when none. */
static void list_of(bool (*isset)(const void *, unsigned), const void *set, unsigned nbits,
                    char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (unsigned i = 0; i < nbits; i++) {
        unsigned j = i;
        if (!isset(set, i))
            continue;
        while (j + 1 < nbits && isset(set, j + 1))
            j++;
        int n = j == i ? snprintf(buf + used, len - used, "%s%u", used ? "," : "", i)
                       : snprintf(buf + used, len - used, "%s%u-%u", used ? "," : "", i, j);
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
        i = j;
    }
    if (!used)
        snprintf(buf, len, "-");
}

static bool cpu_isset(const void *set, unsigned i)
{
    return CPU_ISSET(i, (const cpu_set_t *)set);
}

static bool mask_isset(const void *set, unsigned i)
{
    const unsigned long *mask = set;
    return (mask[i / WORD_BITS] >> (i % WORD_BITS)) & 1UL;
}

static const char *mode_name(int mode)
{
    static char other[32];

    /* MPOL_F_STATIC_NODES, MPOL_F_RELATIVE_NODES, MPOL_F_NUMA_BALANCING */
    mode &= ~((1 << 15) | (1 << 14) | (1 << 13));
    switch (mode) {
    case 0:
        return "default";
    case 1:
        return "preferred";
    case 2:
        return "bind";
    case 3:
        return "interleave";
    case 4:
        return "local";
    case 5:
        return "preferred-many";
    default:
        snprintf(other, sizeof(other), "mode-%d", mode);
        return other;
    }
}

/*
 * Pages per node of the mapping starting at @p addr, from numa_maps' N<node>=<pages> fields
 * (counted in kernelpagesize_kB pages), converted to base pages. "unavailable" if the mapping
 * is not found.
 */
static void pages_of(const void *addr, char *buf, size_t len, char *page_kb, size_t kb_len)
{
    FILE *f = fopen("/proc/self/numa_maps", "r");
    char line[8192], want[32];
    unsigned long counts[64] = {0};
    unsigned long kernel_kb = 0;
    unsigned long base_kb = (unsigned long)sysconf(_SC_PAGESIZE) / 1024;
    bool found = false;

    snprintf(buf, len, "unavailable");
    snprintf(page_kb, kb_len, "unavailable");
    if (!f)
        return;
    snprintf(want, sizeof(want), "%lx ", (unsigned long)addr);
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, want, strlen(want)) != 0)
            continue;
        found = true;
        for (char *save = NULL, *tok = strtok_r(line, " \n", &save); tok;
             tok = strtok_r(NULL, " \n", &save)) {
            unsigned node;
            unsigned long value;
            if (sscanf(tok, "N%u=%lu", &node, &value) == 2 && node < 64)
                counts[node] = value;
            else if (sscanf(tok, "kernelpagesize_kB=%lu", &value) == 1)
                kernel_kb = value;
        }
        break;
    }
    fclose(f);
    if (!found)
        return;
    if (!kernel_kb || !base_kb)
        kernel_kb = base_kb = 1; /* no page size shown: keep the counts as they are */
    else
        snprintf(page_kb, kb_len, "%lu", kernel_kb);
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned node = 0; node < 64; node++) {
        if (!counts[node])
            continue;
        int n = snprintf(buf + used, len - used, "%s%u:%lu", used ? "," : "", node,
                         counts[node] * kernel_kb / base_kb);
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
    if (!used)
        snprintf(buf, len, "-");
}

static int usage(const char *bad)
{
    fprintf(stderr,
            "numa_probe: invalid argument '%s' (accepted: --touch MiB, --hold SECONDS, --json)\n",
            bad);
    return 2;
}

static bool parse_ulong(const char *text, unsigned long *out)
{
    char *end;
    errno = 0;
    *out = strtoul(text, &end, 10);
    return !errno && end != text && !*end && text[0] != '-';
}

int main(int argc, char **argv)
{
    unsigned long touch_mib = 0, hold = 0;
    bool json = false;
    struct field fields[13];
    size_t nfields = 0;
    unsigned long policy_nodes[MASK_WORDS], allowed[MASK_WORDS];
    int kmode = 0;
    cpu_set_t cpus;
    char pages[1024] = "", page_kb[32] = "";

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--touch") && i + 1 < argc) {
            if (!parse_ulong(argv[++i], &touch_mib) || touch_mib > (1UL << 20))
                return usage(argv[i]);
        } else if (!strcmp(argv[i], "--hold") && i + 1 < argc) {
            if (!parse_ulong(argv[++i], &hold))
                return usage(argv[i]);
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else {
            return usage(argv[i]);
        }
    }

    if (touch_mib) {
        /* Guard pages with other protections on both sides, so the kernel cannot merge this
         * mapping with a neighbour and numa_maps shows it on a line of its own. */
        const size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = touch_mib << 20;
        char *area = mmap(NULL, bytes + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (area == MAP_FAILED) {
            perror("numa_probe: mmap");
            return 1;
        }
        char *buf = area + page;
        if (mprotect(buf, bytes, PROT_READ | PROT_WRITE) != 0) {
            perror("numa_probe: mprotect");
            return 1;
        }
        for (size_t off = 0; off < bytes; off += page)
            buf[off] = 1;
        pages_of(buf, pages, sizeof(pages), page_kb, sizeof(page_kb));
    }

    if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) {
        perror("numa_probe: sched_getaffinity");
        return 1;
    }
    memset(policy_nodes, 0, sizeof(policy_nodes));
    memset(allowed, 0, sizeof(allowed));
    if (syscall(SYS_get_mempolicy, &kmode, policy_nodes, (unsigned long)MAX_NODES, NULL, 0UL) !=
        0) {
        perror("numa_probe: get_mempolicy");
        return 1;
    }
    if (syscall(SYS_get_mempolicy, NULL, allowed, (unsigned long)MAX_NODES, NULL,
                (unsigned long)MPOL_F_MEMS_ALLOWED_FLAG) != 0) {
        perror("numa_probe: get_mempolicy(MPOL_F_MEMS_ALLOWED)");
        return 1;
    }

#define FIELD(k) (fields[nfields].key = (k), fields[nfields++].value)
    snprintf(FIELD("rank"), sizeof(fields[0].value), "%s",
             getenv("SLURM_PROCID") ? getenv("SLURM_PROCID") : "-");
    list_of(cpu_isset, &cpus, CPU_SETSIZE, FIELD("cpus"), sizeof(fields[0].value));
    snprintf(FIELD("mode"), sizeof(fields[0].value), "%s", mode_name(kmode));
    list_of(mask_isset, policy_nodes, MAX_NODES, FIELD("nodes"), sizeof(fields[0].value));
    list_of(mask_isset, allowed, MAX_NODES, FIELD("mems_allowed"), sizeof(fields[0].value));
    snprintf(FIELD("env_policy"), sizeof(fields[0].value), "%s", env("NUMAPLACE_POLICY"));
    snprintf(FIELD("env_mode"), sizeof(fields[0].value), "%s", env("NUMAPLACE_MODE"));
    snprintf(FIELD("env_nodes"), sizeof(fields[0].value), "%s", env("NUMAPLACE_NODES"));
    snprintf(FIELD("env_sensitivity"), sizeof(fields[0].value), "%s", env("NUMAPLACE_SENSITIVITY"));
    if (touch_mib) {
        snprintf(FIELD("pages"), sizeof(fields[0].value), "%s", pages);
        snprintf(FIELD("page_kb"), sizeof(fields[0].value), "%s", page_kb);
    }
    /* Last: the one value with spaces (a sentence), so the fields before it stay parseable. */
    snprintf(FIELD("env_reason"), sizeof(fields[0].value), "%s", env("NUMAPLACE_REASON"));
#undef FIELD

    if (json)
        putchar('{');
    for (size_t i = 0; i < nfields; i++) {
        if (json) {
            /* Values are lists, names and environment text: escape what JSON requires. */
            printf("%s\"%s\":\"", i ? "," : "", fields[i].key);
            for (const char *c = fields[i].value; *c; c++) {
                if (*c == '"' || *c == '\\')
                    printf("\\%c", *c);
                else if ((unsigned char)*c < 0x20)
                    printf("\\u%04x", (unsigned char)*c);
                else
                    putchar(*c);
            }
            putchar('"');
        } else {
            printf("%s%s=%s", i ? " " : "", fields[i].key, fields[i].value);
        }
    }
    puts(json ? "}" : "");
    fflush(stdout);
    if (hold)
        sleep((unsigned)hold);
    return 0;
}
