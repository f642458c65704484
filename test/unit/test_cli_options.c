/* cli_options_parse: a command's options from one table; the accepted options in its messages come
 * from the same table. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "np_test.h"
#include "options.h"

static const struct {
    const char *args[5]; /* after the command; NULL ends */
    int rc;
    const char *from, *order; /* expected values (NULL: unset) */
    bool dry_run;
    const char *error; /* in the message when refused */
} cases[] = {
    {{NULL}, 0, NULL, NULL, false, NULL},
    {{"--from", "1", "--dry-run", NULL}, 0, "1", NULL, true, NULL},
    {{"--order", "best", "--order", "worst", NULL}, 0, NULL, "worst", false, NULL},
    {{"--from", NULL}, -EINVAL, NULL, NULL, false, "--from needs a value (S)"},
    {{"--form", "1", NULL},
     -EINVAL,
     NULL,
     NULL,
     false,
     "unexpected \"--form\" (accepted: --from S, --order ORDER, --dry-run)"},
    {{"stray", NULL}, -EINVAL, NULL, NULL, false, "unexpected \"stray\""},
};

START_TEST(test_parse)
{
    const char *from = NULL, *order = NULL;
    bool dry_run = false;
    const struct cli_option opts[] = {
        {"--from", "S", &from, NULL},
        {"--order", "ORDER", &order, NULL},
        {"--dry-run", NULL, NULL, &dry_run},
    };
    char *argv[6] = {"migrate"};
    struct np_err err = {0};
    int argc = 1;

    while (cases[_i].args[argc - 1])
        argv[argc] = (char *)cases[_i].args[argc - 1], argc++;
    ck_assert_int_eq(cli_options_parse(opts, 3, argc, argv, &err), cases[_i].rc);
    if (cases[_i].rc == 0) {
        ck_assert_pstr_eq(from, cases[_i].from);
        ck_assert_pstr_eq(order, cases[_i].order);
        ck_assert_int_eq(dry_run, cases[_i].dry_run);
    } else {
        ck_assert_msg(strstr(err.msg, cases[_i].error), "'%s'", err.msg);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_options");
    TCase *tc = tcase_create("parse");

    tcase_add_loop_test(tc, test_parse, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    suite_add_tcase(s, tc);
    return np_test_run(s);
}
