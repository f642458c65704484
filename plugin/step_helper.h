/*
 * A step's calls to numaplaced (docs/protocol.md), made by numaplace_task.so: advise is sent in
 * init_post_opt and read in user_init, so numaplaced answers while Slurm sets the step up;
 * registrations of a small step go on sockets connected ahead and are read at the step's end, so
 * no launch waits for them. Once a call of a step times out its later calls are skipped: a hung
 * numaplaced costs a launch one timeout and one log line, never its failure.
 */
#ifndef NUMAPLACE_PLUGIN_STEP_HELPER_H
#define NUMAPLACE_PLUGIN_STEP_HELPER_H

#include <stdatomic.h>
#include <stdbool.h>

#include <slurm/spank.h>

#include "numaplace/auto.h"
#include "numaplace/protocol.h"
#include "numaplace/siteconf.h"

/* At most this many tasks register ahead, so a step holds few of numaplaced's 64 client slots;
 * a larger step registers each task with a call. */
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
    /* register ahead: one socket per local task; ahead_count 0: calls instead */
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
