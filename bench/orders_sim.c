/*
 * Scoring the migration orders on the measured model, as the thesis did on hardware: the same
 * mixes and the same requests under each order, node throughput (sum of 1/slowdown) after.
 *
 *   orders_sim [CSV] [--mixes N]
 *
 * Mixes: 8 jobs drawn (seeded) from every benchmark in the CSV, each with CPUs on a random node
 * of the 4-node machine and its memory on node 0 or spread; the request moves a quarter, half or
 * three quarters of node 0's pages to node 1. It runs the daemon's own order and planner code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/sim.h"
#include "numaplace/tables.h"

#define NJOBS  8
#define NNODES 4

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    const char *path = "data/sandman-spec2017.csv";
    int mixes = 1000;
    static const double shares[] = {0.25, 0.5, 0.75};
    struct np_model model;
    struct np_err err = {0};
    size_t norders = 0;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mixes") && i + 1 < argc)
            mixes = atoi(argv[++i]);
        else
            path = argv[i];
    }
    if (np_model_load(path, &model, &err) < 0) {
        fprintf(stderr, "orders_sim: %s\n", err.msg);
        return 1;
    }
    /* Orders ranking by prediction come last; bench/order_cv --mixes scores them with a model
     * calibrated per mix (here they would be best-plus). */
    while (np_order_at(norders) && !np_order_at(norders)->uses_prediction)
        norders++;

    printf("orders_sim: %d mixes x %zu request sizes, %d jobs on %d nodes, model %s (%zu rows)\n",
           mixes, sizeof(shares) / sizeof(shares[0]), NJOBS, NNODES, path, model.count);
    printf("| order | mean throughput | vs random | wins vs random | worst case vs best-plus |\n");
    printf("|---|---|---|---|---|\n");
    {
        double sum[8] = {0}, worst_vs_bp[8], wins[8] = {0};
        uint64_t state = 2020;
        int runs = 0;

        for (size_t o = 0; o < norders; o++)
            worst_vs_bp[o] = 1e9;
        for (int m = 0; m < mixes; m++) {
            struct np_sim_job base[NJOBS];
            uint64_t on_src = 0;
            memset(base, 0, sizeof(base));
            for (int j = 0; j < NJOBS; j++) {
                base[j].row = &model.rows[next(&state) % model.count];
                base[j].cpu_node = (unsigned)(next(&state) % NNODES);
                base[j].pages[0] = 50 + next(&state) % 200;
                /* Some jobs already have part of their memory at home. */
                if (next(&state) % 2)
                    base[j].pages[base[j].cpu_node] += 50 + next(&state) % 100;
                on_src += base[j].pages[0];
            }
            for (size_t r = 0; r < sizeof(shares) / sizeof(shares[0]); r++) {
                double tp[8], random_mean = 0;
                const uint64_t want = (uint64_t)(shares[r] * (double)on_src);
                for (size_t o = 0; o < norders; o++) {
                    const struct np_order_ops *ops = np_order_at(o);
                    const int reps = strcmp(ops->name, "random") ? 1 : 20;
                    tp[o] = 0;
                    for (int k = 0; k < reps; k++) {
                        struct np_sim_job jobs[NJOBS];
                        memcpy(jobs, base, sizeof(jobs));
                        np_sim_request(jobs, NJOBS, NNODES, ops, (uint64_t)k + 1, 0, 1, want);
                        tp[o] += np_sim_throughput(jobs, NJOBS, NNODES) / reps;
                    }
                    if (!strcmp(ops->name, "random"))
                        random_mean = tp[o];
                }
                for (size_t o = 0; o < norders; o++) {
                    sum[o] += tp[o];
                    wins[o] += tp[o] > random_mean + 1e-9;
                    if (tp[o] / tp[0] < worst_vs_bp[o])
                        worst_vs_bp[o] = tp[o] / tp[0];
                }
                runs++;
            }
        }
        size_t random_index = 0;
        while (strcmp(np_order_at(random_index)->name, "random"))
            random_index++;
        for (size_t o = 0; o < norders; o++)
            printf("| %s | %.4f | %+.2f%% | %.1f%% | %.4f |\n", np_order_at(o)->name, sum[o] / runs,
                   100.0 * (sum[o] / sum[random_index] - 1.0), 100.0 * wins[o] / runs,
                   worst_vs_bp[o]);
    }
    np_model_free(&model);
    return 0;
}
