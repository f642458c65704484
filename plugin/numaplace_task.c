/*
 * numaplace_task.so - the step side of the numaplace SPANK plugin, loaded by numaplace.so in
 * slurmstepd only (numaplace_task.h says why it is a module of its own).
 *
 *   init_post_opt (slurmstepd, root, once per step): sends numaplaced the advise request for
 *     --numa-policy=auto, and connects one socket per task for the tasks' registrations (at
 *     most NP_REGISTER_AHEAD_MAX tasks), which every task inherits across fork.
 *   user_init (once per step): loads the topology, then reads the advice (its answer came while
 *     Slurm set the step up); every task inherits both across fork.
 *   task_post_fork (slurmstepd, root, after each task's fork): sends the task's registration
 *     on its socket without waiting (a step of more tasks: a call per task, as before).
 *   task_init (in each task, after Slurm's CPU and memory binding, before exec): reads the task's
 *     real CPUs, decides, applies set_mempolicy, exports what was applied, waits for numaplaced's
 *     answer to its registration (so its counters start before the program does), tells
 *     numaplaced what it applied.
 *   exit (slurmstepd at the step's end): tells numaplaced the step ended.
 * Every helper call has a short bounded timeout; once one call of a step has timed out, the
 * step's later calls are not made (the step's shared helper_silent), so a numaplaced that accepts
 * but never answers costs a launch one timeout and one log line, and never fails it. Own trouble
 * (no topology, a refused system call) is logged and the task runs with the kernel default, unless
 * the site set on_error=fail.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "numaplace/placement.h"
#include "numaplace/protocol.h"
#include "numaplace/siteconf.h"
#include "numaplace/topology.h"
#include "numaplace_task.h"
#include "numaplace/mempolicy.h"

/* Tasks of a step registered on sockets connected before the fork (register_ahead): at most
 * this many, so that a step holds few of numaplaced's client slots (64 for the node) while it
 * starts; a larger step registers each task with a call from slurmstepd. */
#define NP_REGISTER_AHEAD_MAX 8

/* The step's settings, borrowed from numaplace.so for the duration of each call. */
static const struct numaplace_step_settings *plugin;
/* Per-step facts, found once in slurmstepd (user_init) and inherited by every task's fork. */
static struct np_topology *topology;
static char topology_error[NP_ERR_MSG_MAX];
static hwloc_bitmap_t step_cpus; /* the step's CPUs on this host, NULL when unknown */
static bool have_preferred_many; /* the kernel takes MPOL_PREFERRED_MANY */
static bool helper_registered;   /* slurmstepd registered at least one task of this step */
static bool helper_warned;       /* the one log line per step (where `shared` is not mapped) */
/*
 * What the whole step sees: slurmstepd makes the advise and register calls, each task (a child
 * forked before any register call) waits for its registration's answer and makes its applied
 * call. Plain memory would not carry a child's timeout to its siblings, nor a register timeout
 * to children forked earlier, nor a child's answer to slurmstepd, so these live in a shared
 * anonymous page mapped once in slurmstepd before the tasks fork; every task inherits the
 * mapping. NULL when it could not be mapped: slurmstepd's own calls still see
 * helper_timed_out_here, and every task registers with a call from slurmstepd.
 */
struct step_shared {
    atomic_bool helper_silent; /* a numaplaced call of this step has timed out */
    atomic_bool warned;        /* the one log line per step about an unreachable helper */
    atomic_bool registered;    /* numaplaced answered a task's registration (ahead) with ok */
    atomic_bool sent[NP_REGISTER_AHEAD_MAX]; /* task i's registration is on ahead_fd[i] */
};
static struct step_shared *shared;
static atomic_bool helper_timed_out_here;
/* register_ahead: one socket per local task, connected in init_post_opt; ahead_count is 0 when
 * the step's tasks register with calls. */
static int ahead_fd[NP_REGISTER_AHEAD_MAX];
static unsigned ahead_count;
static bool ahead_awaited; /* in a task: its registration's answer was waited for */
/* --numa-policy=auto: numaplaced's placement hint (its reply to advise), asked once per step: sent
 * in init_post_opt (advise_start), read in user_init (advise_finish) */
