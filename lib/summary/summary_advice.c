/* Plain-language advice from a job summary's figures (docs/summary-schema.md, "Advice"), and the
 * job's predicted sensitivity to placement from the counters its steps carry (the model:
 * numaplace/sensitivity.h). */
#include <stdarg.h>

#include "summary_priv.h"

/* A step's predicted remote-memory slowdown from its cpi and llc_mpki. @return 0, or -ENODATA
 * with @p err "unavailable: ..." naming why (counters unavailable, an older summary, no model) */
static int step_predict(const json_t *st, const struct np_sens_model *model, double *slowdown,
                        struct np_err *err)
{
    struct np_sens_inputs in = {NAN, NAN, NAN, NAN, NULL};

    *slowdown = NAN;
    if (!model)
        return np_err_set(err, -ENODATA, "unavailable: no sensitivity table loaded");
    in.why = jstr(st, "counters_unavailable");
    if (!json_object_get(st, "counters_unavailable") && !json_object_get(st, "cpi") &&
        !json_object_get(st, "llc_mpki"))
        in.why = "the summary predates per-step counters";
    in.cpi = jnum(st, "cpi", NAN);
    in.llc_mpki = jnum(st, "llc_mpki", NAN);
    in.bw_mbps = jnum(st, "bandwidth_bytes_per_s", NAN) / 1e6;
    return np_sensitivity_predict(model, &in, slowdown, err);
}

void np_summary_predict(const json_t *s, const struct np_sens_model *model,
                        struct np_summary_prediction *out)
{
    bool any_step = false, trimmed = false;
    const char *name;
    json_t *n;

    memset(out, 0, sizeof(*out));
    json_object_foreach(json_object_get(s, "nodes"), name, n)
    {
        json_t *st;
        size_t i;
        json_array_foreach(json_object_get(n, "steps"), i, st)
        {
            struct np_err err = {0};
            double x;
            if (jnum(st, "duration_s", 0) < NP_ADVICE_SENSITIVITY_MIN_S)
                continue;
            any_step = true;
            if (step_predict(st, model, &x, &err) < 0) {
                if (!out->why[0])
                    snprintf(out->why, sizeof(out->why), "%s", err.msg);
                continue;
            }
            if (!out->available || x > out->slowdown) {
                out->available = true;
                out->slowdown = x;
                out->node = name;
                out->step = jstr(st, "step");
            }
        }
        trimmed |= jint(n, "step_count") > 0 && json_array_size(json_object_get(n, "steps")) == 0;
    }
    if (out->available) {
        out->sensitive = np_sensitivity_is_sensitive(model, out->slowdown);
        out->why[0] = '\0';
    } else if (!any_step && trimmed) {
        snprintf(out->why, sizeof(out->why),
                 "unavailable: the summary's steps were trimmed to fit AdminComment");
    } else if (!any_step) {
        snprintf(out->why, sizeof(out->why), "unavailable: no step ran %.0f s or more",
                 NP_ADVICE_SENSITIVITY_MIN_S);
    }
}

/* Advice names at most this many nodes per rule, then "and N more". */
#define ADVICE_NAMED_NODES 4

/* The nodes a rule names: the first ADVICE_NAMED_NODES with their figures, then a count. */
struct hits {
    char text[768];
    int n;
};

static NP_PRINTF(2, 3) void hit(struct hits *h, const char *fmt, ...)
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

/* One {rule, text} more. 0 or -ENOMEM. */
static NP_PRINTF(3, 4) int advise(json_t *a, const char *rule, const char *fmt, ...)
{
    char text[2048];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    return json_array_append_new(a, json_pack("{s:s, s:s}", "rule", rule, "text", text)) ? -ENOMEM
                                                                                         : 0;
}

/* Every requested policy on the node is local or local-strict. */
static bool local_policy(const json_t *n)
{
    const json_t *pols = json_object_get(n, "policy_requested"), *p;
    size_t i;

    json_array_foreach(pols, i, p)
    {
        if (strcmp(json_string_value(p), "local") != 0 &&
            strcmp(json_string_value(p), "local-strict") != 0)
            return false;
    }
    return json_array_size(pols) > 0;
}

/* NUMA nodes holding at least NP_ADVICE_SPREAD_SHARE of the node's peak pages. */
static int spread_nodes(const json_t *n)
{
    const json_t *peak = json_object_get(n, "pages_peak_bytes"), *v;
    const char *key;
    double total = 0;
    int count = 0;

    if (!peak || json_object_get(peak, "unavailable"))
        return 0;
    json_object_foreach((json_t *)peak, key, v)
    {
        total += (double)jround(v);
    }
    if (total <= 0)
        return 0;
    json_object_foreach((json_t *)peak, key, v)
    {
        count += json_number_value(v) >= NP_ADVICE_SPREAD_SHARE * total;
    }
    return count;
}

