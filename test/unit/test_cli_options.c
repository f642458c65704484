/* cli_options_parse: a command's options from its table with getopt_long; every option taking a
 * value of every command takes it as --opt=VALUE and as --opt VALUE; the accepted options in the
 * messages come from the same table. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_test.h"
#include "options.h"

static const struct {
    const char *args[6];      /* after the command; NULL ends */
    int rc;                   /* the first operand's index, or -EINVAL */
    const char *from, *order; /* expected values (NULL: unset) */
    bool dry_run;
    const char *error; /* in the message when refused */
} cases[] = {
    {{NULL}, 1, NULL, NULL, false, NULL},
    {{"--from", "1", "--dry-run", NULL}, 4, "1", NULL, true, NULL},
    {{"--from=1", "--order=best", NULL}, 3, "1", "best", false, NULL},
    {{"--from=", NULL}, -EINVAL, NULL, NULL, false, "--from needs a value (S), not an empty one"},
    {{"--order", "", NULL}, -EINVAL, NULL, NULL, false, "--order needs a value (ORDER), not an"},
    {{"--order", "best", "--order", "worst", NULL}, 5, NULL, "worst", false, NULL},
    {{"--dry", "--ord=best", NULL}, 3, NULL, "best", true, NULL}, /* unique abbreviations */
    {{"--from", NULL}, -EINVAL, NULL, NULL, false, "--from needs a value (S)"},
    {{"--dry-run=yes", NULL}, -EINVAL, NULL, NULL, false, "--dry-run takes no value"},
    {{"--form", "1", NULL},
     -EINVAL,
     NULL,
     NULL,
     false,
     "unexpected \"--form\" (accepted: --from S, --to D, --pages N, --order ORDER, --script "
     "FILE, --dry-run, --clock after-reply|fixed, --tier down|up)"},
    {{"-x", NULL}, -EINVAL, NULL, NULL, false, "unexpected \"-x\""},
    {{"stray", NULL}, -EINVAL, NULL, NULL, false, "unexpected \"stray\""},
    {{"--", "--from", NULL}, -EINVAL, NULL, NULL, false, "unexpected \"--from\""}, /* an operand */
};

START_TEST(test_parse)
{
    const struct cli_command_options *migrate = cli_command_find("migrate");
    const char *values[CLI_MAX_OPTIONS];
    char *argv[8] = {"migrate"};
    struct np_err err = {0};
    int argc = 1;

    while (cases[_i].args[argc - 1])
        argv[argc] = (char *)cases[_i].args[argc - 1], argc++;
    ck_assert_int_eq(cli_options_parse(migrate, false, argc, argv, values, &err), cases[_i].rc);
    if (cases[_i].rc >= 0) {
        ck_assert_pstr_eq(values[CLI_MIGRATE_FROM], cases[_i].from);
        ck_assert_pstr_eq(values[CLI_MIGRATE_ORDER], cases[_i].order);
        ck_assert_int_eq(values[CLI_MIGRATE_DRY_RUN] != NULL, cases[_i].dry_run);
    } else {
        ck_assert_msg(strstr(err.msg, cases[_i].error), "'%s'", err.msg);
    }
}
END_TEST

/* Operands between options are moved behind them; "-" (stdin) is an operand; "--" ends options. */
START_TEST(test_operands)
{
    const char *values[CLI_MAX_OPTIONS];
    char *argv[] = {"report", "42", "--plot=x.png", "--steps", NULL};
    char *dash[] = {"scenario", "--runs", "-", NULL};
    char *after[] = {"report", "--", "--42", NULL};
    char *before[] = {"numaplace", "--json", "status", "--socket", "x", NULL};
    struct np_err err = {0};

    ck_assert_int_eq(cli_options_parse(cli_command_find("report"), false, 4, argv, values, &err),
                     3);
    ck_assert_str_eq(argv[3], "42");
    ck_assert_pstr_eq(values[CLI_REPORT_PLOT], "x.png");
    ck_assert_pstr_eq(values[CLI_REPORT_STEPS], "");
    ck_assert_int_eq(cli_options_parse(cli_command_find("scenario"), false, 3, dash, values, &err),
                     2);
    ck_assert_str_eq(dash[2], "-");
    ck_assert_int_eq(cli_options_parse(cli_command_find("report"), false, 3, after, values, &err),
                     2);
    ck_assert_str_eq(after[2], "--42");
    /* the options before the command stop at it: what follows is the command's */
    ck_assert_int_eq(cli_options_parse(&cli_global_options, true, 5, before, values, &err), 2);
    ck_assert_pstr_eq(values[CLI_GLOBAL_JSON], "");
    ck_assert_ptr_null(values[CLI_GLOBAL_SOCKET]);
}
END_TEST

/* Every option of every table, as --opt=VALUE and --opt VALUE (or alone, a flag). */
static void each_option(int form)
{
    const struct cli_command_options *tables[32];
    size_t ntables = 0, checked = 0;

    tables[ntables++] = &cli_global_options;
    for (size_t c = 0; c < cli_command_count; c++)
        tables[ntables++] = &cli_command_options[c];
    for (size_t t = 0; t < ntables; t++)
        for (size_t k = 0; k < tables[t]->nopts; k++) {
            const struct cli_option *o = &tables[t]->opts[k];
            const char *values[CLI_MAX_OPTIONS];
            char joined[64], *argv[4] = {"cmd"};
            struct np_err err = {0};
            int argc = 1;

            snprintf(joined, sizeof(joined), "%s=v,1", o->name);
            if (!o->value)
                argv[argc++] = (char *)o->name;
            else if (form == 0)
                argv[argc++] = joined;
            else
                argv[argc++] = (char *)o->name, argv[argc++] = "v,1";
            ck_assert_msg(cli_options_parse(tables[t], t == 0, argc, argv, values, &err) == argc,
                          "%s %s: %s", tables[t]->command, argv[1], err.msg);
            ck_assert_pstr_eq(values[k], o->value ? "v,1" : "");
            checked++;
        }
    ck_assert_uint_ge(checked, 20);
}

START_TEST(test_every_option)
{
    each_option(_i);
}
END_TEST

/* The usage lists every option of every table: it is printed from them. */
START_TEST(test_usage_from_tables)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    ck_assert_ptr_nonnull(out);
    cli_options_usage(out, NULL);
    fclose(out);
    for (size_t c = 0; c < cli_command_count; c++) {
        char synopsis[512], line[600];
        cli_options_synopsis(&cli_command_options[c], synopsis, sizeof(synopsis));
        snprintf(line, sizeof(line), "  %s%s%s", cli_command_options[c].command,
                 synopsis[0] ? " " : "", synopsis);
        ck_assert_msg(strstr(text, line), "usage lacks '%s'", line);
    }
    ck_assert_ptr_nonnull(strstr(text, "[--merge]"));
    free(text);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_options");
    TCase *tc = tcase_create("parse");

    tcase_add_loop_test(tc, test_parse, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, test_operands);
    tcase_add_loop_test(tc, test_every_option, 0, 2);
    tcase_add_test(tc, test_usage_from_tables);
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
