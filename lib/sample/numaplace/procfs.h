/*
 * numaplace/procfs.h - what /proc and /sys say: per-process figures from /proc/<pid>/stat,
 * status and numa_maps, node files kept open, whether the CPU is emulated; and one job's figures
 * at one instant, built from them (struct np_sample).
 *
 * Every reader takes a filesystem root (NULL or "" = "/"), so tests read captured trees. A
 * process that vanishes between calls is -ESRCH, never a crash.
 */
#ifndef NUMAPLACE_PROCFS_H
#define NUMAPLACE_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "numaplace/common.h"
#include "numaplace/perf.h"

/* A node-wide /proc file (/proc/stat, /proc/interrupts, a sysctl) kept open between intervals and
 * read again from offset 0 with pread: the kernel regenerates it at each read, and the open(2),
 * close(2) and stdio set-up each time cost more than some of these files' text. The text is handed
 * to the file's usual parser as a stdio stream (fmemopen), so a kept read parses exactly as a fresh
 * one. Ownership: the kept file owns its descriptor and text; np_kept_file_close frees both. */
/** A zeroed one is closed (np_kept_file_init is the same). */
struct np_kept_file {
    bool open; /**< fd is ours */
    int fd;
    char *path; /**< owned: the file fd reads (another path given opens that one) */
    char *text; /**< owned: the last reading, NUL-terminated */
    size_t cap;
};

/** Nothing open yet. */
NP_API void np_kept_file_init(struct np_kept_file *k);

/** Close and free; the file is opened again at the next read. Accepts NULL. */
NP_API void np_kept_file_close(struct np_kept_file *k);

/** From /proc/<pid>/stat (see proc(5)). CPU times in clock ticks (sysconf(_SC_CLK_TCK)). */
struct np_proc_stat {
    pid_t pid, ppid;
    char comm[64]; /**< the name between the first '(' and the last ')', truncated */
    char state;
    unsigned long flags; /**< the kernel's PF_* task flags (PF_EXITING 0x4: being torn down) */
    uint64_t minflt, majflt;
    uint64_t utime_ticks, stime_ticks;
    long num_threads;
    uint64_t starttime_ticks;
    uint64_t rss_pages;
    int processor; /**< the CPU it last ran on */
};

/**
 * Parse one stat line (the comm may hold spaces and parentheses: it ends at the LAST ')').
 * @return 0, or -EINVAL naming what was wrong
 */
NP_API int np_proc_stat_parse(const char *line, struct np_proc_stat *out, struct np_err *err);

/** Read /proc/<pid>/stat under @p root. @return 0, -ESRCH, -EINVAL, -errno */
NP_API int np_proc_stat_read(const char *root, pid_t pid, struct np_proc_stat *out,
                             struct np_err *err);

/**
 * Open /proc/<pid>/stat under @p root to keep (O_CLOEXEC), its path written to @p path.
 * @return the new descriptor (the caller closes it), -ESRCH, or -errno with @p err
 */
NP_API int np_proc_stat_open(const char *root, pid_t pid, char *path, size_t size,
                             struct np_err *err);

/**
 * Read a stat file opened by np_proc_stat_open, from offset 0 (pread: a kept descriptor shows
 * the figures of now). A descriptor kept past its process's exit reads -ESRCH, never another
 * process that got the pid. @p pid and @p path only name it in messages.
 * @return 0, -ESRCH, -EINVAL (empty or malformed), -errno with @p err
 */
NP_API int np_proc_stat_read_fd(int fd, pid_t pid, const char *path, struct np_proc_stat *out,
                                struct np_err *err);

/** From /proc/<pid>/status: the fields the helper needs. Missing fields stay 0 / "". */
struct np_proc_status {
    pid_t tgid, ppid;
    uid_t uid; /**< real uid */
    uint64_t vm_rss_kb;
    uint64_t voluntary_ctxt_switches, nonvoluntary_ctxt_switches;
    char cpus_allowed_list[256];
    char mems_allowed_list[256];
};

/**
 * Apply one line of a status file (without its newline) to @p out: a line that is none of the
 * fields above leaves @p out as it was.
 */
NP_API void np_proc_status_parse_line(const char *line, struct np_proc_status *out);

/** @p ps's Cpus_allowed_list (borrowed), or NULL when it filled the field and may be cut. */
NP_API const char *np_proc_status_cpus_allowed(const struct np_proc_status *ps);

