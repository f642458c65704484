/* CPU affinity beyond a fixed cpu_set_t: a stand-in kernel with 2,048 CPUs (the link wraps
 * sched_getaffinity and sched_setaffinity) and a synthetic topology of as many PUs. */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "np_test.h"
#include "numaplace/placement.h"
#include "numaplace/topology.h"

/* The stand-in kernel: 0 CPUs passes every call through to the real one. */
static unsigned kernel_cpus;
static hwloc_bitmap_t kernel_affinity; /* what a get answers, what a set records */

int __real_sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set);
int __real_sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set);
int __wrap_sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set);
int __wrap_sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set);

int __wrap_sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
    int cpu;

    if (!kernel_cpus)
        return __real_sched_getaffinity(pid, size, set);
    /* Linux: a mask smaller than the kernel's CPU count is refused. */
    if (size * 8 < kernel_cpus) {
        errno = EINVAL;
        return -1;
    }
    CPU_ZERO_S(size, set);
    hwloc_bitmap_foreach_begin(cpu, kernel_affinity)
    {
        CPU_SET_S((unsigned)cpu, size, set);
    }
    hwloc_bitmap_foreach_end();
    return 0;
}

int __wrap_sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
    if (!kernel_cpus)
        return __real_sched_setaffinity(pid, size, set);
    hwloc_bitmap_zero(kernel_affinity);
    for (unsigned c = 0; c < size * 8 && c < kernel_cpus; c++)
        if (CPU_ISSET_S(c, size, set))
            hwloc_bitmap_set(kernel_affinity, c);
    return 0;
}

#define MACHINE_2048 "pack:2 numa:2 core:512 pu:1" /* node n holds PUs 512n..512n+511 */

static const struct {
    const char *task; /* the task's affinity */
    bool preferred_many;
    enum np_mode mode;
    const char *nodes;
} cases[] = {
    {"1536-1539", true, NP_MODE_PREFERRED, "3"}, {"2047", true, NP_MODE_PREFERRED, "3"},
    {"1100", true, NP_MODE_PREFERRED, "2"},      {"1023-1024", true, NP_MODE_PREFERRED_MANY, "1-2"},
    {"0-3", true, NP_MODE_PREFERRED, "0"},
};

START_TEST(test_placement_above_1024)
{
    struct np_topology *topo = NULL;
    struct np_placement out;
    struct np_err err = {0};
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    cpu_set_t fixed;
    struct np_place_input in = {.policy = NP_POLICY_LOCAL, .task_cpus = cpus};

    kernel_cpus = 2048;
    kernel_affinity = np_test_set(cases[_i].task);
    /* What a fixed cpu_set_t gets from such a kernel. */
    ck_assert_int_eq(sched_getaffinity(0, sizeof(fixed), &fixed), -1);
    ck_assert_int_eq(errno, EINVAL);

    ck_assert_int_eq(np_affinity_get(0, cpus), 0);
    ck_assert_str_eq(np_test_list(cpus), cases[_i].task);
    ck_assert_msg(np_topology_load(&topo, NP_TOPOLOGY_SYNTHETIC, MACHINE_2048, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(hwloc_bitmap_weight(np_topology_cpus(topo)), 2048);
    in.have_preferred_many = cases[_i].preferred_many;
    ck_assert_int_eq(np_placement_init(&out), 0);
    ck_assert_int_eq(np_place(topo, &in, &out), 0);
    ck_assert_msg(out.mode == cases[_i].mode, "mode %s (%s)", np_mode_name(out.mode), out.reason);
    ck_assert_str_eq(np_test_list(out.nodes), cases[_i].nodes);
    np_placement_fini(&out);
    np_topology_free(topo);
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(kernel_affinity);
    kernel_cpus = 0;
}
END_TEST

START_TEST(test_set_above_1024)
{
    hwloc_bitmap_t cpus = np_test_set("5,1800-1801");

    kernel_cpus = 2048;
    kernel_affinity = hwloc_bitmap_alloc();
    ck_assert_int_eq(np_affinity_set(0, cpus), 0);
    ck_assert_str_eq(np_test_list(kernel_affinity), "5,1800-1801");
    hwloc_bitmap_zero(cpus);
    ck_assert_int_eq(np_affinity_set(0, cpus), -EINVAL); /* nothing to run on */
    hwloc_bitmap_fill(cpus);
    ck_assert_int_eq(np_affinity_set(0, cpus), -EINVAL); /* infinite */
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(kernel_affinity);
    kernel_cpus = 0;
}
END_TEST

/* On the real kernel: the same set sched_getaffinity gives, and setting it back round-trips. */
START_TEST(test_real_kernel)
{
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), again = hwloc_bitmap_alloc();
    cpu_set_t fixed;

    ck_assert_int_eq(np_affinity_get(0, cpus), 0);
    ck_assert_int_eq(sched_getaffinity(0, sizeof(fixed), &fixed), 0);
    for (unsigned c = 0; c < 64; c++)
        ck_assert_int_eq(hwloc_bitmap_isset(cpus, c), CPU_ISSET(c, &fixed) ? 1 : 0);
    ck_assert_int_eq(np_affinity_set(0, cpus), 0);
    ck_assert_int_eq(np_affinity_get(0, again), 0);
    ck_assert(hwloc_bitmap_isequal(cpus, again));
    ck_assert_int_eq(np_affinity_get(-1, cpus), -ESRCH);
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(again);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("affinity");
    TCase *tc = tcase_create("affinity");

    tcase_add_loop_test(tc, test_placement_above_1024, 0, sizeof(cases) / sizeof(cases[0]));
    tcase_add_test(tc, test_set_above_1024);
    tcase_add_test(tc, test_real_kernel);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
