/* The bound on CPU lists from outside (see numaplace/cpulist.h). */
#include "numaplace/cpulist.h"

#include <errno.h>

bool np_cpu_list_bounded(const char *text)
{
    unsigned long number = 0;
    bool in_number = false, after_number = false;

    for (const char *p = text; *p; p++) {
        if (*p >= '0' && *p <= '9') {
            /* "08": hwloc reads numbers with base 0, so a leading zero is octal ("08-1124"
             * became a 512 MB bitmap, fuzz_helperconf) */
            if (in_number && number == 0)
                return false;
            number = (in_number ? number * 10 : 0) + (unsigned long)(*p - '0');
            if (number >= NP_CPU_LIST_LIMIT)
                return false;
            in_number = after_number = true;
            continue;
        }
        in_number = false;
        if (*p == '-') {
            if (!after_number)
                return false; /* "-1": hwloc reads it as ULONG_MAX */
            after_number = false;
        } else if (*p != ',' && *p != ' ') {
            return false; /* hex ("0x10"), letters, other signs */
        } else {
            after_number = false;
        }
    }
    return true;
}

/* One decimal number below the limit, no leading zero (hwloc, which later reads some of these
 * lists again, takes "08" as octal). @return the character after it, or NULL. */
static const char *read_number(const char *p, unsigned *out)
{
    unsigned long number = 0;
    const char *start = p;

    if (*p < '0' || *p > '9')
        return NULL;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (p > start && number == 0)
            return NULL;
        number = number * 10 + (unsigned long)(*p - '0');
        if (number >= NP_CPU_LIST_LIMIT)
            return NULL;
    }
    *out = (unsigned)number;
    return p;
}

int np_cpu_list_parse(const char *text, const char *what, np_cpu_range_fn *add, void *ctx,
                      struct np_err *err)
{
    const char *p = text, *next;

    while (*p) {
        unsigned first, last;
        int rc;

        if (!(next = read_number(p, &first)))
            goto bad;
        p = next;
        last = first;
        if (*p == '-') {
            if (!(next = read_number(p + 1, &last)) || last < first)
                goto bad;
            p = next;
        }
        if ((rc = add(ctx, first, last)) < 0)
            return rc;
        if (*p == ',') {
            next = p + 1;
            while (*next == ' ')
                next++;
            if (!*next)
                goto bad;
            p = next;
        } else if (*p) {
            goto bad;
        }
    }
    return 0;
bad:
    return np_err_set(err, -EINVAL,
                      "invalid %s '%s' at '%s': expected decimal numbers below %u (no leading "
                      "zeros) and ascending ranges like \"0-3,8\"",
                      what, text, p, NP_CPU_LIST_LIMIT);
}
