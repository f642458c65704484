/* A decoded scenario's lifetime and counts (numaplace/scenario.h); its file format is read by
 * lib/tables/scenario_file.c. */
#include "numaplace/scenario.h"

#include <stdlib.h>
#include <string.h>

void np_scenario_fini(struct np_scenario *s)
{
    if (!s)
        return;
    free(s->description);
    free(s->source);
    free(s->jobs);
    free(s->requests);
    free(s->runs);
    memset(s, 0, sizeof(*s));
}

size_t np_scenario_instances(const struct np_scenario *s)
{
    size_t n = 0;

    for (size_t i = 0; s && i < s->njobs; i++)
        n += s->jobs[i].copies;
    return n;
}
