/* fwq_daemons: the jobs bench/fwq keeps alive and the daemon each configuration starts. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "fwq_run.h"
#include "numaplace/procfs.h"
#include "numaplace/protocol.h"

#define NUMAD_PID_FILE "/var/run/numad.pid"
/* numad's System V message queue (its key in numad.c), which it never removes */
#define NUMAD_MSG_KEY  0xdeadbeef
#define THP_SCAN_SLEEP "/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs"
/* Past a daemon's start-up and first samples (numaplaced reads every numa_maps at its first). */
#define SETTLE_US 2500000

static void pin_to(const int *cpus, int n)
{
    cpu_set_t set;

    if (n == 0)
        return;
    CPU_ZERO(&set);
    for (int i = 0; i < n; i++)
        CPU_SET(cpus[i], &set);
    sched_setaffinity(0, sizeof(set), &set);
}

/* A process that touches @p mib MiB in @p maps mappings (each followed by an inaccessible
 * page, so the kernel cannot merge them: numa_maps has a line for each) and sleeps. */
static pid_t toucher(long mib, long maps)
{
    pid_t pid = fork();

    if (pid == 0) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (size_t)mib << 20;
        size_t chunk = (len / (size_t)maps + page - 1) / page * page;
        char *base = mmap(NULL, (chunk + page) * (size_t)maps, PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (base == MAP_FAILED)
            _exit(1);
        for (long m = 0; m < maps; m++) {
            char *p = base + (size_t)m * (chunk + page);
            if (mprotect(p, chunk, PROT_READ | PROT_WRITE) < 0)
                _exit(1);
            memset(p, 1, chunk);
        }
        for (;;)
            pause();
    }
    return pid;
}

static void wait_resident(pid_t pid, long mib)
{
    struct np_proc_status ps;

    for (int i = 0; i < 1200; i++) {
        if (np_proc_status_read(NULL, pid, &ps, NULL) == 0 &&
            ps.vm_rss_kb >= (uint64_t)mib * 1024 * 98 / 100)
            return;
        usleep(100000);
    }
}

/* What a signal must undo: the daemon running now, numad's change to khugepaged, the jobs. */
static struct fwq_run *volatile signal_run;
static struct fwq_daemon *volatile signal_daemon;

static void on_signal(int sig)
{
    static const char msg[] = "fwq: interrupted: daemon and jobs stopped, khugepaged restored\n";
    struct fwq_run *run = signal_run;
    struct fwq_daemon *d = signal_daemon;

    if (d && d->pid > 0)
        kill(d->pid, SIGTERM);
    if (run) {
        int fd = open(THP_SCAN_SLEEP, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (run->thp_scan_sleep[0] &&
                write(fd, run->thp_scan_sleep, strlen(run->thp_scan_sleep)) < 0) {
                /* nothing more a handler can do */
            }
            close(fd);
        }
        for (int i = 0; i < run->procs; i++)
            if (run->proc_pids[i] > 0)
                kill(run->proc_pids[i], SIGKILL);
        if (run->large_pid > 0)
            kill(run->large_pid, SIGKILL);
    }
    if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
        /* the exit status says it too */
    }
    _exit(128 + sig);
}

int fwq_jobs_start(struct fwq_run *run)
{
    struct sigaction sa = {.sa_handler = on_signal};

    signal_run = run;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    for (int i = 0; i < run->procs; i++)
        if ((run->proc_pids[i] = toucher(run->mib, 1)) < 0)
            return -errno;
    run->large_pid = toucher(run->large_mib, run->large_maps);
    if (run->large_pid < 0)
        return -errno;
    for (int i = 0; i < run->procs; i++)
        wait_resident(run->proc_pids[i], run->mib);
    wait_resident(run->large_pid, run->large_mib);
    return 0;
}

void fwq_jobs_stop(struct fwq_run *run)
{
    for (int i = 0; i < run->procs; i++)
        if (run->proc_pids[i] > 0) {
            kill(run->proc_pids[i], SIGKILL);
            waitpid(run->proc_pids[i], NULL, 0);
        }
    if (run->large_pid > 0) {
        kill(run->large_pid, SIGKILL);
        waitpid(run->large_pid, NULL, 0);
    }
}

