/* A step's calls to numaplaced, from slurmstepd and its tasks (see step_helper.h). */
#include "step_helper.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * What the whole step sees: slurmstepd makes the advise and register calls, each task (a child
 * forked before any register call) its applied call. Plain memory would not carry a child's
 * timeout to its siblings, nor a register timeout to children forked earlier, so it lives in a
 * shared anonymous page mapped once in slurmstepd before the tasks fork; every task inherits
 * the mapping. NULL when it could not be mapped: slurmstepd's own calls still see
 * timed_out_here, and every task registers with a call from slurmstepd.
 */
struct np_step_shared {
    atomic_bool helper_silent; /* a numaplaced call of this step has timed out */
};

bool np_step_helper_enabled(const struct np_step_helper *h)
{
    return h->site && h->site->helper_socket && strcmp(h->site->helper_socket, "none") != 0;
}

void np_step_helper_start(struct np_step_helper *h)
{
    void *page;

    if (h->shared)
        return;
    page =
        mmap(NULL, sizeof(*h->shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        slurm_info("numaplace: cannot map the step's helper marker (%s): a helper that stops "
                   "answering may cost each task a timeout",
                   strerror(errno));
        return;
    }
    h->shared = page;
    atomic_init(&h->shared->helper_silent, false);
}

static bool helper_silent(const struct np_step_helper *h)
{
    return atomic_load(&h->timed_out_here) || (h->shared && atomic_load(&h->shared->helper_silent));
}

static void note_helper_timeout(struct np_step_helper *h)
{
    atomic_store(&h->timed_out_here, true);
    if (h->shared)
        atomic_store(&h->shared->helper_silent, true);
}

/* The one line per step (slurmstepd's) about numaplaced not taking the step. */
static void warn_unreached(struct np_step_helper *h, uint32_t job, uint32_t step, const char *why)
{
    if (h->warned)
        return;
    h->warned = true;
    slurm_info("numaplace: job %u step %u: helper not reached (%s); placement applies, the step "
               "is not monitored",
               job, step, why);
}

/* One request to numaplaced, its answer read (@p answered) or not, bounded by helper_timeout_ms,
 * and not made once a call of this step has timed out. @return 0 or -errno. */
static int helper_call(struct np_step_helper *h, const struct np_proto_request *req, bool answered,
                       struct np_err *err)
{
    char *line;
    json_t *reply = NULL;
    int rc;

    if (helper_silent(h))
        return np_err_set(err, -ETIMEDOUT,
                          "not asked: an earlier call of this step got no answer within %u ms",
                          h->site->helper_timeout_ms);
    line = np_proto_encode(req);
    if (!line)
        return np_err_set(err, -ENOMEM, "out of memory");
    rc = answered
             ? np_proto_call(h->site->helper_socket, line, h->site->helper_timeout_ms, &reply, err)
             : np_proto_send(h->site->helper_socket, line, h->site->helper_timeout_ms, err);
    free(line);
    if (rc == -ETIMEDOUT)
        note_helper_timeout(h);
    json_decref(reply);
    return rc;
}

/* In slurmstepd, once per step and only for auto: ask numaplaced for the nodes' traffic and
 * the job's history. Sent here (init_post_opt, as root) and read in user_init, so numaplaced
 * answers while Slurm sets the step up; each part is bounded by helper_timeout_ms like every
 * launch-time call. Every task inherits the answer, or the reason there is none (the
 * static choice then: docs/auto.md). */
void np_step_helper_advise_start(struct np_step_helper *h, spank_t sp, bool want_advice)
{
    struct np_proto_request *req = &h->advise_req;
    struct np_err err = {0};
    char *line;
    int fd, rc;

    h->hint_ok = false;
    h->hint_why[0] = '\0';
    *req = (struct np_proto_request){.op = NP_OP_ADVISE};
    if (!want_advice)
        return;
    if (!np_step_helper_enabled(h)) {
        snprintf(h->hint_why, sizeof(h->hint_why), "no helper configured (helper_socket=none)");
        return;
    }
    if (spank_get_item(sp, S_JOB_ID, &req->advise.job_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &req->advise.step_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &req->advise.uid) != ESPANK_SUCCESS) {
        snprintf(h->hint_why, sizeof(h->hint_why), "the step's ids are unknown");
        return;
    }
    if (spank_getenv(sp, "SLURM_JOB_NAME", req->advise.name, sizeof(req->advise.name)) !=
        ESPANK_SUCCESS)
        req->advise.name[0] = '\0';
    if (helper_silent(h)) {
        rc = np_err_set(&err, -ETIMEDOUT,
                        "not asked: an earlier call of this step got no answer within %u ms",
                        h->site->helper_timeout_ms);
    } else if (!(line = np_proto_encode(req))) {
        rc = np_err_set(&err, -ENOMEM, "out of memory");
    } else {
        fd = np_proto_connect(h->site->helper_socket, h->site->helper_timeout_ms, &err);
        rc = fd < 0 ? fd : np_proto_send_on(fd, line, h->site->helper_timeout_ms, &err);
        if (rc == 0)
            h->advise_fd = fd;
        else if (fd >= 0)
            close(fd);
        free(line);
    }
    if (rc < 0) {
        if (rc == -ETIMEDOUT)
            note_helper_timeout(h);
        snprintf(h->hint_why, sizeof(h->hint_why), "numaplaced did not answer: %.200s", err.msg);
        slurm_info("numaplace: job %u step %u: --numa-policy=auto without advice (%s); tasks "
                   "get the static choice",
                   req->advise.job_id, req->advise.step_id, h->hint_why);
    }
}

void np_step_helper_advise_finish(struct np_step_helper *h)
{
    struct np_err err = {0};
    json_t *reply = NULL;
    int rc;

    if (h->advise_fd < 0)
        return;
    /* The answer has usually come while Slurm set the step up; a full timeout from here all the
     * same, so that a slow setup does not make a helper that answers look silent. */
    rc = np_proto_receive(h->advise_fd, h->site->helper_timeout_ms, &reply, &err);
    close(h->advise_fd);
    h->advise_fd = -1;
    if (rc == -ETIMEDOUT) {
        note_helper_timeout(h);
        snprintf(err.msg, sizeof(err.msg), "no reply from the helper at %s within %u ms",
                 h->site->helper_socket, h->site->helper_timeout_ms);
    }
    if (rc == 0 && (rc = np_proto_hint_decode(reply, &h->hint, &err)) == 0) {
        h->hint_ok = true;
    } else {
        /* A refusal (a job name with a control character) is numaplaced's answer, not silence:
         * its message says so and why ("the helper refused: ..."). */
        snprintf(h->hint_why, sizeof(h->hint_why), "%s%.200s",
                 rc == -EREMOTEIO ? ""
                 : rc == -EPROTO  ? "numaplaced's advice is unreadable: "
                                  : "numaplaced did not answer: ",
                 err.msg);
        slurm_info("numaplace: job %u step %u: --numa-policy=auto without advice (%s); tasks "
                   "get the static choice",
                   h->advise_req.advise.job_id, h->advise_req.advise.step_id, h->hint_why);
    }
    json_decref(reply);
}

void np_step_helper_advice(const struct np_step_helper *h, struct np_auto_input *facts)
{
    const struct np_proto_hint *hint = &h->hint;

    facts->advice = h->hint_ok;
    snprintf(facts->no_advice, sizeof(facts->no_advice), "%.150s",
             h->hint_why[0] ? h->hint_why : "no advice");
    if (!h->hint_ok)
        return;
    if (hint->history_known && np_sensitivity_from_name(hint->history, &facts->history, NULL) == 0)
        facts->history_known = true;
    for (unsigned n = 0; n < NP_AUTO_MAX_NODES && n < NP_PROTO_ADVICE_MAX_NODES; n++) {
        facts->node[n].known =
            hint->node[n].present && (hint->node[n].measured || hint->node[n].cpu_busy);
        facts->node[n].cpu_busy = hint->node[n].cpu_busy;
        facts->node[n].loaded = hint->node[n].loaded;
        facts->node[n].utilisation = hint->node[n].utilisation;
    }
}

/* In slurmstepd (root) at init_post_opt, before the tasks fork: one socket to numaplaced per task
 * of a step of at most NP_REGISTER_AHEAD_MAX, so that slurmstepd sends each registration
 * without waiting for its answer, read only at the step's end: the launch waits for none. */
void np_step_helper_register_ahead(struct np_step_helper *h, spank_t sp)
{
    struct np_err err = {0};
    uint32_t tasks = 0;

    h->ahead_count = 0;
    if (!h->shared || !np_step_helper_enabled(h) || helper_silent(h) ||
        spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &tasks) != ESPANK_SUCCESS || tasks == 0 ||
        tasks > NP_REGISTER_AHEAD_MAX)
        return;
    for (unsigned i = 0; i < tasks; i++) {
        const int fd = np_proto_connect(h->site->helper_socket, h->site->helper_timeout_ms, &err);
        if (fd < 0) {
            /* Not running (refused at once): the calls in task_post_fork say so, once. */
            if (fd == -ETIMEDOUT)
                note_helper_timeout(h);
            for (unsigned j = 0; j < i; j++)
                close(h->ahead_fd[j]);
            return;
        }
        h->ahead_fd[i] = fd;
    }
    h->ahead_count = tasks;
}

