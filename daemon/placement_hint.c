/* --numa-policy=auto's placement hint (the reply to advise): node traffic against capacity, and
 * the history of (user, job name) sensitivities, kept across restarts (docs/auto.md). */
#include "daemon.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "numaplace/auto.h"
#include "numaplace/penalty.h"
#include "numaplace/profile.h"
#include "safe_file.h"
#include "writer.h"

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

/* From this tick's /proc/stat reading: busy ticks over all ticks, not over wall-clock time (a
 * virtual machine whose CPUs the host starves is accounted fewer ticks than passed). */
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
    /* The majority of the runs; a tie counts as high (interleaving a sensitive job costs less) */
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
                 isfinite(a->node_busy[n])) /* the proxy the site chose, named as one */
            json_object_update_new(o,
                                   json_pack("{s:s, s:f, s:b}", "load_from", NP_PROTO_LOAD_CPU_BUSY,
                                             "utilisation", a->node_busy[n], "loaded",
                                             a->threshold > 0 && a->node_busy[n] > a->threshold));
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

/* ---- the history ---- */

int history_find(const struct np_hint_state *a, uid_t uid, const char *name)
{
    for (unsigned i = 0; i < a->nhistory; i++)
        if (a->history[i].uid == uid && strcmp(a->history[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* The entry (uid, name) replaces when every one is used: a user past their share (NPD_HISTORY_MAX
 * over the users holding entries) their own used longest ago, else the one used longest ago of
 * the user holding the most, so one user's many names never push out another's few. */
static int history_victim(const struct np_hint_state *a, uid_t uid)
{
    unsigned held[NPD_HISTORY_MAX] = {0}, users = 0, mine = 0, most = 0;
    int first[NPD_HISTORY_MAX], victim = -1;
    uid_t from;

    /* How many entries each user holds, counted at the first entry of theirs. */
    for (unsigned i = 0; i < a->nhistory; i++) {
        first[i] = (int)i;
        for (unsigned k = 0; k < i; k++)
            if (a->history[k].uid == a->history[i].uid) {
                first[i] = first[k];
                break;
            }
        if (held[first[i]]++ == 0)
            users++;
        if (held[first[i]] > most)
            most = held[first[i]];
        if (a->history[i].uid == uid)
            mine++;
    }
    users += mine == 0;
    if (mine > 0 && mine >= a->nhistory / users) { /* 256 users of one entry each: a 257th none */
        from = uid;
    } else {
        from = a->history[0].uid;
        for (unsigned i = 0; i < a->nhistory; i++)
            if (held[first[i]] == most) {
                from = a->history[i].uid;
                break;
            }
    }
    for (unsigned i = 0; i < a->nhistory; i++)
        if (a->history[i].uid == from &&
            (victim < 0 || a->history[i].last < a->history[victim].last))
            victim = (int)i;
    return victim;
}

/* A new entry for (uid, name): a free one, else history_victim's. */
static int history_slot(struct np_hint_state *a, uid_t uid, const char *name)
{
    const int i = a->nhistory < NPD_HISTORY_MAX ? (int)a->nhistory++ : history_victim(a, uid);

    memset(&a->history[i], 0, sizeof(a->history[i]));
    a->history[i].uid = uid;
    snprintf(a->history[i].name, sizeof(a->history[i].name), "%s", name);
    return i;
}

/* A name the history keeps: what advise accepts (NPD_HISTORY_FILE_MAX bounds the file by it). */
static bool history_name_ok(const char *name)
{
    return name[0] && strlen(name) <= NPD_HISTORY_NAME_MAX && np_proto_printable(name);
}

void history_note(struct np_daemon *d, uid_t uid, const char *name, bool high)
{
    struct np_hint_state *a = &d->hint;
    int i;

    if (!history_name_ok(name))
        return;
    if ((i = history_find(a, uid, name)) < 0)
        i = history_slot(a, uid, name);
    if (high)
        a->history[i].high++;
    else
        a->history[i].low++;
    a->history[i].last = ++a->history_seq;
    history_save(d);
}

static char *history_encode(const struct np_hint_state *a)
{
    json_t *entries = json_array(), *doc;
    char *text;

    for (unsigned i = 0; entries && i < a->nhistory; i++)
        json_array_append_new(
            entries,
            json_pack("{s:I, s:s, s:I, s:I, s:I}", "uid", (json_int_t)a->history[i].uid, "name",
                      a->history[i].name, "high", (json_int_t)a->history[i].high, "low",
                      (json_int_t)a->history[i].low, "last", (json_int_t)a->history[i].last));
    doc = json_pack("{s:s, s:I, s:o}", "schema", NPD_HISTORY_SCHEMA, "seq",
                    (json_int_t)a->history_seq, "entries", entries ? entries : json_array());
    text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    return text;
}

static void history_written(void *ctx, struct writer_job *job)
{
    struct np_daemon *d = ctx;

    if (job->rc < 0)
        NPD_LOG(d, ERROR, "cannot save --numa-policy=auto's history to %s/%s: %s", job->dir,
                job->name, job->err.msg);
}

void history_save(struct np_daemon *d)
{
    char *text = history_encode(&d->hint);
    struct writer_job *w;

    /* A text the reader would refuse is not written: the old file stays. */
    if (text && strlen(text) > NPD_HISTORY_FILE_MAX) {
        NPD_LOG(d, ERROR,
                "--numa-policy=auto's history not saved: %zu bytes, more than the %d it may hold",
                strlen(text), NPD_HISTORY_FILE_MAX);
        free(text);
        return;
    }
    w = text ? writer_job_new(d->cfg.state_dir, NPD_HISTORY_FILE, text, strlen(text), (uid_t)-1,
                              0600, history_written, NULL)
             : NULL;
    if (w)
        writer_run(d->writer, w, d);
    else
        NPD_LOG(d, ERROR, "cannot save --numa-policy=auto's history: out of memory");
}

/* The file's bytes into *@p text (new), only when nobody but numaplaced could have written
 * them. @return 0, -ENOENT (no file), or -errno with @p err */
static int history_read(const char *dir, char **text, size_t *len, struct np_err *err)
{
    const int dirfd = safe_dir_open(dir, err);
    struct stat st;
    int fd, rc = 0;

    *text = NULL;
    if (dirfd < 0)
        return dirfd;
    fd = openat(dirfd, NPD_HISTORY_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    close(dirfd);
    if (fd < 0) /* ELOOP: a symlink planted there */
        return np_err_set(err, -errno, "cannot open it: %s", strerror(errno));
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        rc = np_err_set(err, -EPERM, "not a regular file");
    else if (st.st_uid != 0 && st.st_uid != geteuid())
        rc = np_err_set(err, -EPERM, "owned by uid %u, not root's or the helper's",
                        (unsigned)st.st_uid);
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        rc = np_err_set(err, -EPERM, "writable by group or others (mode %03o)",
                        (unsigned)(st.st_mode & 0777));
    else if (st.st_size > NPD_HISTORY_READ_MAX)
        rc = np_err_set(err, -EFBIG, "%lld bytes, more than the %d a history holds",
                        (long long)st.st_size, NPD_HISTORY_READ_MAX);
    else if ((*text = malloc((size_t)st.st_size + 1)) == NULL)
        rc = np_err_set(err, -ENOMEM, "out of memory");
    else if (read(fd, *text, (size_t)st.st_size) != st.st_size)
        rc = np_err_set(err, -EIO, "short read");
    close(fd);
    if (rc < 0) {
        free(*text);
        *text = NULL;
    } else {
        *len = (size_t)st.st_size;
    }
    return rc;
}

/* One entry of the file into @p a; -EPROTO with @p err when it is not one we write; 0 and not
 * kept (*@p dropped) a name an older numaplaced took with a control character. */
static int history_entry(struct np_hint_state *a, const json_t *e, size_t index, unsigned *dropped,
                         struct np_err *err)
{
    json_int_t uid, high, low, last;
    const char *name;
    json_error_t jerr;
    int i;

    if (json_unpack_ex((json_t *)e, &jerr, JSON_STRICT, "{s:I, s:s, s:I, s:I, s:I}", "uid", &uid,
                       "name", &name, "high", &high, "low", &low, "last", &last) < 0)
        return np_err_set(err, -EPROTO, "entry %zu: %s", index, jerr.text);
    if (uid < 0 || uid >= (json_int_t)UINT32_MAX || !name[0] ||
        strlen(name) >= sizeof(a->history[0].name) || high < 0 || low < 0 || high > UINT32_MAX ||
        low > UINT32_MAX || high + low == 0 || last < 0)
        return np_err_set(err, -EPROTO, "entry %zu: a figure or the name out of range", index);
    if (!np_proto_printable(name)) {
        (*dropped)++;
        return 0;
    }
    if (history_find(a, (uid_t)uid, name) >= 0)
        return np_err_set(err, -EPROTO, "entry %zu: (uid %lld, \"%s\") twice", index,
                          (long long)uid, name);
    i = history_slot(a, (uid_t)uid, name);
    a->history[i].high = (unsigned)high;
    a->history[i].low = (unsigned)low;
    a->history[i].last = (uint64_t)last;
    return 0;
}

int history_restore(struct np_daemon *d)
{
    struct np_hint_state *a = &d->hint;
    struct np_err err = {0};
    json_error_t jerr;
    json_t *doc, *entries = NULL, *e;
    const char *schema = NULL;
    json_int_t seq = 0;
    size_t len = 0, index;
    unsigned dropped = 0;
    char *text = NULL;
    int rc = history_read(d->cfg.state_dir, &text, &len, &err);

    a->nhistory = 0;
    a->history_seq = 0;
    if (rc == -ENOENT)
        return 0;
    if (rc < 0)
        return NPD_LOG_RC(d, ERROR, rc,
                          "--numa-policy=auto's history %s/%s refused (%s); starting without it",
                          d->cfg.state_dir, NPD_HISTORY_FILE, err.msg);
    doc = json_loadb(text, len, 0, &jerr);
    free(text);
    if (!doc || json_unpack_ex(doc, &jerr, JSON_STRICT, "{s:s, s:I, s:o}", "schema", &schema, "seq",
                               &seq, "entries", &entries) < 0)
        rc = np_err_set(&err, -EPROTO, "%s", jerr.text);
    else if (strcmp(schema, NPD_HISTORY_SCHEMA) != 0)
        rc = np_err_set(&err, -EPROTO, "its schema is not " NPD_HISTORY_SCHEMA);
    else if (!json_is_array(entries) || json_array_size(entries) > NPD_HISTORY_MAX || seq < 0)
        rc =
            np_err_set(&err, -EPROTO, "\"entries\" not an array of at most %d, or \"seq\" negative",
                       NPD_HISTORY_MAX);
    json_array_foreach(rc == 0 ? entries : NULL, index, e)
    {
        const unsigned kept = a->nhistory;
        if ((rc = history_entry(a, e, index, &dropped, &err)) < 0)
            break;
        if (a->nhistory > kept && a->history[a->nhistory - 1].last > (uint64_t)seq)
            seq = (json_int_t)a->history[a->nhistory - 1].last;
    }
    json_decref(doc);
    if (rc < 0) { /* a wrong file starts empty rather than half-read */
        a->nhistory = 0;
        NPD_LOG(d, ERROR,
                "--numa-policy=auto's history %s/%s is unreadable (%s); starting without it",
                d->cfg.state_dir, NPD_HISTORY_FILE, err.msg);
        return rc;
    }
    a->history_seq = (uint64_t)seq;
    if (dropped)
        NPD_LOG(d, WARNING,
                "--numa-policy=auto's history: %u job name(s) with a control character dropped",
                dropped);
    if (a->nhistory)
        NPD_LOG(d, INFO, "--numa-policy=auto's history: %u job name(s) restored", a->nhistory);
    return (int)a->nhistory;
}