static const char *policies_text(const json_t *n, char *buf, size_t len)
{
    const json_t *p;
    size_t i, o = 0;

    buf[0] = '\0';
    json_array_foreach(json_object_get(n, "policy_requested"), i, p)
    {
        int w = snprintf(buf + o, len - o, "%s%s", i ? "," : "", json_string_value(p));
        if (w < 0 || (size_t)w >= len - o)
            break;
        o += (size_t)w;
    }
    return buf[0] ? buf : "unknown";
}

static void os_noise(struct hits *noise, const char *name, const json_t *n)
{
    const json_t *os = json_object_get(n, "os_interference");
    double ks = -1, cs = -1, irq = -1;
    char what[192];
    int o = 0;

    jfig(json_object_get(os, "kernel_time_share"), "value", &ks);
    jfig(json_object_get(os, "involuntary_cs_per_s"), "value", &cs);
    jfig(json_object_get(os, "interrupts_per_s"), "value", &irq);
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
    hit(noise, "%s: %s", name, what);
}

struct rules {
    struct hits remote, high, interleave, good, noise, counters, moved_on, sensitive, insensitive;
    json_int_t moved;
    json_t *triggers;
};

/* The rules whose advice names their nodes and nothing else, in the order advice lists them:
 * the text before and after the nodes, and where the nodes are in struct rules. */
static const struct node_rule {
    const char *rule, *before, *after;
    size_t hits;
} node_rules[] = {
    {"remote-memory", "Most memory was remote for most of the run on ", ".",
     offsetof(struct rules, remote)},
    {"high-but-remote",
     "The job is classed high (sensitive to placement) yet its memory was not kept local on ",
     "; check the step's --numa-policy and the node's free memory.", offsetof(struct rules, high)},
    {"interleave-may-help",
     "Memory bandwidth was high and memory spread over several NUMA nodes under a local policy "
     "on ",
     "; --numa-policy=interleave may help a bandwidth-bound job by using more memory "
     "controllers.",
     offsetof(struct rules, interleave)},
    {"local-is-good", "Local placement worked: memory stayed next to the job's CPUs on ", ".",
     offsetof(struct rules, good)},
    {"os-noise", "The job lost a measurable share to kernel work or interrupts on its CPUs (",
     "); core specialization (CpuSpecList) may help.", offsetof(struct rules, noise)},
    {"no-counters", "Hardware counters were unavailable on ",
     ", so the job's sensitivity to placement could not be judged.",
     offsetof(struct rules, counters)},
};

/* The sensitivity rules on each step that ran long enough and could be predicted. */
static void judge_steps(struct rules *r, const char *name, const json_t *n,
                        const struct np_sens_model *model)
{
    const json_t *st;
    size_t i;

    json_array_foreach(model ? json_object_get(n, "steps") : NULL, i, st)
    {
        const char *sens = jstr(st, "sensitivity"), *step = jstr(st, "step");
        const bool high = sens && strcmp(sens, "high") == 0;
        double x;
        if (jnum(st, "duration_s", 0) < NP_ADVICE_SENSITIVITY_MIN_S ||
            step_predict(st, model, &x, NULL) < 0)
            continue;
        if (np_sensitivity_is_sensitive(model, x) && !high)
            hit(&r->sensitive, "%s step %s: %.1fx, LLC MPKI %.1f, CPI %.2f", name,
                step ? step : "?", x, jnum(st, "llc_mpki", 0), jnum(st, "cpi", 0));
        else if (!np_sensitivity_is_sensitive(model, x) && high)
            hit(&r->insensitive, "%s step %s: %.1fx", name, step ? step : "?", x);
    }
}

