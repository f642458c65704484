/*
 * A step's calls to numaplaced (docs/protocol.md), made by numaplace_task.so:
 *   advise (--numa-policy=auto): sent in init_post_opt (slurmstepd, root), its answer read in
 *     user_init, so numaplaced answers while Slurm sets the step up;
 *   register ahead: one socket per task of a small step, connected in init_post_opt; slurmstepd
 *     sends each registration after the task's fork, before Slurm lets the task run, and reads
 *     the answers at the step's end: no launch waits for them (a larger step: a call per task);
 *   applied (each task, before exec, not awaited) and step_end (slurmstepd at the step's end).
 * Every call has a short bounded timeout; once one call of a step has timed out, the step's later
 * calls are not made, so a numaplaced that accepts but never answers costs a launch one timeout
 * and one log line, and never fails it.
 */
#ifndef NUMAPLACE_PLUGIN_STEP_HELPER_H
#define NUMAPLACE_PLUGIN_STEP_HELPER_H

#include <stdatomic.h>
#include <stdbool.h>

#include <slurm/spank.h>

#include "numaplace/auto.h"
#include "numaplace/protocol.h"
#include "numaplace/siteconf.h"

/* Tasks of a step registered on sockets connected before the fork (register ahead): at most
 * this many, so that a step holds few of numaplaced's client slots (64 for the node) while it
 * starts; a larger step registers each task with a call from slurmstepd. */
#define NP_REGISTER_AHEAD_MAX 8

struct np_step_shared; /* what slurmstepd and its tasks see alike (step_helper.c) */

/* One step's calls, set up in slurmstepd and inherited by every task's fork. Zeroed, with
 * advise_fd -1, before the step's first call; np_step_helper_end leaves it so again. */
struct np_step_helper {
    const struct np_site_config *site; /* borrowed from numaplace.so: set it before each call */
    struct np_step_shared *shared;     /* NULL until mapped, or when it could not be */
    atomic_bool timed_out_here;        /* a call from this process timed out */
    bool warned;                       /* slurmstepd's one log line per step */
    bool registered;                   /* numaplaced took at least one task of this step */
    /* register ahead: one socket per local task; ahead_count is 0 when the tasks register with
     * calls */
    int ahead_fd[NP_REGISTER_AHEAD_MAX];
    bool ahead_sent[NP_REGISTER_AHEAD_MAX]; /* task i's registration is on ahead_fd[i] */
    unsigned ahead_count;
    /* auto: numaplaced's placement hint, or why there is none */
    struct np_proto_hint hint;
    bool hint_ok;
    char hint_why[NP_ERR_MSG_MAX];
    int advise_fd; /* the advise request's socket, until its answer is read */
    struct np_proto_request advise_req;
};

/* Whether the site configured a numaplaced to call (helper_socket is not "none"). */
bool np_step_helper_enabled(const struct np_step_helper *h);

/* In slurmstepd before the tasks fork (init_post_opt, or user_init when that was not called):
 * maps the page the step's tasks share. */
void np_step_helper_start(struct np_step_helper *h);

/* init_post_opt: send the advise request (when @p want_advice: the step's policy is auto), then
 * connect the tasks' sockets. */
void np_step_helper_advise_start(struct np_step_helper *h, spank_t sp, bool want_advice);
void np_step_helper_register_ahead(struct np_step_helper *h, spank_t sp);

/* user_init: read the advice asked in np_step_helper_advise_start. */
void np_step_helper_advise_finish(struct np_step_helper *h);

/* The advice's part of np_auto_choose's input: advice, no_advice, history and node[]. */
void np_step_helper_advice(const struct np_step_helper *h, struct np_auto_input *facts);

/* task_post_fork, in slurmstepd: send @p req (a register request) for local task @p local, on
 * its own socket when it has one (its answer read by np_step_helper_end), else with a call. */
void np_step_helper_register(struct np_step_helper *h, const struct np_proto_request *req,
                             int local);

/* In the task before exec: tell numaplaced what it applied (@p choice: auto's facts, or NULL). */
void np_step_helper_applied(struct np_step_helper *h, spank_t sp, const char *policy,
                            const char *mode, const char *nodes, const char *cpus,
                            const char *reason, const struct np_auto_choice *choice);

/* exit, in slurmstepd: read the registrations' answers, tell numaplaced the step ended, and
 * release what the step held. */
void np_step_helper_end(struct np_step_helper *h, spank_t sp);

#endif
