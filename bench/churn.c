/*
 * churn: numaplaced under load and churn, measured on a real numaplaced (run as root).
 *
 *   churn NUMAPLACED [MINUTES] [JOBS-PER-MINUTE] [JOB-SECONDS]
 *
 * The benchmark starts numaplaced in a temp directory (interval_ms=1000, proc backend) and talks
 * to it as the plugin does, through np_proto_call, with tasks that are real processes (children
 * that sleep). Three parts:
 *
 * 1. 1,000 tasks in 100 steps registered one by one: p50/p99/max per registration, then the
 *    100 step_end calls (each writes a report). Side by side, step by step alternating which goes
 *    first, a second numaplaced with its state and spool on a tmpfs (/dev/shm), where fsync costs
 *    nothing: what the registry's flush to disk at every registration costs.
 * 2. JOBS-PER-MINUTE (default 100) one-step jobs of two tasks a minute for MINUTES (default 10),
 *    each running JOB-SECONDS (default 30): registration and step_end p50/p99, the helper's RSS
 *    (VmRSS) and CPU time (utime+stime) sampled every 10 s.
 * 3. 200 connections held open by an unprivileged user (nobody; each one reopened as soon as
 *    the helper closes it) while root registers 200 tasks in 20 steps: root's p50/p99/max and
 *    how many succeeded, beside the same 200 registrations without the flood just before.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "numaplace/protocol.h"

#define FLOOD_CONNECTIONS 200
#define FLOOD_UID         65534 /* nobody */

struct latencies {
    double *ms;
    unsigned n, cap, failed;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void lat_add(struct latencies *l, double ms)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 1024;
        l->ms = realloc(l->ms, l->cap * sizeof(double));
        if (!l->ms)
            abort();
    }
    l->ms[l->n++] = ms;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double lat_pct(struct latencies *l, double p)
{
    if (!l->n)
        return -1;
    qsort(l->ms, l->n, sizeof(double), cmp_double);
    return l->ms[(unsigned)(p * (l->n - 1) + 0.5)];
}

static void lat_print(const char *what, struct latencies *l)
{
    printf("| %s | %u | %u | %.2f | %.2f | %.2f |\n", what, l->n, l->failed, lat_pct(l, 0.5),
           lat_pct(l, 0.99), lat_pct(l, 1.0));
    free(l->ms);
    *l = (struct latencies){0};
}

static pid_t sleeper(void)
{
    const pid_t pid = fork();
    if (pid == 0) {
        for (;;)
            pause();
    }
    return pid;
}

static void reap(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* One request as the plugin sends it; its latency in @p l (failures counted, not timed). */
static void call(const char *sock, const struct np_proto_request *req, struct latencies *l)
{
    char *line = np_proto_encode(req);
    json_t *reply = NULL;
    struct np_err err = {0};
    const double t = now_s();
    const int rc = np_proto_call(sock, line, 2000, &reply, &err);

    if (rc < 0) {
        l->failed++;
        fprintf(stderr, "churn: %s failed: %s\n", np_proto_op_name(req->op), err.msg);
    } else {
        lat_add(l, (now_s() - t) * 1e3);
    }
    json_decref(reply);
    free(line);
}

static void reg(const char *sock, uint32_t job, int task, pid_t pid, struct latencies *l)
{
    struct np_proto_request req = {.op = NP_OP_REGISTER};
    req.reg = (struct np_task_reg){
        .job_id = job, .step_id = 0, .uid = 0, .pid = pid, .task_id = task, .sensitivity = "low"};
    snprintf(req.reg.cpus, sizeof(req.reg.cpus), "0");
    call(sock, &req, l);
}

static void step_end(const char *sock, uint32_t job, struct latencies *l)
{
    struct np_proto_request req = {.op = NP_OP_STEP_END, .job_id = job, .step_id = 0};
    call(sock, &req, l);
}

/* The helper's VmRSS in KiB and utime+stime in seconds. */
static void helper_usage(pid_t helper, long *rss_kb, double *cpu_s)
{
    char path[64], line[256];
    unsigned long ut = 0, st = 0;
    FILE *f;

    *rss_kb = -1;
    *cpu_s = -1;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)helper);
    if ((f = fopen(path, "r"))) {
        while (fgets(line, sizeof(line), f))
            if (sscanf(line, "VmRSS: %ld", rss_kb) == 1)
                break;
        fclose(f);
    }
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)helper);
    if ((f = fopen(path, "r"))) {
        if (fgets(line, sizeof(line), f)) {
            const char *p = strrchr(line, ')');
            if (p &&
                sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
                *cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
        }
        fclose(f);
    }
}

static int ping(const char *sock)
{
    json_t *reply = NULL;
    const int rc = np_proto_call(sock, "{\"v\":1,\"op\":\"ping\"}\n", 200, &reply, NULL);
    json_decref(reply);
    return rc;
}

