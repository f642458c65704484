/* numaplace scenario [--jobs | --runs] FILE: check a scenario file (docs/scenarios.md) and show
 * it; --jobs and --runs print plain lines for the runner script, so no shell parses JSON. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "numaplace/scenario.h"
#include "numaplace/scenario_file.h"

/* What the command prints: the summary, or one of the line lists. */
static const struct {
    const char *option; /* NULL: the summary, without an option */
    int (*print)(FILE *out, const struct np_scenario *s);
} views[] = {
    {NULL, np_scenario_print_summary},
    {"--jobs", np_scenario_print_jobs},
    {"--runs", np_scenario_print_runs},
};
#define NVIEWS (sizeof(views) / sizeof(views[0]))

int cli_scenario_open(const char *path, struct np_scenario *s, struct np_err *err)
{
    if (strcmp(path, "-") == 0)
        return np_scenario_read(stdin, "-", s, err);
    return np_scenario_load(path, s, err);
}

int cmd_scenario(int argc, char **argv)
{
    size_t view = 0;
    const char *path = NULL;
    struct np_scenario s;
    struct np_err err = {0};
    int rc;

    for (int i = 1; i < argc; i++) {
        size_t v = 1;
        while (v < NVIEWS && strcmp(argv[i], views[v].option) != 0)
            v++;
        if (v < NVIEWS && view == 0) {
            view = v;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "numaplace: scenario: %s option %s (accepted: one of",
                    v < NVIEWS ? "a second" : "unexpected", argv[i]);
            for (size_t o = 1; o < NVIEWS; o++)
                fprintf(stderr, "%s %s", o > 1 ? "," : "", views[o].option);
            fprintf(stderr, ")\n");
            return 2;
        } else if (!path) {
            path = argv[i];
        } else {
            fprintf(stderr, "numaplace: scenario takes one FILE (\"%s\" is a second)\n", argv[i]);
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "numaplace: scenario needs a FILE (a scenario file, or - for stdin)\n");
        return 2;
    }
    if (cli.as_json) {
        fprintf(stderr, "numaplace: scenario: --json is not offered (the file is the JSON)\n");
        return 2;
    }
    if (cli_scenario_open(path, &s, &err) != 0) {
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