static struct np_proto_hint hint;
static bool hint_ok;
static char hint_why[NP_ERR_MSG_MAX]; /* why there is none */
static int advise_fd = -1;            /* the advise request's socket, until its answer is read */
static struct np_proto_request advise_req;
/* verbose=yes: slurmstepd's time in the plugin's hooks, logged at the step's end */
static uint64_t spent_advise_us, spent_topology_us, spent_register_us;
static unsigned registered_tasks;

/* In slurmstepd before the tasks fork (init_post_opt, or user_init when that was not called). */
static void map_step_marker(void)
{
    void *page;

    if (shared)
        return;
    page = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        slurm_info("numaplace: cannot map the step's helper marker (%s): each task waits for a "
                   "helper that stops answering",
                   strerror(errno));
        return;
    }
    shared = page;
    atomic_init(&shared->helper_silent, false);
    atomic_init(&shared->warned, false);
    atomic_init(&shared->registered, false);
    for (unsigned i = 0; i < NP_REGISTER_AHEAD_MAX; i++)
        atomic_init(&shared->sent[i], false);
}

static bool helper_silent(void)
{
    return atomic_load(&helper_timed_out_here) || (shared && atomic_load(&shared->helper_silent));
}

static void note_helper_timeout(void)
{
    atomic_store(&helper_timed_out_here, true);
    if (shared)
        atomic_store(&shared->helper_silent, true);
}

/* The one line per step about numaplaced not taking the step, from slurmstepd or a task. */
static void warn_unreached(uint32_t job, uint32_t step, const char *why)
{
    if (shared ? atomic_exchange(&shared->warned, true) : helper_warned)
        return;
    helper_warned = true;
    slurm_info("numaplace: job %u step %u: helper not reached (%s); placement applies, the step "
               "is not monitored",
               job, step, why);
}

static uint64_t now_us(void);

static bool helper_enabled(void);
static int helper_call(const struct np_proto_request *req, json_t **reply, struct np_err *err);
static void advise_start(spank_t sp);
static void advise_finish(void);
static void register_ahead(spank_t sp);

static int load_step_topology(spank_t sp);

/* In slurmstepd, once per step: discover the machine once, then read the advice (asked in
 * init_post_opt); every task inherits both. */
static int task_user_init(spank_t sp, const struct numaplace_step_settings *settings)
{
    const uint64_t start = now_us();
    int rc;

    plugin = settings;
    map_step_marker();
    rc = load_step_topology(sp);
    spent_topology_us += now_us() - start;
    advise_finish();
    return rc;
}

static int load_step_topology(spank_t sp)
{
    struct np_err err = {0};
    int rc;

    if (topology)
        return 0;
    rc = plugin->site->topology_xml
             ? np_topology_load(&topology, NP_TOPOLOGY_XML, plugin->site->topology_xml, &err)
             : np_topology_load(&topology, NP_TOPOLOGY_LIVE, NULL, &err);
    if (rc < 0) {
        snprintf(topology_error, sizeof(topology_error), "%s", err.msg);
        slurm_error("numaplace: %s; tasks keep the kernel default memory policy", err.msg);
        return plugin->site->fail_on_error ? ESPANK_ERROR : ESPANK_SUCCESS;
    }
    /* libnuma's probe sets and restores a policy: once per step, not once per task. */
    have_preferred_many = np_kernel_has_preferred_many();
    {
        char *cores = NULL;
        step_cpus = hwloc_bitmap_alloc();
        if (step_cpus &&
            (spank_get_item(sp, S_STEP_ALLOC_CORES, &cores) != ESPANK_SUCCESS || !cores ||
             np_topology_cores_to_cpus(topology, cores, step_cpus, &err) < 0)) {
            if (cores)
                slurm_info("numaplace: %s; interleave uses each task's CPUs", err.msg);
            hwloc_bitmap_free(step_cpus);
            step_cpus = NULL;
        }
    }
    return ESPANK_SUCCESS;
}

/* In slurmstepd, once per step, as root and before any task forks: --numa-policy=auto's placement
 * hint, which every task inherits. Not in user_init: slurmstepd runs that under the job's euid, and
 * numaplaced answers advise to root only (its peer credentials are the effective ids). */
