/* The steps of registry.json and its journal back in the registry after a restart (daemon.h). */
#include "daemon.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numaplace/procfs.h"

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
         (uint64_t)json_integer_value(saved_start) != st.starttime_ticks))
        return NPD_LOG_RC(
            d, WARNING, false,
            "job %u.%s: pid %d is no longer its task (uid %u, started at tick %llu); not "
            "adopted",
            j->meta.job_id, np_step_name(j->meta.step_id), (int)pid, (unsigned)status.uid,
            (unsigned long long)st.starttime_ticks);
    return true;
}

/* One saved step back in the registry. @return 1 restored, 0 ended meanwhile, 2 ended before the
 * stop with its report kept, -1 skipped */
static int restore_entry(struct np_daemon *d, const char *path, size_t index, json_t *entry)
{
    json_int_t job_id, step_id, uid;
    double start = 0;
    const char *cpus = "", *policy = "", *sensitivity = "low", *class_name = NULL,
               *class_source = NULL, *job_name;
    int unlabelled = 0;
    json_t *pids = NULL, *starts = NULL, *tasks = NULL, *report = NULL, *pid;
    struct np_err err = {0};
    struct np_daemon_job *j;
    json_error_t jerr;
    size_t k;

    if (json_unpack_ex(entry, &jerr, 0,
                       "{s:I, s:I, s:I, s?F, s?s, s?s, s?s, s?s, s?s, s?b, s?o, s?o, s?o, s?o}",
                       "job", &job_id, "step", &step_id, "uid", &uid, "start", &start, "cpus",
                       &cpus, "policy", &policy, "sensitivity", &sensitivity, "class", &class_name,
                       "class_source", &class_source, "unlabelled", &unlabelled, "pids", &pids,
                       "starts", &starts, "tasks", &tasks, "report", &report) < 0)
        return NPD_LOG_RC(d, ERROR, -1, "registry %s: step %zu skipped: %s", path, index,
                          jerr.text);
    j = job_new(d, (uint32_t)job_id, (uint32_t)step_id, (uid_t)uid, cpus, policy, sensitivity,
                &err);
    if (!j)
        return -1;
    j->meta.start_epoch = start;
    j->restored = true;
    /* What advise said the job is named, as advise accepts it; a numaplaced before it kept none. */
    job_name = json_string_value(json_object_get(entry, "job_name"));
    if (job_name && strlen(job_name) < sizeof(j->job_name) && np_proto_printable(job_name))
        snprintf(j->job_name, sizeof(j->job_name), "%s", job_name);
    /* a class an administrator set survives the restart */
    if (np_class_from_name(class_name, &j->job_class, NULL) == 0)
        job_set_class(j, j->job_class);
    /* and what decided it (an automatic class is not decided again) */
    j->unlabelled = unlabelled;
    if (class_source)
        job_set_class_source(j, class_source);
    /* a registry from before class_prediction has none: only the words, never read back */
    (void)np_class_prediction_from_json(json_object_get(entry, "class_prediction"),
                                        &j->meta.prediction);
    if (json_is_array(tasks)) {
        json_decref(j->tasks);
        j->tasks = json_incref(tasks);
    }
    if (json_is_object(report)) {
        /* It ended before the stop, its report not durable yet: that report is written now. */
        j->final_report = json_incref(report);
        j->ended = true;
        NPD_LOG(d, INFO,
                "job %u.%s: ended before the helper stopped, its report not yet written: the "
                "report kept in the registry goes to the spool now",
                j->meta.job_id, np_step_name(j->meta.step_id));
        job_finish(d, j, true);
        return 2;
    }
    json_array_foreach(pids, k, pid)
    {
        const pid_t p = (pid_t)json_integer_value(pid);
        if (still_the_task(d, j, p, json_array_get(starts, k)))
            np_sampler_add_task(&j->sampler, p, NULL);
    }
    if (j->sampler.ntasks)
        return 1;
    /* Ended while numaplaced was down: say so in its report rather than lose it. */
    j->ended = true;
    job_finish(d, j, false);
    return 0;
}

