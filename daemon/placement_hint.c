/* --numa-policy=auto's placement hint (the reply to advise): node traffic against capacity, and
 * the job's history (daemon.h, docs/auto.md). */
#include "daemon.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "migrator.h"
#include "numaplace/auto.h"
#include "numaplace/penalty.h"
#include "numaplace/procfs.h"
#include "numaplace/profile.h"

void hint_load(struct np_daemon *d)
{
    struct np_hint_state *a = &d->hint;
    const char *path = d->cfg.machine_profile[0] ? d->cfg.machine_profile : NP_PROFILE_DEFAULT_PATH;
    struct np_profile *profile = NULL;
    struct np_err err = {0};
    double penalty = NAN;
    unsigned found = 0;

    memset(a->capacity_mbps, 0, sizeof(a->capacity_mbps));
    if (auto_class_file_is_safe("machine profile", path, &err) == 0 &&
        np_profile_load(path, &profile, &err) == 0) {
        for (unsigned n = 0; n < NP_MAX_NODES; n++) {
            const struct np_profile_pair *p = np_profile_pair(profile, n, n);
            double most = p && isfinite(p->bandwidth_mb_s) ? p->bandwidth_mb_s : 0;
            for (size_t k = 0; p && k < p->loaded_count; k++)
                if (isfinite(p->loaded[k].bandwidth_mb_s))
                    most = fmax(most, p->loaded[k].bandwidth_mb_s);
            a->capacity_mbps[n] = most;
            found += most > 0;
        }
        penalty = np_profile_near_penalty(profile);
        np_profile_free(profile);
    }
    /* The contention model's break-even (numaplace/auto.h), at this machine's near penalty. */
    a->threshold = np_auto_threshold(isfinite(penalty) ? penalty : NP_REFERENCE_REMOTE_PENALTY);
    if (found)
        snprintf(a->capacity_from, sizeof(a->capacity_from), "machine profile");
    else
        snprintf(a->capacity_from, sizeof(a->capacity_from), "unavailable: %.48s",
                 err.msg[0] ? err.msg : "no local pair measured");
    np_logf(&d->log, found ? NP_LOG_INFO : NP_LOG_DEBUG,
            "--numa-policy=auto: node capacities %s, loaded above %.0f%%", a->capacity_from,
            100.0 * a->threshold);
}

/* Each node's busy share since the last tick, from the node counters' /proc/stat reading of
 * this tick, as the kernel accounted its CPUs' ticks: busy over all (not over wall-clock time):
 * a virtual machine whose CPUs the host starves is accounted fewer ticks than the time that
 * passed, and its busy nodes looked half idle. */
void hint_tick(struct np_daemon *d)
{
    struct np_hint_state *a = &d->hint;
    const struct np_node_counters *nc = &d->counters;
    uint64_t ticks[NP_MAX_NODES] = {0}, all[NP_MAX_NODES] = {0};
    const double now = np_monotonic_s();
    const unsigned seen = nc->have_busy ? nc->cpus_read : 0;

    if (d->cfg.auto_load != NP_AUTO_LOAD_CPU_BUSY || !d->cpu_node || !d->ncpus)
        return;
    for (unsigned c = 0; c < seen && c < d->ncpus && c < nc->max_cpus; c++)
        if (d->cpu_node[c] >= 0 && d->cpu_node[c] < NP_MAX_NODES) {
            ticks[d->cpu_node[c]] += nc->busy_ticks[c];
            all[d->cpu_node[c]] += nc->all_ticks[c];
        }
    for (unsigned n = 0; n < NP_MAX_NODES; n++) {
        a->node_busy[n] = NAN;
        if (seen > 0 && a->busy_read_at > 0 && ticks[n] >= a->node_busy_ticks[n] &&
            all[n] > a->node_all_ticks[n])
            a->node_busy[n] = fmin((double)(ticks[n] - a->node_busy_ticks[n]) /
                                       (double)(all[n] - a->node_all_ticks[n]),
                                   1.0);
        a->node_busy_ticks[n] = ticks[n];
        a->node_all_ticks[n] = all[n];
    }
    a->busy_read_at = seen > 0 ? now : 0;
}

