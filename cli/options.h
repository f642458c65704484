/*
 * cli/options.h - a command's options as a table: parsed from it, and the list of accepted
 * options in its messages printed from it, so the two never disagree.
 */
#ifndef NUMAPLACE_CLI_OPTIONS_H
#define NUMAPLACE_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "numaplace/common.h"

/** One option: a flag (@p value NULL, sets *@p set) or an option with a value (*@p arg). */
struct cli_option {
    const char *name;  /**< "--from" */
    const char *value; /**< what the value is, for messages ("S"); NULL for a flag */
    const char **arg;  /**< where the value goes (borrowed from argv) */
    bool *set;         /**< where a flag goes */
};

/**
 * Parses argv[1..argc-1] (argv[0] is the command) against @p opts; every argument must be one of
 * them. A repeated option keeps its last value.
 * @return 0, or -EINVAL with @p err naming the argument and the accepted options
 */
int cli_options_parse(const struct cli_option *opts, size_t nopts, int argc, char **argv,
                      struct np_err *err);

#endif