static int task_init_post_opt(spank_t sp, const struct numaplace_step_settings *settings)
{
    const uint64_t start = now_us();
    uint64_t sent;

    plugin = settings;
    map_step_marker();
    advise_start(sp);
    sent = now_us();
    spent_advise_us += sent - start;
    register_ahead(sp);
    spent_register_us += now_us() - sent;
    return ESPANK_SUCCESS;
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void export(spank_t sp, const char *name, const char *value)
{
    if (spank_setenv(sp, name, value, 1) != ESPANK_SUCCESS)
        slurm_error("numaplace: cannot export %s to the task", name);
}

/* A --mem-bind from the user: Slurm applied it before us, and exported its type. */
static bool user_mem_bind(spank_t sp)
{
    char type[64] = "";
    enum np_mode mode = NP_MODE_DEFAULT;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();

    if (spank_getenv(sp, "SLURM_MEM_BIND_TYPE", type, sizeof(type)) == ESPANK_SUCCESS && type[0] &&
        strcmp(type, "none") != 0 && strcmp(type, "none,") != 0) {
        hwloc_bitmap_free(nodes);
        return true;
    }
    if (nodes && np_mempolicy_get(&mode, nodes, NULL) == 0 && mode != NP_MODE_DEFAULT) {
        hwloc_bitmap_free(nodes);
        return true;
    }
    hwloc_bitmap_free(nodes);
    return false;
}

/*
 * Decide the task's class. Returns 1 when the site wants the task refused: the class is then
 * already downgraded to low, so the task is safe even where Slurm ignores the refusal (it only
 * honours errors from plugins marked `required` in plugstack.conf).
 */
static int resolve_sensitivity(spank_t sp, enum np_sensitivity *out, bool *downgraded)
{
    uid_t uid = 0;
    gid_t gid = 0;

    *downgraded = false;
    *out = plugin->sensitivity_given ? plugin->sensitivity : plugin->site->default_sensitivity;
    if (*out != NP_SENSITIVITY_HIGH || !plugin->sensitivity_given)
        return 0; /* the site's own default is not a claim */
    if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
        return 0;
    if (np_site_config_may_claim_high(plugin->site, uid, gid))
        return 0;
    if (plugin->site->high_unauthorized == NP_HIGH_REFUSE) {
        fprintf(stderr,
                "numaplace: refusing this job: user %u may not claim --numa-sensitivity=high on "
                "this cluster (plugstack high_users/high_groups, high_unauthorized=refuse)\n",
                (unsigned)uid);
        slurm_error("numaplace: refused uid %u claiming --numa-sensitivity=high", (unsigned)uid);
        *out = NP_SENSITIVITY_LOW;
        *downgraded = true;
        return 1;
    }
    fprintf(stderr,
            "numaplace: warning: user %u may not claim --numa-sensitivity=high on this cluster; "
            "running as low\n",
            (unsigned)uid);
    slurm_info("numaplace: uid %u claimed --numa-sensitivity=high, downgraded to low",
               (unsigned)uid);
    *out = NP_SENSITIVITY_LOW;
    *downgraded = true;
    return 0;
}

static bool helper_enabled(void)
{
    return plugin && plugin->site->helper_socket &&
           strcmp(plugin->site->helper_socket, "none") != 0;
}

/* step_end comes after srun has heard of the step's end (slurmstepd's spank_exit), so no launch
 * waits for it; numaplaced answers after the step's final sample, which a busy interval (every
 * step's /proc read) can delay: it may take this long, whatever helper_timeout_ms says. */
#define NP_STEP_END_TIMEOUT_MS 2000

/* One request to numaplaced, bounded by helper_timeout_ms (step_end: at least
 * NP_STEP_END_TIMEOUT_MS), and not made once a call of this step has timed out.
 * @return 0 or -errno. */
static int helper_call(const struct np_proto_request *req, json_t **reply_out, struct np_err *err)
{
    char *line;
    json_t *reply = NULL;
    unsigned timeout_ms = plugin->site->helper_timeout_ms;
    int rc;

    if (helper_silent())
        return np_err_set(err, -ETIMEDOUT,
                          "not asked: an earlier call of this step got no answer within %u ms",
                          plugin->site->helper_timeout_ms);
    line = np_proto_encode(req);
    if (!line)
        return np_err_set(err, -ENOMEM, "out of memory");
    if (req->op == NP_OP_STEP_END && timeout_ms < NP_STEP_END_TIMEOUT_MS)
        timeout_ms = NP_STEP_END_TIMEOUT_MS;
    rc = np_proto_call(plugin->site->helper_socket, line, timeout_ms, &reply, err);
    free(line);
    if (rc == -ETIMEDOUT)
        note_helper_timeout();
    if (reply_out && rc == 0)
        *reply_out = reply;
    else
        json_decref(reply);
    return rc;
}

static enum np_policy step_policy(void)
{
    return plugin->request_given && plugin->request->policy_given ? plugin->request->policy
                                                                  : plugin->site->default_policy;
}

/* In slurmstepd, once per step and only for auto: ask numaplaced for the nodes' traffic and
 * the job's history. Sent here (init_post_opt, as root) and read in user_init, so numaplaced
 * answers while Slurm sets the step up; each part is bounded by helper_timeout_ms like every
 * launch-time call. Every task inherits the answer, or the reason there is none (the
 * static choice then: docs/auto.md). */
static void advise_start(spank_t sp)
{
    struct np_proto_request *req = &advise_req;
    struct np_err err = {0};
    char *line;
    int fd, rc;

    hint_ok = false;
    hint_why[0] = '\0';
    *req = (struct np_proto_request){.op = NP_OP_ADVISE};
    if (step_policy() != NP_POLICY_AUTO)
        return;
    if (!helper_enabled()) {
        snprintf(hint_why, sizeof(hint_why), "no helper configured (helper_socket=none)");
        return;
    }
    if (spank_get_item(sp, S_JOB_ID, &req->advise.job_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &req->advise.step_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &req->advise.uid) != ESPANK_SUCCESS) {
        snprintf(hint_why, sizeof(hint_why), "the step's ids are unknown");
        return;
    }
    if (spank_getenv(sp, "SLURM_JOB_NAME", req->advise.name, sizeof(req->advise.name)) !=
        ESPANK_SUCCESS)
        req->advise.name[0] = '\0';
    if (helper_silent()) {
        rc = np_err_set(&err, -ETIMEDOUT,
                        "not asked: an earlier call of this step got no answer within %u ms",
                        plugin->site->helper_timeout_ms);
    } else if (!(line = np_proto_encode(req))) {
        rc = np_err_set(&err, -ENOMEM, "out of memory");
    } else {
        fd = np_proto_connect(plugin->site->helper_socket, plugin->site->helper_timeout_ms, &err);
        rc = fd < 0 ? fd : np_proto_send_on(fd, line, plugin->site->helper_timeout_ms, &err);
        if (rc == 0)
            advise_fd = fd;
        else if (fd >= 0)
            close(fd);
        free(line);
    }
    if (rc < 0) {
        if (rc == -ETIMEDOUT)
            note_helper_timeout();
        snprintf(hint_why, sizeof(hint_why), "numaplaced did not answer: %.200s", err.msg);
        slurm_info("numaplace: job %u step %u: --numa-policy=auto without advice (%s); tasks "
                   "get the static choice",
                   req->advise.job_id, req->advise.step_id, hint_why);
    }
}

/* In slurmstepd (user_init), before the tasks fork: the advice asked in advise_start. */
static void advise_finish(void)
{
    const uint64_t start = now_us();
    struct np_err err = {0};
    json_t *reply = NULL;
    int rc;

    if (advise_fd < 0)
        return;
    /* The answer has usually come while Slurm set the step up; a full timeout from here all the
     * same, so that a slow setup does not make a helper that answers look silent. */
    rc = np_proto_receive(advise_fd, plugin->site->helper_timeout_ms, &reply, &err);
    close(advise_fd);
    advise_fd = -1;
    if (rc == -ETIMEDOUT) {
        note_helper_timeout();
        snprintf(err.msg, sizeof(err.msg), "no reply from the helper at %s within %u ms",
                 plugin->site->helper_socket, plugin->site->helper_timeout_ms);
    }
    if (rc == 0 && (rc = np_proto_hint_decode(reply, &hint, &err)) == 0) {
        hint_ok = true;
    } else {
        /* A refusal (a job name with a control character) is numaplaced's answer, not silence:
         * its message says so and why ("the helper refused: ..."). */
        snprintf(hint_why, sizeof(hint_why), "%s%.200s",
                 rc == -EREMOTEIO ? ""
                 : rc == -EPROTO  ? "numaplaced's advice is unreadable: "
                                  : "numaplaced did not answer: ",
                 err.msg);
        slurm_info("numaplace: job %u step %u: --numa-policy=auto without advice (%s); tasks "
                   "get the static choice",
                   advise_req.advise.job_id, advise_req.advise.step_id, hint_why);
    }
    json_decref(reply);
    spent_advise_us += now_us() - start;
}

/* What np_auto_choose is given: the label, the site's, and the placement hint when there is one. */
static void auto_facts(struct np_auto_input *facts, enum np_sensitivity sens, bool downgraded)
{
    memset(facts, 0, sizeof(*facts));
    facts->user_given = plugin->sensitivity_given;
    facts->user = downgraded ? NP_SENSITIVITY_LOW : sens;
    /* A site default of high says something about its codes; low is the built-in default. */
    facts->site_given = plugin->site->default_sensitivity == NP_SENSITIVITY_HIGH;
    facts->site = plugin->site->default_sensitivity;
    facts->advice = hint_ok;
    snprintf(facts->no_advice, sizeof(facts->no_advice), "%.150s",
             hint_why[0] ? hint_why : "no advice");
    if (!hint_ok)
        return;
    if (hint.history_known && np_sensitivity_from_name(hint.history, &facts->history, NULL) == 0)
        facts->history_known = true;
    for (unsigned n = 0; n < NP_AUTO_MAX_NODES && n < NP_PROTO_ADVICE_MAX_NODES; n++) {
        facts->node[n].known =
            hint.node[n].present && (hint.node[n].measured || hint.node[n].cpu_busy);
        facts->node[n].cpu_busy = hint.node[n].cpu_busy;
        facts->node[n].loaded = hint.node[n].loaded;
        facts->node[n].utilisation = hint.node[n].utilisation;
    }
}

/* The step's class without telling the user (task_init does that): for numaplaced. */
static enum np_sensitivity quiet_sensitivity(spank_t sp)
{
    uid_t uid = 0;
    gid_t gid = 0;
    enum np_sensitivity sens =
        plugin->sensitivity_given ? plugin->sensitivity : plugin->site->default_sensitivity;

    if (sens != NP_SENSITIVITY_HIGH || !plugin->sensitivity_given)
        return sens;
    if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS ||
        !np_site_config_may_claim_high(plugin->site, uid, gid))
        return NP_SENSITIVITY_LOW;
    return sens;
}

