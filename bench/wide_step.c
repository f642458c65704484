/*
 * wide_step: what one sample of a step that forks wide costs the sampler: a parent
 * with N sleeping children (real processes, real /proc), sampled by np_sampler_sample on the
 * proc backend with its files kept open as numaplaced keeps them; prints the processes seen and
 * the CPU time (this process's, user + system) per sample, median of the samples after the
 * first (which opens the files).
 *
 * Usage: wide_step [CHILDREN (1000)] [SAMPLES (20)]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "numaplace/sampler.h"

static double cpu_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const int children = argc > 1 ? atoi(argv[1]) : 1000;
    const int samples = argc > 2 ? atoi(argv[2]) : 20;
    struct np_fd_budget budget = {.left = 1L << 20};
    struct rlimit lim;
    struct np_sampler s;
    struct np_err err = {0};
    double *cost = calloc((size_t)samples, sizeof(double));
    unsigned seen = 0;
    pid_t parent;
    int ready[2];
    char c;

    if (children < 1 || samples < 2 || !cost || pipe(ready) < 0)
        return 2;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
        lim.rlim_cur = lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
    }
    parent = fork();
    if (parent == 0) { /* the step's task: forks wide, then waits to be killed */
        setpgid(0, 0); /* its group goes at once at the end */
        for (int k = 0; k < children; k++)
            if (fork() == 0) {
                pause();
                _exit(0);
            }
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    if (read(ready[0], &c, 1) != 1)
        return 1;
    if (np_sampler_init(&s, "", 0, "off (bench)", NULL, 0, "0", &err) < 0 ||
        np_sampler_add_task(&s, parent, &err) < 0) {
        fprintf(stderr, "wide_step: %s\n", err.msg);
        return 1;
    }
    np_sampler_set_fd_budget(&s, &budget);
    for (int i = 0; i < samples; i++) {
        struct np_sample out;
        const double t0 = cpu_s();
        np_sampler_sample(&s, (double)i, NULL, false, false, &out);
        cost[i] = cpu_s() - t0;
        seen = out.processes;
    }
    qsort(cost + 1, (size_t)samples - 1, sizeof(double), cmp_double);
    printf("children %d: %u processes seen, %.2f ms CPU per sample (median of %d), first %.2f ms\n",
           children, seen, cost[1 + (samples - 1) / 2] * 1e3, samples - 1, cost[0] * 1e3);
    np_sampler_fini(&s);
    kill(-parent, SIGKILL);
    waitpid(parent, NULL, 0);
    return 0;
}
