/*
 * np_workload: a job with known figures, for the helper's tests and the demo.
 *
 *   np_workload [--mb N] [--busy SECONDS] [--idle SECONDS] [--until PATH] [--threads N]
 *               [--mlock 1] [--share-file PATH] [--share-sysv KEY] [--share-mb N]
 *
 * Allocates N MiB (default 64) and writes every page, then keeps re-writing it on N threads
 * (default 1) for --busy seconds of wall time (default 8), then sleeps --idle seconds (default
 * 2) so a sampler catches its final CPU time, and prints one JSON line measured by the kernel
 * for the whole process: {"mb", "user_s", "system_s", "pid"} (getrusage RUSAGE_SELF).
 * --until PATH ends the idle time as soon as PATH exists (--idle is then the most it idles): a
 * job that must outlast an event waits for the event, not for a length guessed for a busy host.
 * --mlock 1 locks the buffer in memory (mlock) before touching it, for the migration tests.
 * --share-file maps PATH shared (created, and grown to --share-mb MiB, default 8, if shorter)
 * and --share-sysv attaches the SysV shared-memory segment KEY (created if missing, that size):
 * two processes given the same ones map the same pages, for the tests of shared pages. Every
 * page of each is written before "ready".
 * It prints "ready <pid>" on stderr once its memory is touched.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>

static unsigned char *buffer;
static size_t buffer_len;
static double busy_s = 8;

/* Map PATH shared, at least @p len long, and write every page. NULL on failure (said). */
static unsigned char *share_file(const char *path, size_t len)
{
    const int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    unsigned char *p;

    if (fd < 0 || ftruncate(fd, (off_t)len) < 0) {
        perror("np_workload: --share-file");
        return NULL;
    }
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        perror("np_workload: --share-file mmap");
        return NULL;
    }
    for (size_t o = 0; o < len; o += (size_t)sysconf(_SC_PAGESIZE))
        p[o] = 1;
    return p;
}

/* Attach the SysV segment KEY (created if missing) and write every page. */
static unsigned char *share_sysv(long key, size_t len)
{
    const int id = shmget((key_t)key, len, IPC_CREAT | 0600);
    unsigned char *p = id < 0 ? (void *)-1 : shmat(id, NULL, 0);

    if (p == (void *)-1) {
        perror("np_workload: --share-sysv");
        return NULL;
    }
    for (size_t o = 0; o < len; o += (size_t)sysconf(_SC_PAGESIZE))
        p[o] = 1;
    return p;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *burn(void *arg)
{
    const double end = now_s() + busy_s;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char v = (unsigned char)(size_t)arg;

    while (now_s() < end)
        for (size_t off = 0; off < buffer_len && now_s() < end; off += page * 64)
            for (size_t o = off; o < off + page * 64 && o < buffer_len; o += page)
                buffer[o] = v++;
    return NULL;
}

int main(int argc, char **argv)
{
    double idle_s = 2;
    long mb = 64, threads = 1, lock = 0, share_mb = 8, sysv_key = 0;
    const char *share_path = NULL, *until_path = NULL;
    pthread_t tid[64];
    struct rusage ru;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--mb") == 0)
            mb = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--busy") == 0)
            busy_s = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--idle") == 0)
            idle_s = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--until") == 0)
            until_path = argv[i + 1];
        else if (strcmp(argv[i], "--threads") == 0)
            threads = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--mlock") == 0)
            lock = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--share-file") == 0)
            share_path = argv[i + 1];
        else if (strcmp(argv[i], "--share-sysv") == 0)
            sysv_key = strtol(argv[i + 1], NULL, 0);
        else if (strcmp(argv[i], "--share-mb") == 0)
            share_mb = atol(argv[i + 1]);
        else {
            fprintf(stderr,
                    "np_workload: unknown option %s (--mb, --busy, --idle, --until, --threads, "
                    "--mlock, "
                    "--share-file, --share-sysv, --share-mb)\n",
                    argv[i]);
            return 2;
        }
    }
    if (mb < 1 || threads < 1 || threads > 64 || share_mb < 1) {
        fprintf(stderr, "np_workload: --mb and --share-mb must be >= 1 and --threads 1..64\n");
        return 2;
    }
    buffer_len = (size_t)mb << 20;
    buffer = mmap(NULL, buffer_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buffer == MAP_FAILED) {
        perror("np_workload: mmap");
        return 1;
    }
    if (lock && mlock(buffer, buffer_len) < 0)
        perror("np_workload: mlock");
    memset(buffer, 1, buffer_len);
    if ((share_path && !share_file(share_path, (size_t)share_mb << 20)) ||
        (sysv_key && !share_sysv(sysv_key, (size_t)share_mb << 20)))
        return 1;
    fprintf(stderr, "ready %d\n", (int)getpid());
    for (long t = 1; t < threads; t++)
        pthread_create(&tid[t], NULL, burn, (void *)(size_t)t);
    burn(NULL);
    for (long t = 1; t < threads; t++)
        pthread_join(tid[t], NULL);
    getrusage(RUSAGE_SELF, &ru);
    if (until_path) {
        /* 50 ms steps, the idle time at most */
        for (double waited = 0; waited < idle_s && access(until_path, F_OK) != 0; waited += 0.05)
            usleep(50000);
    } else {
        usleep((useconds_t)(idle_s * 1e6));
    }
    printf("{\"mb\": %ld, \"user_s\": %.3f, \"system_s\": %.3f, \"pid\": %d}\n", mb,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, (int)getpid());
    fflush(stdout);
    munmap(buffer, buffer_len);
    return 0;
}