uint64_t fwq_cpu_ns(pid_t pid)
{
    char path[96];
    uint64_t sum = 0;
    DIR *d;
    struct dirent *e;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    d = opendir(path);
    if (!d)
        return 0;
    while ((e = readdir(d))) {
        unsigned long long ns;
        FILE *f;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat", (int)pid, e->d_name);
        f = fopen(path, "r");
        if (!f)
            continue;
        if (fscanf(f, "%llu", &ns) == 1)
            sum += ns;
        fclose(f);
    }
    closedir(d);
    return sum;
}

void fwq_daemon_tids(pid_t pid, struct fwq_slot *slot)
{
    char path[64];
    DIR *d;
    struct dirent *e;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    d = opendir(path);
    if (!d)
        return;
    while ((e = readdir(d))) {
        int32_t tid = (int32_t)atoi(e->d_name);
        bool known = tid <= 0;
        for (size_t i = 0; i < slot->ndaemon_tids && !known; i++)
            known = slot->daemon_tids[i] == tid;
        if (!known && slot->ndaemon_tids < sizeof(slot->daemon_tids) / sizeof(slot->daemon_tids[0]))
            slot->daemon_tids[slot->ndaemon_tids++] = tid;
    }
    closedir(d);
}

static int ping(const char *sock)
{
    json_t *reply = NULL;
    int rc = np_proto_call(sock, "{\"v\":1,\"op\":\"ping\"}\n", 200, &reply, NULL);
    json_decref(reply);
    return rc;
}

static int register_task(const char *sock, uint32_t job, pid_t pid, int task, const char *cpus)
{
    struct np_proto_request req = {.op = NP_OP_REGISTER};
    json_t *reply = NULL;
    char *line;
    int rc;

    req.reg = (struct np_task_reg){
        .job_id = job, .step_id = 0, .uid = 0, .pid = pid, .task_id = task, .sensitivity = "low"};
    snprintf(req.reg.cpus, sizeof(req.reg.cpus), "%s", cpus);
    line = np_proto_encode(&req);
    rc = line ? np_proto_call(sock, line, 2000, &reply, NULL) : -ENOMEM;
    json_decref(reply);
    free(line);
    return rc;
}

