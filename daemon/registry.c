/* The step registry (see registry.h): a sorted index with binary search, and registry.json. */
#include "registry.h"

#include "safe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobs.h"
#include "writer.h"
#include "numaplace/procfs.h"

static int compare_key(uint32_t job_id, uint32_t step_id, const struct np_daemon_job *j)
{
    if (job_id != j->meta.job_id)
        return job_id < j->meta.job_id ? -1 : 1;
    if (step_id != j->meta.step_id)
        return step_id < j->meta.step_id ? -1 : 1;
    return 0;
}

/* Index of the step, or where it would go; *found says which. */
static unsigned lower_bound(const struct np_registry *r, uint32_t job_id, uint32_t step_id,
                            bool *found)
{
    unsigned lo = 0, hi = r->count;

    while (lo < hi) {
        const unsigned mid = lo + (hi - lo) / 2;
        if (compare_key(job_id, step_id, r->jobs[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < r->count && compare_key(job_id, step_id, r->jobs[lo]) == 0;
    return lo;
}

void registry_init(struct np_registry *r)
{
    memset(r, 0, sizeof(*r));
}

void registry_fini(struct np_registry *r)
{
    for (unsigned i = 0; i < r->count; i++)
        job_free(r->jobs[i]);
    free(r->jobs);
    memset(r, 0, sizeof(*r));
}

struct np_daemon_job *registry_find(const struct np_registry *r, uint32_t job_id, uint32_t step_id)
{
    bool found;
    const unsigned at = lower_bound(r, job_id, step_id, &found);

    return found ? r->jobs[at] : NULL;
}

int registry_insert(struct np_registry *r, struct np_daemon_job *job)
{
    bool found;
    const unsigned at = lower_bound(r, job->meta.job_id, job->meta.step_id, &found);

    if (found)
        return -EEXIST;
    if (r->count == r->cap) {
        const unsigned cap = r->cap ? r->cap * 2 : 64;
        struct np_daemon_job **grown = reallocarray(r->jobs, cap, sizeof(struct np_daemon_job *));
        if (!grown)
            return -ENOMEM;
        r->jobs = grown;
        r->cap = cap;
    }
    memmove(&r->jobs[at + 1], &r->jobs[at], (r->count - at) * sizeof(struct np_daemon_job *));
    r->jobs[at] = job;
    r->count++;
    return 0;
}

int registry_remove(struct np_registry *r, const struct np_daemon_job *job)
{
    bool found;
    const unsigned at = lower_bound(r, job->meta.job_id, job->meta.step_id, &found);

    if (!found || r->jobs[at] != job)
        return -ENOENT;
    r->count--;
    memmove(&r->jobs[at], &r->jobs[at + 1], (r->count - at) * sizeof(struct np_daemon_job *));
    return 0;
}

static json_t *job_entry(const struct np_daemon_job *j)
{
    json_t *pids = json_array(), *starts = json_array();

    /* Each pid with its start time: after a restart, a recycled pid is told from the task. */
    for (unsigned t = 0; pids && starts && t < j->sampler.ntasks; t++)
        if (!j->sampler.tasks[t].gone) {
            json_array_append_new(pids, json_integer(j->sampler.tasks[t].pid));
            json_array_append_new(starts,
                                  json_integer((json_int_t)j->sampler.tasks[t].starttime_ticks));
        }
    return json_pack("{s:I, s:I, s:I, s:f, s:s, s:s, s:s, s:s, s:b, s:s, s:o, s:o, s:O}", "job",
                     (json_int_t)j->meta.job_id, "step", (json_int_t)j->meta.step_id, "uid",
                     (json_int_t)j->meta.uid, "start", j->meta.start_epoch, "policy",
                     j->meta.policy_requested, "sensitivity", j->meta.sensitivity, "class",
                     np_class_name(j->job_class), "class_source", j->meta.class_source,
                     "unlabelled", j->unlabelled, "cpus", j->meta.cpus, "pids", pids, "starts",
                     starts, "tasks", j->tasks);
}

/* The journal's lines since the last snapshot: one step's entry, or its end, each tagged with the
 * snapshot generation it follows (a line of an older generation is already in the snapshot). */
#define JOURNAL_NAME "registry.journal"

/* The journal would pass its bound with @p more bytes: fold it into registry.json first. Not
 * while saves fail (a full disk): the tick retries those, once per interval. */
static void compact_if_due(struct np_daemon *d, size_t more)
{
    const struct np_registry *r = &d->registry;
    const size_t bound = r->snapshot_bytes * 2 > REGISTRY_JOURNAL_MIN_BYTES
                             ? r->snapshot_bytes * 2
                             : REGISTRY_JOURNAL_MIN_BYTES;

    if (!r->save_failing && !r->restoring && r->journal_bytes + more > bound)
        registry_save(d);
}

/* @p line (stolen) gets the generation it follows, after a compaction that may start a new one:
 * written after that snapshot, it is never lost with the old journal. */
static void journal_append(struct np_daemon *d, json_t *line)
{
    struct np_err err = {0};
    char *body, *text = NULL;
    int dirfd, fd = -1;

    /* A step's entry is a few hundred bytes: the estimate need not be exact. */
    compact_if_due(d, 512);
    if (line)
        json_object_set_new(line, "gen", json_integer((json_int_t)d->registry.generation));
    body = line ? json_dumps(line, JSON_COMPACT) : NULL;
    /* Each line starts with its newline: a line cut short (a full disk) is ended by the next
     * one's, which then reads whole; empty lines are skipped. */
    if (body && asprintf(&text, "\n%s", body) < 0)
        text = NULL;
    free(body);
    dirfd = text ? safe_dir_open(d->cfg.state_dir, &err) : -ENOMEM;

    if (dirfd >= 0) {
        fd = openat(dirfd, JOURNAL_NAME, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                    0600);
        close(dirfd);
    }
    d->registry.journal_lines++; /* tried: a save in flight must not drop the journal */
    if (fd >= 0) {
        /* One write of a whole line: a kill -9 leaves it whole or absent. No fsync: a power loss
         * loses at most the requests since the last tick's snapshot, which is flushed. A failed
         * write is not logged here: the tick's snapshot fails too and says so, once a minute. */
        const ssize_t n = write(fd, text, strlen(text) + 1);
        if (n > 0)
            d->registry.journal_bytes += (size_t)n;
        close(fd);
    }
    free(text);
    json_decref(line);
    d->registry.dirty = true;
}

void registry_note(struct np_daemon *d, const struct np_daemon_job *j)
{
    journal_append(d, json_pack("{s:o}", "entry", job_entry(j)));
}

void registry_note_end(struct np_daemon *d, uint32_t job_id, uint32_t step_id)
{
    journal_append(d, json_pack("{s:[I, I]}", "end", (json_int_t)job_id, (json_int_t)step_id));
}

/* The journal without its first @p held bytes (lines the snapshot just written holds): under
 * steady requests every save has lines appended meanwhile, and the journal would only grow. On
 * the loop, as appends are, so none is missed; the tail is a few lines. A copy renamed over it:
 * a kill -9 leaves the old journal whole (its older lines skipped at a restart by generation). */
static bool copy_from(int in, size_t at, int out, size_t *copied)
{
    char buf[8192];

    if (lseek(in, (off_t)at, SEEK_SET) != (off_t)at)
        return false;
    for (;;) {
        const ssize_t n = read(in, buf, sizeof(buf));
        if (n == 0)
            return true;
        if (n < 0 || write(out, buf, (size_t)n) != n)
            return false;
        *copied += (size_t)n;
    }
}

static void journal_keep_tail(struct np_daemon *d, size_t held)
{
    const int dirfd = safe_dir_open(d->cfg.state_dir, NULL);
    int in = -1, out = -1;
    size_t kept = 0;
    bool ok;

    if (dirfd < 0)
        return;
    in = openat(dirfd, JOURNAL_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    unlinkat(dirfd, JOURNAL_NAME ".new", 0); /* a copy a kill -9 left */
    if (in >= 0)
        out = openat(dirfd, JOURNAL_NAME ".new",
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    ok = out >= 0 && copy_from(in, held, out, &kept);
    if (out >= 0 && close(out) == 0 && ok &&
        renameat(dirfd, JOURNAL_NAME ".new", dirfd, JOURNAL_NAME) == 0)
        d->registry.journal_bytes = kept;
    else
        unlinkat(dirfd, JOURNAL_NAME ".new", 0);
    if (in >= 0)
        close(in);
    close(dirfd);
}

/* What became of a registry.json write: @p rc, @p err, @p bytes written. @p journal_in_it: the
 * journal holds no line newer than the snapshot (none was appended while it was written). */
static void save_outcome(struct np_daemon *d, int rc, const struct np_err *err, size_t bytes,
                         bool journal_in_it)
{
    struct np_registry *r = &d->registry;

    if (rc < 0) {
        /* A full or read-only disk fails every save: said once, then once a minute. */
        const double now = np_monotonic_s();
        if (!r->save_failing || now - r->save_failed_logged >= NPD_HOLD_REMIND_S) {
            NPD_LOG(d, ERROR, "cannot save the registry to %s/registry.json: %s%s",
                    d->cfg.state_dir, err->msg,
                    r->save_failing ? " (still; said once a minute)" : "");
            r->save_failed_logged = now;
        }
        r->save_failing = true;
        r->dirty = true; /* retried at the next tick */
        return;
    }
    /* The snapshot is on disk: the journal's lines are in it, and the next ones follow it. Lines
     * appended while the writer had it follow it too: only they are kept. */
    if (journal_in_it) {
        const int dirfd = safe_dir_open(d->cfg.state_dir, NULL);
        if (dirfd >= 0) {
            unlinkat(dirfd, JOURNAL_NAME, 0);
            close(dirfd);
        }
        r->journal_bytes = 0;
    } else {
        journal_keep_tail(d, r->bytes_at_submit);
    }
    r->snapshot_bytes = bytes;
    r->saves++;
    if (r->save_failing) {
        r->save_failing = false;
        NPD_LOG(d, INFO, "registry saved to %s/registry.json again", d->cfg.state_dir);
    }
}

/* The writer's completion, on the loop thread. */
static void registry_written(void *ctx, struct writer_job *w)
{
    struct np_daemon *d = ctx;

    d->registry.save_in_flight = false;
    if (strcmp(w->dir, d->cfg.state_dir) != 0) {
        /* A reload moved state_dir meanwhile: this snapshot is the old directory's, and the new
         * one's journal is in no snapshot yet. Leave it whole; the next tick saves there. */
        d->registry.dirty = true;
        return;
    }
    save_outcome(d, w->rc, &w->err, w->len,
                 d->registry.journal_lines == d->registry.lines_at_submit);
}

void registry_save(struct np_daemon *d)
{
    struct np_registry *r = &d->registry;
    uint64_t generation;
    json_t *state, *arr;
    struct np_err err = {0};
    char *text;
    int rc;

    if (r->save_in_flight) {
        r->dirty = true; /* one at a time: the next tick writes what changed since */
        return;
    }
    /* A new generation for every attempt, whatever its outcome: a save whose rename landed but
     * whose directory flush failed leaves registry.json at this generation, and the journal's
     * next lines must follow it, not the one before. */
    generation = ++r->generation;
    state = json_pack("{s:s, s:I, s:[]}", "schema", NPD_STATE_SCHEMA, "generation",
                      (json_int_t)generation, "jobs");
    arr = json_object_get(state, "jobs");
    /* Finishing steps too: until their report is durable a restart must still know them. */
    for (unsigned i = 0; arr && i < r->count; i++)
        json_array_append_new(arr, job_entry(registry_at(r, i)));
    text = state ? json_dumps(state, JSON_COMPACT) : NULL;
    json_decref(state);
    r->dirty = false;
    if (text && d->writer) {
        /* Serialised here, flushed on the writer's thread: the loop goes on answering. */
        struct writer_job *w = writer_job_new(d->cfg.state_dir, "registry.json", text, strlen(text),
                                              (uid_t)-1, 0600, registry_written, NULL);
        if (w) {
            r->save_in_flight = true;
            r->lines_at_submit = r->journal_lines;
            r->bytes_at_submit = r->journal_bytes;
            writer_submit(d->writer, w);
            return;
        }
        text = NULL; /* freed by writer_job_new */
    }
    /* Flushed to disk before it replaces the old one: a power loss never leaves it empty. */
    rc = text ? safe_write(d->cfg.state_dir, "registry.json", text, strlen(text), (uid_t)-1, 0600,
                           &err)
              : np_err_set(&err, -ENOMEM, "out of memory");
    save_outcome(d, rc, &err, text ? strlen(text) : 0, true);
    free(text);
}

void registry_flush(struct np_daemon *d)
{
    if (d->registry.dirty)
        registry_save(d);
}

/* Is @p pid still the job's task? After a restart the pid may belong to another process, maybe
 * another user's: it must run as the job's user and, where the registry kept it, have started
 * when the task did. */
static bool still_the_task(struct np_daemon *d, const struct np_daemon_job *j, pid_t pid,
                           const json_t *saved_start)
{
    struct np_proc_stat st;
    struct np_proc_status status;

    if (np_proc_stat_read(d->cfg.proc_root, pid, &st, NULL) < 0 ||
        np_proc_status_read(d->cfg.proc_root, pid, &status, NULL) < 0)
        return false; /* gone */
    if (status.uid != j->meta.uid ||
        (json_is_integer(saved_start) &&
         (uint64_t)json_integer_value(saved_start) != st.starttime_ticks)) {
        NPD_LOG(d, WARNING,
                "job %u.%s: pid %d is no longer its task (uid %u, started at tick %llu); not "
                "adopted",
                j->meta.job_id, np_step_name(j->meta.step_id), (int)pid, (unsigned)status.uid,
                (unsigned long long)st.starttime_ticks);
        return false;
    }
    return true;
}

/* One saved step back in the registry. @return 1 restored, 0 ended meanwhile, -1 skipped */
static int restore_entry(struct np_daemon *d, const char *path, size_t index, json_t *entry)
{
    json_int_t job_id, step_id, uid;
    double start = 0;
    const char *cpus = "", *policy = "", *sensitivity = "low", *class_name = NULL,
               *class_source = NULL;
    int unlabelled = 0;
    json_t *pids = NULL, *starts = NULL, *tasks = NULL, *pid;
    struct np_err err = {0};
    struct np_daemon_job *j;
    json_error_t jerr;
    size_t k;

    if (json_unpack_ex(entry, &jerr, 0,
                       "{s:I, s:I, s:I, s?F, s?s, s?s, s?s, s?s, s?s, s?b, s?o, s?o, s?o}", "job",
                       &job_id, "step", &step_id, "uid", &uid, "start", &start, "cpus", &cpus,
                       "policy", &policy, "sensitivity", &sensitivity, "class", &class_name,
                       "class_source", &class_source, "unlabelled", &unlabelled, "pids", &pids,
                       "starts", &starts, "tasks", &tasks) < 0) {
        NPD_LOG(d, ERROR, "registry %s: step %zu skipped: %s", path, index, jerr.text);
        return -1;
    }
    j = job_new(d, (uint32_t)job_id, (uint32_t)step_id, (uid_t)uid, cpus, policy, sensitivity,
                &err);
    if (!j)
        return -1;
    j->meta.start_epoch = start;
    j->restored = true;
    /* a class an administrator set survives the restart */
    if (np_class_from_name(class_name, &j->job_class, NULL) == 0)
        job_set_class(j, j->job_class);
    /* and what decided it (an automatic class is not decided again) */
    j->unlabelled = unlabelled;
    if (class_source)
        job_set_class_source(j, class_source);
    if (json_is_array(tasks)) {
        json_decref(j->tasks);
        j->tasks = json_incref(tasks);
    }
    json_array_foreach(pids, k, pid)
    {
        const pid_t p = (pid_t)json_integer_value(pid);
        if (still_the_task(d, j, p, json_array_get(starts, k)))
            np_sampler_add_task(&j->sampler, p, NULL);
    }
    if (j->sampler.ntasks)
        return 1;
    /* Ended while the helper was down: say so in its report rather than lose it. */
    j->ended = true;
    job_finish(d, j, false);
    return 0;
}

static void step_key(char *key, size_t size, json_int_t job_id, json_int_t step_id)
{
    snprintf(key, size, "%lld.%lld", (long long)job_id, (long long)step_id);
}

/* The snapshot's entries with the journal's lines of its generation or later (saves that failed
 * after it) applied in order; lines of older generations are in it already. A step's newer entry
 * replaces its older one, an end removes it. A line that does not parse (cut by a
 * crash mid-write, or not ours) is skipped. @return a new array. */
static json_t *merge_journal(struct np_daemon *d, json_t *jobs)
{
    json_t *by_step = json_object(), *merged = json_array(), *entry, *line;
    char path[1100], key[48], *buf = NULL;
    json_int_t job_id, step_id, gen = 0;
    size_t i, cap = 0;
    FILE *journal;
    const char *k;
    unsigned skipped = 0;
    const uint64_t file_generation = d->registry.generation;

    json_array_foreach(jobs, i, entry)
    {
        if (json_unpack(entry, "{s:I, s:I}", "job", &job_id, "step", &step_id) < 0)
            snprintf(key, sizeof(key), "#%zu", i); /* restore_entry says what is wrong */
        else
            step_key(key, sizeof(key), job_id, step_id);
        json_object_set(by_step, key, entry);
    }
    snprintf(path, sizeof(path), "%s/%s", d->cfg.state_dir, JOURNAL_NAME);
    journal = fopen(path, "re");
    while (journal && getline(&buf, &cap, journal) > 0) {
        json_t *got = NULL;
        gen = 0;
        if (buf[strspn(buf, " \n")] == '\0')
            continue; /* the newline each line starts with */
        line = json_loads(buf, 0, NULL);
        if (line && json_unpack(line, "{s:I, s:o}", "gen", &gen, "entry", &got) == 0 &&
            json_unpack(got, "{s:I, s:I}", "job", &job_id, "step", &step_id) == 0) {
            step_key(key, sizeof(key), job_id, step_id);
            if ((uint64_t)gen >= file_generation)
                json_object_set(by_step, key, got);
        } else if (line && json_unpack(line, "{s:I, s:[I, I]}", "gen", &gen, "end", &job_id,
                                       &step_id) == 0) {
            step_key(key, sizeof(key), job_id, step_id);
            if ((uint64_t)gen >= file_generation)
                json_object_del(by_step, key);
        } else {
            skipped++;
        }
        if (line && (uint64_t)gen > d->registry.generation)
            d->registry.generation = (uint64_t)gen; /* saves that failed after the snapshot's */
        json_decref(line);
    }
    free(buf);
    if (journal) {
        fclose(journal);
        d->registry.dirty = true; /* folded into registry.json by the restore's flush */
    }
    if (skipped)
        NPD_LOG(d, WARNING, "registry journal %s: %u line(s) skipped (cut short or malformed)",
                path, skipped);
    json_object_foreach(by_step, k, entry)
    {
        json_array_append(merged, entry);
    }
    json_decref(by_step);
    return merged;
}

void registry_restore(struct np_daemon *d)
{
    char path[1100];
    json_error_t jerr;
    json_t *state, *jobs = NULL, *entry, *merged;
    const char *schema = NULL, *why = NULL;
    size_t i;
    unsigned restored = 0, lost = 0;

    snprintf(path, sizeof(path), "%s/registry.json", d->cfg.state_dir);
    state = json_load_file(path, 0, &jerr);
    if (!state && access(path, F_OK) == 0) {
        NPD_LOG(d, ERROR, "registry %s is unreadable (%s); starting empty", path, jerr.text);
        return;
    }
    /* None yet (killed before its first tick): the journal alone, generation 0. */
    if (!state)
        state = json_pack("{s:s, s:[]}", "schema", NPD_STATE_SCHEMA, "jobs");
    /* Read the whole file's shape first: a wrong one starts empty rather than half-restored. */
    if (json_unpack_ex(state, &jerr, 0, "{s:s, s:o}", "schema", &schema, "jobs", &jobs) < 0)
        why = jerr.text;
    else if (strcmp(schema, NPD_STATE_SCHEMA) != 0)
        why = "its schema is not " NPD_STATE_SCHEMA;
    else if (!json_is_array(jobs))
        why = "its \"jobs\" is not an array";
    if (why) {
        NPD_LOG(d, ERROR, "registry %s is unreadable (%s); starting empty", path, why);
        json_decref(state);
        return;
    }
    d->registry.generation = (uint64_t)json_integer_value(json_object_get(state, "generation"));
    merged = merge_journal(d, jobs);
    d->registry.restoring = true;
    json_array_foreach(merged, i, entry)
    {
        const int rc = restore_entry(d, path, i, entry);
        restored += rc == 1;
        lost += rc == 0;
    }
    d->registry.restoring = false;
    json_decref(merged);
    json_decref(state);
    registry_flush(d); /* without the steps that ended meanwhile, before any request */
    if (restored || lost)
        NPD_LOG(d, INFO,
                "registry: %u step(s) still running restored (their counters restart now), %u "
                "ended while the helper was down (incomplete reports written)",
                restored, lost);
}