static int judge_node(struct rules *r, const char *name, const json_t *n)
{
    const char *sens = jstr(n, "sensitivity");
    const char *cw = jwhy(n, "cpi"), *bwhy = jwhy(n, "bandwidth");
    const json_int_t node_moved = jint(n, "pages_moved_bytes");
    double share, bwm;
    const bool have_share = jfig(json_object_get(n, "local_share"), "value", &share);

    if (have_share && share < NP_ADVICE_REMOTE_SHARE) {
        char buf[256];
        hit(&r->remote, "%s (%.0f%% local, policy %s)", name, share * 100,
            policies_text(n, buf, sizeof(buf)));
    }
    if (have_share && sens && strcmp(sens, "high") == 0 && share < NP_ADVICE_HIGH_LOCAL_SHARE)
        hit(&r->high, "%s (%.0f%% local)", name, share * 100);
    if (jfig(json_object_get(n, "bandwidth"), "mean_bytes_per_s", &bwm) &&
        bwm >= NP_ADVICE_BANDWIDTH_BYTES_PER_S && local_policy(n) && spread_nodes(n) >= 2)
        hit(&r->interleave, "%s (%.1f GB/s mean, memory on %d NUMA nodes)", name, bwm / 1e9,
            spread_nodes(n));
    if (have_share && local_policy(n) && share >= NP_ADVICE_LOCAL_GOOD_SHARE)
        hit(&r->good, "%s (%.0f%% local)", name, share * 100);
    os_noise(&r->noise, name, n);
    if (cw || bwhy)
        hit(&r->counters, "%s (%s: %s)", name,
            cw && bwhy ? "CPI and bandwidth"
            : cw       ? "CPI"
                       : "bandwidth",
            cw ? cw : bwhy);
    if (node_moved > 0) {
        char human[32];
        const char *trigger;
        json_t *t;
        r->moved += node_moved;
        np_human_bytes((double)node_moved, human, sizeof(human));
        hit(&r->moved_on, "%s: %s", name, human);
        /* the requests that moved pages (not the dry runs), by trigger */
        json_object_foreach(json_object_get(json_object_get(n, "migrations"), "triggers"), trigger,
                            t)
        {
            const json_int_t real = jint(t, "requests") - jint(t, "dry_run");
            if (real > 0 && jadd(r->triggers, trigger, real) != 0)
                return -ENOMEM;
        }
    }
    return 0;
}

static int migrated(json_t *a, struct rules *r)
{
    char human[32], trig[256] = "";
    const char *key;
    json_t *v;
    size_t o = 0;

    np_human_bytes((double)r->moved, human, sizeof(human));
    json_object_foreach(r->triggers, key, v)
    {
        const json_int_t c = json_integer_value(v);
        int w = snprintf(trig + o, sizeof(trig) - o, "%s%s (%lld request%s)", o ? ", " : "", key,
                         (long long)c, c == 1 ? "" : "s");
        if (w < 0 || (size_t)w >= sizeof(trig) - o)
            break;
        o += (size_t)w;
    }
    return advise(a, "migrated",
                  "numaplace moved %s of the job's pages between NUMA nodes (%s), triggered by %s.",
                  human, hits_text(&r->moved_on), trig[0] ? trig : "triggers not recorded");
}

json_t *np_summary_advice(const json_t *summary)
{
    return np_summary_validate(summary, NULL) == 0 ? np_summary_advice_with(summary, NULL) : NULL;
}

json_t *np_summary_advice_with(const json_t *s, const struct np_sens_model *model)
{
    struct rules r;
    json_t *a = json_array();
    const char **names = NULL;
    size_t n = 0;
    int rc = 0;
    const double threshold = model ? model->threshold : 0; /* the rules fire only with one */

    memset(&r, 0, sizeof(r));
    r.triggers = json_object();
    if (np_summary_check(s, NULL) != 0 || !a || !r.triggers ||
        !(names = np_sorted_keys(json_object_get(s, "nodes"), &n)))
        rc = -ENOMEM;
    for (size_t k = 0; k < n && !rc; k++) {
        const json_t *node = json_object_get(json_object_get(s, "nodes"), names[k]);
        rc = judge_node(&r, names[k], node);
        judge_steps(&r, names[k], node, model);
    }
    free(names);
    for (size_t k = 0; !rc && k < sizeof(node_rules) / sizeof(node_rules[0]); k++) {
        struct hits *h = (struct hits *)((char *)&r + node_rules[k].hits);
        if (h->n)
            rc = advise(a, node_rules[k].rule, "%s%s%s", node_rules[k].before, hits_text(h),
                        node_rules[k].after);
    }
    if (!rc && r.sensitive.n)
        rc = advise(
            a, "predicted-sensitive",
            "This job behaved like a placement-sensitive code (predicted slowdown with remote "
            "memory: %s; sensitive from %.2fx); label it --numa-sensitivity=high.",
            hits_text(&r.sensitive), threshold);
    if (!rc && r.insensitive.n)
        rc = advise(
            a, "predicted-insensitive",
            "This job is labelled --numa-sensitivity=high but showed no sensitivity to placement "
            "(predicted slowdown with remote memory: %s; sensitive from %.2fx); "
            "--numa-sensitivity=low would let its memory move when a node needs room.",
            hits_text(&r.insensitive), threshold);
    if (!rc && r.moved > 0)
        rc = migrated(a, &r);
    json_decref(r.triggers);
    if (!rc && json_array_size(a) == 0)
        rc = advise(a, "none", "nothing stood out");
    if (rc) {
        json_decref(a);
        return NULL;
    }
    return a;
}