static json_t *history_json(const struct np_hint_state *a, uid_t uid, const char *name)
{
    const int i = name[0] ? history_find(a, uid, name) : -1;

    if (i < 0 || a->history[i].high + a->history[i].low == 0)
        return NULL;
    /* The majority of the runs; a tie counts as high (interleaving a sensitive job on a loaded
     * node costs less than leaving it there). */
    return json_pack("{s:s, s:i}", "sensitivity",
                     a->history[i].high >= a->history[i].low ? "high" : "low", "runs",
                     (int)(a->history[i].high + a->history[i].low));
}

json_t *op_advise(struct np_daemon *d, const struct np_peer *peer, uint32_t job_id,
                  uint32_t step_id, uid_t uid, const char *name)
{
    struct np_hint_state *a = &d->hint;
    struct np_node_view *view;
    json_t *reply, *hint, *nodes, *history;

    if (!auth_is_root(peer))
        return np_proto_reply_error("only root (slurmstepd) may ask for advice; uid %u may not",
                                    (unsigned)peer->uid);
    if (name[0]) { /* register picks it up (hint_claim_name) */
        const unsigned slot = a->next_advised++ % NPD_ADVISED_MAX;
        a->advised[slot].job_id = job_id;
        a->advised[slot].step_id = step_id;
        snprintf(a->advised[slot].name, sizeof(a->advised[slot].name), "%s", name);
    }
    view = migration_build_view(d);
    nodes = json_array();
    for (unsigned n = 0; view && nodes && n < view->nnodes && n < NP_MAX_NODES; n++) {
        const enum np_bandwidth_source src = view->node_bandwidth_source[n];
        const bool measured = np_bandwidth_source_measured(src);
        json_t *o;

        if (!migration_node_exists(d, n))
            continue;
        o = json_pack("{s:i, s:s, s:b}", "node", (int)n, "source", np_bandwidth_source_name(src),
                      "loaded",
                      measured && np_auto_loaded(view->node_bandwidth[n], a->capacity_mbps[n] * 1e6,
                                                 a->threshold));
        if (o && measured && a->capacity_mbps[n] > 0)
            json_object_set_new(
                o, "utilisation",
                json_real(fmin(view->node_bandwidth[n] / (a->capacity_mbps[n] * 1e6), 1000.0)));
        else if (o && !measured && d->cfg.auto_load == NP_AUTO_LOAD_CPU_BUSY &&
                 isfinite(a->node_busy[n])) { /* the proxy the site chose, named as one */
            json_t *busy = json_pack("{s:s, s:f, s:b}", "load_from", NP_PROTO_LOAD_CPU_BUSY,
                                     "utilisation", a->node_busy[n], "loaded",
                                     a->threshold > 0 && a->node_busy[n] > a->threshold);
            json_object_update(o, busy);
            json_decref(busy);
        }
        json_array_append_new(nodes, o);
    }
    migrator_view_free(view);
    hint = json_pack("{s:o, s:s}", "nodes", nodes ? nodes : json_array(), "capacity_from",
                     a->capacity_from[0] ? a->capacity_from : "unavailable: not loaded");
    if (hint && a->threshold > 0 && a->threshold < 1) /* else never loaded */
        json_object_set_new(hint, "threshold", json_real(a->threshold));
    if (hint && (history = history_json(a, uid, name)) != NULL)
        json_object_set_new(hint, "history", history);
    reply = np_proto_reply_ok();
    json_object_set_new(reply, "advice", hint); /* the wire key predates the name; kept */
    return reply;
}

void hint_claim_name(struct np_daemon *d, struct np_daemon_job *j)
{
    struct np_hint_state *a = &d->hint;

    for (unsigned i = 0; i < NPD_ADVISED_MAX; i++)
        if (a->advised[i].name[0] && a->advised[i].job_id == j->meta.job_id &&
            a->advised[i].step_id == j->meta.step_id) {
            snprintf(j->job_name, sizeof(j->job_name), "%s", a->advised[i].name);
            a->advised[i].name[0] = '\0';
            return;
        }
}

void hint_remember(struct np_daemon *d, const struct np_daemon_job *j)
{
    bool high;

    if (!j->job_name[0])
        return;
    if (!j->unlabelled) /* the user's label */
        high = strcmp(j->meta.sensitivity, "high") == 0;
    else if (j->meta.prediction.known) /* the model's */
        high = j->meta.prediction.sensitive;
    else
        return; /* only the site's default: nothing learnt */
    history_note(d, j->meta.uid, j->job_name, high);
}
