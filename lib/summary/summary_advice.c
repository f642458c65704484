/* Plain-language advice from a job summary's figures (docs/summary-schema.md, "Advice"). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/summary_model.h"
#include "summary_priv.h"

/* Advice names at most this many nodes per rule, then "and N more". */
#define ADVICE_NAMED_NODES 4

/* The nodes a rule names: the first ADVICE_NAMED_NODES with their figures, then a count. */
struct hits {
    char text[768];
    int n;
};

static void hit(struct hits *h, const char *fmt, ...) NP_PRINTF(2, 3);

static void hit(struct hits *h, const char *fmt, ...)
{
    va_list ap;
    size_t len = strlen(h->text);

    if (h->n++ >= ADVICE_NAMED_NODES)
        return;
    if (h->n > 1 && len + 2 < sizeof(h->text)) {
        memcpy(h->text + len, ", ", 3);
        len += 2;
    }
    va_start(ap, fmt);
    vsnprintf(h->text + len, sizeof(h->text) - len, fmt, ap);
    va_end(ap);
}

/* "node1 (..), node2 (..) and 3 more nodes". Static storage in @p h. */
static const char *hits_text(struct hits *h)
{
    size_t len = strlen(h->text);

    if (h->n > ADVICE_NAMED_NODES)
        snprintf(h->text + len, sizeof(h->text) - len, " and %d more node%s",
                 h->n - ADVICE_NAMED_NODES, h->n - ADVICE_NAMED_NODES == 1 ? "" : "s");
    return h->text;
}

struct advice_list {
    struct np_advice *v;
    int n;
    bool oom;
};

static void advise(struct advice_list *a, const char *rule, const char *fmt, ...) NP_PRINTF(3, 4);

static void advise(struct advice_list *a, const char *rule, const char *fmt, ...)
{
    struct np_advice *grown = realloc(a->v, ((size_t)a->n + 1) * sizeof(*grown));
    va_list ap;

    if (!grown) {
        a->oom = true;
        return;
    }
    a->v = grown;
    snprintf(grown[a->n].rule, sizeof(grown[a->n].rule), "%s", rule);
    va_start(ap, fmt);
    vsnprintf(grown[a->n].text, sizeof(grown[a->n].text), fmt, ap);
    va_end(ap);
    a->n++;
}

/* Every requested policy on the node is local or local-strict. */
static bool local_policy(const struct np_sum_node *n)
{
    if (n->policy_requested.n == 0)
        return false;
    for (size_t i = 0; i < n->policy_requested.n; i++)
        if (strcmp(n->policy_requested.v[i], "local") != 0 &&
            strcmp(n->policy_requested.v[i], "local-strict") != 0)
            return false;
    return true;
}

/* NUMA nodes holding at least NP_ADVICE_SPREAD_SHARE of the node's peak pages. */
static int spread_nodes(const struct np_sum_node *n)
{
    const struct np_sum_bytes *peak = &n->pages_peak_bytes;
    double total;
    int count = 0;

    if (!np_keys_has(&n->keys, NP_NODE_PAGES_PEAK_BYTES) || !peak->is_map)
        return 0;
    total = (double)np_map_sum(&peak->map);
    if (total <= 0)
        return 0;
    for (size_t i = 0; i < peak->map.n; i++)
        if (np_num_value(&peak->map.e[i].v) >= NP_ADVICE_SPREAD_SHARE * total)
            count++;
    return count;
}

static const char *policies_text(const struct np_sum_node *n, char *buf, size_t len)
{
    size_t o = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n->policy_requested.n; i++) {
        int w = snprintf(buf + o, len - o, "%s%s", i ? "," : "", n->policy_requested.v[i]);
        if (w < 0 || (size_t)w >= len - o)
            break;
        o += (size_t)w;
    }
    return buf[0] ? buf : "unknown";
}

/* Why a node's figure at @p member is unavailable, or NULL. */
static const char *why_not(const struct np_sum_node *n, unsigned member, const struct np_figure *f)
{
    return np_keys_has(&n->keys, member) && np_keys_has(&f->keys, NP_FIG_UNAVAILABLE) ? f->reason
                                                                                      : NULL;
}

