/* numaplace - the user's and administrator's view of numaplaced (numaplace(1)). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/helperconf.h"
#include "numaplace/output_file.h"

#include "cli.h"
#include "options.h"
#include "numaplace/names.h"
#include "numaplace/migration.h"
#include "numaplace/profile.h"
#include "numaplace/tables.h"

struct cli_options cli = {
    .socket_path = NP_HELPER_DEFAULT_SOCKET,
    .spool_dir = DEFAULT_SPOOL,
    .timeout_ms = 5000,
};

/* The lists of names the usage shows, from the code's own tables. */
static const char *usage_list(const char *name)
{
    if (strcmp(name, "classes") == 0)
        return np_class_names();
    if (strcmp(name, "orders") == 0)
        return np_order_names();
    if (strcmp(name, "spool") == 0)
        return DEFAULT_SPOOL;
    if (strcmp(name, "profile") == 0)
        return NP_PROFILE_DEFAULT_PATH;
    return name;
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
        (void)cli_error(0, "machine profile not used (predictions are the reference machine's): %s",
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

int cli_error(int rc, const char *fmt, ...)
{
    va_list ap;

    fputs("numaplace: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return rc;
}

/* Each command's entry point; its options and usage are its table in options.c. */
static const struct command {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"status", cmd_status},   {"report", cmd_report},
    {"jobs", cmd_jobs},       {"replay", cmd_replay},
    {"ping", cmd_ping},       {"set-class", cmd_set_class},
    {"migrate", cmd_migrate}, {"scenario", cmd_scenario},
    {"store", cmd_store},     {"characterize", cmd_characterize},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Everything the command prints passes through np_safe_text_stream: it carries text users and
 * their tasks chose (job names, reasons), and root reads it on a terminal. */
static FILE *plain_out, *plain_err, *guarded_out, *guarded_err;

/* At exit: close (flush, free) the guarded streams, the plain ones back for what libc writes. */
static void unguard_terminal(void)
{
    if (guarded_out) {
        stdout = plain_out;
        fclose(guarded_out);
        guarded_out = NULL;
    }
    if (guarded_err) {
        stderr = plain_err;
        fclose(guarded_err);
        guarded_err = NULL;
    }
}

FILE *cli_unguarded_stderr(void)
{
    return plain_err ? plain_err : stderr;
}

static void guard_terminal(void)
{
    plain_out = stdout;
    plain_err = stderr;
    guarded_out = np_safe_text_stream(stdout);
    guarded_err = np_safe_text_stream(stderr);
    if (guarded_out)
        stdout = guarded_out;
    if (guarded_err) {
        setvbuf(guarded_err, NULL, _IONBF, 0);
        stderr = guarded_err;
    }
    /* Without the handler the streams are still flushed at exit, only not freed. */
    (void)atexit(unguard_terminal);
}

/* Parse the command's options into cli.opt and run it on its operands alone, after argv[0]. */
static int run_command(const struct command *command, int argc, char **argv)
{
    static const char *values[CLI_MAX_OPTIONS];
    const struct cli_command_options *table = cli_command_find(command->name);
    struct np_err err = {0};
    int first;

    if (!table) /* a command without a table is a bug the usage would hide */
        return cli_error(2, "%s has no option table", command->name);
    first = cli_options_parse(table, false, argc, argv, values, &err);
    if (first < 0)
        return cli_error(2, "%s: %s", command->name, err.msg);
    cli.opt = values;
    argv[first - 1] = argv[0];
    return command->run(argc - first + 1, argv + first - 1);
}

int main(int argc, char **argv)
{
    const char *global[CLI_MAX_OPTIONS];
    struct np_err err = {0};
    int i;
    const char *env_socket = getenv("NUMAPLACE_SOCKET"), *env_spool = getenv("NUMAPLACE_SPOOL");
    const char *env_table = getenv("NUMAPLACE_TABLE");

    guard_terminal();
    if (env_socket && *env_socket)
        cli.socket_path = env_socket;
    if (env_spool && *env_spool)
        cli.spool_dir = env_spool;
    if (env_table && *env_table)
        cli.table_path = env_table;
    i = cli_options_parse(&cli_global_options, true, argc, argv, global, &err);
    if (i < 0) {
        fprintf(stderr, "numaplace: %s\n", err.msg);
        cli_options_usage(stderr, usage_list);
        return 2;
    }
    if (global[CLI_GLOBAL_HELP]) {
        cli_options_usage(stdout, usage_list);
        return 0;
    }
    cli.socket_path = global[CLI_GLOBAL_SOCKET] ? global[CLI_GLOBAL_SOCKET] : cli.socket_path;
    cli.spool_dir = global[CLI_GLOBAL_SPOOL] ? global[CLI_GLOBAL_SPOOL] : cli.spool_dir;
    cli.table_path = global[CLI_GLOBAL_TABLE] ? global[CLI_GLOBAL_TABLE] : cli.table_path;
    cli.as_json = global[CLI_GLOBAL_JSON] != NULL;
    if (i >= argc) {
        cli_options_usage(stderr, usage_list);
        return 2;
    }
    /* --json may also follow the command (numaplace report 42 --json), before a "--". */
    for (int k = i + 1; k < argc && strcmp(argv[k], "--") != 0; k++)
        if (strcmp(argv[k], "--json") == 0) {
            cli.as_json = true;
            memmove(&argv[k], &argv[k + 1], (size_t)(argc - k - 1) * sizeof(char *));
            argc--;
            k--;
        }
    for (size_t c = 0; c < NCOMMANDS; c++)
        if (strcmp(argv[i], commands[c].name) == 0)
            return run_command(&commands[c], argc - i, argv + i);
    fprintf(stderr, "numaplace: unknown command \"%s\"; accepted:", argv[i]);
    for (size_t c = 0; c < cli_command_count; c++)
        fprintf(stderr, "%s %s", c ? "," : "", cli_command_options[c].command);
    fputc('\n', stderr);
    return 2;
}
