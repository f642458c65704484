/* A command's options from its table (see options.h). */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* The table's options into @p out: the synopsis "[--from S] [--dry-run]" (@p synopsis), or the
 * accepted list "--from S, --dry-run" ("no options" when there are none). */
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
