/* migrator.h - the migration worker: a thread running one request at a time, so a rate-limited
 * move never holds up the loop, which submits a request with its own view and collects it. */
#ifndef NUMAPLACED_MIGRATOR_H
#define NUMAPLACED_MIGRATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "numaplace/engine.h"

struct migrator;

/** What the worker hands back. Free with migrator_done_fini. */
struct migrator_done {
    uint64_t tag;
    enum np_trigger_kind trigger; /**< who asked (also when rc < 0) */
    int rc;                       /**< 0, or the engine's negative errno (then err says why) */
    struct np_err err;
    struct np_node_view *view; /**< the view the request ran on (owned) */
    struct np_request_result result;
};

/** Start the worker. @return 0 or -errno. @p log must be safe to call from another thread. */
int migrator_start(struct migrator **out, double bytes_per_s, const struct np_log *log);

/** Readable (POLLIN) when a result can be collected. */
int migrator_fd(const struct migrator *m);

/** A request is being carried out. */
bool migrator_busy(const struct migrator *m);

/** Change the rate limit (bytes/s, 0 = none); takes effect at the next request. */
void migrator_set_rate(struct migrator *m, double bytes_per_s);

/** Hand one request to the worker, @p view stolen. @return 0, -EBUSY (one is running) */
int migrator_submit(struct migrator *m, struct np_node_view *view,
                    const struct np_engine_config *config, const struct np_request *request,
                    uint64_t tag);

/** Take the finished result, if any. @return 1 with @p done filled, 0 when none is ready. */
int migrator_collect(struct migrator *m, struct migrator_done *done);

void migrator_done_fini(struct migrator_done *done);

/** Stopping: end the running request after its current batch, its result marked stopped; any
 *  later one ends at once. Accepts NULL. */
void migrator_cancel(struct migrator *m);

/** Cancel the running request, wait for the worker and free everything (an uncollected result
 *  is dropped: collect it first). Accepts NULL. */
void migrator_stop(struct migrator *m);

/** A view with room for @p njobs jobs; each job's pids array is owned by the view. */
struct np_node_view *migrator_view_new(size_t njobs);
void migrator_view_free(struct np_node_view *view);

#endif /* NUMAPLACED_MIGRATOR_H */
