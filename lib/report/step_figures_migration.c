/* Migrations booked into a job's figures (numaplace/report.h): the daemon hands over the
 * engine's result, the report's migrations block and timeline events come out. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "numaplace/engine.h"
#include "numaplace/report.h"

int np_step_figures_book_migration(struct np_step_figures *js, const struct np_request_result *r,
                                   const struct np_job_outcome *o, double t)
{
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    const struct np_request *req = &r->request;
    json_t *entry;

    if (req->src >= NP_SAMPLE_MAX_NODES || req->dst >= NP_SAMPLE_MAX_NODES)
        return -EINVAL;
    if (!r->dry_run && o->moved.pages_moved) {
        char label[48];
        snprintf(label, sizeof(label), "%u->%u %" PRIu64 " MiB", req->src, req->dst,
                 o->moved.pages_moved * page >> 20);
        np_step_figures_event(js, t, label);
    }
    if (!r->dry_run) {
        js->pages_out[req->src] += o->moved.pages_moved * page;
        js->pages_in[req->dst] += o->moved.pages_moved * page;
        js->migration_moving_s += o->moved.ns_moving / 1e9;
        for (int f = 0; f < NP_MOVE_FAIL_COUNT; f++)
            js->migration_failed[f] += o->moved.pages_failed[f];
    }
    if (!js->migration_requests)
        js->migration_requests = json_array();
    entry =
        json_pack("{s:s, s:i, s:i, s:s, s:s, s:I, s:I, s:b, s:b, s:b}", "trigger",
                  np_trigger_name(req->trigger), "from", (int)req->src, "to", (int)req->dst,
                  "order", r->order ? r->order : "?", "reason", req->reason, "planned_pages",
                  (json_int_t)o->planned, "moved_pages", (json_int_t)o->moved.pages_moved,
                  "dry_run", r->dry_run, "used_proxy", r->used_proxy, "stopped", o->moved.stopped);
    if (!js->migration_requests) {
        json_decref(entry);
        return -ENOMEM;
    }
    /* json_array_append_new takes the entry even when it fails */
    return entry && json_array_append_new(js->migration_requests, entry) == 0 ? 0 : -ENOMEM;
}
