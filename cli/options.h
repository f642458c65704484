/* cli/options.h - each command's options as a table: getopt_long parses them from it, and every
 * printed list of them (the usage, a refusal's accepted options) is made from it. */
#ifndef NUMAPLACE_CLI_OPTIONS_H
#define NUMAPLACE_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "numaplace/common.h"

/** One option: a flag (@p value NULL) or an option taking a value. */
struct cli_option {
    const char *name;  /**< "--from" */
    const char *value; /**< what the value is, for messages ("S"); NULL for a flag */
};

/** A command's table: its options, its operands and what it does, for the usage. */
struct cli_command_options {
    const char *command;  /**< "migrate"; "" for the options before the command */
    const char *operands; /**< "JOBID[.STEP]", "" for none */
    int max_operands;
    const char *about; /**< the usage's description, lines joined by '\n', "@NAME@" expanded */
    const struct cli_option *opts;
    size_t nopts;
};

/* The tables (options.c), in the usage's order; the indices name each option. */
extern const struct cli_command_options cli_global_options, cli_command_options[];
extern const size_t cli_command_count;
enum { CLI_GLOBAL_SOCKET, CLI_GLOBAL_SPOOL, CLI_GLOBAL_TABLE, CLI_GLOBAL_JSON, CLI_GLOBAL_HELP };
enum { CLI_REPORT_STEPS, CLI_REPORT_PLOT, CLI_REPORT_NODE };
enum { CLI_JOBS_USER, CLI_JOBS_SINCE, CLI_JOBS_UNTIL };
enum {
    CLI_MIGRATE_FROM,
    CLI_MIGRATE_TO,
    CLI_MIGRATE_PAGES,
    CLI_MIGRATE_ORDER,
    CLI_MIGRATE_SCRIPT,
    CLI_MIGRATE_DRY_RUN,
    CLI_MIGRATE_CLOCK,
    CLI_MIGRATE_TIER
};
enum { CLI_SCENARIO_JOBS, CLI_SCENARIO_RUNS };
enum { CLI_STORE_NODES, CLI_STORE_PENDING, CLI_STORE_MERGE };
enum {
    CLI_CHAR_SECONDS,
    CLI_CHAR_SIZE,
    CLI_CHAR_LOADERS,
    CLI_CHAR_OUTPUT,
    CLI_CHAR_FORCE,
    CLI_CHAR_PRINT
};
/** Most options a command has. */
#define CLI_MAX_OPTIONS 8

/** The table of command @p name, NULL when there is no such command. Borrowed, static. */
const struct cli_command_options *cli_command_find(const char *name);

/**
 * Parse argv[1..argc-1] (argv[0]: the command) against @p cmd: `--opt VALUE`, `--opt=VALUE`, a
 * unique abbreviation, `--` ending the options. Operands may come between options (moved behind
 * them), unless @p in_order: then the first operand ends the options (those before a command).
 * @p values[k]: option k's value (borrowed), "" for a flag given, NULL when absent; the last wins.
 * @return the index in argv of the first operand, or -EINVAL with @p err naming the argument and
 *         the accepted options (a value missing, a flag given one, too many operands)
 */
int cli_options_parse(const struct cli_command_options *cmd, bool in_order, int argc, char **argv,
                      const char **values, struct np_err *err);

/** "[--from S] [--dry-run]": @p cmd's options, for the usage. */
void cli_options_synopsis(const struct cli_command_options *cmd, char *out, size_t size);

/** The usage: every command's synopsis and description from the tables, "@NAME@" replaced by
 *  @p expand(NAME) (a list of names from the code's own tables; @p expand NULL: NAME). */
void cli_options_usage(FILE *out, const char *(*expand)(const char *name));

#endif
