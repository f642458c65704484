/* migrate: an administrator asks to move pages between two nodes; the worker answers later. */
#include "auth.h"
#include "ops.h"
#include "migration.h"
#include "numaplace/migration.h"

#include <stdio.h>
#include <string.h>

/* An administrator's destination is kept, but the reply's reason and the log say when its
 * memory controller is saturated (a trigger never picks one). */
static void warn_if_saturated(struct np_daemon *d, struct np_request *r)
{
    const double threshold = d->cfg.bandwidth_threshold_mb_s * 1e6;
    struct np_node_view *view = threshold > 0 ? migration_build_view(d) : NULL;
    if (!view)
        return;
    if (np_node_saturated(view, r->dst, threshold)) {
        const size_t len = strlen(r->reason);
        snprintf(r->reason + len, sizeof(r->reason) - len,
                 "; warning: destination node %u is saturated (%.0f MB/s, %s; threshold %.0f)",
                 r->dst, view->node_bandwidth[r->dst] / 1e6,
                 np_bandwidth_source_name(view->node_bandwidth_source[r->dst]), threshold / 1e6);
        NPD_LOG(d, WARNING, "migrate %u -> %u: %s", r->src, r->dst, r->reason);
    }
    migrator_view_free(view);
}

json_t *op_migrate(struct np_daemon *d, const struct np_peer *peer, uint64_t *pending,
                   const struct np_proto_request *req)
{
    const struct np_order_ops *order =
        np_order_lookup(req->migrate.order[0] ? req->migrate.order : d->cfg.migration_order);
    struct np_request r = {.src = req->migrate.from,
                           .dst = req->migrate.to,
                           .pages = req->migrate.pages,
                           .trigger = NP_TRIGGER_ADMIN,
                           .target_job = -1};

    json_t *refused = auth_refuse_unless_admin(peer, d->cfg.admin_group, "request migrations");

    if (refused)
        return refused;
    if (!d->cfg.migration || !d->migration.migrator)
        return np_proto_reply_error("migration is off on this node (migration=off)");
    if (!order)
        return np_proto_reply_error("order \"%s\": accepted: %s", req->migrate.order,
                                    np_order_names());
    if (!migration_node_exists(d, r.src) || !migration_node_exists(d, r.dst) || r.src == r.dst) {
        char nodes[256];
        migration_node_list(d, nodes, sizeof(nodes));
        return np_proto_reply_error("nodes %u -> %u: they must be two different NUMA nodes of "
                                    "this machine (%s)",
                                    r.src, r.dst, nodes);
    }
    snprintf(r.reason, sizeof(r.reason), "administrator (uid %u)%s", (unsigned)peer->uid,
             req->migrate.dry_run ? ", dry run" : "");
    warn_if_saturated(d, &r);
    *pending = ++d->migration.next_tag;
    if (migration_enqueue(d, &r, order, req->migrate.dry_run, *pending) < 0) {
        *pending = 0;
        return np_proto_reply_error("%u migration requests are queued already; try again",
                                    d->migration.nqueued);
    }
    migration_submit_next(d);
    return NULL;
}
