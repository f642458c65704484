/* The migration orders, one ops entry each in one static table (docs/migration.md). The candidate
 * predicted-global (np_order_candidate_at, not shipped: no better than predicted on the replayed
 * sets) ranks by the effect alone across groups, or by best-plus for the whole request when a
 * candidate has no prediction (one yardstick or none). Ties are broken by id: deterministic. */
#include "numaplace/migration.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double bandwidth_key(const struct np_candidate *c)
{
    /* A missing figure sorts as zero rather than poisoning the comparison. */
    return isnan(c->bandwidth) ? 0.0 : c->bandwidth;
}

static int by_id(const void *pa, const void *pb)
{
    const struct np_candidate *a = pa, *b = pb;

    return (a->id > b->id) - (a->id < b->id);
}

static int by_bandwidth(const struct np_candidate *a, const struct np_candidate *b, bool descending)
{
    const double x = bandwidth_key(a), y = bandwidth_key(b);
    const int cmp = (x > y) - (x < y);
    if (cmp)
        return descending ? -cmp : cmp;
    return by_id(a, b);
}

/* best: the gainers first (highest bandwidth first), then everyone else (lowest first). */
static int compare_best(const void *pa, const void *pb)
{
    const struct np_candidate *a = pa, *b = pb;
    const int ga = a->group != NP_GROUP_GAIN, gb = b->group != NP_GROUP_GAIN;

    if (ga != gb)
        return ga - gb;
    return by_bandwidth(a, b, ga == 0);
}

/* best-plus: gainers (highest first), then neutral (lowest first), then losers (lowest). */
static int compare_best_plus(const void *pa, const void *pb)
{
    const struct np_candidate *a = pa, *b = pb;

    if (a->group != b->group)
        return (int)a->group - (int)b->group;
    return by_bandwidth(a, b, a->group == NP_GROUP_GAIN);
}

static void reverse(struct np_candidate *cands, size_t count)
{
    for (size_t i = 0; i < count / 2; i++) {
        struct np_candidate tmp = cands[i];
        cands[i] = cands[count - 1 - i];
        cands[count - 1 - i] = tmp;
    }
}

static void sort_best(struct np_candidate *cands, size_t count, uint64_t seed)
{
    (void)seed;
    qsort(cands, count, sizeof(*cands), compare_best);
}

static void sort_best_plus(struct np_candidate *cands, size_t count, uint64_t seed)
{
    (void)seed;
    qsort(cands, count, sizeof(*cands), compare_best_plus);
}

static void sort_worst(struct np_candidate *cands, size_t count, uint64_t seed)
{
    sort_best(cands, count, seed);
    reverse(cands, count);
}

static void sort_worst_plus(struct np_candidate *cands, size_t count, uint64_t seed)
{
    sort_best_plus(cands, count, seed);
    reverse(cands, count);
}

/* Least predicted effect per page first (the biggest gain), ties by best-plus. */
static int by_effect(const void *pa, const void *pb)
{
    const struct np_candidate *a = pa, *b = pb;
    const int cmp =
        (a->effect_per_page > b->effect_per_page) - (a->effect_per_page < b->effect_per_page);
    return cmp ? cmp : compare_best_plus(a, b);
}

static void sort_predicted(struct np_candidate *cands, size_t count, uint64_t seed)
{
    for (size_t i = 0; i < count; i++)
        if (!cands[i].predicted) {
            sort_best_plus(cands, count, seed); /* the planner counts and reports them */
            return;
        }
    qsort(cands, count, sizeof(*cands), by_effect);
}

/* Best-plus's groups, in each the predicted first by effect, then the rest by best-plus. */
static int compare_predicted_grouped(const void *pa, const void *pb)
{
    const struct np_candidate *a = pa, *b = pb;

    if (a->group != b->group)
        return (int)a->group - (int)b->group;
    if (a->predicted != b->predicted)
        return (int)b->predicted - (int)a->predicted;
    return a->predicted ? by_effect(a, b) : compare_best_plus(a, b);
}

static void sort_predicted_grouped(struct np_candidate *cands, size_t count, uint64_t seed)
{
    (void)seed;
    qsort(cands, count, sizeof(*cands), compare_predicted_grouped);
}

/* splitmix64: tiny, well-distributed, and the same sequence on every platform. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void sort_random(struct np_candidate *cands, size_t count, uint64_t seed)
{
    uint64_t state = seed;

    /* Start from a canonical order so the shuffle depends on the seed, not on input order. */
    qsort(cands, count, sizeof(*cands), by_id);
    for (size_t i = count; i > 1; i--) {
        const size_t j = (size_t)(splitmix64(&state) % i);
        struct np_candidate tmp = cands[i - 1];
        cands[i - 1] = cands[j];
        cands[j] = tmp;
    }
}

/* The orders ranking by prediction come last (bench/replay scores the prefix without them). */
static const struct np_order_ops orders[] = {
    {"best-plus",
     "gainers by bandwidth high to low, then neutral low to high, then losers low "
     "to high",
     sort_best_plus, false},
    {"best", "gainers by bandwidth high to low, then all others low to high", sort_best, false},
    {"random", "a seeded random order (the baseline without a model)", sort_random, false},
    {"worst", "the reverse of best", sort_worst, false},
    {"worst-plus", "the reverse of best-plus", sort_worst_plus, false},
    {"predicted",
     "best-plus's groups, inside each the most predicted gain (least predicted slowdown) per "
     "page first; the unpredicted last in their group by best-plus's rule",
     sort_predicted_grouped, true},
};

static const struct np_order_ops candidates[] = {
    {"predicted-global",
     "the most predicted gain (least predicted slowdown) per page first across groups; "
     "best-plus when a candidate has no prediction",
     sort_predicted, true},
};

const struct np_order_ops *np_order_candidate_at(size_t i)
{
    return i < sizeof(candidates) / sizeof(candidates[0]) ? &candidates[i] : NULL;
}

const struct np_order_ops *np_order_at(size_t i)
{
    return i < sizeof(orders) / sizeof(orders[0]) ? &orders[i] : NULL;
}

const struct np_order_ops *np_order_default(void)
{
    return &orders[0];
}

const struct np_order_ops *np_order_lookup(const char *name)
{
    for (size_t i = 0; name && np_order_at(i); i++)
        if (strcmp(orders[i].name, name) == 0)
            return &orders[i];
    return NULL;
}

static char order_list[128];

static void make_order_list(void)
{
    size_t len = 0;

    for (size_t i = 0; np_order_at(i) && len < sizeof(order_list); i++)
        len += (size_t)snprintf(order_list + len, sizeof(order_list) - len, "%s%s", i ? ", " : "",
                                orders[i].name);
}

const char *np_order_names(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, make_order_list);
    return order_list;
}

int np_order_find(const char *name, const struct np_order_ops **out, struct np_err *err)
{
    const struct np_order_ops *ops = np_order_lookup(name);

    if (!ops)
        return np_err_set(err, -EINVAL, "unknown migration order '%s': accepted values are %s",
                          name ? name : "(null)", np_order_names());
    *out = ops;
    return 0;
}
