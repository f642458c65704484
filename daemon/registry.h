/*
 * registry.h - the steps numaplaced tracks, keyed by (job_id, step_id), and their copy in
 * <state_dir>/registry.json (schema numaplace.state/1) so they survive a restart of numaplaced.
 */
#ifndef NUMAPLACED_REGISTRY_H
#define NUMAPLACED_REGISTRY_H

#include "daemon.h"

#define NPD_STATE_SCHEMA "numaplace.state/1"

/** Where registry_note lines go, in state_dir beside registry.json. */
#define REGISTRY_JOURNAL_NAME "registry.journal"

/** The journal is never folded into registry.json below this size (registry.h). */
#define REGISTRY_JOURNAL_MIN_BYTES (64u << 10)

/** Empty. Cannot fail (memory comes with the first insert). */
void registry_init(struct np_registry *r);

/** Free every job and the index; accepts an empty registry. */
void registry_fini(struct np_registry *r);

/** The step, or NULL. Borrowed. */
struct np_daemon_job *registry_find(const struct np_registry *r, uint32_t job_id, uint32_t step_id);

/** Add @p job (stolen on success). @return 0, -EEXIST (that step is there), -ENOMEM */
int registry_insert(struct np_registry *r, struct np_daemon_job *job);

/** Take @p job out (not freed: the caller owns it again). @return 0 or -ENOENT */
int registry_remove(struct np_registry *r, const struct np_daemon_job *job);

/** The i-th step in (job_id, step_id) order; i < r->count. Removing it shifts the later ones
 *  down one, so a loop that removes the current step does not advance. Borrowed. */
static inline struct np_daemon_job *registry_at(const struct np_registry *r, unsigned i)
{
    return r->jobs[i];
}

/** Write every step to <state_dir>/registry.json (atomically); failures are logged. At stop, and
 *  through registry_flush. */
void registry_save(struct np_daemon *d);

/**
 * Something a restart needs changed in @p j (registered, a task added, a class, a task's applied
 * policy): one line with its entry is appended to <state_dir>/registry.journal at once (a kill -9
 * right after the reply loses nothing), and registry.json is rewritten at the next interval tick,
 * not once per request. The journal is not flushed to disk: a power loss loses at most the
 * requests since the last tick. Within an interval the journal stays bounded (requests from
 * root in a burst; a task's `applied` is accepted once, registry_note_task): past
 * REGISTRY_JOURNAL_MIN_BYTES and twice
 * registry.json's size, registry.json is written at once and the journal starts again, so the
 * writes stay proportional to what the requests change.
 */
void registry_note(struct np_daemon *d, const struct np_daemon_job *j);

/** One task's entry of @p j changed (@p task, borrowed, is in j->tasks): a journal line with that
 *  entry alone, as registry_note, so a step of many tasks writes each task's once, not the whole
 *  step per task. */
void registry_note_task(struct np_daemon *d, const struct np_daemon_job *j, json_t *task);

/** A task of @p j was registered (@p task, borrowed, its entry in j->tasks, its pid sampled): a
 *  journal line with that entry and the pid's start time alone, as registry_note_task, so a step
 *  registered task by task journals each task once: linear in its tasks, not quadratic. */
void registry_note_task_added(struct np_daemon *d, const struct np_daemon_job *j, json_t *task);

/** The step ended (its report is written): a journal line, as registry_note. */
void registry_note_end(struct np_daemon *d, uint32_t job_id, uint32_t step_id);

/** Once per interval tick: registry_save when marked dirty, else nothing. */
void registry_flush(struct np_daemon *d);

/* ---- the steps back after a restart (registry_restore.c: above the registry and the step's life,
 * it creates the steps that still run and finishes those that ended meanwhile) ---- */

/**
 * Read <state_dir>/registry.json back, with the journal's lines since it was written: steps whose
 * processes still run are tracked again; those that ended while numaplaced was down get an
 * incomplete report. A file that cannot be read or is not numaplace.state/1 is logged and the
 * registry starts empty; a malformed entry is logged and skipped.
 */
void registry_restore(struct np_daemon *d);

#endif /* NUMAPLACED_REGISTRY_H */
