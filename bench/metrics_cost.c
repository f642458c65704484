/*
 * metrics_cost: what one Prometheus scrape of numaplaced costs with 64 steps, beside what the
 * helper spends sampling those steps each interval. In one process, on numaplaced's own parts:
 *
 *   metrics_cost [STEPS] [SCRAPES]      (defaults 64 and 200; run as root to see every process)
 *
 * STEPS sleeping processes (each touched 4 MiB) are registered as one step each on a daemon
 * state with migration off. Then, in the loop's thread:
 *  - sampling: sampling_tick() over every step, the interval's work; the first tick also reads
 *    every numa_maps (which otherwise runs every 30 s), the next 20 do not (median of those);
 *  - render: metrics_render() alone, SCRAPES times (median);
 *  - scrape: the real endpoint on 127.0.0.1 (libmicrohttpd driven by http_fd/http_run, as the
 *    poll loop drives it) fetched SCRAPES times by a client process, one connection each:
 *    accept, the peer's uid (inet_diag), render, send. CPU time of the loop's thread per scrape.
 * CPU times are CLOCK_THREAD_CPUTIME_ID; the client's own time is not counted. With
 * METRICS_COST_PAGE=FILE the last page rendered is written there (for promtool check metrics).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"
#include "metrics_text.h"

#define MAX_STEPS   1024
#define MAX_SCRAPES 100000

static pid_t sleeper(void)
{
    const pid_t pid = fork();

    if (pid == 0) {
        const size_t len = 4u << 20;
        char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            _exit(1);
        memset(p, 1, len);
        for (;;)
            pause();
    }
    return pid;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* SCRAPES sequential GETs, one connection each; exits 0 when every one got a 200. */
static void client(uint16_t port, int scrapes)
{
    static char buf[1 << 20];
    const char req[] = "GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n";
    struct sockaddr_in in = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

    for (int i = 0; i < scrapes; i++) {
        const int fd = socket(AF_INET, SOCK_STREAM, 0);
        size_t len = 0;
        ssize_t n;
        if (fd < 0 || connect(fd, (struct sockaddr *)&in, sizeof(in)) < 0 ||
            write(fd, req, sizeof(req) - 1) < 0)
            _exit(2);
        while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
            len += (size_t)n;
        buf[len] = '\0';
        close(fd);
        if (strncmp(buf, "HTTP/1.1 200", 12) != 0)
            _exit(3);
    }
    _exit(0);
}

int main(int argc, char **argv)
{
    const int nsteps = argc > 1 ? atoi(argv[1]) : 64;
    const int scrapes = argc > 2 ? atoi(argv[2]) : 200;
    static struct np_daemon daemon_state; /* large: every client's buffer */
    static pid_t pids[MAX_STEPS];
    static double v[MAX_SCRAPES];
    struct np_daemon *d = &daemon_state;
    struct np_err err = {0};
    struct metrics_text page = {0};
    double t0, first_tick, tick, render, cpu0, wall0, scrape_cpu, scrape_wall;
    char listen[64];
    size_t page_len;
    pid_t cl;
    int status;

    if (nsteps < 1 || nsteps > MAX_STEPS || scrapes < 21 || scrapes > MAX_SCRAPES) {
        fprintf(stderr, "usage: metrics_cost [STEPS (1-%d)] [SCRAPES (21-%d)]\n", MAX_STEPS,
                MAX_SCRAPES);
        return 2;
    }
    np_daemon_init(d);
    d->cfg.migration = false;
    d->cfg.perf = false;
    d->cfg.max_jobs = (unsigned)nsteps;
    snprintf(d->host, sizeof(d->host), "bench");
    d->log.fn = NULL; /* quiet */
    if (np_node_counters_init(&d->counters, 4096) < 0)
        return 1;
    sampling_load_topology(d);
    sampling_probe_perf(d);
    for (int i = 0; i < nsteps; i++) {
        struct np_daemon_job *j;
        pids[i] = sleeper();
        j = job_new(d, 100000u + (unsigned)i, 0, 0, "0-1", "local", i % 2 ? "high" : "low", &err);
        if (!j || np_sampler_add_task(&j->sampler, pids[i], &err) < 0) {
            fprintf(stderr, "metrics_cost: step %d: %s\n", i, err.msg);
            return 1;
        }
    }
    usleep(200000); /* let them touch their memory */

    t0 = np_clock_s(CLOCK_THREAD_CPUTIME_ID);
    sampling_tick(d);
    first_tick = np_clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
    for (int i = 0; i < 21; i++) {
        t0 = np_clock_s(CLOCK_THREAD_CPUTIME_ID);
        sampling_tick(d);
        v[i] = np_clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
    }
    tick = median(v, 21);

    for (int i = 0; i < scrapes; i++) {
        t0 = np_clock_s(CLOCK_THREAD_CPUTIME_ID);
        if (metrics_render(d, &page) < 0)
            return 1;
        v[i] = np_clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
        page_len = page.len;
        if (i == scrapes - 1 && getenv("METRICS_COST_PAGE")) {
            FILE *f = fopen(getenv("METRICS_COST_PAGE"), "w");
            if (f) {
                fwrite(page.buf, 1, page.len, f);
                fclose(f);
            }
        }
        free(page.buf);
    }
    render = median(v, scrapes);

    snprintf(listen, sizeof(listen), "127.0.0.1:%u", 39000u + (unsigned)(getpid() % 20000));
    if (np_helper_config_set(&d->cfg, "metrics_listen", listen, &err) < 0 || http_start(d) < 0) {
        fprintf(stderr, "metrics_cost: cannot serve on %s\n", listen);
        return 1;
    }
    cpu0 = np_clock_s(CLOCK_THREAD_CPUTIME_ID);
    wall0 = np_monotonic_s();
    cl = fork();
    if (cl == 0)
        client(d->cfg.metrics.port, scrapes);
    while (waitpid(cl, &status, WNOHANG) == 0) {
        struct pollfd pfd = {.fd = http_fd(d), .events = POLLIN};
        poll(&pfd, 1, http_timeout_ms(d, 10));
        http_run(d);
    }
    scrape_cpu = (np_clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0) / scrapes;
    scrape_wall = (np_monotonic_s() - wall0) / scrapes;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "metrics_cost: the client failed (%d)\n", status);
        return 1;
    }

    printf("steps %d, page %zu bytes, %d scrapes\n", nsteps, page_len, scrapes);
    printf("sampling tick, first (reads every numa_maps): %.3f ms CPU\n", first_tick * 1e3);
    printf("sampling tick, median of 21 after it:        %.3f ms CPU\n", tick * 1e3);
    printf("render only, median:                         %.3f ms CPU\n", render * 1e3);
    printf("scrape (accept, uid, render, send), mean:    %.3f ms CPU, %.3f ms wall\n",
           scrape_cpu * 1e3, scrape_wall * 1e3);
    printf("a scrape every 15 s: %.4f%% of one core; sampling every 1 s: %.4f%%\n",
           scrape_cpu / 15.0 * 100.0, tick * 100.0);
    http_stop(d);
    for (int i = 0; i < nsteps; i++) {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
    }
    np_daemon_fini(d);
    return 0;
}