/* In slurmstepd (root) at init_post_opt, before the tasks fork: one socket to numaplaced per task
 * of a step of at most NP_REGISTER_AHEAD_MAX, so that slurmstepd sends each registration
 * without waiting for its answer and the task, which inherited its socket, waits for it
 * before it execs (await_registration). The answer is then awaited while Slurm unblocks the tasks
 * and each places itself, not one after the other in slurmstepd. */
static void register_ahead(spank_t sp)
{
    struct np_err err = {0};
    uint32_t tasks = 0;

    ahead_count = 0;
    if (!shared || !helper_enabled() || helper_silent() ||
        spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &tasks) != ESPANK_SUCCESS || tasks == 0 ||
        tasks > NP_REGISTER_AHEAD_MAX)
        return;
    for (unsigned i = 0; i < tasks; i++) {
        const int fd =
            np_proto_connect(plugin->site->helper_socket, plugin->site->helper_timeout_ms, &err);
        if (fd < 0) {
            /* Not running (refused at once): the calls in task_post_fork say so, once. */
            if (fd == -ETIMEDOUT)
                note_helper_timeout();
            for (unsigned j = 0; j < i; j++)
                close(ahead_fd[j]);
            return;
        }
        ahead_fd[i] = fd;
    }
    ahead_count = tasks;
}

