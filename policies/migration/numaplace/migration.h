/*
 * numaplace/migration.h - what the migration policies see and decide.
 *
 * Triggers turn a `struct np_node_view` (filled by the daemon or the simulator) into requests
 * ("move at least N pages from S to D"); the planner takes a request's candidates in an order's
 * sequence. Carrying a plan out is the engine's (numaplace/engine.h): nothing here moves memory
 * or logs. Orders and triggers are static ops tables (orders.c, triggers.c).
 */
#ifndef NUMAPLACE_MIGRATION_H
#define NUMAPLACE_MIGRATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "numaplace/common.h"
#include "numaplace/names.h"

#define NP_MAX_NODES 64

/** One job step on this node, as the policies see it. Arrays are borrowed from the caller. */
struct np_job_view {
    uint64_t id; /**< job id << 16 | step id (stable tie-breaker) */
    uint32_t job_id, step_id;
    enum np_class job_class;
    uint64_t cpu_nodes; /**< bit i: the job has CPUs on node i */
    const pid_t *pids;  /**< the job's processes (thread group leaders) */
    /** Each pid's start time (clock ticks after boot), or NULL: with @c uid, checked before each
     *  batch so a reused pid is never touched. */
    const uint64_t *starttimes;
    uid_t uid; /**< the job's user */
    size_t npids;
    uint64_t pages_on_node[NP_MAX_NODES]; /**< base pages per node (numa_maps) */
    double bandwidth;                     /**< bytes/s: measured, or the proxy */
    bool bandwidth_is_proxy;              /**< no memory counter: see np_bandwidth_proxy */
    bool homecoming_paused; /**< its last homecoming moved nothing: left alone for a while */
    bool wants_fast_tier; /**< placed by fast-tier(-strict): its pages belong on the fastest tier */
    /** Predicted slowdown with all its memory on a near node (numaplace/sensitivity.h); read only
     *  when @c has_prediction. */
    double predicted_remote;
    bool has_prediction;
};

/** Where a memory node's traffic figure comes from, weakest first (a figure is as good as its
 *  weakest job's). Names from np_bandwidth_source_name. */
enum np_bandwidth_source {
    NP_BW_SOURCE_UNAVAILABLE = 0, /**< "unavailable": no job to spread, nothing known */
    NP_BW_SOURCE_PROXY,  /**< "proxy": some job's figure is np_bandwidth_proxy (ranks only) */
    NP_BW_SOURCE_MISSES, /**< "misses": jobs' LLC misses x 64 B, spread by their pages */
    NP_BW_SOURCE_UNCORE, /**< "uncore": the memory controller's own counters */
    NP_BW_SOURCE_COUNT
};
/** Borrowed, static. */
NP_API const char *np_bandwidth_source_name(enum np_bandwidth_source s);
/** True for a figure in real bytes/s (misses, uncore): only those are compared to a threshold. */
NP_API bool np_bandwidth_source_measured(enum np_bandwidth_source s);

/** The node: its NUMA nodes' memory and distances, and the jobs on it. */
struct np_node_view {
    unsigned nnodes;
    uint64_t free_bytes[NP_MAX_NODES];
    uint64_t total_bytes[NP_MAX_NODES];
    uint8_t distance[NP_MAX_NODES][NP_MAX_NODES]; /**< SLIT; 0 = unknown */
    /** Bytes/s each node's memory serves (not what its CPUs issue), from np_node_traffic. */
    double node_bandwidth[NP_MAX_NODES];
    enum np_bandwidth_source node_bandwidth_source[NP_MAX_NODES];
    bool node_bandwidth_available; /**< some node's source is measured */
    /** Each node's memory tier, 0 the fastest (all 0 on a machine of one tier). */
    unsigned tier[NP_MAX_NODES];
    /** Unloaded access time from CPU node c to memory node n over c's own (1 = local), from the
     *  machine profile or HMAT; 0 = unknown, where SLIT counts. */
    float latency_ratio[NP_MAX_NODES][NP_MAX_NODES];
    double capacity[NP_MAX_NODES]; /**< bytes/s node n's memory can serve; 0 = unknown */
    /** Why demotion and promotion stand aside (the kernel tiers memory itself), or "". */
    char kernel_tiering[160];
    struct np_job_view *jobs;
    size_t njobs;
};

/** Memory bandwidth where no counter exists: cores busy x resident bytes, as "bytes/s". It only
 *  ranks jobs; whatever uses it says "proxy". */
NP_API double np_bandwidth_proxy(double cpu_cores_busy, uint64_t resident_bytes);

/** Fill node_bandwidth (per node: sum over jobs of bandwidth x its share of pages there),
 *  node_bandwidth_source (the weakest of those jobs'; a node without any gets the view's best)
 *  and node_bandwidth_available. A job without pages read is skipped. */
NP_API void np_node_traffic(struct np_node_view *view);

