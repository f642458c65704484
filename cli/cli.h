/* cli/cli.h - what the parts of `numaplace` (numaplace(1)) share: the global options and one
 * entry point per command. */
#ifndef NUMAPLACE_CLI_H
#define NUMAPLACE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "numaplace/common.h"
#include "numaplace/protocol.h"
#include "numaplace/sensitivity.h"

#define DEFAULT_SPOOL "/var/spool/numaplace"

/** The options before (or, for --json, after) the command. */
struct cli_options {
    const char *socket_path, *spool_dir;
    const char *table_path; /**< the sensitivity table (--table, NUMAPLACE_TABLE); NULL: shipped */
    unsigned timeout_ms;
    bool as_json;
    /** The running command's options, by its table's index (options.h): NULL absent, "" a flag
     *  given, else the value. The command's argv holds its operands alone. */
    const char **opt;
};

extern struct cli_options cli;

/* cmd_client.c: the local numaplaced's socket */
int cmd_status(int argc, char **argv);
int cmd_ping(int argc, char **argv);
int cmd_set_class(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
/** @p text as a job id (1 to UINT32_MAX) into @p id; else -1, said on stderr for @p command */
int cli_job_id(const char *command, const char *text, uint32_t *id);
/** One request to numaplaced; the error goes to stderr. @return 0 or -errno */
int cli_call(const struct np_proto_request *req, json_t **reply);
/** Wait at most @p max_s (polled ever more slowly: a report usually lands within milliseconds)
 *  until numaplaced tracks no step of @p job_id (@p ending_only: none "ending", its report on its
 *  way). @return the steps still listed (0: none, or numaplaced does not answer) */
size_t cli_wait_for_steps_to_end(uint32_t job_id, double max_s, bool ending_only);

/* cmd_report.c (report, jobs, replay), cmd_store.c, cmd_client.c (scenario), cmd_characterize.c */
int cmd_report(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_store(int argc, char **argv);
int cmd_scenario(int argc, char **argv);
int cmd_characterize(int argc, char **argv);

/** The sensitivity model from cli.table_path, loaded on first use; NULL when it cannot be (said
 *  once on stderr: the prediction is then unavailable, never guessed). Borrowed, static. */
const struct np_sens_model *cli_sensitivity(void);

/** Print "numaplace: ", the message and "\n" on stderr. @return @p rc (for `return cli_error`) */
int cli_error(int rc, const char *fmt, ...) NP_PRINTF(2, 3);

/* The terminal's stderr without the guard: only for progress lines, which return with '\r'. */
FILE *cli_unguarded_stderr(void);

#endif /* NUMAPLACE_CLI_H */
