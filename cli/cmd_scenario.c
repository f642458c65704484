/* numaplace scenario [--jobs | --runs] FILE: check a scenario file (docs/scenarios.md) and show
 * it; --jobs and --runs print plain lines for the runner script, so no shell parses JSON. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "numaplace/scenario.h"
#include "numaplace/scenario_file.h"

/* What the command prints: the summary, or one of the line lists. */
static const struct {
    const char *option; /* NULL: the summary, without an option */
    int (*print)(FILE *out, const struct np_scenario *s);
} views[] = {
    {NULL, np_scenario_print_summary},
    {"--jobs", np_scenario_print_jobs}, /* CLI_SCENARIO_JOBS + 1 */
    {"--runs", np_scenario_print_runs}, /* CLI_SCENARIO_RUNS + 1 */
};
#define NVIEWS (sizeof(views) / sizeof(views[0]))

int cmd_scenario(int argc, char **argv)
{
    size_t view = 0;
    const char *path = argc > 1 ? argv[1] : NULL;
    struct np_scenario s;
    struct np_err err = {0};
    int rc;

    for (size_t v = 1; v < NVIEWS; v++) /* views[v] is option v - 1 of the table */
        if (cli.opt[v - 1]) {
            if (view) {
                fprintf(stderr, "numaplace: scenario: %s and %s: one view at a time\n",
                        views[view].option, views[v].option);
                return 2;
            }
            view = v;
        }
    if (!path) {
        fprintf(stderr, "numaplace: scenario needs a FILE (a scenario file, or - for stdin)\n");
        return 2;
    }
    if (cli.as_json) {
        fprintf(stderr, "numaplace: scenario: --json is not offered (the file is the JSON)\n");
        return 2;
    }
    rc = strcmp(path, "-") == 0 ? np_scenario_read(stdin, "-", &s, &err)
                                : np_scenario_load(path, &s, &err);
    if (rc != 0) {
        fprintf(stderr, "numaplace: scenario: %s\n", err.msg);
        return 1;
    }
    rc = views[view].print(stdout, &s);
    np_scenario_fini(&s);
    if (rc == 0 && fflush(stdout) != 0)
        rc = -1;
    if (rc != 0) {
        fprintf(stderr, "numaplace: scenario: cannot write the output\n");
        return 1;
    }
    return 0;
}
