/* What `numaplace scenario` prints (numaplace/scenario.h): a readable summary, and the job
 * instances and run orders as plain lines for the runner script, so no shell parses JSON. */
#include "numaplace/output_file.h"
#include "numaplace/scenario_file.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

static int done(FILE *out)
{
    return ferror(out) ? -EIO : 0;
}

/* "505.mcf_r" or "502.gcc_r input 2", then " x4", " high", " 8 threads" where not the default. */
static void print_job(FILE *out, const struct np_scenario_job *job)
{
    fprintf(out, "%s", job->benchmark);
    if (job->input)
        fprintf(out, " input %u", job->input);
    if (job->copies > 1)
        fprintf(out, " x%u", job->copies);
    if (job->job_class != NP_CLASS_LOW)
        fprintf(out, " %s", np_class_name(job->job_class));
    if (job->threads > 1)
        fprintf(out, " %u threads", job->threads);
}

static void print_jobs_by_node(FILE *out, const struct np_scenario *s)
{
    for (unsigned node = 0; node < s->nodes; node++) {
        size_t instances = 0, shown = 0;
        for (size_t i = 0; i < s->njobs; i++)
            if (s->jobs[i].node == node)
                instances += s->jobs[i].copies;
        fprintf(out, "  node %u: %zu instance(s)%s", node, instances, instances ? ": " : "\n");
        for (size_t i = 0; instances && i < s->njobs; i++)
            if (s->jobs[i].node == node) {
                fprintf(out, "%s", shown++ ? ", " : "");
                print_job(out, &s->jobs[i]);
            }
        if (instances)
            fputc('\n', out);
    }
}

static void print_requests(FILE *out, const struct np_scenario *s)
{
    uint64_t lo = UINT64_MAX, hi = 0, total = 0;
    double delay_lo = NP_SCENARIO_MAX_DELAY_S, delay_hi = 0, delays = 0;
    long long net[NP_MAX_NODES] = {0};

    fprintf(out, "requests: %zu", s->nrequests);
    if (!s->nrequests) {
        fputc('\n', out);
        return;
    }
    for (size_t i = 0; i < s->nrequests; i++) {
        const struct np_scenario_request *r = &s->requests[i];
        lo = r->pages < lo ? r->pages : lo;
        hi = r->pages > hi ? r->pages : hi;
        total += r->pages;
        delay_lo = r->delay_s < delay_lo ? r->delay_s : delay_lo;
        delay_hi = r->delay_s > delay_hi ? r->delay_s : delay_hi;
        delays += r->delay_s;
        net[r->from] -= (long long)r->pages;
        net[r->to] += (long long)r->pages;
    }
    fprintf(out,
            ", %" PRIu64 " to %" PRIu64 " pages each, %" PRIu64 " in all (%.1f MiB at 4 KiB a "
            "page)\n",
            lo, hi, total, (double)total * 4096 / 1048576.0);
    if (delay_lo == delay_hi)
        fprintf(out, "  delays %g s each, %g s in all before the last request\n", delay_lo, delays);
    else
        fprintf(out, "  delays %g to %g s, %g s in all before the last request\n", delay_lo,
                delay_hi, delays);
    fprintf(out, "  net pages asked per node (in - out):");
    for (unsigned node = 0; node < s->nodes; node++)
        fprintf(out, "%s node %u %+lld", node ? "," : "", node, net[node]);
    fputc('\n', out);
}

int np_scenario_print_summary(FILE *out, const struct np_scenario *s)
{
    fprintf(out, "scenario %s: %u node(s), %zu job(s) as written, %zu instance(s)\n", s->name,
            s->nodes, s->njobs, np_scenario_instances(s));
    if (s->description) {
        fputs("description: ", out);
        np_print_text(out, s->description);
        fputc('\n', out);
    }
    if (s->source) {
        fputs("source: ", out);
        np_print_text(out, s->source);
        fputc('\n', out);
    }
    fprintf(out, "jobs (CPUs and first memory on the node):\n");
    print_jobs_by_node(out, s);
    print_requests(out, s);
    fprintf(out, "runs: %zu:", s->nruns);
    for (size_t i = 0; i < s->nruns; i++)
        fprintf(out, "%s %s", i ? "," : "", s->runs[i]->name);
    fputc('\n', out);
    return done(out);
}

int np_scenario_print_jobs(FILE *out, const struct np_scenario *s)
{
    size_t index = 0;

    for (size_t i = 0; i < s->njobs; i++)
        for (unsigned copy = 0; copy < s->jobs[i].copies; copy++)
            fprintf(out, "%zu\t%s\t%u\t%u\t%s\t%u\n", index++, s->jobs[i].benchmark,
                    s->jobs[i].input, s->jobs[i].node, np_class_name(s->jobs[i].job_class),
                    s->jobs[i].threads);
    return done(out);
}

int np_scenario_print_runs(FILE *out, const struct np_scenario *s)
{
    for (size_t i = 0; i < s->nruns; i++)
        fprintf(out, "%s\n", s->runs[i]->name);
    return done(out);
}