/* In slurmstepd (root) after each task's fork, before it may exec: register it with numaplaced
 * so its counters start with the task. On the task's own socket (register_ahead) the answer is
 * the task's to wait for; otherwise a call. */
static int task_post_fork(spank_t sp, const struct numaplace_step_settings *settings)
{
    const uint64_t start = now_us();
    struct np_proto_request req = {.op = NP_OP_REGISTER};
    struct np_err err = {0};
    uint32_t job = 0, step = 0;
    pid_t pid = 0;
    int local = -1;

    plugin = settings;
    if (!helper_enabled())
        return 0;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &req.reg.uid) != ESPANK_SUCCESS)
        return 0;
    spank_get_item(sp, S_JOB_GID, &req.reg.gid);
    spank_get_item(sp, S_TASK_GLOBAL_ID, &req.reg.task_id);
    spank_get_item(sp, S_TASK_ID, &local);
    req.reg.job_id = job;
    req.reg.step_id = step;
    req.reg.pid = pid;
    if (step_cpus)
        hwloc_bitmap_list_snprintf(req.reg.cpus, sizeof(req.reg.cpus), step_cpus);
    snprintf(req.reg.policy_requested, sizeof(req.reg.policy_requested), "%s",
             np_policy_name(plugin->request_given && plugin->request->policy_given
                                ? plugin->request->policy
                                : plugin->site->default_policy));
    snprintf(req.reg.sensitivity, sizeof(req.reg.sensitivity), "%s",
             np_sensitivity_name(quiet_sensitivity(sp)));
    req.reg.unlabelled = !plugin->sensitivity_given; /* class_default=auto may class it */
    registered_tasks++;
    if (local >= 0 && (unsigned)local < ahead_count && ahead_fd[local] >= 0) {
        char *line = helper_silent() ? NULL : np_proto_encode(&req);
        int rc =
            line ? np_proto_send_on(ahead_fd[local], line, plugin->site->helper_timeout_ms, &err)
                 : -ETIMEDOUT;
        free(line);
        close(ahead_fd[local]); /* the task holds its own copy, for the answer */
        ahead_fd[local] = -1;
        if (rc == 0) {
            atomic_store(&shared->sent[local], true);
            spent_register_us += now_us() - start;
            return 0;
        }
        if (rc == -ETIMEDOUT && !helper_silent())
            note_helper_timeout();
        /* Otherwise (numaplaced closed the socket, idle too long): a call, as for a large step. */
    }
    if (helper_call(&req, NULL, &err) == 0)
        helper_registered = true;
    else
        warn_unreached(job, step, err.msg);
    spent_register_us += now_us() - start;
    return 0;
}