/* On the task's own socket (register ahead), its answer read at the step's end; otherwise a
 * call. */
void np_step_helper_register(struct np_step_helper *h, const struct np_proto_request *req,
                             int local)
{
    struct np_err err = {0};

    if (local >= 0 && (unsigned)local < h->ahead_count && h->ahead_fd[local] >= 0) {
        char *line = helper_silent(h) ? NULL : np_proto_encode(req);
        int rc = line ? np_proto_send_on(h->ahead_fd[local], line, h->site->helper_timeout_ms, &err)
                      : -ETIMEDOUT;
        free(line);
        if (rc == 0) { /* kept open for the answer; the task's copy closes at its exec */
            h->ahead_sent[local] = true;
            return;
        }
        close(h->ahead_fd[local]);
        h->ahead_fd[local] = -1;
        if (rc == -ETIMEDOUT && !helper_silent(h))
            note_helper_timeout(h);
        /* Otherwise (numaplaced closed the socket, idle too long): a call, as for a large step. */
    }
    if (helper_call(h, req, true, &err) == 0)
        h->registered = true;
    else
        warn_unreached(h, req->reg.job_id, req->reg.step_id, err.msg);
}

/* The task may speak for itself only. */
void np_step_helper_applied(struct np_step_helper *h, spank_t sp, const char *policy,
                            const char *mode, const char *nodes, const char *cpus,
                            const char *reason, const struct np_auto_choice *choice)
{
    struct np_proto_request req = {.op = NP_OP_APPLIED};
    struct np_err err = {0};

    if (!np_step_helper_enabled(h) || helper_silent(h) ||
        spank_get_item(sp, S_JOB_ID, &req.applied.job_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &req.applied.step_id) != ESPANK_SUCCESS)
        return;
    req.applied.pid = getpid();
    snprintf(req.applied.policy, sizeof(req.applied.policy), "%s", policy);
    snprintf(req.applied.mode, sizeof(req.applied.mode), "%s", mode);
    snprintf(req.applied.nodes, sizeof(req.applied.nodes), "%s", nodes);
    snprintf(req.applied.cpus, sizeof(req.applied.cpus), "%s", cpus);
    snprintf(req.applied.reason, sizeof(req.applied.reason), "%s", reason);
    if (choice) { /* auto: the reason is for people, these facts for readers */
        struct np_applied_auto *facts = &req.applied.auto_facts;
        facts->given = true;
        snprintf(facts->sensitivity, sizeof(facts->sensitivity), "%s",
                 choice->source == NP_AUTO_SOURCE_NONE ? "unknown"
                 : choice->sensitive                   ? "high"
                                                       : "low");
        facts->task_nodes = choice->task_nodes;
        facts->allowed_nodes = choice->allowed_nodes;
        facts->loaded_nodes = choice->loaded_nodes;
    }
    /* No wait for the reply. numaplaced reads it after the task's registration, sent on an older
     * connection before Slurm let the task run (loop_read_order). */
    helper_call(h, &req, false, &err);
}

