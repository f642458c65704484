/*
 * man_lists: fills the man pages' lists of names from the tables the code uses, so a page can
 * never list an order, policy, class or trigger the code does not have, or miss one.
 *
 *   man_lists < numaplaced.8.in > numaplaced.8
 *
 * Replaces @LIST:NAME:SEP@ with the names of table NAME (policies, sensitivities, classes, and,
 * where the build has the migration module, orders, numaplaced's configuration keys
 * ("helperkeys"), triggers, move failures and request outcomes) joined by SEP ("bar": "|",
 * "pipe": " | ", "comma": ", "; "label": ", " with each name as the metrics page writes it, '-'
 * as '_'), written for roff ('-' as '\-'). Where the build has the sampler, "perfwhy" lists the
 * codes of numaplace_counters_info's reason.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "numaplace/names.h"
#ifdef NP_MAN_LISTS_MIGRATION
#include "numaplace/engine.h"
#include "numaplace/helperconf.h"
#include "numaplace/migration.h"
#endif
#ifdef NP_MAN_LISTS_PERF
#include "numaplace/perf.h"
#endif

/* The list NAME in ", "-separated form, or NULL when this build has no such table. */
static const char *list_of(const char *name)
{
    if (strcmp(name, "policies") == 0)
        return np_policy_names();
    if (strcmp(name, "sensitivities") == 0)
        return np_sensitivity_names();
    if (strcmp(name, "classes") == 0)
        return np_class_names();
#ifdef NP_MAN_LISTS_MIGRATION
    if (strcmp(name, "orders") == 0)
        return np_order_names();
    if (strcmp(name, "helperkeys") == 0)
        return np_helper_config_keys();
    if (strcmp(name, "triggers") == 0) {
        static char text[256];
        size_t len = 0;
        for (size_t i = 0; np_trigger_at(i) && len < sizeof(text); i++)
            len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s", i ? ", " : "",
                                    np_trigger_at(i)->name);
        return text;
    }
    if (strcmp(name, "failures") == 0) {
        static char text[256];
        size_t len = 0;
        for (int f = 0; f < NP_MOVE_FAIL_COUNT && len < sizeof(text); f++)
            len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s", f ? ", " : "",
                                    np_move_failure_name((enum np_move_failure)f));
        return text;
    }
    if (strcmp(name, "outcomes") == 0) {
        static char text[256];
        size_t len = 0;
        for (int o = 0; o < NP_OUTCOME_COUNT && len < sizeof(text); o++)
            len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s", o ? ", " : "",
                                    np_request_outcome_name((enum np_request_outcome)o));
        return text;
    }
#endif
#ifdef NP_MAN_LISTS_PERF
    if (strcmp(name, "perfwhy") == 0) {
        static char text[256];
        size_t len = 0;
        for (int w = 0; w < NP_PERF_WHY_COUNT && len < sizeof(text); w++)
            len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s", w ? ", " : "",
                                    np_perf_why_name((enum np_perf_why)w));
        return text;
    }
#endif
    return NULL;
}

static const char *separator(const char *style)
{
    return strcmp(style, "bar") == 0     ? "|"
           : strcmp(style, "pipe") == 0  ? " | "
           : strcmp(style, "comma") == 0 ? ", "
           : strcmp(style, "label") == 0 ? ", "
                                         : NULL;
}

/* Write LIST (", "-separated) with SEP between names, roff-escaped; @p label: '-' as '_'. */
static void put_list(const char *list, const char *sep, bool label)
{
    for (const char *p = list; *p; p++) {
        if (p[0] == ',' && p[1] == ' ') {
            fputs(sep, stdout);
            p++;
        } else if (*p == '-') {
            fputs(label ? "_" : "\\-", stdout);
        } else {
            putchar(*p);
        }
    }
}

int main(void)
{
    char line[4096];
    unsigned lineno = 0;

    while (fgets(line, sizeof(line), stdin)) {
        char *p = line, *at;
        lineno++;
        while ((at = strstr(p, "@LIST:")) != NULL) {
            char name[32], style[16];
            const char *list, *sep;
            char *end = strchr(at + 6, '@');
            if (!end || sscanf(at, "@LIST:%31[a-z]:%15[a-z]@", name, style) != 2 ||
                !(list = list_of(name)) || !(sep = separator(style))) {
                fprintf(stderr,
                        "man_lists: line %u: bad or unknown @LIST:NAME:SEP@ (names: "
                        "policies, sensitivities, classes, orders, triggers, failures, outcomes, "
                        "perfwhy; separators: bar, pipe, comma, label)\n",
                        lineno);
                return 1;
            }
            fwrite(p, 1, (size_t)(at - p), stdout);
            put_list(list, sep, strcmp(style, "label") == 0);
            p = end + 1;
        }
        fputs(p, stdout);
    }
    return 0;
}