/** True when @p node's traffic is measured and above @p threshold bytes/s (0: never). */
NP_API bool np_node_saturated(const struct np_node_view *view, unsigned node, double threshold);

/** A destination for pages leaving @p from: a node with memory, not in @p avoid_mask, not
 *  saturated, with more than @p min_free_bytes free; nearest by SLIT first, then lowest traffic,
 *  then most free. -1 when none. */
NP_API int np_pick_destination(const struct np_node_view *view, unsigned from, uint64_t avoid_mask,
                               uint64_t min_free_bytes, double threshold);

/** The home node of a job: its CPUs' node with the most free memory (or -1 when none). */
NP_API int np_job_home_node(const struct np_node_view *view, const struct np_job_view *job);

/* ---- requests and the triggers that make them ---- */

enum np_trigger_kind {
    NP_TRIGGER_ADMIN = 0,  /**< `numaplace migrate`, or a timed script of requests */
    NP_TRIGGER_PRESSURE,   /**< a high job's local node fell below the free-memory floor */
    NP_TRIGGER_BANDWIDTH,  /**< a node's bandwidth stayed above the threshold */
    NP_TRIGGER_HOMECOMING, /**< a high job's pages off its CPUs' nodes are brought home */
    NP_TRIGGER_DEMOTION,   /**< low jobs' pages go a tier down from a fast node a high job needs */
    NP_TRIGGER_PROMOTION,  /**< a high job's pages on a slower tier go up where room came back */
    NP_TRIGGER_COUNT
};
NP_API const char *np_trigger_name(enum np_trigger_kind t);

/** Homecoming leaves smaller remote shares alone (page cache MPOL_MF_MOVE cannot move). */
#define NP_HOMECOMING_MIN_PAGES 256

/** "Move at least N pages from node S to node D", plus who asked and why. */
struct np_request {
    unsigned src, dst;
    uint64_t pages;
    enum np_trigger_kind trigger;
    long target_job; /**< -1: low jobs chosen by the order; else this job only */
    char reason[160];
};

/** The tier of @p node in @p view (0 when out of range). */
NP_API unsigned np_view_tier(const struct np_node_view *view, unsigned node);
/** For `numaplace migrate --tier`: the nearest node, most room first, of the tier one down
 *  (@p down) or up from @p from's with more than @p min_free_bytes free; -1 when none. */
NP_API int np_tier_neighbour(const struct np_node_view *view, unsigned from, bool down,
                             uint64_t min_free_bytes);

/** What the triggers are allowed and told (from numaplaced's configuration). */
struct np_trigger_config {
    bool enabled[NP_TRIGGER_COUNT]; /**< by enum np_trigger_kind */
    uint64_t free_floor_bytes;      /**< pressure: floor on a high job's home node */
    double bandwidth_threshold;     /**< bandwidth: bytes/s per node considered saturated */
    unsigned bandwidth_intervals;   /**< bandwidth: intervals above threshold before acting */
};

#define NP_TRIGGER_STATE_SIZE 512

struct np_trigger_ops {
    const char *name;
    enum np_trigger_kind kind;
    /** Propose up to @p max requests into @p out; @p state persists between calls
     *  (NP_TRIGGER_STATE_SIZE bytes, zeroed by the caller). @return how many, or -errno; 0 with
     *  @p inactive_why when it cannot work here. */
    int (*propose)(const struct np_node_view *view, const struct np_trigger_config *config,
                   void *state, struct np_request *out, size_t max, char *inactive_why,
                   size_t why_len);
};

/** The @p i-th trigger that proposes requests (not "admin"), NULL past the end. Borrowed. */
NP_API const struct np_trigger_ops *np_trigger_at(size_t i);
NP_API const struct np_trigger_ops *np_trigger_lookup(const char *name);

/* ---- orders: which candidates go first ---- */

/** Where a job's CPUs are relative to the move, which decides whether it gains or loses. */
enum np_move_group {
    NP_GROUP_GAIN = 0,    /**< the model's L: CPUs on D, none on S (its memory becomes local) */
    NP_GROUP_NEUTRAL = 1, /**< O: CPUs on neither or both (remote stays remote, or a wash) */
    NP_GROUP_LOSE = 2,    /**< R: CPUs on S, none on D (local memory becomes remote) */
};

/** Classify a job from the nodes its CPUs are on (bit i set = CPUs on node i; nodes < 64). */
NP_API enum np_move_group np_move_group_of(uint64_t cpu_nodes_mask, unsigned src, unsigned dst);
/** "gains", "neutral", "loses". Borrowed, static. */
NP_API const char *np_move_group_name(enum np_move_group g);

