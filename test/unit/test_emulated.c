/* Is the CPU an emulator's: arm64's CPU implementer 0x00 (reserved for software models) says so,
 * a real implementer's code does not, and a root with no cpuinfo says nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "np_test.h"
#include "numaplace/procfs.h"

/* A root whose proc/cpuinfo holds @p cpuinfo (NULL: no file); the caller removes it. */
static char *root_with(const char *cpuinfo)
{
    char *root = strdup("/tmp/np-emulated-XXXXXX"), path[256];

    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(path, sizeof(path), "%s/proc", root);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    if (cpuinfo) {
        FILE *f;
        snprintf(path, sizeof(path), "%s/proc/cpuinfo", root);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(cpuinfo, f);
        fclose(f);
    }
    return root;
}

static void remove_root(char *root)
{
    char path[256];

    snprintf(path, sizeof(path), "%s/proc/cpuinfo", root);
    unlink(path);
    snprintf(path, sizeof(path), "%s/proc", root);
    rmdir(path);
    rmdir(root);
    free(root);
}

static const char qemu_max[] = "processor\t: 0\nBogoMIPS\t: 125.00\nFeatures\t: fp asimd\n"
                               "CPU implementer\t: 0x00\nCPU architecture: 8\nCPU variant\t: 0x0\n"
                               "CPU part\t: 0x051\nCPU revision\t: 0\n";
static const char neoverse[] = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n"
                               "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n"
                               "CPU part\t: 0xd0c\nCPU revision\t: 1\n";

START_TEST(test_implementer)
{
    char why[256], *root;

    root = root_with(qemu_max);
    ck_assert(np_cpu_emulated(root, why, sizeof(why)));
    ck_assert_ptr_nonnull(strstr(why, "CPU implementer 0x00"));
    remove_root(root);

    root = root_with(neoverse);
    ck_assert(!np_cpu_emulated(root, why, sizeof(why)));
    ck_assert_str_eq(why, "");
    remove_root(root);

    root = root_with("processor\t: 0\nvendor_id\t: GenuineIntel\n"); /* x86: no implementer */
    ck_assert(!np_cpu_emulated(root, why, sizeof(why)));
    remove_root(root);

    root = root_with(NULL);
    ck_assert(!np_cpu_emulated(root, why, sizeof(why)));
    ck_assert_str_eq(why, "");
    remove_root(root);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("emulated");
    TCase *tc = tcase_create("emulated");
    tcase_add_test(tc, test_implementer);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
