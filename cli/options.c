/* Every command's options, one table each, and what is parsed and printed from them (options.h). */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>

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
    [CLI_MIGRATE_TIER] = {"--tier", "down|up"},
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
_Static_assert(COUNT(migrate_opts) == CLI_MIGRATE_TIER + 1, "migrate options and their enum");
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
     "--tier down|up instead of --to: to the nearest node one memory tier\n"
     "slower or faster (with room above numaplaced's free floor);\n"
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

/* The synopsis "[--from S] [--dry-run]" (@p synopsis), or the accepted "--from S, --dry-run". */
static void option_list(const struct cli_command_options *cmd, bool synopsis, char *out,
                        size_t size)
{
    size_t len = 0;

    snprintf(out, size, "%s", cmd->nopts || synopsis ? "" : "no options");
    for (size_t k = 0; k < cmd->nopts && len < size; k++) {
        const struct cli_option *o = &cmd->opts[k];
        const int n = snprintf(out + len, size - len, "%s%s%s%s%s%s",
                               k ? (synopsis ? " " : ", ") : "", synopsis ? "[" : "", o->name,
                               o->value ? " " : "", o->value ? o->value : "", synopsis ? "]" : "");
        if (n < 0)
            break;
        len += (size_t)n;
    }
}

void cli_options_synopsis(const struct cli_command_options *cmd, char *out, size_t size)
{
    option_list(cmd, true, out, size);
}

int cli_options_parse(const struct cli_command_options *cmd, bool in_order, int argc, char **argv,
                      const char **values, struct np_err *err)
{
    struct option longopts[CLI_MAX_OPTIONS + 1];
    char list[512];
    int c, operands;

    if (cmd->nopts > CLI_MAX_OPTIONS)
        return np_err_set(err, -EINVAL, "%s: more options than %d", cmd->command, CLI_MAX_OPTIONS);
    for (size_t k = 0; k < cmd->nopts; k++) {
        values[k] = NULL;
        longopts[k] =
            (struct option){cmd->opts[k].name + 2,
                            cmd->opts[k].value ? required_argument : no_argument, NULL, (int)k};
    }
    longopts[cmd->nopts] = (struct option){0};
    option_list(cmd, false, list, sizeof(list));
    optind = 0; /* a fresh scan: GNU getopt reinitialises */
    opterr = 0; /* its messages are ours */
    /* No short options: "-" alone is an operand (stdin), a single-dash word is refused. */
    while ((c = getopt_long(argc, argv, in_order ? "+:" : ":", longopts, NULL)) != -1) {
        if (c >= 0 && (size_t)c < cmd->nopts) {
            /* "--from=" (or "--from ''") is a value forgotten, not an empty one */
            if (cmd->opts[c].value && !optarg[0])
                return np_err_set(err, -EINVAL, "%s needs a value (%s), not an empty one",
                                  cmd->opts[c].name, cmd->opts[c].value);
            values[c] = cmd->opts[c].value ? optarg : "";
            continue;
        }
        /* optind has moved past the bad argument (and past a value it was given). */
        if (c == ':' && optopt >= 0 && (size_t)optopt < cmd->nopts) /* optopt: the option's val */
            return np_err_set(err, -EINVAL, "%s needs a value (%s)", cmd->opts[optopt].name,
                              cmd->opts[optopt].value);
        {
            const char *bad = argv[optind - 1];
            const char *eq = strchr(bad, '=');
            for (size_t k = 0; eq && k < cmd->nopts; k++)
                if (!cmd->opts[k].value && strncmp(bad, cmd->opts[k].name, (size_t)(eq - bad)) == 0)
                    return np_err_set(err, -EINVAL, "%s takes no value (\"%.200s\")",
                                      cmd->opts[k].name, bad);
            return np_err_set(err, -EINVAL, "unexpected \"%.200s\" (accepted: %s)", bad, list);
        }
    }
    operands = argc - optind;
    if (operands > cmd->max_operands)
        return np_err_set(err, -EINVAL, "unexpected \"%.200s\" (accepted: %s%s%s)",
                          argv[optind + cmd->max_operands], list,
                          cmd->operands[0] ? "; operands: " : "", cmd->operands);
    return optind;
}

void cli_options_usage(FILE *out, const char *(*expand)(const char *name))
{
    char synopsis[512];

    cli_options_synopsis(&cli_global_options, synopsis, sizeof(synopsis));
    fprintf(out, "usage: numaplace %s %s\n", synopsis, cli_global_options.operands);
    for (size_t c = 0; c < cli_command_count; c++) {
        const struct cli_command_options *cmd = &cli_command_options[c];
        const char *p = cmd->about;

        cli_options_synopsis(cmd, synopsis, sizeof(synopsis));
        fprintf(out, "  %s%s%s%s%s\n      ", cmd->command, synopsis[0] ? " " : "", synopsis,
                cmd->operands[0] ? " " : "", cmd->operands);
        while (*p) {
            const char *at = strchr(p, '@'), *end = at ? strchr(at + 1, '@') : NULL;
            if (*p == '\n') {
                fputs("\n      ", out);
                p++;
            } else if (at == p && end) {
                char name[32];
                snprintf(name, sizeof(name), "%.*s", (int)(end - at - 1), at + 1);
                fputs(expand ? expand(name) : name, out);
                p = end + 1;
            } else {
                fputc(*p++, out);
            }
        }
        fputc('\n', out);
    }
}
