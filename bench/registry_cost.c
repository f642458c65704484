/*
 * registry_cost: what one `register` costs numaplaced with 1, 100 and 1,000 steps tracked
 * (it rewrote and fsynced registry.json on every request, up to 0.5 s at 1,000 steps,
 * past the plugin's 100 ms budget).
 *
 *   registry_cost [DIR] [ROUNDS]
 *
 * A numaplaced context (the np_daemon library, no socket) with its state and spool under DIR
 * (default /var/tmp: a real disk, as /var/lib/numaplace is) holds N-1 steps; each round registers
 * one more step's task (pid: this process) as slurmstepd would and takes it out again (untimed).
 * Two ways alternate round by round in one process: "now" (op_register: marks the registry, which
 * the interval tick writes once), and "before" (op_register followed by registry_save, as every
 * request did). The tick's own write (registry_flush at N steps, once per interval whatever the
 * requests) is timed too. Prints p50 and p99 in microseconds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "ops.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof(*v), by_value);
    return v[(int)(p * (n - 1) + 0.5)];
}

static void discard(struct np_daemon *d, uint32_t job)
{
    struct np_daemon_job *j = registry_find(&d->registry, job, 0);
    if (j) {
        registry_remove(&d->registry, j);
        job_free(j);
    }
}

static int register_step(struct np_daemon *d, uint32_t job)
{
    const struct np_peer root = {.pid = 1, .uid = 0, .gid = 0};
    struct np_task_reg r = {.job_id = job, .uid = getuid(), .pid = getpid()};
    json_t *reply;
    int ok;

    snprintf(r.cpus, sizeof(r.cpus), "0");
    snprintf(r.policy_requested, sizeof(r.policy_requested), "local");
    snprintf(r.sensitivity, sizeof(r.sensitivity), "low");
    reply = op_register(d, &root, &r);
    ok = json_is_true(json_object_get(reply, "ok"));
    json_decref(reply);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *base = argc > 1 ? argv[1] : "/var/tmp";
    const int rounds = argc > 2 ? atoi(argv[2]) : 200;
    static const unsigned sizes[] = {1, 100, 1000};
    static double now[1000], before[1000], tick[1000];
    static struct np_daemon daemon;
    struct np_daemon *d = &daemon;
    char dir[512], cmd[600];

    if (rounds < 2 || rounds > 1000) {
        fprintf(stderr, "ROUNDS: 2 to 1000\n");
        return 2;
    }
    snprintf(dir, sizeof(dir), "%s/np-registry-bench.XXXXXX", base);
    if (!mkdtemp(dir)) {
        perror(dir);
        return 1;
    }
    np_daemon_init(d);
    d->log.fn = NULL; /* silent */
    snprintf(d->cfg.state_dir, sizeof(d->cfg.state_dir), "%s/state", dir);
    snprintf(d->cfg.spool_dir, sizeof(d->cfg.spool_dir), "%s/spool", dir);
    mkdir(d->cfg.state_dir, 0700);
    mkdir(d->cfg.spool_dir, 0755);
    snprintf(d->host, sizeof(d->host), "bench");
    d->cfg.perf = false;
    d->cfg.max_jobs = 2000;
    np_node_counters_init(&d->counters, 64);
    printf("| steps tracked | register now: p50 / p99 us | register + save (before): p50 / p99 us "
           "| tick write: p50 / p99 us |\n|---|---|---|---|\n");
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        while (d->registry.count + 1 < sizes[s])
            if (register_step(d, 100000 + d->registry.count) < 0) {
                fprintf(stderr, "registering step %u failed\n", d->registry.count);
                return 1;
            }
        for (int r = 0; r < rounds; r++) {
            double t0 = now_us();
            register_step(d, 1);
            now[r] = now_us() - t0;
            t0 = now_us();
            registry_flush(d);
            tick[r] = now_us() - t0;
            discard(d, 1);
            t0 = now_us();
            register_step(d, 1);
            registry_save(d);
            before[r] = now_us() - t0;
            discard(d, 1);
        }
        printf("| %u | %.0f / %.0f | %.0f / %.0f | %.0f / %.0f |\n", sizes[s],
               percentile(now, rounds, 0.5), percentile(now, rounds, 0.99),
               percentile(before, rounds, 0.5), percentile(before, rounds, 0.99),
               percentile(tick, rounds, 0.5), percentile(tick, rounds, 0.99));
        fflush(stdout);
    }
    np_daemon_fini(d);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