/** Read /proc/<pid>/status under @p root. @return 0, -ESRCH, -errno */
NP_API int np_proc_status_read(const char *root, pid_t pid, struct np_proc_status *out,
                               struct np_err *err);

/* Each reader with a @p kept argument reads through a file kept open between calls (NULL: opened
 * afresh each time), with the same figures. */

/**
 * Per-CPU totals of /proc/interrupts or /proc/softirqs (@p file: "interrupts" or "softirqs")
 * under @p root: every per-CPU line summed, columns mapped by the "CPUn" header (offline CPUs
 * leave gaps). Lines without a count per CPU (ERR, MIS) are not per-CPU and are left out.
 * The OS-interference figure of a job is the delta of these over its CPUs.
 * @param per_cpu caller array of @p max_cpus counters, zeroed and filled by CPU number
 * @return the highest CPU number seen + 1, or -ENOENT / -EINVAL / -errno with @p err
 */
NP_API int np_proc_cpu_counters(const char *root, const char *file, struct np_kept_file *kept,
                                uint64_t *per_cpu, unsigned max_cpus, struct np_err *err);

/**
 * Per-CPU busy time from /proc/stat under @p root: user + nice + system + irq + softirq, in
 * clock ticks (idle, iowait and steal are not work done on the CPU), into @p busy_ticks (caller
 * array of @p max_cpus, zeroed and filled by CPU number); in @p total_ticks (the same, or NULL)
 * each CPU's ticks of every kind, idle, iowait and steal included: the time the kernel
 * accounted, which on a starved virtual machine is less than wall-clock time times the tick rate.
 * @return the highest CPU number seen + 1, or -errno / -EINVAL with @p err
 */
NP_API int np_proc_cpu_ticks(const char *root, struct np_kept_file *kept, uint64_t *busy_ticks,
                             uint64_t *total_ticks, unsigned max_cpus, struct np_err *err);

/** Threads of one process whose children files np_proc_children reads, at most. */
#define NP_PROC_MAX_THREADS_WALKED 4096

/**
 * The children of every thread of @p pid (/proc/<pid>/task/<tid>/children, which lists the
 * processes a thread forked), appended to @p out up to @p max. With @p threads == 1 only the
 * main thread's file is read (no directory walk: numaplaced's hot path); 0 means unknown. The
 * walk stops after NP_PROC_MAX_THREADS_WALKED threads (the children of the rest are not found):
 * @p threads_cut (may be NULL) says whether it did.
 * @return the number found (more than @p max when cut), -ESRCH (gone), or -errno with @p err
 */
NP_API int np_proc_children(const char *root, pid_t pid, long threads, pid_t *out, unsigned max,
                            bool *threads_cut, struct np_err *err);

/**
 * The pids listed in one open task/<tid>/children file, read from offset 0 (pread), stored
 * from out[*found] up to @p max; *found counts them all (more than @p max when cut).
 * @return 0 or -errno
 */
NP_API int np_proc_children_read_fd(int fd, pid_t *out, unsigned max, unsigned *found);

/** Called with a CPU list ("0-3,8") as read, or NULL when it could not be read whole. */
typedef void np_cpu_list_fn(const char *list, void *arg);

/**
 * Voluntary and involuntary context switches of every thread of @p pid, summed
 * (/proc/<pid>/task/<tid>/status; /proc/<pid>/status counts the main thread only). With
 * @p threads == 1 only /proc/<pid>/status is read; 0 means unknown.
 * @param cpus_allowed NULL, or called with the Cpus_allowed_list of each thread read (from the
 *        same files: no extra read), or with NULL for a thread whose list was not read whole
 * @return 0, -ESRCH, or -errno with @p err
 */
NP_API int np_proc_ctxt_switches(const char *root, pid_t pid, long threads, uint64_t *voluntary,
                                 uint64_t *involuntary, np_cpu_list_fn *cpus_allowed, void *arg,
                                 struct np_err *err);

/**
 * The kernel's automatic NUMA balancing figures of a process's main thread, from
 * /proc/<pid>/sched: numa_pages_migrated and total_numa_faults (present when the kernel has
 * CONFIG_NUMA_BALANCING).
 * @return 0, -ESRCH, -ENOENT (no such fields: no NUMA balancing in this kernel) or -errno
 */
NP_API int np_proc_numa_balancing(const char *root, pid_t pid, uint64_t *pages_migrated,
                                  uint64_t *faults, struct np_err *err);