/* At the step's end, in slurmstepd: the answers to the registrations sent ahead, there long
 * since from a numaplaced that answers; a stopped one costs one timeout for them all. */
static void registrations_answered(struct np_step_helper *h, uint32_t job, uint32_t step)
{
    for (unsigned i = 0; i < h->ahead_count; i++) {
        struct np_err err = {0};
        json_t *reply = NULL;

        if (h->ahead_sent[i] && !helper_silent(h)) { /* else: a task that never forked */
            const int rc =
                np_proto_receive(h->ahead_fd[i], h->site->helper_timeout_ms, &reply, &err);
            if (rc == -ETIMEDOUT)
                note_helper_timeout(h);
            if (rc < 0)
                warn_unreached(h, job, step, err.msg);
            else if (!json_is_true(json_object_get(reply, "gone"))) /* else: ended before it */
                h->registered = true;
            json_decref(reply);
        }
        if (h->ahead_fd[i] >= 0)
            close(h->ahead_fd[i]);
        h->ahead_sent[i] = false;
    }
    h->ahead_count = 0;
}

void np_step_helper_end(struct np_step_helper *h, spank_t sp)
{
    uint32_t job = 0, step = 0;

    if (h->advise_fd >= 0) { /* user_init was not called: nobody read the advice */
        close(h->advise_fd);
        h->advise_fd = -1;
    }
    spank_get_item(sp, S_JOB_ID, &job);
    spank_get_item(sp, S_JOB_STEPID, &step);
    registrations_answered(h, job, step);
    if (h->registered && np_step_helper_enabled(h) && !helper_silent(h)) {
        /* Not awaited: numaplaced takes the step's final sample and writes its report while
         * Slurm ends the step. The epilog's store, which waits for a step numaplaced lists
         * "ending", connects later, and numaplaced reads older connections first. */
        struct np_proto_request req = {
            .op = NP_OP_STEP_END, .answer_at_end = true, .job_id = job, .step_id = step};
        struct np_err err = {0};
        if (helper_call(h, &req, false, &err) < 0)
            slurm_info("numaplace: job %u step %u: could not tell the helper the step ended "
                       "(%s); it ends the step itself when the tasks are gone",
                       req.job_id, req.step_id, err.msg);
        h->registered = false;
    }
    if (h->shared)
        munmap(h->shared, sizeof(*h->shared));
    h->shared = NULL;
    atomic_store(&h->timed_out_here, false);
}
