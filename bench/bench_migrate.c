/*
 * Migration throughput: numaplace's mover (the code numaplaced runs) against the raw system
 * call moving the same memory between the same nodes, alternated round by round in one run.
 *
 *   bench_migrate [--mib N] [--rounds R] [--from S] [--to D] [--thp yes|no]
 *
 * Each round moves an N MiB buffer S -> D and back D -> S, once with the raw call and once with
 * np_move_process_pages, in alternating order so drift hits both. Two pairs are measured:
 *   partial: move_pages(2) over exactly the buffer's pages   vs  the mover with a page budget
 *   whole:   migrate_pages(2) of the process S -> D           vs  the mover with no budget
 * Reported: median MB/s of each, the ratio of the medians and the median of the per-round ratios
 * (each round's two moves ran back to back, so the paired ratio cancels drift between rounds;
 * target >= 0.95 with no rate limit), and the mover's time from call to first page moved.
 * --thp no backs the buffer with base pages only (MADV_NOHUGEPAGE): a transparent huge page
 * moves whole, or not at all, and under emulation some are left behind (bench/RESULTS.md).
 * Needs a machine (or guest) with >= 2 nodes.
 */
#include <errno.h>
#include <stdbool.h>
#include <numa.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "numaplace/engine.h"

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), compare_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Raw move_pages of exactly the buffer to node @p dst. */
static uint64_t raw_move_pages(char *buf, size_t pages, size_t page, int dst)
{
    void **addrs = malloc(pages * sizeof(*addrs));
    int *nodes = malloc(pages * sizeof(*nodes)), *status = malloc(pages * sizeof(*status));
    uint64_t t0, t1;

    for (size_t i = 0; i < pages; i++) {
        addrs[i] = buf + i * page;
        nodes[i] = dst;
    }
    t0 = np_now_ns();
    if (move_pages(0, pages, addrs, nodes, status, MPOL_MF_MOVE) < 0)
        perror("move_pages");
    t1 = np_now_ns();
    free(addrs);
    free(nodes);
    free(status);
    return t1 - t0;
}

static uint64_t raw_migrate_pages(int src, int dst)
{
    unsigned long from = 1ul << src, to = 1ul << dst;
    const uint64_t t0 = np_now_ns();

    if (migrate_pages(0, 8 * sizeof(unsigned long), &from, &to) < 0)
        perror("migrate_pages");
    return np_now_ns() - t0;
}

static uint64_t mover(int src, int dst, uint64_t budget, uint64_t *moved)
{
    struct np_move_result res;
    struct np_err err = {0};
    const uint64_t t0 = np_now_ns();

    if (np_move_process_pages(getpid(), (unsigned)src, (unsigned)dst, budget, NULL, NULL, &res,
                              &err) < 0)
        fprintf(stderr, "mover: %s\n", err.msg);
    *moved = res.pages_moved;
    return np_now_ns() - t0;
}

/* Pages of the buffer on @p node, in one query (untimed). */
/* Where each page of the buffer is (a node, or -errno), in one query (untimed). Owned by the
 * caller (free); NULL when the query failed. */
static int *where_pages(char *buf, size_t pages, size_t page)
{
    void **addrs = malloc(pages * sizeof(*addrs));
    int *status = malloc(pages * sizeof(*status));

    for (size_t i = 0; addrs && i < pages; i++)
        addrs[i] = buf + i * page;
    if (!addrs || !status || move_pages(0, pages, addrs, NULL, status, 0) != 0) {
        free(status);
        status = NULL;
    }
    free(addrs);
    return status;
}

static int pages_on(char *buf, size_t pages, size_t page, int node)
{
    int *status = where_pages(buf, pages, page), count = 0;

    for (size_t i = 0; status && i < pages; i++)
        count += status[i] == node;
    free(status);
    return count;
}

/* Untimed: bring every page of the buffer to @p node (a raw move can leave a few behind under
 * emulation: pages still in another CPU's LRU batch are skipped by the kernel). */
static void settle_on(char *buf, size_t pages, size_t page, int node)
{
    for (int tries = 0; tries < 10 && (size_t)pages_on(buf, pages, page, node) < pages; tries++)
        raw_move_pages(buf, pages, page, node);
}

/* Where a move's left-behind pages are, for the first few moves that left any: each node's
 * count, or the kernel's -errno for pages it could not say. */
static void say_where(char *buf, size_t pages, size_t page, const char *what)
{
    static int said;
    long count[64 + 64] = {0}; /* nodes 0-63, then -errno 1-64 */
    int *status;

    if (said++ >= 4 || !(status = where_pages(buf, pages, page)))
        return;
    for (size_t i = 0; i < pages; i++)
        if (status[i] >= 0 && status[i] < 64)
            count[status[i]]++;
        else if (status[i] < 0 && status[i] >= -64)
            count[64 - status[i] - 1]++;
    free(status);
    printf("  %s left pages behind; where the buffer's pages are:", what);
    for (int k = 0; k < 128; k++) {
        if (!count[k])
            continue;
        if (k < 64)
            printf(" node %d: %ld", k, count[k]);
        else
            printf(" -%d (%s): %ld", k - 63, strerror(k - 63), count[k]);
    }
    printf("\n");
}