/* In the task before exec (register_ahead): numaplaced's answer to the task's registration, which
 * slurmstepd sent on the socket this task inherited; once waited for, numaplaced's counters count
 * the task from before its program starts. Every other task's socket is closed here. */
static void await_registration(spank_t sp)
{
    struct np_err err = {0};
    json_t *reply = NULL;
    uint32_t job = 0, step = 0;
    int local = -1, fd;

    if (ahead_awaited || !ahead_count)
        return;
    ahead_awaited = true;
    spank_get_item(sp, S_TASK_ID, &local);
    for (unsigned i = 0; i < ahead_count; i++)
        if ((int)i != local && ahead_fd[i] >= 0) {
            close(ahead_fd[i]);
            ahead_fd[i] = -1;
        }
    if (local < 0 || (unsigned)local >= ahead_count || (fd = ahead_fd[local]) < 0)
        return;
    ahead_fd[local] = -1;
    if (atomic_load(&shared->sent[local]) && !helper_silent()) {
        const int rc = np_proto_receive(fd, plugin->site->helper_timeout_ms, &reply, &err);
        if (rc == 0) {
            atomic_store(&shared->registered, true);
        } else {
            if (rc == -ETIMEDOUT)
                note_helper_timeout();
            spank_get_item(sp, S_JOB_ID, &job);
            spank_get_item(sp, S_JOB_STEPID, &step);
            warn_unreached(job, step, err.msg);
        }
        json_decref(reply);
    }
    close(fd);
}