static pid_t start_helper(const char *numaplaced, const char *dir, const char *sock)
{
    const pid_t helper = fork();

    if (helper == 0) {
        char a[5][1200];
        snprintf(a[0], sizeof(a[0]), "--socket=%s", sock);
        snprintf(a[1], sizeof(a[1]), "--state_dir=%s/state", dir);
        snprintf(a[2], sizeof(a[2]), "--spool_dir=%s/spool", dir);
        snprintf(a[3], sizeof(a[3]), "--log=%s/log", dir);
        snprintf(a[4], sizeof(a[4]), "--pid_file=");
        execl(numaplaced, "numaplaced", "--config=/dev/null", a[0], a[1], a[2], a[3], a[4],
              "--backends=proc", "--housekeeping_cpus=none", "--interval_ms=1000", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100 && ping(sock) != 0; i++)
        usleep(50000);
    return helper;
}

static void part_many_tasks(const char *sock, const char *sock_mem)
{
    enum { STEPS = 100, TASKS = 10 };
    static pid_t pids[STEPS * TASKS];
    const char *socks[2] = {sock, sock_mem};
    struct latencies reg_l[2] = {{0}}, end_l[2] = {{0}};

    for (int i = 0; i < STEPS * TASKS; i++)
        pids[i] = sleeper();
    for (int s = 0; s < STEPS; s++)
        for (int k = 0; k < 2; k++) {
            const int h = (s + k) % 2; /* each helper goes first every other step */
            for (int t = 0; t < TASKS; t++)
                reg(socks[h], 1000 + (uint32_t)s, t, pids[s * TASKS + t], &reg_l[h]);
        }
    for (int s = 0; s < STEPS; s++)
        for (int k = 0; k < 2; k++) {
            const int h = (s + k) % 2;
            step_end(socks[h], 1000 + (uint32_t)s, &end_l[h]);
        }
    printf("## 1. 1,000 tasks in 100 steps\n\n| call | count | failed | p50 ms | p99 ms | max ms "
           "|\n|---|---|---|---|---|---|\n");
    lat_print("register (1,000 tasks, 100 steps)", &reg_l[0]);
    lat_print("step_end (writes the report)", &end_l[0]);
    lat_print("register, state and spool on tmpfs", &reg_l[1]);
    lat_print("step_end, state and spool on tmpfs", &end_l[1]);
    for (int i = 0; i < STEPS * TASKS; i++)
        reap(pids[i]);
}

struct running_job {
    uint32_t id;
    pid_t pids[2];
    double end;
};

static void part_churn(const char *sock, pid_t helper, double minutes, double per_min, double job_s)
{
    static struct running_job jobs[4096];
    struct latencies lreg = {0}, lend = {0};
    unsigned njobs = 0, started = 0;
    const double t0 = now_s(), every = 60.0 / per_min;
    double next_start = t0, next_sample = t0;
    long rss;
    double cpu, cpu0;

    printf("\n## 2. %.0f jobs a minute for %.0f minutes, each %.0f s (2 tasks)\n\n", per_min,
           minutes, job_s);
    printf("| t s | jobs started | running | helper VmRSS KiB | helper CPU s (cumulative) |\n"
           "|---|---|---|---|---|\n");
    helper_usage(helper, &rss, &cpu0);
    for (;;) {
        const double t = now_s();
        if (t >= next_sample) {
            helper_usage(helper, &rss, &cpu);
            printf("| %.0f | %u | %u | %ld | %.2f |\n", t - t0, started, njobs, rss, cpu - cpu0);
            fflush(stdout);
            next_sample += 10;
        }
        if (t - t0 >= minutes * 60 && njobs == 0)
            break;
        for (unsigned i = 0; i < njobs;)
            if (jobs[i].end <= t) {
                step_end(sock, jobs[i].id, &lend);
                reap(jobs[i].pids[0]);
                reap(jobs[i].pids[1]);
                jobs[i] = jobs[--njobs];
            } else {
                i++;
            }
        if (t >= next_start && t - t0 < minutes * 60 && njobs < 4096) {
            struct running_job *j = &jobs[njobs++];
            j->id = 10000 + started++;
            j->end = t + job_s;
            for (int k = 0; k < 2; k++) {
                j->pids[k] = sleeper();
                reg(sock, j->id, k, j->pids[k], &lreg);
            }
            next_start += every;
        }
        usleep(5000);
    }
    helper_usage(helper, &rss, &cpu);
    printf("\nHelper CPU over the run: %.2f s in %.0f s (%.2f%% of one core); %u jobs.\n\n",
           cpu - cpu0, now_s() - t0, (cpu - cpu0) / (now_s() - t0) * 100, started);
    printf("| call | count | failed | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|---|\n");
    lat_print("register", &lreg);
    lat_print("step_end (writes the report)", &lend);
}

/* As @p uid: keep FLOOD_CONNECTIONS connections open, reopening each one the helper closes. */
static pid_t flood(const char *sock)
{
    const pid_t pid = fork();

    if (pid == 0) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        struct pollfd pfd[FLOOD_CONNECTIONS];

        if (setgid(FLOOD_UID) < 0 || setuid(FLOOD_UID) < 0)
            _exit(1);
        if (strlen(sock) >= sizeof(sa.sun_path))
            _exit(1);
        memcpy(sa.sun_path, sock, strlen(sock) + 1);
        for (int i = 0; i < FLOOD_CONNECTIONS; i++)
            pfd[i] = (struct pollfd){.fd = -1, .events = POLLIN};
        for (;;) {
            for (int i = 0; i < FLOOD_CONNECTIONS; i++)
                if (pfd[i].fd < 0) {
                    pfd[i].fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
                    if (connect(pfd[i].fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
                        errno != EINPROGRESS && errno != EAGAIN) {
                        close(pfd[i].fd);
                        pfd[i].fd = -1;
                    }
                }
            if (poll(pfd, FLOOD_CONNECTIONS, 10) > 0)
                for (int i = 0; i < FLOOD_CONNECTIONS; i++)
                    if (pfd[i].revents) {
                        close(pfd[i].fd);
                        pfd[i].fd = -1;
                    }
        }
    }
    return pid;
}

static void part_idle_flood(const char *sock)
{
    enum { STEPS = 20, TASKS = 10 };
    static pid_t pids[STEPS * TASKS];
    struct latencies l = {0};
    pid_t flooder;

    printf("\n## 3. %d connections held by uid %d while root registers\n\n", FLOOD_CONNECTIONS,
           FLOOD_UID);
    printf("| root's calls | count | failed | p50 ms | p99 ms | max ms "
           "|\n|---|---|---|---|---|---|\n");
    for (int round = 0; round < 2; round++) {
        flooder = round ? flood(sock) : 0;
        if (flooder)
            sleep(3); /* past the first idle timeouts: the flood at its steady state */
        for (int i = 0; i < STEPS * TASKS; i++)
            pids[i] = sleeper();
        for (int s = 0; s < STEPS; s++)
            for (int t = 0; t < TASKS; t++)
                reg(sock, 50000 + 100 * (uint32_t)round + (uint32_t)s, t, pids[s * TASKS + t], &l);
        lat_print(round ? "register, with the flood" : "register, alone", &l);
        for (int s = 0; s < STEPS; s++)
            step_end(sock, 50000 + 100 * (uint32_t)round + (uint32_t)s, &l);
        free(l.ms);
        l = (struct latencies){0};
        for (int i = 0; i < STEPS * TASKS; i++)
            reap(pids[i]);
        if (flooder)
            reap(flooder);
    }
}

int main(int argc, char **argv)
{
    const double minutes = argc > 2 ? atof(argv[2]) : 10;
    const double per_min = argc > 3 ? atof(argv[3]) : 100;
    const double job_s = argc > 4 ? atof(argv[4]) : 30;
    char dir[] = "/tmp/np-churn-XXXXXX", mem_dir[] = "/dev/shm/np-churn-XXXXXX", sock[128],
         mem_sock[128], cmd[256];
    pid_t helper, mem_helper;

    if (argc < 2 || geteuid() != 0 || minutes <= 0 || per_min <= 0 || job_s <= 0) {
        fprintf(stderr, "usage (as root): churn NUMAPLACED [MINUTES] [JOBS-PER-MINUTE] "
                        "[JOB-SECONDS]\n");
        return 2;
    }
    if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
        return 1;
    snprintf(sock, sizeof(sock), "%s/s.sock", dir);
    if (!mkdtemp(mem_dir) || chmod(mem_dir, 0755) < 0)
        return 1;
    snprintf(mem_sock, sizeof(mem_sock), "%s/s.sock", mem_dir);
    helper = start_helper(argv[1], dir, sock);
    mem_helper = start_helper(argv[1], mem_dir, mem_sock);
    if (ping(sock) != 0 || ping(mem_sock) != 0) {
        fprintf(stderr, "churn: numaplaced did not answer\n");
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    part_many_tasks(sock, mem_sock);
    kill(mem_helper, SIGTERM);
    waitpid(mem_helper, NULL, 0);
    part_churn(sock, helper, minutes, per_min, job_s);
    part_idle_flood(sock);
    kill(helper, SIGTERM);
    waitpid(helper, NULL, 0);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", dir, mem_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "churn: could not remove %s\n", dir);
    return 0;
}
