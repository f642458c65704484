/* perf_event counters over real syscalls: software events on a process tree, hardware events as
 * the machine allows, and the failure paths. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h>

#include "np_test.h"
#include "numaplace/perf.h"

static const struct {
    enum np_perf_event ev;
    const char *name, *label;
    bool hardware;
} event_cases[] = {
    {NP_PERF_CYCLES, "perf::CYCLES", "cycles", true},
    {NP_PERF_INSTRUCTIONS, "perf::INSTRUCTIONS", "instructions", true},
    {NP_PERF_LLC_LOAD_MISSES, "perf::LLC-LOAD-MISSES", "llc_load_misses", true},
    {NP_PERF_LLC_STORE_MISSES, "perf::LLC-STORE-MISSES", "llc_store_misses", true},
    {NP_PERF_TASK_CLOCK, "perf::TASK-CLOCK", "task_clock_ns", false},
    {NP_PERF_CONTEXT_SWITCHES, "perf::CONTEXT-SWITCHES", "context_switches", false},
    {NP_PERF_PAGE_FAULTS, "perf::PAGE-FAULTS", "page_faults", false},
};

START_TEST(test_event_names)
{
    const enum np_perf_event ev = event_cases[_i].ev;
    struct perf_event_attr attr;
    pfm_perf_encode_arg_t arg;
    struct np_err err = {0};

    ck_assert_int_eq(ev, _i);
    ck_assert_str_eq(np_perf_event_name(ev), event_cases[_i].name);
    ck_assert_str_eq(np_perf_event_label(ev), event_cases[_i].label);
    ck_assert_int_eq(!!(NP_PERF_HARDWARE_MASK & (1u << ev)), event_cases[_i].hardware);
    ck_assert_int_eq(!!(NP_PERF_SOFTWARE_MASK & (1u << ev)), !event_cases[_i].hardware);
    ck_assert(NP_PERF_ALL_MASK & (1u << ev));

    /* The name is one libpfm4 knows, so the library never needs a hand-written encoding. */
    ck_assert_msg(np_perf_init(&err) == 0, "%s", err.msg);
    memset(&attr, 0, sizeof(attr));
    memset(&arg, 0, sizeof(arg));
    arg.attr = &attr;
    arg.size = sizeof(arg);
    ck_assert_int_eq(pfm_get_os_event_encoding(event_cases[_i].name, PFM_PLM0 | PFM_PLM3,
                                               PFM_OS_PERF_EVENT_EXT, &arg),
                     PFM_SUCCESS);
    if (event_cases[_i].hardware)
        ck_assert(attr.type == PERF_TYPE_HARDWARE || attr.type == PERF_TYPE_HW_CACHE);
    else
        ck_assert_uint_eq(attr.type, PERF_TYPE_SOFTWARE);
}
END_TEST

START_TEST(test_event_out_of_range)
{
    ck_assert_ptr_null(np_perf_event_name(NP_PERF_NEVENTS));
    ck_assert_ptr_null(np_perf_event_label((enum np_perf_event) - 1));
    ck_assert_int_eq(NP_PERF_ALL_MASK, (1u << NP_PERF_NEVENTS) - 1);
    ck_assert_int_eq(NP_PERF_HARDWARE_MASK & NP_PERF_SOFTWARE_MASK, 0);
}
END_TEST

/* --- The busy process tree: a child, its thread and its grandchild each burn CPU. --- */

#define BURN_NS    (100 * 1000 * 1000L) /* CPU time each of the three burns */
#define TOUCH_SIZE (8u << 20)           /* anonymous memory the child touches */

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spin until this thread has used BURN_NS of CPU: a fixed amount of CPU on any machine. */
static void *burn(void *arg)
{
    const int64_t start = thread_cpu_ns();
    volatile uint64_t x = 1;

    (void)arg;
    while (thread_cpu_ns() - start < BURN_NS)
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005u + 1;
    return NULL;
}

/* The monitored child: waits for the go, touches memory, then thread + grandchild + itself
 * burn. Exits non-zero on a setup failure (check's asserts do not work in a fork). */