static void os_noise(struct hits *noise, const struct np_sum_node *n)
{
    double ks = -1, cs = -1, irq = -1;
    char what[192];
    int o = 0;

    np_os_fig(n, NP_OS_KERNEL_TIME_SHARE, &ks);
    np_os_fig(n, NP_OS_INVOLUNTARY_CS_PER_S, &cs);
    np_os_fig(n, NP_OS_INTERRUPTS_PER_S, &irq);
    if (ks < NP_ADVICE_KERNEL_SHARE && cs < NP_ADVICE_INVOLUNTARY_CS_PER_S &&
        irq < NP_ADVICE_INTERRUPTS_PER_S)
        return;
    what[0] = '\0';
    if (ks >= NP_ADVICE_KERNEL_SHARE)
        o += snprintf(what + o, sizeof(what) - (size_t)o, "kernel %.0f%% of CPU time", ks * 100);
    if (cs >= NP_ADVICE_INVOLUNTARY_CS_PER_S && o < (int)sizeof(what))
        o += snprintf(what + o, sizeof(what) - (size_t)o, "%s%.0f involuntary context switches/s",
                      o ? ", " : "", cs);
    if (irq >= NP_ADVICE_INTERRUPTS_PER_S && o < (int)sizeof(what))
        snprintf(what + o, sizeof(what) - (size_t)o, "%s%.0f interrupts/s on its CPUs",
                 o ? ", " : "", irq);
    hit(noise, "%s: %s", n->name, what);
}

/* The requests that moved pages (not the dry runs), by trigger, into @p triggers. */
static int count_triggers(const struct np_sum_node *n, struct np_map *triggers)
{
    const struct np_sum_migrations *m = &n->migrations;

    if (!np_keys_has(&n->keys, NP_NODE_MIGRATIONS) || !np_keys_has(&m->keys, NP_MIGR_TRIGGERS))
        return 0;
    for (size_t i = 0; i < m->ntriggers; i++) {
        const struct np_sum_trigger *t = &m->triggers[i];
        const json_int_t real = (np_keys_has(&t->keys, NP_TRIG_REQUESTS) ? t->requests : 0) -
                                (np_keys_has(&t->keys, NP_TRIG_DRY_RUN) ? t->dry_run : 0);
        const struct np_map_entry *have = np_map_get(triggers, t->name);
        if (real > 0 &&
            np_map_set(triggers, t->name, np_num_int((have ? have->v.i : 0) + real)) != 0)
            return -ENOMEM;
    }
    return 0;
}

struct rules {
    struct hits remote, high, interleave, good, noise, counters, moved_on, sensitive, insensitive;
    json_int_t moved;
    struct np_map triggers;
};

/* The sensitivity rules on each step that ran long enough and could be predicted. */
static void judge_steps(struct rules *r, const struct np_sum_node *n,
                        const struct np_sens_model *model)
{
    for (size_t i = 0; model && i < n->nsteps; i++) {
        const struct np_sum_step *st = &n->steps[i];
        const bool high = st->sensitivity && strcmp(st->sensitivity, "high") == 0;
        double x;
        if (st->duration_s < NP_ADVICE_SENSITIVITY_MIN_S ||
            np_sum_step_predict(st, model, &x, NULL) < 0)
            continue;
        if (np_sensitivity_is_sensitive(model, x) && !high)
            hit(&r->sensitive, "%s step %s: %.1fx, LLC MPKI %.1f, CPI %.2f", n->name,
                st->step ? st->step : "?", x, st->llc_mpki, st->cpi);
        else if (!np_sensitivity_is_sensitive(model, x) && high)
            hit(&r->insensitive, "%s step %s: %.1fx", n->name, st->step ? st->step : "?", x);
    }
}

static int judge_node(struct rules *r, const struct np_sum_node *n)
{
    const char *sens = np_keys_has(&n->keys, NP_NODE_SENSITIVITY) ? n->sensitivity : NULL;
    const char *cw = why_not(n, NP_NODE_CPI, &n->cpi);
    const char *bwhy = why_not(n, NP_NODE_BANDWIDTH, &n->bandwidth);
    const json_int_t node_moved =
        np_keys_has(&n->keys, NP_NODE_PAGES_MOVED_BYTES) ? n->pages_moved_bytes : 0;
    double share, bwm;
    const bool have_share = np_node_fig(n, NP_NODE_LOCAL_SHARE, &n->local_share, &share);

    if (have_share && share < NP_ADVICE_REMOTE_SHARE) {
        char buf[256];
        hit(&r->remote, "%s (%.0f%% local, policy %s)", n->name, share * 100,
            policies_text(n, buf, sizeof(buf)));
    }
    if (have_share && sens && strcmp(sens, "high") == 0 && share < NP_ADVICE_HIGH_LOCAL_SHARE)
        hit(&r->high, "%s (%.0f%% local)", n->name, share * 100);
    if (np_node_fig(n, NP_NODE_BANDWIDTH, &n->bandwidth, &bwm) &&
        bwm >= NP_ADVICE_BANDWIDTH_BYTES_PER_S && local_policy(n) && spread_nodes(n) >= 2)
        hit(&r->interleave, "%s (%.1f GB/s mean, memory on %d NUMA nodes)", n->name, bwm / 1e9,
            spread_nodes(n));
    if (have_share && local_policy(n) && share >= NP_ADVICE_LOCAL_GOOD_SHARE)
        hit(&r->good, "%s (%.0f%% local)", n->name, share * 100);
    os_noise(&r->noise, n);
    if (cw && bwhy)
        hit(&r->counters, "%s (CPI and bandwidth: %s)", n->name, cw);
    else if (cw)
        hit(&r->counters, "%s (CPI: %s)", n->name, cw);
    else if (bwhy)
        hit(&r->counters, "%s (bandwidth: %s)", n->name, bwhy);
    if (node_moved > 0) {
        char human[32];
        r->moved += node_moved;
        np_human_bytes((double)node_moved, human, sizeof(human));
        hit(&r->moved_on, "%s: %s", n->name, human);
        return count_triggers(n, &r->triggers);
    }
    return 0;
}

