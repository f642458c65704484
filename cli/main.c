/*
 * numaplace - the user's and administrator's view of numaplaced (numaplace(1)).
 *
 *   numaplace status [--json] [JOBID]      the jobs the local helper tracks, latest figures
 *   numaplace report [--json] JOBID[.STEP]  the job's reports from the spool
 *   numaplace replay [--json] TRACE         reports rebuilt from a recorded trace
 *   numaplace ping                          is the helper up
 *   numaplace set-class JOBID high|low      change a running job's class (root, admin_group)
 *   numaplace migrate --from S --to D --pages N [--order O] [--dry-run]
 *   numaplace migrate --script FILE         timed requests: a scenario file or one per line
 *   numaplace scenario [--jobs|--runs] FILE check and show a scenario file
 *   numaplace characterize [--output FILE]  measure this node type's NUMA figures (root)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/helperconf.h"

#include "cli.h"
#include "numaplace/labels.h"
#include "numaplace/migration.h"
#include "numaplace/profile.h"
#include "numaplace/tables.h"

struct cli_options cli = {
    .socket_path = NP_HELPER_DEFAULT_SOCKET,
    .spool_dir = DEFAULT_SPOOL,
    .timeout_ms = 5000,
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: numaplace [--socket PATH] [--spool DIR] [--table CSV] [--json] COMMAND [ARGS]\n"
            "  status [JOBID]        jobs the local numaplaced tracks, with class, pages per node\n"
            "                        and the latest figures (users see their own jobs)\n"
            "  report [--plot FILE.png|FILE.svg [--node NODE]] JOBID\n"
            "                        the job's NUMA summary from Slurm accounting (else this\n"
            "                        node's spool %s), seff-like text with advice, or --json\n"
            "  report --steps JOBID[.STEP]\n"
            "                        this node's per-step reports from the spool\n"
            "  jobs [--user NAME] [--since TIME] [--until TIME]\n"
            "                        finished jobs with a summary, worst local share first\n"
            "  replay TRACE          reports rebuilt from a trace numaplaced recorded (record=)\n"
            "  ping                  is numaplaced up\n"
            "  set-class JOBID CLASS (%s)\n"
            "                        change a running job's class (root or admin_group)\n"
            "  migrate --from S --to D --pages N [--order ORDER] [--dry-run]\n"
            "                        move at least N pages from node S to node D, taking low\n"
            "                        jobs in ORDER (%s)\n"
            "  migrate --script FILE [--order ORDER] [--dry-run]\n"
            "                        timed requests, each DELAY_S seconds after the previous\n"
            "                        answer: a scenario file's requests, or lines of\n"
            "                        \"DELAY_S FROM TO PAGES [ORDER]\" ('#' comments)\n"
            "  scenario [--jobs | --runs] FILE\n"
            "                        check a scenario file and summarise it; --jobs: one line per\n"
            "                        job instance (INDEX BENCHMARK INPUT NODE CLASS THREADS,\n"
            "                        tab-separated), --runs: its orders, one per line\n"
            "  store JOBID [--nodes HOSTLIST]\n"
            "                        (epilog, root) add this node's reports to the job's summary\n"
            "                        in its AdminComment; kept in the spool until stored\n"
            "  store --pending       (root, a timer) store this node's parts still waiting\n"
            "  characterize [--seconds S] [--size MiB] [--loaders K,K] [--output FILE] [--force]\n"
            "                        (root, idle node) measure read bandwidth and load latency\n"
            "                        between every pair of NUMA nodes into a machine profile\n"
            "                        (%s)\n"
            "  characterize --print FILE\n"
            "                        show a machine profile's matrices\n",
            DEFAULT_SPOOL, np_class_names(), np_order_names(), NP_PROFILE_DEFAULT_PATH);
}

/* Predictions for this machine: its profile's near-node penalty (`numaplace characterize`), from
 * NUMAPLACE_PROFILE or the default path; without one they stay the reference machine's. */
static void cli_use_machine_profile(struct np_sens_model *model)
{
    const char *path = getenv("NUMAPLACE_PROFILE");
    struct np_profile *profile = NULL;
    struct np_err err = {0};

    if (!path || !*path)
        path = NP_PROFILE_DEFAULT_PATH;
    if (np_profile_load(path, &profile, &err) == 0) {
        const double penalty = np_profile_near_penalty(profile);
        if (isfinite(penalty))
            model->remote_penalty = penalty;
        np_profile_free(profile);
    } else if (err.code != -ENOENT) {
        fprintf(stderr,
                "numaplace: machine profile not used (predictions are the reference "
                "machine's): %s\n",
                err.msg);
    }
}

const struct np_sens_model *cli_sensitivity(void)
{
    static struct np_sens_model model;
    static int state; /* 0 not tried, 1 loaded, -1 failed */
    struct np_err err = {0};

    if (state == 0) {
        state = np_sensitivity_load(&model, cli.table_path, &err) == 0 ? 1 : -1;
        if (state < 0)
            fprintf(stderr, "numaplace: predicted sensitivity unavailable: %s\n", err.msg);
        else
            cli_use_machine_profile(&model);
    }
    return state > 0 ? &model : NULL;
}

void cli_stderr_log(enum np_log_level level, const char *msg, void *arg)
{
    (void)arg;
    fprintf(stderr, "numaplace: %s: %s\n", np_log_level_name(level), msg);
}

static int run_ping(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cmd_ping();
}

/* The commands, in the order the unknown-command message lists them. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"status", cmd_status},   {"report", cmd_report},
    {"jobs", cmd_jobs},       {"replay", cmd_replay},
    {"ping", run_ping},       {"set-class", cmd_set_class},
    {"migrate", cmd_migrate}, {"scenario", cmd_scenario},
    {"store", cmd_store},     {"characterize", cmd_characterize},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

int main(int argc, char **argv)
{
    int i = 1;
    const char *env_socket = getenv("NUMAPLACE_SOCKET"), *env_spool = getenv("NUMAPLACE_SPOOL");
    const char *env_table = getenv("NUMAPLACE_TABLE");

    if (env_socket && *env_socket)
        cli.socket_path = env_socket;
    if (env_spool && *env_spool)
        cli.spool_dir = env_spool;
    if (env_table && *env_table)
        cli.table_path = env_table;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            cli.as_json = true;
        } else if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
            cli.socket_path = argv[++i];
        } else if (strcmp(argv[i], "--spool") == 0 && i + 1 < argc) {
            cli.spool_dir = argv[++i];
        } else if (strcmp(argv[i], "--table") == 0 && i + 1 < argc) {
            cli.table_path = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "numaplace: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    /* Options may also follow the command (numaplace report 42 --json). */
    for (int k = i + 1; k < argc; k++)
        if (strcmp(argv[k], "--json") == 0) {
            cli.as_json = true;
            memmove(&argv[k], &argv[k + 1], (size_t)(argc - k - 1) * sizeof(char *));
            argc--;
            k--;
        }
    for (size_t c = 0; c < NCOMMANDS; c++)
        if (strcmp(argv[i], commands[c].name) == 0)
            return commands[c].run(argc - i, argv + i);
    fprintf(stderr, "numaplace: unknown command \"%s\"; accepted:", argv[i]);
    for (size_t c = 0; c < NCOMMANDS; c++)
        fprintf(stderr, "%s %s", c ? "," : "", commands[c].name);
    fputc('\n', stderr);
    return 2;
}