static void child_main(int go_fd)
{
    char go;
    unsigned char *mem;
    pthread_t thread;
    pid_t grandchild;
    int status;

    if (read(go_fd, &go, 1) != 1)
        _exit(10);
    mem = mmap(NULL, TOUCH_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        _exit(11);
    madvise(mem, TOUCH_SIZE, MADV_NOHUGEPAGE); /* one fault per 4 KiB page, not per 2 MiB */
    for (size_t off = 0; off < TOUCH_SIZE; off += 4096)
        mem[off] = 1;
    if (pthread_create(&thread, NULL, burn, NULL) != 0)
        _exit(12);
    grandchild = fork();
    if (grandchild < 0)
        _exit(13);
    if (grandchild == 0) {
        burn(NULL);
        _exit(0);
    }
    burn(NULL);
    if (waitpid(grandchild, &status, 0) != grandchild || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        _exit(14);
    pthread_join(thread, NULL);
    munmap(mem, TOUCH_SIZE);
    _exit(0);
}

START_TEST(test_software_events_tree)
{
    struct np_perf_counters c;
    struct np_perf_value clock, ctxsw, faults;
    struct np_err err = {0};
    siginfo_t info;
    int go[2], status, opened;
    pid_t pid;
    int64_t open_ns, read_ns;

    ck_assert_int_eq(pipe(go), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(go[1]);
        child_main(go[0]);
    }
    close(go[0]);

    np_perf_counters_init(&c);
    open_ns = monotonic_ns();
    opened = np_perf_open(&c, pid, NP_PERF_SOFTWARE_MASK, &err);
    ck_assert_msg(opened == 3, "opened %d: %s | %s | %s | %s", opened, err.msg,
                  c.reason[NP_PERF_TASK_CLOCK], c.reason[NP_PERF_CONTEXT_SWITCHES],
                  c.reason[NP_PERF_PAGE_FAULTS]);
    ck_assert_int_eq(c.pid, pid);
    ck_assert_int_lt(c.fd[NP_PERF_CYCLES], 0);
    ck_assert_str_eq(c.reason[NP_PERF_CYCLES], "not requested");
    ck_assert_str_eq(c.reason[NP_PERF_TASK_CLOCK], "");
    ck_assert_int_eq(write(go[1], "g", 1), 1);
    close(go[1]);

    /* Read while the child is a zombie: its counts (and its reaped children's) are final. */
    ck_assert_int_eq(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
    ck_assert_int_eq(np_perf_read(&c, NP_PERF_TASK_CLOCK, &clock), 0);
    ck_assert_int_eq(np_perf_read(&c, NP_PERF_CONTEXT_SWITCHES, &ctxsw), 0);
    ck_assert_int_eq(np_perf_read(&c, NP_PERF_PAGE_FAULTS, &faults), 0);
    read_ns = monotonic_ns();
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
    np_perf_close(&c);

    ck_assert(clock.available && ctxsw.available && faults.available);
    ck_assert_ptr_null(clock.reason);
    /*
     * Relations that hold at any speed, not one clock against another (rusage's ticks and
     * task-clock part by tens of percent on a loaded or virtual machine): each of the three
     * burnt BURN_NS of its own on-CPU time, which task-clock counts on the scheduler's clock,
     * so the inherited count holds all three (1% for the two clocks' reads); and three threads
     * at most ran at once, so it is under three times the wall time it was open.
     */
    ck_assert_msg(clock.value >= (uint64_t)(3 * BURN_NS) / 100 * 99,
                  "task-clock %llu ns: not the thread and the grandchild too (3 x %ld ns)",
                  (unsigned long long)clock.value, BURN_NS);
    ck_assert_msg(clock.value <= 3 * (uint64_t)(read_ns - open_ns),
                  "task-clock %llu ns over three times the %lld ns it was open",
                  (unsigned long long)clock.value, (long long)(read_ns - open_ns));
    ck_assert_uint_le(clock.time_running_ns, clock.time_enabled_ns);
    ck_assert_uint_gt(faults.value, TOUCH_SIZE / 4096);
    ck_assert_ptr_null(ctxsw.reason); /* any count is right: it is enough that it counts */
}
END_TEST

/* A hardware PMU shows as a core PMU under /sys/bus/event_source/devices: "cpu" (or a hybrid's
 * "cpu_core", "cpu_atom") on x86, the kernel's armv8 PMU driver's "armv8_..." on arm64. */
static bool have_hardware_pmu(void)
{
    static const char *const names[] = {"cpu", "cpu_core", "cpu_atom"};
    DIR *d = opendir("/sys/bus/event_source/devices");
    bool found = false;

    for (const struct dirent *e; d && !found && (e = readdir(d));) {
        found = strncmp(e->d_name, "armv8_", 6) == 0;
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            found = found || strcmp(e->d_name, names[i]) == 0;
    }
    if (d)
        closedir(d);
    return found;
}

START_TEST(test_hardware_events)
{
    static const enum np_perf_event hw[] = {NP_PERF_CYCLES, NP_PERF_INSTRUCTIONS};
    struct np_perf_counters c;
    struct np_err err = {0};
    const bool pmu = have_hardware_pmu();
    int opened;

    np_perf_counters_init(&c);
    opened = np_perf_open(&c, getpid(), NP_PERF_HARDWARE_MASK, &err);
    ck_assert_msg(opened >= 0, "%s", err.msg);
    burn(NULL);
    for (size_t i = 0; i < sizeof(hw) / sizeof(hw[0]); i++) {
        struct np_perf_value v;
        const int rc = np_perf_read(&c, hw[i], &v);

        if (pmu) {
            ck_assert_msg(rc == 0, "%s: %s", np_perf_event_name(hw[i]), c.reason[hw[i]]);
            ck_assert(v.available);
            ck_assert_uint_gt(v.value, 0);
            ck_assert_int_eq(c.why[hw[i]], NP_PERF_WHY_NONE);
        } else {
            /* the page's code for it (numaplace_counters_info's reason) */
            ck_assert_str_eq(np_perf_why_name(c.why[hw[i]]), "no_pmu");
            ck_assert_int_lt(rc, 0);
            ck_assert(!v.available);
            ck_assert_int_lt(c.fd[hw[i]], 0);
            ck_assert_ptr_nonnull(v.reason);
            ck_assert_ptr_nonnull(strstr(v.reason, np_perf_event_name(hw[i])));
            ck_assert_msg(strstr(v.reason, "PMU") != NULL, "reason: %s", v.reason);
        }
    }
    ck_assert_str_eq(c.reason[NP_PERF_TASK_CLOCK], "not requested");
    np_perf_close(&c);
}
END_TEST

START_TEST(test_failures)
{
    struct np_perf_counters c;
    struct np_perf_value v;
    struct np_err err = {0};
    pid_t gone;

    /* A pid that existed and was reaped. */
    gone = fork();
    ck_assert_int_ge(gone, 0);
    if (gone == 0)
        _exit(0);
    ck_assert_int_eq(waitpid(gone, NULL, 0), gone);
    np_perf_counters_init(&c);
    ck_assert_int_eq(np_perf_open(&c, gone, NP_PERF_ALL_MASK, &err), -ESRCH);
    ck_assert_ptr_nonnull(strstr(err.msg, "no process"));
    for (int e = 0; e < NP_PERF_NEVENTS; e++)
        ck_assert_int_lt(c.fd[e], 0);
    ck_assert_ptr_nonnull(strstr(c.reason[NP_PERF_TASK_CLOCK], "gone"));
    ck_assert_str_eq(np_perf_why_name(c.why[NP_PERF_TASK_CLOCK]), "process_gone");
    ck_assert_ptr_null(np_perf_why_name(NP_PERF_WHY_COUNT));

    ck_assert_int_eq(np_perf_open(&c, -5, NP_PERF_ALL_MASK, &err), -EINVAL);
    ck_assert_int_eq(np_perf_open(&c, getpid(), 1u << NP_PERF_NEVENTS, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "mask"));

    /* Reading what was never opened. */
    np_perf_counters_init(&c);
    ck_assert_int_lt(np_perf_read(&c, NP_PERF_TASK_CLOCK, &v), 0);
    ck_assert(!v.available);
    ck_assert_ptr_nonnull(v.reason);
    ck_assert_str_ne(v.reason, "");
    ck_assert_int_eq(np_perf_read(&c, NP_PERF_NEVENTS, &v), -EINVAL);
    ck_assert(!v.available);
    ck_assert_ptr_nonnull(v.reason);
    ck_assert_int_eq(np_perf_read(NULL, NP_PERF_TASK_CLOCK, &v), -EINVAL);

    /* Open, close, close again, read after close. */
    ck_assert_int_ge(np_perf_open(&c, 0, NP_PERF_SOFTWARE_MASK, &err), 1);
    ck_assert_int_eq(np_perf_read(&c, NP_PERF_TASK_CLOCK, &v), 0);
    ck_assert(v.available);
    ck_assert_uint_gt(v.value, 0);
    np_perf_close(&c);
    np_perf_close(&c);
    np_perf_close(NULL);
    for (int e = 0; e < NP_PERF_NEVENTS; e++)
        ck_assert_int_eq(c.fd[e], -1);
    ck_assert_int_lt(np_perf_read(&c, NP_PERF_TASK_CLOCK, &v), 0);
    ck_assert(!v.available);
    ck_assert_str_eq(v.reason, "closed");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("perf");
    TCase *tc = tcase_create("perf");

    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_event_names, 0, sizeof(event_cases) / sizeof(event_cases[0]));
    tcase_add_test(tc, test_event_out_of_range);
    tcase_add_test(tc, test_software_events_tree);
    tcase_add_test(tc, test_hardware_events);
    tcase_add_test(tc, test_failures);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