static void cpu_text(const int *cpus, int n, char *out, size_t len)
{
    size_t used = 0;

    out[0] = '\0';
    for (int i = 0; i < n && used + 8 < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%d", i ? "," : "", cpus[i]);
}

static void start_numaplaced(struct fwq_run *run, enum fwq_config c, struct fwq_daemon *d)
{
    char sock[128], cpus[1024];

    const char *tmp = getenv("TMPDIR");

    /* under $TMPDIR, so a test can tell its own leftovers from another run's */
    if (!tmp || tmp[0] != '/')
        tmp = "/tmp";
    if ((size_t)snprintf(d->dir, sizeof(d->dir), "%s/np-fwq-XXXXXX", tmp) >= sizeof(d->dir)) {
        snprintf(d->why, sizeof(d->why), "TMPDIR %.40s... is too long for a socket path", tmp);
        return;
    }
    if (!mkdtemp(d->dir)) {
        snprintf(d->why, sizeof(d->why), "mkdtemp: %s", strerror(errno));
        return;
    }
    snprintf(sock, sizeof(sock), "%s/s.sock", d->dir);
    d->pid = fork();
    if (d->pid == 0) {
        char a[7][1200];
        char *argv[16] = {"numaplaced",
                          "--config=/dev/null",
                          a[0],
                          a[1],
                          a[2],
                          "--pid_file=",
                          a[3],
                          a[4],
                          "--interval_ms=1000",
                          "--trigger_homecoming=off",
                          "--trigger_pressure=off",
                          "--trigger_bandwidth=off"};
        int argc = 12;
        pin_to(run->helper_cpus, run->nhelper_cpus);
        snprintf(a[0], sizeof(a[0]), "--socket=%s", sock);
        snprintf(a[1], sizeof(a[1]), "--state_dir=%s/state", d->dir);
        snprintf(a[2], sizeof(a[2]), "--spool_dir=%s/spool", d->dir);
        snprintf(a[3], sizeof(a[3]), "--log=%s/log", d->dir);
        snprintf(a[4], sizeof(a[4]), "--housekeeping_cpus=%s",
                 run->nhelper_cpus ? run->helper_cpu_text : "none");
        if (c == FWQ_NUMA_MAPS) {
            /* the large job's numa_maps every second (60 s by default), so every measurement
             * holds reads: their size is one read's, their frequency 60 times the default. Job 1
             * stays below the "large" line and keeps its default schedule. */
            snprintf(a[5], sizeof(a[5]), "--numa_maps_large_bytes=%llu",
                     (unsigned long long)(run->procs * run->mib + run->large_mib) << 19);
            snprintf(a[6], sizeof(a[6]), "--numa_maps_large_interval_ms=1000");
            argv[argc++] = a[5];
            argv[argc++] = a[6];
        }
        argv[argc] = NULL;
        execv(run->numaplaced, argv);
        _exit(127);
    }
    for (int i = 0; i < 100 && ping(sock) != 0; i++)
        usleep(50000);
    if (ping(sock) != 0) {
        snprintf(d->why, sizeof(d->why), "numaplaced did not answer at %s (its log: %s/log)", sock,
                 d->dir);
        return;
    }
    cpu_text(run->cpus, run->ncpu, cpus, sizeof(cpus));
    for (int i = 0; i < run->procs; i++)
        if (register_task(sock, 1, run->proc_pids[i], i, cpus) < 0) {
            snprintf(d->why, sizeof(d->why), "registering pid %d failed", (int)run->proc_pids[i]);
            return;
        }
    if ((c == FWQ_MIGRATING || c == FWQ_NUMA_MAPS) &&
        register_task(sock, 2, run->large_pid, 0, cpus) < 0)
        snprintf(d->why, sizeof(d->why), "registering the large job failed");
}

static int numad_queue_before = -1; /* whether numad's queue was there before the first numad */

static int numad_running(void)
{
    FILE *f = fopen(NUMAD_PID_FILE, "r");
    int pid = 0;

    if (!f)
        return 0;
    if (fscanf(f, "%d", &pid) != 1 || pid <= 0 || kill(pid, 0) != 0)
        pid = 0;
    fclose(f);
    return pid;
}

static void start_numad(struct fwq_run *run, enum fwq_config c, struct fwq_daemon *d)
{
    int status, other = numad_running();
    pid_t starter;

    if (!run->numad) {
        snprintf(d->why, sizeof(d->why), "--numad=none");
        return;
    }
    if (access(run->numad, X_OK) != 0) {
        snprintf(d->why, sizeof(d->why), "%s: %s (Debian's numad package)", run->numad,
                 strerror(errno));
        return;
    }
    if (other) {
        snprintf(d->why, sizeof(d->why),
                 "a numad already runs (pid %d): numad allows one per machine", other);
        return;
    }
    if (numad_queue_before < 0)
        numad_queue_before = msgget((key_t)NUMAD_MSG_KEY, 0) >= 0;
    unlink(NUMAD_PID_FILE);
    starter = fork();
    if (starter == 0) {
        pin_to(run->helper_cpus, run->nhelper_cpus);
        /* numad daemonizes: this child exits once the daemon runs */
        /* "-i 1" alone is refused: its maximum would be below the default minimum (5 s) */
        execl(run->numad, "numad", "-i", c == FWQ_NUMAD_1S ? "1:1" : "15", (char *)NULL);
        _exit(127);
    }
    waitpid(starter, &status, 0);
    for (int i = 0; i < 50 && !(d->pid = numad_running()); i++)
        usleep(20000);
    if (!d->pid)
        snprintf(d->why, sizeof(d->why),
                 "numad exited at start (status %d; see /var/log/numad.log)", status);
}

void fwq_daemon_start(struct fwq_run *run, enum fwq_config c, struct fwq_daemon *d)
{
    memset(d, 0, sizeof(*d));
    d->migrate_fd = -1;
    signal_daemon = d;
    switch (c) {
    case FWQ_NONE:
        break;
    case FWQ_MIGRATING:
        if (run->nodes < 2) {
            snprintf(d->why, sizeof(d->why),
                     "one NUMA node (a migration moves pages from one node to another)");
            return;
        }
        start_numaplaced(run, c, d);
        break;
    case FWQ_NUMA_MAPS:
        if (run->large_mib < 2L * run->procs * run->mib) {
            snprintf(d->why, sizeof(d->why),
                     "the large job (%ld MiB) must be at least twice job 1 (%ld MiB) for its "
                     "numa_maps to be read on a schedule of its own",
                     run->large_mib, (long)run->procs * run->mib);
            return;
        }
        start_numaplaced(run, c, d);
        break;
    case FWQ_SAMPLING:
        start_numaplaced(run, c, d);
        break;
    case FWQ_NUMAD:
    case FWQ_NUMAD_1S:
        start_numad(run, c, d);
        break;
    case FWQ_CONFIGS:
        break;
    }
    if (!d->why[0])
        usleep(SETTLE_US);
}

/* c: ask for every page of the node holding most of the large job's memory to move to another
 * node, at the helper's default rate limit; the reply comes when it is done. */
void fwq_daemon_go(struct fwq_run *run, enum fwq_config c, struct fwq_daemon *d)
{
    struct np_numa_usage usage;
    struct np_proto_request req = {.op = NP_OP_MIGRATE};
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int from = 0;
    char *line;

    if (c != FWQ_MIGRATING || d->why[0])
        return;
    if (np_numa_maps_usage(NULL, run->large_pid, &usage, NULL) == 0)
        for (int n = 0; n <= usage.max_node && n < NP_NUMA_MAPS_MAX_NODES; n++)
            if (usage.anon_bytes[n] > usage.anon_bytes[from])
                from = n;
    req.migrate.from = (unsigned)from;
    req.migrate.to = from == 0 ? 1 : 0;
    req.migrate.pages = (uint64_t)run->large_mib << 8; /* 4 KiB pages */
    line = np_proto_encode(&req);
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/s.sock", d->dir);
    d->migrate_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (!line || d->migrate_fd < 0 ||
        connect(d->migrate_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
        write(d->migrate_fd, line, strlen(line)) != (ssize_t)strlen(line))
        snprintf(d->why, sizeof(d->why), "sending the migrate request failed: %s", strerror(errno));
    free(line);
}

static void restore_thp(const struct fwq_run *run)
{
    int fd;

    if (!run->thp_scan_sleep[0])
        return;
    fd = open(THP_SCAN_SLEEP, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    if (write(fd, run->thp_scan_sleep, strlen(run->thp_scan_sleep)) < 0)
        fprintf(stderr, "fwq: could not restore %s: %s\n", THP_SCAN_SLEEP, strerror(errno));
    close(fd);
}

/* Remove numad's message queue once numad is stopped, if the benchmark's numad created it. */
static void numad_queue_cleanup(void)
{
    int id = msgget((key_t)NUMAD_MSG_KEY, 0);

    if (numad_queue_before == 0 && id >= 0)
        msgctl(id, IPC_RMID, NULL);
}

int fwq_daemon_stop(struct fwq_run *run, enum fwq_config c, struct fwq_daemon *d)
{
    int answered = 0;
    char cmd[160];

    if (d->migrate_fd >= 0) {
        struct pollfd p = {.fd = d->migrate_fd, .events = POLLIN};
        answered = poll(&p, 1, 0) == 1;
        close(d->migrate_fd);
    }
    if ((c == FWQ_NUMAD || c == FWQ_NUMAD_1S) && d->pid > 0) {
        /* numad's own way to stop (numad(8): -i 0), then a signal if it is still there */
        snprintf(cmd, sizeof(cmd), "'%s' -i 0 >/dev/null 2>&1", run->numad);
        if (system(cmd) != 0)
            fprintf(stderr, "fwq: numad -i 0 failed\n");
        for (int i = 0; i < 100 && kill(d->pid, 0) == 0; i++)
            usleep(50000);
        if (kill(d->pid, 0) == 0)
            kill(d->pid, SIGKILL);
        restore_thp(run);
        numad_queue_cleanup();
    } else if (d->pid > 0) {
        kill(d->pid, SIGTERM);
        waitpid(d->pid, NULL, 0);
    }
    if (d->dir[0]) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
        if (system(cmd) != 0)
            fprintf(stderr, "fwq: could not remove %s\n", d->dir);
    }
    d->pid = 0;
    signal_daemon = NULL;
    return answered;
}
