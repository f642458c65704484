/* A decoded scenario's lifetime and counts (scenario.h), and a replay set from it. */
#include "numaplace/replay_scenario.h"

#include "numaplace/contention.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void np_scenario_fini(struct np_scenario *s)
{
    if (!s)
        return;
    free(s->description);
    free(s->source);
    free(s->jobs);
    free(s->requests);
    free(s->runs);
    memset(s, 0, sizeof(*s));
}

size_t np_scenario_instances(const struct np_scenario *s)
{
    size_t n = 0;

    for (size_t i = 0; s && i < s->njobs; i++)
        n += s->jobs[i].copies;
    return n;
}

/* The table's row for a job: its input index, or the benchmark's only row for input 0. */
static const struct np_model_row *find_row(const struct np_model *model, const char *benchmark,
                                           unsigned input, char *input_text, size_t len)
{
    const struct np_model_row *row;

    snprintf(input_text, len, "%u", input);
    row = np_model_find(model, benchmark, input_text);
    if (!row && input == 0) {
        input_text[0] = '\0';
        row = np_model_find(model, benchmark, "");
    }
    return row;
}

static int build_job(const struct np_scenario_job *sj, size_t index, const struct np_model *model,
                     const struct np_footprints *footprints, double scale, unsigned flags,
                     struct np_replay_job *out, struct np_err *err)
{
    char input[16];
    const struct np_model_row *row =
        find_row(model, sj->benchmark, sj->input, input, sizeof(input));
    const struct np_footprint *fp;
    double scaled;

    if (!row)
        return np_err_set(err, -EINVAL,
                          "jobs[%zu].benchmark: '%s' input %u is not in the model table", index,
                          sj->benchmark, sj->input);
    if (!(row->total_time_s > 0))
        return np_err_set(err, -EINVAL,
                          "jobs[%zu].benchmark: '%s' has no total_time_s in the model table", index,
                          sj->benchmark);
    fp = np_footprint_find(footprints, sj->benchmark, input);
    if (!fp)
        return np_err_set(err, -EINVAL,
                          "jobs[%zu].benchmark: no footprint for '%s' in the footprint table "
                          "(data/spec2017-footprints.csv lists the thesis's dynamic sets' 16)",
                          index, sj->benchmark);
    if ((flags & NP_REPLAY_WITH_CORUN) && isnan(fp->corun))
        return np_err_set(err, -EINVAL,
                          "jobs[%zu].benchmark: no corun_factor for '%s' in the footprint table",
                          index, sj->benchmark);
    scaled = fmax(1.0, round((double)fp->pages * scale));
    if (scaled > (double)NP_FOOTPRINT_MAX_PAGES) /* and no cast of a double past 2^64 */
        return np_err_set(err, -EINVAL,
                          "jobs[%zu]: footprint %" PRIu64 " pages x %g is more than %" PRIu64
                          " pages",
                          index, fp->pages, scale, NP_FOOTPRINT_MAX_PAGES);
    *out = (struct np_replay_job){
        .row = row,
        .work_s = row->total_time_s,
        .node = sj->node,
        .memory_node = sj->node,
        .pages = (uint64_t)scaled,
        .job_class = sj->job_class,
        .corun = flags & NP_REPLAY_WITH_CORUN ? fp->corun : 0,
        .threads = sj->threads,
        .multi_threaded = np_contention_is_openmp(sj->benchmark),
    };
    return 0;
}

int np_replay_set_from_scenario(const struct np_scenario *scenario, const struct np_model *model,
                                const struct np_footprints *footprints, double footprint_scale,
                                unsigned flags, struct np_replay_owned *out, struct np_err *err)
{
    const size_t n = np_scenario_instances(scenario);
    size_t k = 0;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (!(footprint_scale > 0) || !isfinite(footprint_scale))
        return np_err_set(err, -EINVAL, "footprint scale %g: must be a number > 0",
                          footprint_scale);
    out->jobs = calloc(n ? n : 1, sizeof(*out->jobs));
    out->from_job = calloc(n ? n : 1, sizeof(*out->from_job));
    out->requests = calloc(scenario->nrequests ? scenario->nrequests : 1, sizeof(*out->requests));
    if (!out->jobs || !out->from_job || !out->requests) {
        np_replay_owned_fini(out);
        return np_err_set(err, -ENOMEM, "out of memory building scenario '%s'", scenario->name);
    }
    for (size_t i = 0; rc == 0 && i < scenario->njobs; i++) {
        struct np_replay_job job;
        rc = build_job(&scenario->jobs[i], i, model, footprints, footprint_scale, flags, &job, err);
        for (unsigned c = 0; rc == 0 && c < scenario->jobs[i].copies && k < n; c++) {
            out->from_job[k] = i;
            out->jobs[k++] = job;
        }
    }
    if (rc < 0) {
        np_replay_owned_fini(out);
        return rc;
    }
    for (size_t i = 0; i < scenario->nrequests; i++) {
        const struct np_scenario_request *r = &scenario->requests[i];
        out->requests[i] = (struct np_replay_request){r->delay_s, r->from, r->to, r->pages};
    }
    out->set = (struct np_replay_set){.nnodes = scenario->nodes,
                                      .jobs = out->jobs,
                                      .njobs = k,
                                      .requests = out->requests,
                                      .nrequests = scenario->nrequests};
    return 0;
}

void np_replay_owned_fini(struct np_replay_owned *owned)
{
    if (!owned)
        return;
    free(owned->jobs);
    free(owned->requests);
    free(owned->from_job);
    memset(owned, 0, sizeof(*owned));
}
