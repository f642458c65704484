/*
 * fwq_trace: the sched_switch tracepoint on each job CPU through perf_event_open (CLOCK_MONOTONIC
 * timestamps, one ring per CPU, drained when half full and after each measurement), so bench/fwq
 * can say what ran on a CPU in place of its FWQ thread. Reads the tracepoint's id and format from
 * tracefs (events/sched/sched_switch): a mounted one, else one it mounts in a child's private mount
 * namespace for the read (root with CAP_SYS_ADMIN). The events need root or
 * perf_event_paranoid <= -1.
 */
#ifndef NUMAPLACE_BENCH_FWQ_TRACE_H
#define NUMAPLACE_BENCH_FWQ_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "fwq_stats.h"

#define FWQ_TRACE_MAX_CPUS 256

struct fwq_trace {
    int ncpu;
    int fd[FWQ_TRACE_MAX_CPUS];
    void *ring[FWQ_TRACE_MAX_CPUS];
    size_t ring_bytes; /**< the whole mapping: one meta page and the data pages */
    struct fwq_switch_layout layout;
    /* what was drained since the last fwq_trace_clear, per CPU */
    struct fwq_switch *ev[FWQ_TRACE_MAX_CPUS];
    size_t nev[FWQ_TRACE_MAX_CPUS], cap[FWQ_TRACE_MAX_CPUS];
    uint64_t lost;    /**< records the kernel dropped (a ring full before it was drained) */
    char tracefs[96]; /**< where the tracepoint's id and format were read, for the report */
};

/**
 * Open the tracepoint on @p ncpu CPUs, disabled, with @p data_pages (a power of two) per ring.
 * @return 0, or -errno with the reason in @p why.
 */
int fwq_trace_open(struct fwq_trace *t, const int *cpus, int ncpu, size_t data_pages, char *why,
                   size_t why_len);

void fwq_trace_enable(struct fwq_trace *t, int on);

/** Move CPU index @p i's records from its ring to t->ev[i]. @return 0 or -errno. */
int fwq_trace_drain(struct fwq_trace *t, int i);

/** Forget what was drained (the buffers are kept). */
void fwq_trace_clear(struct fwq_trace *t);

/** Close everything; accepts a trace that failed to open. */
void fwq_trace_close(struct fwq_trace *t);

#endif
