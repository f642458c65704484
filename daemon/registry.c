/* The steps (daemon.h): each one, their sorted index, and registry.json with its journal. */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safe_file.h"
#include "writer.h"
#include "numaplace/json_reals.h"
#include "numaplace/output_file.h"

uint64_t job_cpu_nodes_mask(const struct np_daemon *d, hwloc_const_bitmap_t cpus)
{
    uint64_t mask = 0;
    int cpu;

    if (!d->cpu_node || !cpus)
        return 0;
    hwloc_bitmap_foreach_begin(cpu, cpus)
    {
        if ((unsigned)cpu < d->ncpus && d->cpu_node[cpu] >= 0 && d->cpu_node[cpu] < 64)
            mask |= 1ull << d->cpu_node[cpu];
    }
    hwloc_bitmap_foreach_end();
    return mask;
}

void job_free(struct np_daemon_job *j)
{
    if (!j)
        return;
    np_sampler_fini(&j->sampler);
    np_step_figures_fini(&j->stats);
    json_decref(j->final_report);
    free(j->final_report_text);
    json_decref(j->tasks);
    free(j);
}

json_t *job_task_entry(const struct np_daemon_job *j, pid_t pid)
{
    json_t *t;
    size_t i;

    json_array_foreach(j->tasks, i, t)
    {
        if (json_integer_value(json_object_get(t, "pid")) == pid)
            return t;
    }
    return NULL;
}

void job_set_class(struct np_daemon_job *j, enum np_class cls)
{
    j->job_class = cls;
    snprintf(j->meta.job_class, sizeof(j->meta.job_class), "%s", np_class_name(cls));
}

void job_set_class_source(struct np_daemon_job *j, const char *source)
{
    snprintf(j->meta.class_source, sizeof(j->meta.class_source), "%s", source);
    j->meta.prediction.known = false; /* auto_class_consider sets it after its source */
}

bool job_follow_effective_cpus(const struct np_daemon *d, struct np_daemon_job *j)
{
    hwloc_const_bitmap_t effective = np_sampler_effective_cpus(&j->sampler);
    const uint64_t nodes = job_cpu_nodes_mask(d, effective);
    char list[sizeof(j->meta.effective_cpus)];

    if (hwloc_bitmap_iszero(effective) ||
        hwloc_bitmap_list_snprintf(list, sizeof(list), effective) >= (int)sizeof(list))
        return false; /* not known yet, or too long to say whole: keep what was said */
    if (!nodes || (nodes == j->meta.local_nodes && strcmp(list, j->meta.effective_cpus) == 0))
        return false;
    snprintf(j->meta.effective_cpus, sizeof(j->meta.effective_cpus), "%s", list);
    /* the planner's move group and the report's local share follow where the tasks may run */
    j->meta.local_nodes = j->stats.local_nodes = nodes;
    job_note_helper_cpus(d, j);
    return true;
}

void job_note_helper_cpus(const struct np_daemon *d, struct np_daemon_job *j)
{
    hwloc_const_bitmap_t cpus = np_sampler_effective_cpus(&j->sampler);
    hwloc_bitmap_t shared, now;

    if (!d->helper_cpus || hwloc_bitmap_iszero(d->helper_cpus) || hwloc_bitmap_iszero(cpus) ||
        !(shared = hwloc_bitmap_alloc()))
        return;
    /* Once shared, the step says so: numaplaced may have moved since (a reload). Only of the
     * CPUs the tasks may run on: the registered ones were wider when the binding came later. */
    if (hwloc_bitmap_list_sscanf(shared, j->meta.shared_cpus) < 0)
        hwloc_bitmap_zero(shared);
    hwloc_bitmap_and(shared, shared, cpus);
    if ((now = hwloc_bitmap_alloc())) {
        hwloc_bitmap_and(now, d->helper_cpus, cpus);
        hwloc_bitmap_or(shared, shared, now);
        hwloc_bitmap_free(now);
    }
    hwloc_bitmap_list_snprintf(j->meta.helper_cpus, sizeof(j->meta.helper_cpus), d->helper_cpus);
    hwloc_bitmap_list_snprintf(j->meta.shared_cpus, sizeof(j->meta.shared_cpus), shared);
    hwloc_bitmap_free(shared);
}

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

