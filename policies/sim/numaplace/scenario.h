/*
 * numaplace/scenario.h - a scenario as data (docs/scenarios.md): one experiment set's jobs, timed
 * migration requests and the orders to run it under. One reader (numaplace/scenario_file.h) for
 * every user: the replay, `numaplace migrate --script`, `numaplace scenario` and through it the
 * Slurm runner script. Decoding is strict: an unknown member, a wrong type or a value out of range
 * is an error naming the member (`jobs[3].node`) and the accepted values. A parsed scenario owns
 * its strings and arrays (np_scenario_fini); runs[]'s ops are the static order table's.
 */
#ifndef NUMAPLACE_SCENARIO_H
#define NUMAPLACE_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "numaplace/common.h"
#include "numaplace/names.h"
#include "numaplace/migration.h"

/** The schema version this parser reads (the file's "numaplace_scenario" member). */
#define NP_SCENARIO_VERSION 1
/** np_scenario_load refuses larger files (the thesis's largest set is about 8 KiB). */
#define NP_SCENARIO_MAX_BYTES (4u << 20)
/** Limits, checked by the parser (docs/scenarios.md). */
#define NP_SCENARIO_NAME_MAX      64
#define NP_SCENARIO_TEXT_MAX      4096 /**< description, source: bytes */
#define NP_SCENARIO_MAX_INSTANCES 1024 /**< jobs after expanding copies */
#define NP_SCENARIO_MAX_COPIES    256
#define NP_SCENARIO_MAX_THREADS   1024
#define NP_SCENARIO_MAX_INPUT     63 /**< a benchmark's input index, as in the model table */
#define NP_SCENARIO_MAX_REQUESTS  10000
#define NP_SCENARIO_MAX_DELAY_S   86400.0
#define NP_SCENARIO_MAX_PAGES     (UINT64_C(1) << 40)
#define NP_SCENARIO_MAX_RUNS      64

/** One job as written: @c copies identical instances, CPUs and first memory on @c node. */
struct np_scenario_job {
    char benchmark[64]; /**< [A-Za-z0-9._-]; checked against the model table by its users */
    unsigned input, node, copies, threads;
    enum np_class job_class;
};

/** "Move at least @c pages base pages from @c from to @c to", @c delay_s after the previous. */
struct np_scenario_request {
    double delay_s;
    unsigned from, to;
    uint64_t pages;
};

struct np_scenario {
    char name[NP_SCENARIO_NAME_MAX + 1];
    char *description, *source; /**< owned; NULL when the file has none */
    unsigned nodes;
    struct np_scenario_job *jobs; /**< owned; as written (copies not expanded) */
    size_t njobs;
    struct np_scenario_request *requests; /**< owned; NULL when there are none */
    size_t nrequests;
    const struct np_order_ops **runs; /**< owned array of borrowed ops, in run order */
    size_t nruns;
};

/** Free what @p s owns and empty it. Accepts NULL and an empty scenario. */
NP_API void np_scenario_fini(struct np_scenario *s);

/** Job instances after expanding copies (the sum of every job's copies). */
NP_API size_t np_scenario_instances(const struct np_scenario *s);

#endif /* NUMAPLACE_SCENARIO_H */
