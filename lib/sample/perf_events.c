/* The perf events numaplace counts, by name and report label (see numaplace/perf.h). Kept apart
 * from perf.c so that what reads reports and samples needs no libpfm4. */
#include "numaplace/perf.h"

#include <stddef.h>

static const struct {
    const char *name, *label;
} events[NP_PERF_NEVENTS] = {
    [NP_PERF_CYCLES] = {"perf::CYCLES", "cycles"},
    [NP_PERF_INSTRUCTIONS] = {"perf::INSTRUCTIONS", "instructions"},
    [NP_PERF_LLC_LOAD_MISSES] = {"perf::LLC-LOAD-MISSES", "llc_load_misses"},
    [NP_PERF_LLC_STORE_MISSES] = {"perf::LLC-STORE-MISSES", "llc_store_misses"},
    [NP_PERF_TASK_CLOCK] = {"perf::TASK-CLOCK", "task_clock_ns"},
    [NP_PERF_CONTEXT_SWITCHES] = {"perf::CONTEXT-SWITCHES", "context_switches"},
    [NP_PERF_PAGE_FAULTS] = {"perf::PAGE-FAULTS", "page_faults"},
};

const char *np_perf_event_name(enum np_perf_event ev)
{
    return (unsigned)ev < NP_PERF_NEVENTS ? events[ev].name : NULL;
}

const char *np_perf_event_label(enum np_perf_event ev)
{
    return (unsigned)ev < NP_PERF_NEVENTS ? events[ev].label : NULL;
}
