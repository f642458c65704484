/* Freeing a summary's C data (numaplace/summary_model.h), whole or one member of a node: below
 * the encoder and the decoder, which both free what they built. */
#include "numaplace/summary_model.h"

#include <stdlib.h>
#include <string.h>

#include "summary_priv.h"

static void step_free(struct np_sum_step *st)
{
    free(st->step);
    free(st->policy);
    free(st->sensitivity);
    free(st->cpus);
    free(st->start);
    free(st->end);
    free(st->job_class);
    free(st->class_source);
    free(st->helper_shared_cpus);
    free(st->counters_unavailable);
    np_map_free(&st->applied);
    free(st->local_nodes);
    memset(st, 0, sizeof(*st));
}

static void migrations_free(struct np_sum_migrations *m)
{
    np_map_free(&m->in_bytes);
    np_map_free(&m->out_bytes);
    np_map_free(&m->failed_pages);
    for (size_t i = 0; i < m->ntriggers; i++)
        free(m->triggers[i].name);
    free(m->triggers);
    free(m->source);
    memset(m, 0, sizeof(*m));
}

static void bytes_free(struct np_sum_bytes *b)
{
    np_map_free(&b->map);
    np_figure_free(&b->unavailable);
    b->is_map = false;
}

void np_sum_timeline_free(struct np_sum_timeline *tl)
{
    free(tl->t.v);
    free(tl->bandwidth.v);
    free(tl->cpi.v);
    for (size_t i = 0; i < tl->nnode_bytes; i++) {
        free(tl->node_bytes[i].node);
        free(tl->node_bytes[i].bytes.v);
    }
    free(tl->node_bytes);
    for (size_t i = 0; i < tl->nevents; i++)
        free(tl->events[i].label);
    free(tl->events);
    free(tl->bandwidth_note);
    free(tl->cpi_note);
    free(tl->step);
    memset(tl, 0, sizeof(*tl));
}

void np_sum_node_free(struct np_sum_node *n)
{
    if (!n)
        return;
    free(n->name);
    for (size_t i = 0; i < n->nsteps; i++)
        step_free(&n->steps[i]);
    free(n->steps);
    free(n->start);
    free(n->end);
    free(n->sensitivity);
    np_strs_free(&n->policy_requested);
    np_map_free(&n->policy_applied);
    np_figure_free(&n->local_share);
    np_figure_free(&n->cpi);
    np_figure_free(&n->bandwidth);
    bytes_free(&n->pages_peak_bytes);
    bytes_free(&n->pages_end_bytes);
    migrations_free(&n->migrations);
    for (int k = 0; k < NP_OS_NMEMBERS; k++)
        np_figure_free(&n->os.fig[k]);
    np_sum_timeline_free(&n->timeline);
    memset(n, 0, sizeof(*n));
}

void np_sum_free(struct np_sum *s)
{
    if (!s)
        return;
    free(s->schema);
    free(s->user);
    free(s->sensitivity);
    free(s->start);
    free(s->end);
    np_strs_free(&s->policy_requested);
    np_strs_free(&s->missing_nodes);
    np_map_free(&s->policy_applied);
    for (size_t i = 0; i < s->nnodes; i++)
        np_sum_node_free(&s->nodes[i]);
    free(s->nodes);
    for (size_t i = 0; i < s->nskipped; i++) {
        free(s->skipped[i].node);
        free(s->skipped[i].step);
        free(s->skipped[i].reason);
    }
    free(s->skipped);
    for (size_t i = 0; i < s->ntrimmed; i++)
        free(s->trimmed[i].what);
    free(s->trimmed);
    np_figure_free(&s->totals.local_share);
    np_figure_free(&s->totals.kernel_time_share);
    np_sum_folded_free(&s->folded);
    memset(s, 0, sizeof(*s));
}

void np_sum_node_drop(struct np_sum_node *n, unsigned member)
{
    np_keys_del(&n->keys, member);
    switch (member) {
    case NP_NODE_STEPS:
        for (size_t i = 0; i < n->nsteps; i++)
            step_free(&n->steps[i]);
        free(n->steps);
        n->steps = NULL;
        n->nsteps = 0;
        break;
    case NP_NODE_POLICY_REQUESTED:
        np_strs_free(&n->policy_requested);
        break;
    case NP_NODE_POLICY_APPLIED:
        np_map_free(&n->policy_applied);
        break;
    case NP_NODE_LOCAL_SHARE:
        np_figure_free(&n->local_share);
        break;
    case NP_NODE_CPI:
        np_figure_free(&n->cpi);
        break;
    case NP_NODE_BANDWIDTH:
        np_figure_free(&n->bandwidth);
        break;
    case NP_NODE_PAGES_PEAK_BYTES:
        bytes_free(&n->pages_peak_bytes);
        break;
    case NP_NODE_PAGES_END_BYTES:
        bytes_free(&n->pages_end_bytes);
        break;
    case NP_NODE_MIGRATIONS:
        migrations_free(&n->migrations);
        break;
    case NP_NODE_OS_INTERFERENCE:
        for (int k = 0; k < NP_OS_NMEMBERS; k++)
            np_figure_free(&n->os.fig[k]);
        memset(&n->os, 0, sizeof(n->os));
        break;
    case NP_NODE_TIMELINE:
        np_sum_timeline_free(&n->timeline);
        break;
    default:
        break; /* numbers and strings: the key is what says they are there */
    }
}