/* A timed move's rate counts only the pages that really reached D, so a move that left pages
 * behind is not flattered; how many were left is reported. */
static uint64_t left_behind, moves_checked;
static double rate(char *buf, size_t pages, size_t page, int dst, uint64_t ns, const char *what)
{
    const int on = pages_on(buf, pages, page, dst);
    moves_checked++;
    left_behind += pages - (size_t)on;
    if ((size_t)on < pages)
        say_where(buf, pages, page, what);
    return (double)on * (double)page / 1e6 / (ns / 1e9);
}

int main(int argc, char **argv)
{
    size_t mib = 256;
    int rounds = 5, src = 1, dst = 2;
    bool thp = true;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mib"))
            mib = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--from"))
            src = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--to"))
            dst = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--thp") &&
                 (!strcmp(argv[i + 1], "yes") || !strcmp(argv[i + 1], "no")))
            thp = !strcmp(argv[i + 1], "yes");
        else {
            fprintf(stderr,
                    "bench_migrate: unknown option or value '%s %s' (accepted: --mib N, --rounds "
                    "R, --from S, --to D, --thp yes|no)\n",
                    argv[i], argv[i + 1]);
            return 2;
        }
    }
    if (numa_available() < 0 || numa_max_node() < (src > dst ? src : dst)) {
        fprintf(stderr, "bench_migrate: needs NUMA nodes %d and %d; this machine has 0-%d\n", src,
                dst, numa_available() < 0 ? 0 : numa_max_node());
        return 77;
    }

    const size_t pages = mib * 1024 * 1024 / page;
    char *buf =
        mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned long srcmask = 1ul << src;
    double raw_p[64] = {0}, np_p[64] = {0}, raw_w[64] = {0}, np_w[64] = {0}, first[64] = {0};
    uint64_t moved;

    if (buf == MAP_FAILED || rounds < 1 || rounds > 64) {
        fprintf(stderr, "bench_migrate: bad size or rounds (1-64)\n");
        return 2;
    }
    if (!thp && madvise(buf, pages * page, MADV_NOHUGEPAGE) < 0)
        perror("madvise(MADV_NOHUGEPAGE)");
    /* The buffer lives on S; everything else of this process is elsewhere or tiny. */
    mbind(buf, pages * page, MPOL_BIND, &srcmask, 8 * sizeof(srcmask), 0);
    memset(buf, 1, pages * page);
    mbind(buf, pages * page, MPOL_DEFAULT, NULL, 0, 0);
    printf("bench_migrate: %zu MiB (%zu pages, transparent huge pages %s), node %d <-> %d, %d "
           "rounds; on node %d: %d pages\n",
           mib, pages, thp ? "allowed" : "off", src, dst, rounds, src,
           pages_on(buf, pages, page, src));

    for (int r = 0; r < rounds; r++) {
        /* Each pair alternates who goes first; every timed move starts with all pages on S. */
        for (int k = 0; k < 2; k++) {
            settle_on(buf, pages, page, src);
            if ((r + k) % 2 == 0)
                raw_p[r] = rate(buf, pages, page, dst, raw_move_pages(buf, pages, page, dst),
                                "raw move_pages");
            else
                np_p[r] =
                    rate(buf, pages, page, dst, mover(src, dst, pages, &moved), "mover (budget)");
        }
        for (int k = 0; k < 2; k++) {
            settle_on(buf, pages, page, src);
            if ((r + k) % 2 == 0)
                raw_w[r] =
                    rate(buf, pages, page, dst, raw_migrate_pages(src, dst), "raw migrate_pages");
            else
                np_w[r] = rate(buf, pages, page, dst, mover(src, dst, UINT64_MAX, &moved),
                               "mover (whole)");
        }
        settle_on(buf, pages, page, src);
        /* Latency to the first page: a one-page budget, the mover's fixed cost. */
        first[r] = mover(src, dst, 1, &moved) / 1e3;
        raw_move_pages(buf, pages, page, src);
    }
    {
        double pair_p[64], pair_w[64];
        for (int r = 0; r < rounds; r++) {
            pair_p[r] = np_p[r] / raw_p[r];
            pair_w[r] = np_w[r] / raw_w[r];
        }
        const double rp = median(raw_p, rounds), npp = median(np_p, rounds);
        const double rw = median(raw_w, rounds), npw = median(np_w, rounds);
        printf("| pair | raw MB/s | numaplace MB/s | ratio of medians | median of paired ratios "
               "|\n|---|---|---|---|---|\n");
        printf("| partial (move_pages) | %.0f | %.0f | %.3f | %.3f |\n", rp, npp, npp / rp,
               median(pair_p, rounds));
        printf("| whole (migrate_pages) | %.0f | %.0f | %.3f | %.3f |\n", rw, npw, npw / rw,
               median(pair_w, rounds));
        printf("time from call to first page moved (median): %.0f us\n", median(first, rounds));
        printf("pages left behind by the timed moves (not counted in their rates): %llu of %llu\n",
               (unsigned long long)left_behind, (unsigned long long)(moves_checked * pages));
    }
    munmap(buf, pages * page);
    return 0;
}
