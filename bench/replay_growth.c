/* Footprint growth curves from the thesis's logs (replay_growth.h). */
#include "replay_growth.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SETS      6
#define MAX_ENDS      64
#define MAX_REQUESTS  128
#define MAX_INSTANCES 512
#define MAX_SNAPSHOTS 128

/* The progress points of every curve (share of the job's logged time). The first snapshot comes
 * with the first request, 2-3% into a run, so the earlier points repeat it. */
static const double points[] = {0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0};

struct instance {
    unsigned set;
    char benchmark[32];
    int instance;
    double end_s;
    size_t n;
    double t[MAX_SNAPSHOTS], pages[MAX_SNAPSHOTS];
};

struct logs {
    size_t nends[MAX_SETS];
    double end_poll[MAX_SETS][MAX_ENDS], end_s[MAX_SETS][MAX_ENDS];
    int request_poll[MAX_SETS][MAX_REQUESTS];
    size_t ninst;
    struct instance inst[MAX_INSTANCES];
};

static FILE *open_csv(const char *dir, const char *name, char *why, size_t size)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (!(f = fopen(path, "r")))
        snprintf(why, size, "%s: %s", path, strerror(errno));
    return f;
}

/* Data lines only: comments and the header are skipped. */
static bool next_line(FILE *f, char *line, size_t size)
{
    while (fgets(line, (int)size, f))
        if (line[0] != '#' && strncmp(line, "set,", 4))
            return true;
    return false;
}

static struct instance *find_instance(struct logs *l, unsigned set, const char *bench, int inst)
{
    for (size_t i = 0; i < l->ninst; i++)
        if (l->inst[i].set == set && l->inst[i].instance == inst &&
            !strcmp(l->inst[i].benchmark, bench))
            return &l->inst[i];
    if (l->ninst >= MAX_INSTANCES)
        return NULL;
    struct instance *n = &l->inst[l->ninst++];
    memset(n, 0, sizeof(*n));
    n->set = set;
    n->instance = inst;
    snprintf(n->benchmark, sizeof(n->benchmark), "%s", bench);
    return n;
}

/* The time of the Best run's pass @p poll in @p set: linear between the passes that logged jobs
 * ending (and pass 0 at 0 s). */
static double poll_time(const struct logs *l, unsigned set, double poll)
{
    double p0 = 0, t0 = 0;

    for (size_t i = 0; i < l->nends[set]; i++) {
        const double p1 = l->end_poll[set][i], t1 = l->end_s[set][i];
        if (poll <= p1 && p1 > p0)
            return t0 + (t1 - t0) * (poll - p0) / (p1 - p0);
        p0 = p1;
        t0 = t1;
    }
    return t0;
}

