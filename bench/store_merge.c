/*
 * store_merge: the CPU side of `numaplace store` as a job grows. Each of N nodes'
 * parts (one step's report, the fixture given, renamed per node) is merged in turn into the
 * stored text, as each node's epilog does: decode the AdminComment text, merge, fit under
 * NP_SUMMARY_STORED_MAX, encode. Prints, at each power of two, the last merge's time, the stored
 * size and what the fit had to drop. Slurm's own costs (sacct, slurmdbd) are measured on the
 * cluster (test/integration/test_accounting_scale.sh); bench/RESULTS.md has both. Each node's
 * figures are varied (vary()): copies would compress far better than real nodes do.
 *
 *   store_merge REPORT.json [MAX_NODES]          (default 4096)
 *   store_merge --once REPORT.json NODES         merge all in memory, fit once: the size only
 *   store_merge --parts REPORT.json NODES DIR    the single merger (cli/store.h): each
 *       node's part left in DIR (an empty directory of root's) as its epilog does, then read,
 *       checked and merged once and fitted once, as `numaplace store --merge` does
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "numaplace/summary.h"

#include "store.h"

/* Real nodes' figures differ, and compress worse than copies: every real number scaled by a
 * random factor in [0.5, 1) (fractions stay fractions). */
static void vary(json_t *v)
{
    if (json_is_real(v)) {
        json_real_set(v, json_real_value(v) * (0.5 + 0.5 * (double)(random() % 1000) / 1000.0));
    } else if (json_is_object(v)) {
        const char *key;
        json_t *item;
        json_object_foreach(v, key, item)
        {
            vary(item);
        }
    } else if (json_is_array(v)) {
        json_t *item;
        size_t i;
        json_array_foreach(v, i, item)
        {
            vary(item);
        }
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The single merger's CPU and file side: NODES parts deposited, merged once, fitted once. */
static int merge_parts(json_t *report, long nodes, const char *dir)
{
    const uint32_t job = (uint32_t)json_integer_value(json_object_get(report, "job_id"));
    const uid_t uid = (uid_t)json_integer_value(json_object_get(report, "uid"));
    struct store_parts_job taken;
    struct store_parts_found found;
    struct np_err err = {0};
    json_t *merged = NULL;
    char *stored = NULL;
    double t0, deposit_s = 0, merge_s, fit_s;
    long len;

    for (long n = 1; n <= nodes; n++) {
        char name[32];
        json_t *part = np_summary_new(job), *copy = json_deep_copy(report);
        snprintf(name, sizeof(name), "node%ld", n);
        json_object_set_new(copy, "node", json_string(name));
        vary(copy);
        t0 = now_s();
        if (np_summary_add_report(part, copy, &err) < 0 ||
            store_parts_deposit(dir, job, part, &err) < 0) {
            fprintf(stderr, "store_merge: %s\n", err.msg);
            return 1;
        }
        deposit_s += now_s() - t0;
        json_decref(copy);
        json_decref(part);
    }
    t0 = now_s();
    if (store_parts_merge(dir, job, uid, &taken, &merged, &found, NULL, &err) < 0) {
        fprintf(stderr, "store_merge: %s\n", err.msg);
        return 1;
    }
    merge_s = now_s() - t0;
    t0 = now_s();
    len = np_summary_fit(merged, NP_SUMMARY_STORED_MAX, &stored, &err);
    fit_s = now_s() - t0;
    printf("%ld nodes: per node part and deposit %.2f ms; one merge of %d parts %.2f s; fit "
           "%.2f s; %s%ld\n",
           nodes, deposit_s / (double)nodes * 1e3, found.parts, merge_s, fit_s,
           len < 0 ? "does not fit: " : "stored bytes ", len);
    if (len < 0)
        printf("  %s\n", err.msg);
    store_parts_release(dir, job, &taken, true);
    free(stored);
    json_decref(merged);
    return 0;
}

/* Every node's part merged in memory and fitted once: whether NODES nodes fit AdminComment. */
static int fit_once(json_t *report, long nodes)
{
    json_t *all = np_summary_new((uint32_t)json_integer_value(json_object_get(report, "job_id")));
    struct np_err err = {0};
    char *stored = NULL;
    double t0;
    long len;

    for (long n = 1; n <= nodes; n++) {
        char name[32];
        json_t *copy = json_deep_copy(report);
        snprintf(name, sizeof(name), "node%ld", n);
        json_object_set_new(copy, "node", json_string(name));
        vary(copy);
        if (np_summary_add_report(all, copy, &err) < 0) {
            fprintf(stderr, "store_merge: %s\n", err.msg);
            return 1;
        }
        json_decref(copy);
    }
    t0 = now_s();
    len = np_summary_fit(all, NP_SUMMARY_STORED_MAX, &stored, &err);
    printf("%ld nodes: fit %.2f s, %s", nodes, now_s() - t0,
           len < 0 ? "does not fit: " : "stored bytes ");
    if (len < 0) {
        printf("%s\n", err.msg);
    } else {
        json_t *t;
        size_t i;
        printf("%ld, trimmed:", len);
        json_array_foreach(json_object_get(all, "trimmed"), i, t)
        {
            printf(" %s", json_string_value(json_object_get(t, "what")));
        }
        printf("\n");
    }
    free(stored);
    json_decref(all);
    return 0;
}

int main(int argc, char **argv)
{
    json_error_t jerr;
    json_t *report;
    char *stored = NULL;
    const long max_nodes = argc > 2 ? strtol(argv[2], NULL, 10) : 4096;
    double total = 0;

    if (argc == 4 && strcmp(argv[1], "--once") == 0) {
        int rc;
        report = json_load_file(argv[2], 0, &jerr);
        if (!report) {
            fprintf(stderr, "store_merge: %s: %s\n", argv[2], jerr.text);
            return 1;
        }
        rc = fit_once(report, strtol(argv[3], NULL, 10));
        json_decref(report);
        return rc;
    }
    if (argc == 5 && strcmp(argv[1], "--parts") == 0) {
        int rc;
        report = json_load_file(argv[2], 0, &jerr);
        if (!report) {
            fprintf(stderr, "store_merge: %s: %s\n", argv[2], jerr.text);
            return 1;
        }
        rc = merge_parts(report, strtol(argv[3], NULL, 10), argv[4]);
        json_decref(report);
        return rc;
    }
    if (argc < 2 || max_nodes < 1) {
        fprintf(stderr, "usage: store_merge REPORT.json [MAX_NODES]\n");
        return 2;
    }
    report = json_load_file(argv[1], 0, &jerr);
    if (!report) {
        fprintf(stderr, "store_merge: %s: %s\n", argv[1], jerr.text);
        return 1;
    }
    printf("nodes\tlast_merge_ms\tcumulative_s\tstored_bytes\tnodes_kept\ttrimmed\n");
    for (long n = 1; n <= max_nodes; n++) {
        char name[32];
        json_t *part =
            np_summary_new((uint32_t)json_integer_value(json_object_get(report, "job_id")));
        json_t *merged = NULL, *copy = json_deep_copy(report);
        struct np_err err = {0};
        double t0;
        long len;

        snprintf(name, sizeof(name), "node%ld", n);
        json_object_set_new(copy, "node", json_string(name));
        vary(copy);
        if (np_summary_add_report(part, copy, &err) < 0) {
            fprintf(stderr, "store_merge: %s\n", err.msg);
            return 1;
        }
        json_decref(copy);
        t0 = now_s();
        if (stored && np_stored_decode(stored, &merged, &err) < 0) {
            fprintf(stderr, "store_merge: decode at %ld: %s\n", n, err.msg);
            return 1;
        }
        if (!merged)
            merged = json_deep_copy(part);
        else if (np_summary_merge(merged, part, &err) < 0) {
            fprintf(stderr, "store_merge: merge at %ld: %s\n", n, err.msg);
            return 1;
        }
        free(stored);
        stored = NULL;
        len = np_summary_fit(merged, NP_SUMMARY_STORED_MAX, &stored, &err);
        total += now_s() - t0;
        if (len < 0) {
            printf("%ld\t-\t%.2f\t-\t-\tdoes not fit: %s\n", n, total, err.msg);
            json_decref(merged);
            json_decref(part);
            break;
        }
        if ((n & (n - 1)) == 0 || n == max_nodes) {
            json_t *trimmed = json_object_get(merged, "trimmed"), *t;
            size_t i;
            printf("%ld\t%.1f\t%.2f\t%ld\t%zu\t", n, (now_s() - t0) * 1e3, total, len,
                   json_object_size(json_object_get(merged, "nodes")));
            json_array_foreach(trimmed, i, t)
            {
                printf("%s%s", i ? "," : "", json_string_value(json_object_get(t, "what")));
            }
            printf("\n");
            fflush(stdout);
        }
        json_decref(merged);
        json_decref(part);
    }
    free(stored);
    json_decref(report);
    return 0;
}
