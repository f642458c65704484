/* The bound on CPU lists from outside (see numaplace/cpulist.h). */
#include "numaplace/cpulist.h"

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