/* The step's entry in registry.json and the journal, without its report. */
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
    json_t *entry = json_pack(
        "{s:I, s:I, s:I, s:f, s:s, s:s, s:s, s:s, s:b, s:s, s:o, s:o, s:O}", "job",
        (json_int_t)j->meta.job_id, "step", (json_int_t)j->meta.step_id, "uid",
        (json_int_t)j->meta.uid, "start", j->meta.start_epoch, "policy", j->meta.policy_requested,
        "sensitivity", j->meta.sensitivity, "class", np_class_name(j->job_class), "class_source",
        j->meta.class_source, "unlabelled", j->unlabelled, "cpus", j->meta.cpus, "pids", pids,
        "starts", starts, "tasks", j->tasks);

    if (entry && j->meta.prediction.known) /* the fields class_source's words came from */
        json_object_set_new(entry, "class_prediction",
                            np_class_prediction_json(&j->meta.prediction));
    /* auto's history learns from the step at its end, after a restart too (absent: unnamed) */
    if (entry && j->job_name[0])
        json_object_set_new(entry, "job_name", json_string(j->job_name));
    return entry;
}

/* The journal: a step's entry, a task's or an end a line, tagged with the generation it follows */

/* The journal would pass its bound with @p more bytes: fold it into registry.json first. */
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
    body = line ? json_dumps(line, JSON_COMPACT | NP_JSON_REALS) : NULL;
    /* Each line starts with its newline: one cut short (a full disk) is ended by the next's. */
    if (body && asprintf(&text, "\n%s", body) < 0)
        text = NULL;
    free(body);
    dirfd = text ? safe_dir_open(d->cfg.state_dir, &err) : -ENOMEM;

    if (dirfd >= 0) {
        fd = openat(dirfd, REGISTRY_JOURNAL_NAME,
                    O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        close(dirfd);
    }
    d->registry.journal_lines++; /* tried: a save in flight must not drop the journal */
    if (fd >= 0) {
        /* One write of a whole line: a kill -9 leaves it whole or absent. No fsync: a power loss
         * loses the requests since the last tick's snapshot, which also says when writes fail. */
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
    json_t *entry = job_entry(j);

    /* Ended, its report not durable yet (with the writer, or held): a restart writes this one. */
    if (entry && j->final_report)
        json_object_set(entry, "report", j->final_report);
    journal_append(d, json_pack("{s:o}", "entry", entry));
}

void registry_note_task(struct np_daemon *d, const struct np_daemon_job *j, json_t *task)
{
    journal_append(d, json_pack("{s:{s:I, s:I, s:O}}", "task", "job", (json_int_t)j->meta.job_id,
                                "step", (json_int_t)j->meta.step_id, "entry", task));
}

void registry_note_task_added(struct np_daemon *d, const struct np_daemon_job *j, json_t *task)
{
    const pid_t pid = (pid_t)json_integer_value(json_object_get(task, "pid"));
    json_int_t start = -1;

    for (unsigned t = 0; t < j->sampler.ntasks; t++)
        if (j->sampler.tasks[t].pid == pid && !j->sampler.tasks[t].gone)
            start = (json_int_t)j->sampler.tasks[t].starttime_ticks;
    if (start < 0) { /* not sampled (cannot happen after op_register's add): the whole step */
        registry_note(d, j);
        return;
    }
    journal_append(d,
                   json_pack("{s:{s:I, s:I, s:O, s:I}}", "task", "job", (json_int_t)j->meta.job_id,
                             "step", (json_int_t)j->meta.step_id, "entry", task, "start", start));
}

void registry_note_end(struct np_daemon *d, uint32_t job_id, uint32_t step_id)
{
    journal_append(d, json_pack("{s:[I, I]}", "end", (json_int_t)job_id, (json_int_t)step_id));
}

/* The journal without its first @p held bytes (what the snapshot just written holds), or under
 * steady requests it would only grow: a copy renamed over it (a kill -9 leaves the old one whole,
 * its older lines skipped by generation), on the loop and not flushed, as appends are. */
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
    char tmp[NAME_MAX + 1];
    int in = -1, out = -1;
    size_t kept = 0;
    bool ok;

    if (dirfd < 0)
        return;
    in = openat(dirfd, REGISTRY_JOURNAL_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in >= 0)
        out = np_file_temp_at(dirfd, REGISTRY_JOURNAL_NAME, 0600, tmp, sizeof(tmp));
    ok = out >= 0 && copy_from(in, held, out, &kept);
    if (out >= 0 && close(out) == 0 && ok &&
        renameat(dirfd, tmp, dirfd, REGISTRY_JOURNAL_NAME) == 0)
        d->registry.journal_bytes = kept;
    else if (out >= 0)
        unlinkat(dirfd, tmp, 0);
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
            unlinkat(dirfd, REGISTRY_JOURNAL_NAME, 0);
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

/* registry.json's text: every step's entry, a finished step's report spliced in from its compact
 * text, dumped once rather than at every save. @return new, or NULL (out of memory) */
static char *snapshot_text(const struct np_registry *r, uint64_t generation)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    bool ok = out != NULL;

    if (!out)
        return NULL;
    fprintf(out, "{\"schema\":\"%s\",\"generation\":%llu,\"jobs\":[", NPD_STATE_SCHEMA,
            (unsigned long long)generation);
    for (unsigned i = 0; ok && i < r->count; i++) {
        struct np_daemon_job *j = registry_at(r, i);
        json_t *fields = job_entry(j);
        char *entry = fields ? json_dumps(fields, JSON_COMPACT | NP_JSON_REALS) : NULL;

        json_decref(fields);
        if (j->final_report && !j->final_report_text)
            j->final_report_text = json_dumps(j->final_report, JSON_COMPACT | NP_JSON_REALS);
        ok = entry && (!j->final_report || j->final_report_text);
        if (ok) /* the entry without its closing brace, then the report */
            fprintf(out, "%s%.*s%s%s}", i ? "," : "", (int)strlen(entry) - 1, entry,
                    j->final_report ? ",\"report\":" : "",
                    j->final_report ? j->final_report_text : "");
        free(entry);
    }
    fputs("]}", out);
    if (fclose(out) != 0 || !ok) {
        free(text);
        return NULL;
    }
    return text;
}

void registry_save(struct np_daemon *d)
{
    struct np_registry *r = &d->registry;
    struct np_err err = {0};
    struct writer_job *w;
    char *text;

    if (r->save_in_flight) {
        r->dirty = true; /* one at a time: the next tick writes what changed since */
        return;
    }
    /* A new generation for every attempt: a save whose rename landed but whose directory flush
     * failed leaves registry.json at it, and the journal's next lines must follow it. */
    text = snapshot_text(r, ++r->generation);
    r->dirty = false;
    /* Serialised here, flushed on the writer's thread when there is one: the loop answers on. */
    w = text ? writer_job_new(d->cfg.state_dir, "registry.json", text, strlen(text), (uid_t)-1,
                              0600, registry_written, NULL)
             : NULL;
    if (!w) {
        save_outcome(d, np_err_set(&err, -ENOMEM, "out of memory"), &err, 0, true);
        return;
    }
    r->save_in_flight = true;
    r->lines_at_submit = r->journal_lines;
    r->bytes_at_submit = r->journal_bytes;
    writer_run(d->writer, w, d);
}

void registry_flush(struct np_daemon *d)
{
    if (d->registry.dirty)
        registry_save(d);
}