static void migrated(struct advice_list *a, struct rules *r)
{
    char human[32], trig[256] = "";
    size_t o = 0;

    np_human_bytes((double)r->moved, human, sizeof(human));
    for (size_t i = 0; i < r->triggers.n; i++) {
        const json_int_t c = r->triggers.e[i].v.i;
        int w = snprintf(trig + o, sizeof(trig) - o, "%s%s (%lld request%s)", o ? ", " : "",
                         r->triggers.e[i].key, (long long)c, c == 1 ? "" : "s");
        if (w < 0 || (size_t)w >= sizeof(trig) - o)
            break;
        o += (size_t)w;
    }
    advise(a, "migrated",
           "numaplace moved %s of the job's pages between NUMA nodes (%s), triggered by %s.", human,
           hits_text(&r->moved_on), trig[0] ? trig : "triggers not recorded");
}

int np_sum_advice(const struct np_sum *s, struct np_advice **out)
{
    return np_sum_advice_with(s, NULL, out);
}

int np_sum_advice_with(const struct np_sum *s, const struct np_sens_model *model,
                       struct np_advice **out)
{
    struct rules r;
    struct advice_list a = {0};
    const char **names;
    size_t n = 0;
    int rc = 0;
    const double threshold = model ? model->threshold : 0; /* the rules fire only with one */

    *out = NULL;
    memset(&r, 0, sizeof(r));
    names = np_sum_sorted_nodes(s, &n);
    if (!names)
        return -ENOMEM;
    for (size_t k = 0; k < n && !rc; k++) {
        rc = judge_node(&r, np_sum_node_get(s, names[k]));
        judge_steps(&r, np_sum_node_get(s, names[k]), model);
    }
    free(names);
    if (r.remote.n)
        advise(&a, "remote-memory", "Most memory was remote for most of the run on %s.",
               hits_text(&r.remote));
    if (r.high.n)
        advise(&a, "high-but-remote",
               "The job is classed high (sensitive to placement) yet its memory was not kept "
               "local on %s; check the step's --numa-policy and the node's free memory.",
               hits_text(&r.high));
    if (r.interleave.n)
        advise(&a, "interleave-may-help",
               "Memory bandwidth was high and memory spread over several NUMA nodes under a local "
               "policy on %s; --numa-policy=interleave may help a bandwidth-bound job by using "
               "more memory controllers.",
               hits_text(&r.interleave));
    if (r.good.n)
        advise(&a, "local-is-good",
               "Local placement worked: memory stayed next to the job's CPUs on %s.",
               hits_text(&r.good));
    if (r.noise.n)
        advise(&a, "os-noise",
               "The job lost a measurable share to kernel work or interrupts on its CPUs (%s); "
               "core specialization (CpuSpecList) may help.",
               hits_text(&r.noise));
    if (r.counters.n)
        advise(&a, "no-counters",
               "Hardware counters were unavailable on %s, so the job's sensitivity to placement "
               "could not be judged.",
               hits_text(&r.counters));
    if (r.sensitive.n)
        advise(&a, "predicted-sensitive",
               "This job behaved like a placement-sensitive code (predicted slowdown with remote "
               "memory: %s; sensitive from %.2fx); label it --numa-sensitivity=high.",
               hits_text(&r.sensitive), threshold);
    if (r.insensitive.n)
        advise(
            &a, "predicted-insensitive",
            "This job is labelled --numa-sensitivity=high but showed no sensitivity to placement "
            "(predicted slowdown with remote memory: %s; sensitive from %.2fx); "
            "--numa-sensitivity=low would let its memory move when a node needs room.",
            hits_text(&r.insensitive), threshold);
    if (r.moved > 0)
        migrated(&a, &r);
    np_map_free(&r.triggers);
    if (a.n == 0)
        advise(&a, "none", "nothing stood out");
    if (rc || a.oom) {
        free(a.v);
        return -ENOMEM;
    }
    *out = a.v;
    return a.n;
}

json_t *np_sum_advice_json(const struct np_advice *advice, int n)
{
    json_t *arr = json_array();

    for (int i = 0; arr && i < n; i++)
        if (json_array_append_new(arr, json_pack("{s:s, s:s}", "rule", advice[i].rule, "text",
                                                 advice[i].text)) != 0) {
            json_decref(arr);
            return NULL;
        }
    return arr;
}
