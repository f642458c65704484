/*
 * numaplace/auto.h - --numa-policy=auto: which of local, interleave and interleave-all a task
 * starts with, from its sensitivity, its CPUs' nodes and the nodes' traffic (docs/auto.md). A
 * decision only: the plugin fills the input, with numaplaced's advice; nothing here reads the
 * machine.
 */
#ifndef NUMAPLACE_AUTO_H
#define NUMAPLACE_AUTO_H

#include <stdbool.h>
#include <stdint.h>

#include "numaplace/common.h"
#include "numaplace/names.h"

/** Nodes the decision knows of: OS indexes 0..63 (the migration module's NP_MAX_NODES). */
#define NP_AUTO_MAX_NODES 64

/** Where a task's sensitivity came from, most trusted first. */
enum np_auto_source {
    NP_AUTO_SOURCE_USER = 0, /**< --numa-sensitivity */
    NP_AUTO_SOURCE_HISTORY,  /**< this user's earlier runs of the same job name on this node */
    NP_AUTO_SOURCE_SITE,     /**< the site's default_sensitivity (not a claim about the code) */
    NP_AUTO_SOURCE_NONE,     /**< nothing known */
    NP_AUTO_SOURCE_COUNT
};

/** "user", "history", "site default", "unknown". Borrowed, static. */
NP_API const char *np_auto_source_name(enum np_auto_source source);

/** One memory node's traffic as numaplaced saw it when the step started. */
struct np_auto_node {
    bool known;         /**< a measured figure (uncore or misses), or the CPU-busy proxy the site
                             chose (auto_load=cpu-busy); another proxy or nothing: false */
    bool cpu_busy;      /**< known through the proxy: utilisation is its CPUs' busy share */
    bool loaded;        /**< np_auto_loaded said so */
    double utilisation; /**< traffic / capacity, for the reason line; NAN when not known */
};

/** What the decision is given. */
struct np_auto_input {
    bool user_given;             /**< --numa-sensitivity was given (and allowed) */
    enum np_sensitivity user;    /**< its value */
    bool history_known;          /**< numaplaced knows earlier runs of this job */
    enum np_sensitivity history; /**< their sensitivity */
    bool site_given;             /**< the site set a default sensitivity */
    enum np_sensitivity site;    /**< its value */
    uint64_t task_nodes;         /**< bit n: the task's CPUs are on node n (nodes < 64) */
    uint64_t allowed_nodes;      /**< bit n: node n has memory the task may use */
    bool advice;                 /**< numaplaced answered: node[] and history are meaningful */
    char no_advice[160];         /**< when !advice: why ("numaplaced did not answer: ...") */
    struct np_auto_node node[NP_AUTO_MAX_NODES];
};

/** The choice. */
struct np_auto_choice {
    enum np_policy policy;      /**< NP_POLICY_LOCAL, _INTERLEAVE or _INTERLEAVE_ALL */
    enum np_auto_source source; /**< where the sensitivity used came from */
    bool sensitive;             /**< the sensitivity used was high */
    /** The facts the rule rested on, kept as fields so that a reader (the report's hindsight)
     *  never parses them back out of the reason: bit n = node n, as in np_auto_input. */
    uint64_t task_nodes;    /**< the task's CPUs' nodes */
    uint64_t allowed_nodes; /**< the nodes with memory the task may use */
    uint64_t loaded_nodes;  /**< among task and allowed nodes, those measured loaded at launch */
    char reason[256];       /**< one line: the sensitivity, the shape, the load */
};

/**
 * The rule of docs/auto.md's table: the sensitivity from the user's label, else the history's,
 * else the site default's; low: local; not low across nodes: interleave (the step's nodes); high
 * on a loaded node with an unloaded one allowed: interleave-all; else local. Never local-strict
 * (a bind turns a full node into an out-of-memory kill). @return 0, or -EINVAL for NULL arguments
 */
NP_API int np_auto_choose(const struct np_auto_input *in, struct np_auto_choice *out);

/** The utilisation above which interleaving with an idle near node beats staying local in the
 *  contention model's queueing, 1 / (1 - u) > @p remote_latency: u > 1 - 1 / remote_latency. NAN
 *  for a latency below 1 or not finite. */
NP_API double np_auto_threshold(double remote_latency);

/** Whether a node with @p traffic_bytes_per_s of @p capacity_bytes_per_s is loaded at
 *  @p threshold (np_auto_threshold). False when any figure is missing or not positive. */
NP_API bool np_auto_loaded(double traffic_bytes_per_s, double capacity_bytes_per_s,
                           double threshold);

#endif /* NUMAPLACE_AUTO_H */