/**
 * Whether automatic NUMA balancing is on (/proc/sys/kernel/numa_balancing under @p root).
 * @return 1 on, 0 off, or -errno with @p err (no such file: the kernel does not have it)
 */
NP_API int np_numa_balancing_enabled(const char *root, struct np_kept_file *kept,
                                     struct np_err *err);

/**
 * Whether the kernel moves pages between memory tiers itself: demotion on
 * (/sys/kernel/mm/numa/demotion_enabled is "true") or NUMA balancing in its tiering mode
 * (/proc/sys/kernel/numa_balancing has bit 2 set), under @p root. A missing file is off.
 * @return true with @p why (a sentence naming the file) filled, or false with @p why ""
 */
NP_API bool np_kernel_tiering(const char *root, char *why, size_t why_len);

/**
 * A NUMA node's memory from /sys/devices/system/node/node<N>/meminfo under @p root.
 * @return 0, -ENOENT (no such node) or -errno / -EINVAL with @p err
 */
NP_API int np_node_meminfo(const char *root, unsigned node, struct np_kept_file *kept,
                           uint64_t *total_bytes, uint64_t *free_bytes, struct np_err *err);

/* Reading /proc/<pid>/numa_maps: where a process's pages are.
 *
 * One line per mapping: "<start> <policy> [anon=N] [dirty=N] [N<node>=<pages>...]
 * [kernelpagesize_kB=K] [file=<path>] [heap] [stack] [huge] ...". Counts are in pages of the
 * mapping's own size (kernelpagesize_kB: 4 for base pages, 2048 or 1048576 for hugetlbfs);
 * transparent huge pages are counted in base pages. Reading streams line by line, so memory use
 * is bounded whatever the size of the process. */
#define NP_NUMA_MAPS_MAX_NODES 64

/** One mapping. The path is borrowed from the reader's line buffer: copy it to keep it. */
struct np_numa_mapping {
    uintptr_t start;
    char policy[48];                        /**< "default", "interleave:0-3", ... */
    uint64_t pages[NP_NUMA_MAPS_MAX_NODES]; /**< per node, in pages of page_kb */
    unsigned long page_kb;                  /**< kernelpagesize_kB (base page if absent) */
    bool anon, hugetlb;
    const char *path; /**< file=... with the kernel's octal escapes (\040) undone, or NULL */
};

/**
 * Parse one line (modified in place). Unknown tokens are ignored, as newer kernels add some.
 * @return 0, or -EINVAL for a line that does not start with a hex address
 */
NP_API int np_numa_maps_parse_line(char *line, struct np_numa_mapping *out);

/** Called per mapping; return non-zero to stop the walk (that value is returned). */
typedef int np_numa_maps_fn(const struct np_numa_mapping *mapping, void *arg);

/**
 * Walk /proc/<pid>/numa_maps under @p root. Malformed lines are skipped and counted.
 * @param skipped optional: receives the number of malformed lines
 * @return 0, the callback's non-zero value, -ESRCH (no such process) or -errno with @p err
 */
NP_API int np_numa_maps_each(const char *root, pid_t pid, np_numa_maps_fn *fn, void *arg,
                             unsigned *skipped, struct np_err *err);

/** A process's memory per node, split anonymous / file-backed, in bytes. */
struct np_numa_usage {
    uint64_t anon_bytes[NP_NUMA_MAPS_MAX_NODES];
    uint64_t file_bytes[NP_NUMA_MAPS_MAX_NODES];
    uint64_t total_bytes;
    int max_node; /**< highest node with pages, -1 when none */
    unsigned mappings, skipped_lines;
};

/** Sum a process's numa_maps into @p out (zeroed first). Errors as np_numa_maps_each. */
NP_API int np_numa_maps_usage(const char *root, pid_t pid, struct np_numa_usage *out,
                              struct np_err *err);

/**
 * Whether the CPU is an emulator's software model, whose hardware counters count what the
 * emulator defines (QEMU with precise icount: every instruction 2^shift cycles), so a CPI from
 * them predicts nothing (a virtual machine on a real CPU, KVM, is not emulated). Said by arm64's
 * /proc/cpuinfo "CPU implementer" 0x00 (Arm's code for software models, which QEMU uses) or x86's
 * CPUID hypervisor signature "TCGTCGTCGTCG" (QEMU's emulator; KVM says "KVMKVMKVM").
 * @param why  when emulated, what says so (for reports and logs); "" otherwise
 * @return true when emulated; false when not, or when nothing could be read
 */
NP_API bool np_cpu_emulated(const char *root, char *why, size_t why_len);