/* In the task, before exec: tell numaplaced what this task got (it may speak for itself only). */
static void helper_applied(spank_t sp, const char *policy, const char *mode, const char *nodes,
                           const char *cpus, const char *reason,
                           const struct np_auto_choice *choice)
{
    struct np_proto_request req = {.op = NP_OP_APPLIED};
    struct np_err err = {0};
    char *line;

    await_registration(sp); /* numaplaced takes what a task applied once it knows the task */
    if (!helper_enabled() || helper_silent() ||
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
    line = np_proto_encode(&req);
    /* no wait for the reply; slurmstepd already logged an unreachable helper */
    if (line && np_proto_send(plugin->site->helper_socket, line, plugin->site->helper_timeout_ms,
                              &err) == -ETIMEDOUT)
        note_helper_timeout();
    free(line);
}

static int task_init(spank_t sp, const struct numaplace_step_settings *settings)
{
    const uint64_t start = now_us();
    struct np_place_input in = {0};
    struct np_auto_input facts;
    struct np_placement placement;
    enum np_policy placed = NP_POLICY_NONE;
    struct np_err err = {0};
    enum np_sensitivity sens;
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    char nodes_text[128] = "", cpus_text[128] = "", host[64] = "?", note[2 * NP_ERR_MSG_MAX] = "";
    bool verbose, downgraded, refuse = false;
    int taskid = -1, rc = 0;

    plugin = settings;
    verbose = plugin->site->verbose || (plugin->request_given && plugin->request->verbose);
    spank_get_item(sp, S_TASK_GLOBAL_ID, &taskid);
    gethostname(host, sizeof(host) - 1);
    if (np_placement_init(&placement) < 0 || !cpus || !allowed) {
        slurm_error("numaplace: out of memory");
        rc = plugin->site->fail_on_error ? -1 : 0;
        goto out;
    }
    refuse = resolve_sensitivity(sp, &sens, &downgraded) > 0;
    export(sp, "NUMAPLACE_SENSITIVITY", np_sensitivity_name(sens));

    in.policy = plugin->request_given && plugin->request->policy_given
                    ? plugin->request->policy
                    : plugin->site->default_policy;
    if (!np_site_config_allows(plugin->site, in.policy)) {
        /* The local side refuses this; a job submitted around it is refused here too, and runs
         * with the site default where Slurm ignores the refusal (an `optional` plugin). */
        fprintf(stderr,
                "numaplace: refusing this task: --numa-policy=%s is not allowed on this "
                "cluster\n",
                np_policy_name(in.policy));
        slurm_error("numaplace: refused --numa-policy=%s (not in allowed_policies)",
                    np_policy_name(in.policy));
        in.policy = plugin->site->default_policy;
        refuse = true;
    }
    if (in.policy != NP_POLICY_NONE && user_mem_bind(sp)) {
        if (!(plugin->request_given && plugin->request->policy_given)) {
            /* The site default never overrides what the user asked Slurm for. */
            snprintf(note, sizeof(note), "--mem-bind given: the site default (%s) is not applied",
                     np_policy_name(in.policy));
            in.policy = NP_POLICY_NONE;
        } else {
            fprintf(stderr,
                    "numaplace: warning: --numa-policy=%s replaces the memory binding of "
                    "--mem-bind for task %d\n",
                    np_policy_name(in.policy), taskid);
        }
    }
    if (in.policy != NP_POLICY_NONE && !topology) {
        snprintf(note, sizeof(note), "topology unavailable (%s): kernel default kept",
                 topology_error[0] ? topology_error : "not loaded");
        export(sp, "NUMAPLACE_POLICY", "none");
        export(sp, "NUMAPLACE_MODE", "default");
        export(sp, "NUMAPLACE_NODES", "");
        rc = plugin->site->fail_on_error ? -1 : 0;
        goto report;
    }
    if ((rc = np_affinity_get(0, cpus)) < 0) {
        slurm_error("numaplace: cannot read task %d's CPU affinity: %s", taskid, strerror(-rc));
        rc = plugin->site->fail_on_error ? -1 : 0;
        goto out;
    }
    in.task_cpus = cpus;
    if (step_cpus && hwloc_bitmap_intersects(step_cpus, cpus))
        in.step_cpus = step_cpus;
    if (np_mems_allowed(allowed, NULL) == 0)
        in.mems_allowed = allowed;
    in.include_cpuless = plugin->site->include_cpuless;
    in.have_preferred_many = have_preferred_many;

    if (in.policy == NP_POLICY_AUTO) {
        auto_facts(&facts, sens, downgraded);
        in.auto_input = &facts;
    }

    if (in.policy == NP_POLICY_NONE) {
        np_place(topology, &in, &placement); /* explains itself; applies nothing */
    } else if (np_place(topology, &in, &placement) < 0 ||
               np_placement_apply(&placement, &err) < 0) {
        slurm_error("numaplace: task %d: %s; kernel default kept", taskid,
                    err.msg[0] ? err.msg : "placement failed");
        snprintf(note, sizeof(note), "%s: kernel default kept", err.msg);
        np_placement_fini(&placement);
        np_placement_init(&placement);
        placement.chosen = in.policy;
        rc = plugin->site->fail_on_error ? -1 : 0;
    }
    /* What was placed: auto's choice; none when nothing could be applied. */
    placed = placement.mode == NP_MODE_DEFAULT && in.policy != NP_POLICY_NONE ? NP_POLICY_NONE
                                                                              : placement.chosen;
    if (!hwloc_bitmap_iszero(placement.nodes))
        hwloc_bitmap_list_snprintf(nodes_text, sizeof(nodes_text), placement.nodes);
    export(sp, "NUMAPLACE_POLICY", np_policy_name(placed));
    export(sp, "NUMAPLACE_MODE", np_mode_name(placement.mode));
    export(sp, "NUMAPLACE_NODES", nodes_text);
    export(sp, "NUMAPLACE_REASON", note[0] ? note : placement.reason);
    hwloc_bitmap_list_snprintf(cpus_text, sizeof(cpus_text), cpus);
    helper_applied(sp, np_policy_name(placed), np_mode_name(placement.mode), nodes_text, cpus_text,
                   in.policy == NP_POLICY_AUTO ? placement.reason : "",
                   in.policy == NP_POLICY_AUTO && placement.auto_choice.reason[0]
                       ? &placement.auto_choice
                       : NULL);
report:
    if (verbose) {
        hwloc_bitmap_list_snprintf(cpus_text, sizeof(cpus_text), cpus);
        fprintf(stderr,
                "numaplace: task %d on %s: policy=%s%s mode=%s nodes=%s cpus=%s sensitivity=%s%s "
                "took=%lluus (%s)\n",
                taskid, host, np_policy_name(in.policy == NP_POLICY_AUTO ? placed : in.policy),
                in.policy == NP_POLICY_AUTO ? " (auto)" : "", np_mode_name(placement.mode),
                nodes_text[0] ? nodes_text : "-", cpus_text, np_sensitivity_name(sens),
                downgraded ? " (downgraded)" : "", (unsigned long long)(now_us() - start),
                note[0] ? note : placement.reason);
    }
out:
    await_registration(sp); /* on every way out: the counters start before the program does */
    np_placement_fini(&placement);
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(allowed);
    return refuse ? -1 : rc;
}

static void task_exit(spank_t sp, const struct numaplace_step_settings *settings)
{
    plugin = settings;
    if (advise_fd >= 0) { /* user_init was not called: nobody read the advice */
        close(advise_fd);
        advise_fd = -1;
    }
    for (unsigned i = 0; i < ahead_count; i++) /* tasks that never forked */
        if (ahead_fd[i] >= 0)
            close(ahead_fd[i]);
    ahead_count = 0;
    if (shared && atomic_load(&shared->registered))
        helper_registered = true;
    if (plugin->site->verbose && helper_enabled())
        slurm_info("numaplace: slurmstepd's time in the plugin: advise %lluus, topology %lluus, "
                   "registering %u task(s) %lluus",
                   (unsigned long long)spent_advise_us, (unsigned long long)spent_topology_us,
                   registered_tasks, (unsigned long long)spent_register_us);
    spent_advise_us = spent_topology_us = spent_register_us = 0;
    registered_tasks = 0;
    if (helper_registered && helper_enabled() && !helper_silent()) {
        /* slurmstepd at the step's end: numaplaced takes its final sample and answers, then
         * writes the report; slurmstepd tells slurmctld the step is complete only after this,
         * so the node is free again without waiting for the report's flushes. `numaplace report`
         * and the epilog's store wait for a step numaplaced lists "ending". */
        struct np_proto_request req = {.op = NP_OP_STEP_END, .answer_at_end = true};
        struct np_err err = {0};
        if (spank_get_item(sp, S_JOB_ID, &req.job_id) == ESPANK_SUCCESS &&
            spank_get_item(sp, S_JOB_STEPID, &req.step_id) == ESPANK_SUCCESS &&
            helper_call(&req, NULL, &err) < 0)
            slurm_info("numaplace: job %u step %u: could not tell the helper the step ended "
                       "(%s); it ends the step itself when the tasks are gone",
                       req.job_id, req.step_id, err.msg);
        helper_registered = false;
    }
    if (shared)
        munmap(shared, sizeof(*shared));
    shared = NULL;
    atomic_store(&helper_timed_out_here, false);
    np_topology_free(topology);
    topology = NULL;
    hwloc_bitmap_free(step_cpus);
    step_cpus = NULL;
    plugin = NULL;
}

/* The one symbol this module exports (numaplace_task.map). */
const struct numaplace_task_ops numaplace_task_ops = {
    .abi = NUMAPLACE_TASK_ABI,
    .init_post_opt = task_init_post_opt,
    .user_init = task_user_init,
    .task_post_fork = task_post_fork,
    .task_init = task_init,
    .exit = task_exit,
};
