/* Whether this machine's CPU is an emulator's (declared in numaplace/procfs.h). */
#include "numaplace/procfs.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* /proc/cpuinfo's first "CPU implementer" line (arm), as its value's number; -1 when absent. */
static long cpuinfo_implementer(const char *root)
{
    char path[4096], line[256];
    long implementer = -1;
    FILE *f;

    snprintf(path, sizeof(path), "%s/proc/cpuinfo", root && root[0] ? root : "");
    f = fopen(path, "re");
    if (!f)
        return -1;
    while (implementer < 0 && fgets(line, sizeof(line), f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "CPU implementer", 15) == 0 && colon &&
            sscanf(colon + 1, "%li", &implementer) != 1)
            implementer = -1;
    }
    fclose(f);
    return implementer;
}

bool np_cpu_emulated(const char *root, char *why, size_t why_len)
{
    const long implementer = cpuinfo_implementer(root);

    if (why_len)
        why[0] = '\0';
    if (implementer == 0) {
        snprintf(why, why_len,
                 "CPU implementer 0x00 in /proc/cpuinfo: the code Arm reserves for software "
                 "models (an emulator's CPU)");
        return true;
    }
#if defined(__x86_64__) || defined(__i386__)
    if (!root || !root[0]) {
        unsigned a, b, c, d;
        char sig[13];
        /* leaf 1 ECX bit 31: a hypervisor is there; leaf 0x40000000: its signature */
        if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 31))) {
            __cpuid(0x40000000, a, b, c, d);
            memcpy(sig, &b, 4);
            memcpy(sig + 4, &c, 4);
            memcpy(sig + 8, &d, 4);
            sig[12] = '\0';
            if (strcmp(sig, "TCGTCGTCGTCG") == 0) {
                snprintf(why, why_len,
                         "CPUID hypervisor signature TCGTCGTCGTCG: QEMU's emulator (TCG)");
                return true;
            }
        }
    }
#endif
    return false;
}