/* One job's figures at one instant, from whichever backend measured them.
 *
 * Backends (docs/report-schema.md):
 *   proc    always available: CPU time, context switches, faults, RSS and pages per NUMA node of
 *           the job's processes (its tasks and their descendants), plus interrupts, softirqs and
 *           busy time of the job's CPUs;
 *   perf    perf_event counters opened on each task with inheritance (numaplace/perf.h);
 *   replay  a trace recorded by numaplaced (np_trace_*), fed to the same code downstream.
 *
 * Every figure is cumulative (since the job was registered, or since the process started for
 * /proc CPU times), so rates come from differences of two samples; each group carries whether it
 * is available and, when not, why. */
#define NP_SAMPLE_MAX_NODES NP_NUMA_MAPS_MAX_NODES
#define NP_REASON_MAX       512 /* a reason kept per sample: longer errors are cut */

/** One job (one step on one node) at time t. Zero-initialise, or use np_sample_init. */
struct np_sample {
    double t; /**< seconds since the job was registered (CLOCK_MONOTONIC) */
    unsigned processes;

    /* proc: /proc/<pid>/stat of every process (have_proc); context switches from status, read
     * every detail interval (have_cs) */
    double utime_s, stime_s;
    uint64_t minflt, majflt, voluntary_cs, involuntary_cs, rss_bytes;
    /* proc: /proc/<pid>/numa_maps, not read every interval for large jobs (have_pages) */
    uint64_t node_bytes[NP_SAMPLE_MAX_NODES];
    /* proc: /proc/interrupts and /proc/softirqs summed over the job's CPUs (have_irq) */
    uint64_t interrupts, softirqs;
    /* proc: /proc/stat busy time of the job's CPUs (have_cpu_busy) */
    double cpus_busy_s;
    /* proc: the kernel's NUMA balancing, /proc/<pid>/sched of each process (have_balancing) */
    uint64_t balancing_pages_migrated, balancing_faults;
    /* perf: per event, summed over the tasks (have_perf) */
    uint64_t perf[NP_PERF_NEVENTS];
    /** perf: the kernel's time enabled and time on a hardware counter, summed over the tasks;
     *  running < enabled: the kernel multiplexed the event and perf[] is scaled (an estimate) */
    uint64_t perf_enabled_ns[NP_PERF_NEVENTS], perf_running_ns[NP_PERF_NEVENTS];
    /** LLC misses (load + store) attributed to the NUMA node of the CPUs the tasks ran on */
    uint64_t misses_by_node[NP_SAMPLE_MAX_NODES];

    /* why a group is unavailable ("" when it is, or when it was not read this time) */
    char proc_reason[NP_REASON_MAX];
    char pages_reason[NP_REASON_MAX];
    char irq_reason[NP_REASON_MAX];
    char cpu_busy_reason[NP_REASON_MAX];
    char balancing_reason[NP_REASON_MAX];
    char perf_reason[NP_PERF_NEVENTS][NP_REASON_MAX];

    bool have_proc, have_pages, have_irq, have_cpu_busy, have_misses_by_node, have_balancing;
    bool have_cs; /**< voluntary_cs / involuntary_cs were read (every detail interval) */
    /** a limit cut the walk of the step's processes: some were left out (proc_reason says which
     *  limit) and every figure of this sample counts only those seen */
    bool processes_cut;
    bool have_perf[NP_PERF_NEVENTS];
};

/** Clear @p s and mark every figure "not sampled". */
NP_API void np_sample_init(struct np_sample *s);

/**
 * The sample as a JSON object (the trace format, docs/report-schema.md). New reference, NULL on
 * out-of-memory.
 */
NP_API json_t *np_sample_to_json(const struct np_sample *s);

/**
 * {"N": value} for the non-zero entries of a per-NUMA-node array (bytes per node in samples,
 * reports and summaries). New reference, NULL on out-of-memory.
 */
NP_API json_t *np_node_map_json(const uint64_t values[NP_SAMPLE_MAX_NODES]);

/** [n, ...] for the bits set in @p mask (a step's local NUMA nodes). New reference. */
NP_API json_t *np_node_list_json(uint64_t mask);

/**
 * Read a sample back from np_sample_to_json's form (@p obj borrowed).
 * @return 0, or -EINVAL naming the bad member
 */
NP_API int np_sample_from_json(json_t *obj, struct np_sample *s, struct np_err *err);

#endif /* NUMAPLACE_PROCFS_H */
