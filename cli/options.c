/* A command's options from its table (see options.h). */
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* "--from S, --to D, --dry-run": the accepted options, from the table. */
static void accepted(const struct cli_option *opts, size_t nopts, char *out, size_t size)
{
    size_t len = 0;

    out[0] = '\0';
    for (size_t k = 0; k < nopts && len < size; k++) {
        const int n = snprintf(out + len, size - len, "%s%s%s%s", k ? ", " : "", opts[k].name,
                               opts[k].value ? " " : "", opts[k].value ? opts[k].value : "");
        if (n < 0)
            break;
        len += (size_t)n;
    }
}

int cli_options_parse(const struct cli_option *opts, size_t nopts, int argc, char **argv,
                      struct np_err *err)
{
    char list[512];

    for (int i = 1; i < argc; i++) {
        size_t k = 0;
        while (k < nopts && strcmp(argv[i], opts[k].name) != 0)
            k++;
        if (k < nopts && !opts[k].value) {
            *opts[k].set = true;
            continue;
        }
        if (k < nopts && i + 1 < argc) {
            *opts[k].arg = argv[++i];
            continue;
        }
        accepted(opts, nopts, list, sizeof(list));
        if (k < nopts)
            return np_err_set(err, -EINVAL, "%s needs a value (%s)", argv[i], opts[k].value);
        return np_err_set(err, -EINVAL, "unexpected \"%.200s\" (accepted: %s)", argv[i], list);
    }
    return 0;
}