static int read_logs(const char *dir, struct logs *l, char *why, size_t size)
{
    char line[512], bench[64], order[32];
    unsigned set, run;
    int inst, poll, req;
    double t;
    FILE *f;

    memset(l->request_poll, -1, sizeof(l->request_poll));
    if (!(f = open_csv(dir, "thesis-dynamic-ends.csv", why, size)))
        return -1;
    while (next_line(f, line, sizeof(line)))
        if (sscanf(line, "%u,%u,%31[^,],%63[^,],%d,%d,%lf", &set, &run, order, bench, &inst, &poll,
                   &t) == 7 &&
            run == 1 && set < MAX_SETS && l->nends[set] < MAX_ENDS) {
            struct instance *i = find_instance(l, set, bench, inst);
            l->end_poll[set][l->nends[set]] = poll;
            l->end_s[set][l->nends[set]++] = t;
            if (i)
                i->end_s = t;
        }
    fclose(f);
    if (!(f = open_csv(dir, "thesis-dynamic-requests.csv", why, size)))
        return -1;
    while (next_line(f, line, sizeof(line)))
        if (sscanf(line, "%u,%u,%31[^,],%d,%d", &set, &run, order, &req, &poll) == 5 && run == 1 &&
            set < MAX_SETS && req >= 0 && req < MAX_REQUESTS)
            l->request_poll[set][req] = poll;
    fclose(f);
    if (!(f = open_csv(dir, "thesis-dynamic-footprints.csv", why, size)))
        return -1;
    while (next_line(f, line, sizeof(line))) {
        unsigned long long n[4];
        int cpu;
        struct instance *i;
        if (sscanf(line, "%u,%d,%63[^,],%d,%d,%llu,%llu,%llu,%llu", &set, &req, bench, &inst, &cpu,
                   &n[0], &n[1], &n[2], &n[3]) != 9 ||
            set >= MAX_SETS || req < 0 || req >= MAX_REQUESTS || l->request_poll[set][req] < 0 ||
            !(i = find_instance(l, set, bench, inst)) || i->n >= MAX_SNAPSHOTS)
            continue;
        i->t[i->n] = poll_time(l, set, l->request_poll[set][req]);
        i->pages[i->n++] = (double)(n[0] + n[1] + n[2] + n[3]);
    }
    fclose(f);
    return 0;
}

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The share of its peak instance @p i held at its last snapshot by @p progress (its first one
 * before any). */
static double held_at(const struct instance *i, double peak, double progress)
{
    double held = i->pages[0];

    for (size_t k = 0; k < i->n; k++)
        if (i->t[k] / i->end_s <= progress)
            held = i->pages[k];
    return held / peak;
}

int growth_load(const char *dir, struct growth_table *out, char *why, size_t size)
{
    static struct logs l;
    const size_t npoints = sizeof(points) / sizeof(points[0]);

    memset(&l, 0, sizeof(l));
    memset(out, 0, sizeof(*out));
    if (read_logs(dir, &l, why, size) < 0)
        return -1;
    for (size_t a = 0; a < l.ninst; a++) {
        const char *bench = l.inst[a].benchmark;
        double shares[npoints][MAX_INSTANCES];
        unsigned count = 0;
        bool seen = false;
        for (size_t k = 0; k < out->n; k++)
            seen |= !strcmp(out->rows[k].benchmark, bench);
        if (seen || out->n >= GROWTH_MAX_BENCHMARKS)
            continue;
        for (size_t b = a; b < l.ninst; b++) {
            const struct instance *i = &l.inst[b];
            double peak = 0;
            if (strcmp(i->benchmark, bench) || i->n == 0 || !(i->end_s > 0))
                continue;
            for (size_t k = 0; k < i->n; k++)
                peak = fmax(peak, i->pages[k]);
            for (size_t p = 0; p < npoints; p++)
                shares[p][count] = held_at(i, peak, points[p]);
            count++;
        }
        if (count == 0)
            continue;
        snprintf(out->rows[out->n].benchmark, sizeof(out->rows[out->n].benchmark), "%s", bench);
        out->rows[out->n].instances = count;
        out->rows[out->n].curve.n = (unsigned)npoints;
        for (size_t p = 0; p < npoints; p++) {
            qsort(shares[p], count, sizeof(double), compare_double);
            out->rows[out->n].curve.progress[p] = points[p];
            out->rows[out->n].curve.share[p] =
                fmax(1e-6, count % 2 ? shares[p][count / 2]
                                     : 0.5 * (shares[p][count / 2 - 1] + shares[p][count / 2]));
        }
        out->n++;
    }
    if (out->n == 0) {
        snprintf(why, size, "%s/thesis-dynamic-footprints.csv: no Best-run snapshot of any job",
                 dir);
        return -1;
    }
    return 0;
}

const struct np_replay_growth *growth_find(const struct growth_table *t, const char *benchmark)
{
    for (size_t k = 0; benchmark && k < t->n; k++)
        if (!strcmp(t->rows[k].benchmark, benchmark))
            return &t->rows[k].curve;
    return NULL;
}
