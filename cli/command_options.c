/* Every command's options, one table each (options.h): what is parsed and what is printed. */
#include <string.h>

#include "options.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct cli_option global_opts[] = {
    [CLI_GLOBAL_SOCKET] = {"--socket", "PATH"}, [CLI_GLOBAL_SPOOL] = {"--spool", "DIR"},
    [CLI_GLOBAL_TABLE] = {"--table", "CSV"},    [CLI_GLOBAL_JSON] = {"--json", NULL},
    [CLI_GLOBAL_HELP] = {"--help", NULL},
};
const struct cli_command_options cli_global_options = {
    "", "COMMAND [ARGS]", 1 << 30, "", global_opts, COUNT(global_opts),
};

static const struct cli_option report_opts[] = {
    [CLI_REPORT_STEPS] = {"--steps", NULL},
    [CLI_REPORT_PLOT] = {"--plot", "FILE.png|FILE.svg"},
    [CLI_REPORT_NODE] = {"--node", "NODE"},
};
static const struct cli_option jobs_opts[] = {
    [CLI_JOBS_USER] = {"--user", "NAME"},
    [CLI_JOBS_SINCE] = {"--since", "TIME"},
    [CLI_JOBS_UNTIL] = {"--until", "TIME"},
};
static const struct cli_option migrate_opts[] = {
    [CLI_MIGRATE_FROM] = {"--from", "S"},
    [CLI_MIGRATE_TO] = {"--to", "D"},
    [CLI_MIGRATE_PAGES] = {"--pages", "N"},
    [CLI_MIGRATE_ORDER] = {"--order", "ORDER"},
    [CLI_MIGRATE_SCRIPT] = {"--script", "FILE"},
    [CLI_MIGRATE_DRY_RUN] = {"--dry-run", NULL},
    [CLI_MIGRATE_CLOCK] = {"--clock", "after-reply|fixed"},
};
static const struct cli_option scenario_opts[] = {
    [CLI_SCENARIO_JOBS] = {"--jobs", NULL},
    [CLI_SCENARIO_RUNS] = {"--runs", NULL},
};
static const struct cli_option store_opts[] = {
    [CLI_STORE_NODES] = {"--nodes", "HOSTLIST"},
    [CLI_STORE_PENDING] = {"--pending", NULL},
    [CLI_STORE_MERGE] = {"--merge", NULL},
};
static const struct cli_option characterize_opts[] = {
    [CLI_CHAR_SECONDS] = {"--seconds", "S"},   [CLI_CHAR_SIZE] = {"--size", "MiB"},
    [CLI_CHAR_LOADERS] = {"--loaders", "K,K"}, [CLI_CHAR_OUTPUT] = {"--output", "FILE"},
    [CLI_CHAR_FORCE] = {"--force", NULL},      [CLI_CHAR_PRINT] = {"--print", "FILE"},
};

/* Each table holds every option its enum (options.h) names, and no more. */
_Static_assert(COUNT(global_opts) == CLI_GLOBAL_HELP + 1, "global options and their enum");
_Static_assert(COUNT(report_opts) == CLI_REPORT_NODE + 1, "report options and their enum");
_Static_assert(COUNT(jobs_opts) == CLI_JOBS_UNTIL + 1, "jobs options and their enum");
_Static_assert(COUNT(migrate_opts) == CLI_MIGRATE_CLOCK + 1, "migrate options and their enum");
_Static_assert(COUNT(scenario_opts) == CLI_SCENARIO_RUNS + 1, "scenario options and their enum");
_Static_assert(COUNT(store_opts) == CLI_STORE_MERGE + 1, "store options and their enum");
_Static_assert(COUNT(characterize_opts) == CLI_CHAR_PRINT + 1, "characterize options and enum");
_Static_assert(COUNT(migrate_opts) <= CLI_MAX_OPTIONS, "CLI_MAX_OPTIONS");

const struct cli_command_options cli_command_options[] = {
    {"status", "[JOBID]", 1,
     "jobs the local numaplaced tracks, with class, pages per node\n"
     "and the latest figures (users see their own jobs)",
     NULL, 0},
    {"report", "JOBID[.STEP]", 1,
     "the job's NUMA summary from Slurm accounting (else this\n"
     "node's spool @spool@), seff-like text with advice, or --json;\n"
     "--plot: its timeline of node NODE (default the first) as PNG or SVG;\n"
     "--steps: this node's per-step reports from the spool",
     report_opts, COUNT(report_opts)},
    {"jobs", "", 0, "finished jobs with a summary, worst local share first", jobs_opts,
     COUNT(jobs_opts)},
    {"replay", "TRACE", 1, "reports rebuilt from a trace numaplaced recorded (record=)", NULL, 0},
    {"ping", "", 0, "is numaplaced up", NULL, 0},
    {"set-class", "JOBID CLASS", 2, "change a running job's class (@classes@; root or admin_group)",
     NULL, 0},
    {"migrate", "", 0,
     "--from S --to D --pages N: move at least N pages from node S to\n"
     "node D, taking low jobs in ORDER (@orders@);\n"
     "--script FILE: timed requests, each DELAY_S seconds after the\n"
     "previous answer: a scenario file's requests, or lines of\n"
     "\"DELAY_S FROM TO PAGES [ORDER]\" ('#' comments)",
     migrate_opts, COUNT(migrate_opts)},
    {"scenario", "FILE", 1,
     "check a scenario file and summarise it; --jobs: one line per\n"
     "job instance (INDEX BENCHMARK INPUT NODE CLASS THREADS,\n"
     "tab-separated), --runs: its orders, one per line",
     scenario_opts, COUNT(scenario_opts)},
    {"store", "[JOBID]", 1,
     "(epilog, root) store JOBID [--nodes HOSTLIST]: add this node's\n"
     "reports to the job's summary in its AdminComment, kept in the spool until stored;\n"
     "--pending: (root, a timer) store this node's parts still waiting;\n"
     "--merge JOBID, --merge --pending: (SlurmUser) merge a large job's parts once",
     store_opts, COUNT(store_opts)},
    {"characterize", "", 0,
     "(root, idle node) measure read bandwidth and load latency\n"
     "between every pair of NUMA nodes into a machine profile\n"
     "(--output, default @profile@); --print FILE: show a profile's matrices",
     characterize_opts, COUNT(characterize_opts)},
};
const size_t cli_command_count = COUNT(cli_command_options);

const struct cli_command_options *cli_command_find(const char *name)
{
    for (size_t c = 0; c < cli_command_count; c++)
        if (strcmp(cli_command_options[c].command, name) == 0)
            return &cli_command_options[c];
    return NULL;
}