/** One candidate job. The order reads bandwidth, group and id; the planner reads pages. */
struct np_candidate {
    uint64_t id;              /**< stable id (job id << 16 | step), the tie-breaker */
    size_t job_index;         /**< into the view's jobs */
    enum np_move_group group; /**< from np_move_group_of */
    double bandwidth;         /**< bytes/s, measured or the documented proxy */
    bool bandwidth_is_proxy;  /**< true when no memory counter was available */
    uint64_t pages_on_src;    /**< base pages the job has on S */
    double effect_per_page;   /**< np_predicted_effect_per_page; read only when @c predicted */
    bool predicted;
};

/** The contention model's unloaded near-socket latency over local (numaplace/contention.h): the
 *  unit a measured latency ratio is read in. */
#define NP_NEAR_LATENCY 1.374
/** The queueing factor's cap, as the contention model's: 1 / (1 - 0.95) at most. */
#define NP_MAX_UTILISATION 0.95

/**
 * What moving one page of @p job from @p src to @p dst does to ln(its slowdown), the slowdown
 * taken as 1 + (predicted_remote - 1) x the page-weighted mean remote excess from its CPUs' nodes.
 * With a measured latency ratio L the excess is (L x queueing - 1) / (NP_NEAR_LATENCY - 1), else
 * (SLIT d - 10) / (the CPU node's nearest other distance - 10), 1 when distances are unknown.
 * @return the effect, or NAN when the job has no prediction, no pages or no CPU node
 */
NP_API double np_predicted_effect_per_page(const struct np_node_view *view,
                                           const struct np_job_view *job, unsigned src,
                                           unsigned dst);

struct np_order_ops {
    const char *name; /**< "best-plus", "best", "random", "worst", "worst-plus", "predicted" */
    const char *description; /**< one line for help and logs */
    /** Sort @p cands in place into the order jobs are taken. @p seed drives "random" only. */
    void (*sort)(struct np_candidate *cands, size_t count, uint64_t seed);
    bool uses_prediction; /**< it ranks by the candidates' predicted effect */
};

/** The order called @p name, or NULL. Borrowed, static. */
NP_API const struct np_order_ops *np_order_lookup(const char *name);
/** Like np_order_lookup, with an error naming @p name and listing the orders. */
NP_API int np_order_find(const char *name, const struct np_order_ops **out, struct np_err *err);
/** The @p i-th registered order, or NULL past the end. Borrowed, static. */
NP_API const struct np_order_ops *np_order_at(size_t i);
/** The default order ("best-plus": measured best in the model's experiments). */
NP_API const struct np_order_ops *np_order_default(void);
/** "best-plus, best, random, worst, worst-plus, predicted": for help and errors. Borrowed. */
NP_API const char *np_order_names(void);
/** The @p i-th order under evaluation (bench/order_cv), not shipped: nothing configurable accepts
 *  it. NULL past the end. Borrowed, static. */
NP_API const struct np_order_ops *np_order_candidate_at(size_t i);

/* ---- the planner: one for the engine and the simulator ---- */

/** One step of a plan: move @p pages of candidate @p index (into the sorted array). */
struct np_plan_step {
    size_t index;
    uint64_t pages;
};

enum np_plan_cover {
    NP_PLAN_EXACT = 0,    /**< numaplace: the last job gives only what is missing (N pages) */
    NP_PLAN_WHOLE_SHARES, /**< the thesis's: each job taken gives its whole share (N at least) */
};

/** Take sorted candidates into @p steps (@p count entries at least; @p nsteps used) until
 *  @p pages_wanted are covered, the last one as @p cover says. @return the pages planned (fewer
 *  when candidates ran out; more is possible with NP_PLAN_WHOLE_SHARES) */
NP_API uint64_t np_plan_request(const struct np_candidate *cands, size_t count,
                                uint64_t pages_wanted, enum np_plan_cover cover,
                                struct np_plan_step *steps, size_t *nsteps);

/** A request's plan over a view. Free with np_plan_fini. */
struct np_plan {
    struct np_candidate *cands; /**< owned, in the order's sequence */
    size_t ncands;
    struct np_plan_step *steps; /**< owned; steps[i].index is into cands */
    size_t nsteps;
    uint64_t planned;   /**< pages planned */
    bool used_proxy;    /**< some candidate's bandwidth was the proxy */
    size_t unpredicted; /**< candidates without a prediction (for an order that uses them) */
};

/** Plan @p request over @p view: the candidates are the LOW jobs with pages on S (high jobs are
 *  never moved away) or the request's target job alone, sorted by @p order (not a targeted
 *  request's) and taken as np_plan_request. @return 0, -EINVAL (nodes out of range or equal),
 *  -ENOMEM */
NP_API int np_plan_make(const struct np_node_view *view, const struct np_request *request,
                        const struct np_order_ops *order, uint64_t seed, uint64_t pages_wanted,
                        enum np_plan_cover cover, struct np_plan *plan);
/** Free what the plan owns. Accepts NULL. */
NP_API void np_plan_fini(struct np_plan *plan);

#endif /* NUMAPLACE_MIGRATION_H */