static void step_key(char *key, size_t size, json_int_t job_id, json_int_t step_id)
{
    snprintf(key, size, "%lld.%lld", (long long)job_id, (long long)step_id);
}

/* A registered task's pid and start time into its step's "pids" and "starts" (the start replaces
 * an older one of the same pid; a step saved without start times gets none). */
static void merge_pid(json_t *step, const json_t *pid, json_int_t start)
{
    json_t *pids = json_object_get(step, "pids"), *starts = json_object_get(step, "starts"), *p;
    const bool timed = json_is_array(starts) && json_array_size(starts) == json_array_size(pids);
    size_t i;

    if (!json_is_array(pids))
        return;
    json_array_foreach(pids, i, p)
    {
        if (json_integer_value(p) == json_integer_value(pid)) {
            if (timed)
                json_array_set_new(starts, i, json_integer(start));
            return;
        }
    }
    json_array_append_new(pids, json_integer(json_integer_value(pid)));
    if (timed)
        json_array_append_new(starts, json_integer(start));
}

/* A task's journalled entry into its step's (when the step is known): it replaces the entry of
 * the same pid. @p start >= 0: the task was registered then, its pid is the step's too. */
static void merge_task(json_t *step, json_t *task, json_int_t start)
{
    json_t *tasks = json_object_get(step, "tasks"), *t;
    const json_t *pid = json_object_get(task, "pid");
    size_t i;

    if (!json_is_integer(pid) || !json_is_object(step))
        return;
    if (start >= 0)
        merge_pid(step, pid, start);
    if (!json_is_array(tasks))
        return;
    json_array_foreach(tasks, i, t)
    {
        if (json_integer_value(json_object_get(t, "pid")) == json_integer_value(pid)) {
            json_array_set(tasks, i, task);
            return;
        }
    }
    json_array_append(tasks, task);
}

/* The snapshot's entries with the journal's lines of its generation or later applied in order
 * (older ones are in it): a newer entry replaces a step's, an end removes it, a line that does
 * not parse (cut by a crash, or not ours) is skipped. @return a new array */
static json_t *merge_journal(struct np_daemon *d, json_t *jobs)
{
    json_t *by_step = json_object(), *merged = json_array(), *entry, *line;
    char path[1100], key[48], *buf = NULL;
    json_int_t job_id, step_id, start, gen = 0;
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
    snprintf(path, sizeof(path), "%s/%s", d->cfg.state_dir, REGISTRY_JOURNAL_NAME);
    journal = fopen(path, "re");
    while (journal && getline(&buf, &cap, journal) > 0) {
        json_t *got = NULL;
        gen = 0;
        start = -1; /* absent: applied's line, the task's pid already the step's */
        if (buf[strspn(buf, " \n")] == '\0')
            continue; /* the newline each line starts with */
        line = json_loads(buf, 0, NULL);
        if (line && json_unpack(line, "{s:I, s:o}", "gen", &gen, "entry", &got) == 0 &&
            json_unpack(got, "{s:I, s:I}", "job", &job_id, "step", &step_id) == 0) {
            step_key(key, sizeof(key), job_id, step_id);
            if ((uint64_t)gen >= file_generation)
                json_object_set(by_step, key, got);
        } else if (line &&
                   json_unpack(line, "{s:I, s:{s:I, s:I, s:o, s?I}}", "gen", &gen, "task", "job",
                               &job_id, "step", &step_id, "entry", &got, "start", &start) == 0) {
            step_key(key, sizeof(key), job_id, step_id);
            if ((uint64_t)gen >= file_generation)
                merge_task(json_object_get(by_step, key), got, start);
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
    unsigned restored = 0, lost = 0, kept = 0;

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
        kept += rc == 2;
    }
    d->registry.restoring = false;
    json_decref(merged);
    json_decref(state);
    registry_flush(d); /* without the steps that ended meanwhile, before any request */
    if (restored || lost || kept)
        NPD_LOG(d, INFO,
                "registry: %u step(s) still running restored (their counters restart now), %u "
                "ended while the helper was down (incomplete reports written), %u ended before it "
                "stopped (their reports, kept in the registry, go to the spool)",
                restored, lost, kept);
}
