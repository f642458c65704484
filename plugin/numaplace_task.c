/*
 * numaplace_task.so - the plugin's step side, loaded by slurmstepd only (numaplace_task.h). The
 * topology and advice are found once per step in slurmstepd and inherited across fork; each task,
 * after Slurm's binding and before exec, decides, applies, exports and tells numaplaced. Own
 * trouble is logged and the task keeps the kernel default, unless the site set on_error=fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "numaplace/mempolicy.h"
#include "numaplace/placement.h"
#include "numaplace/siteconf.h"
#include "numaplace/topology.h"
#include "numaplace_task.h"
#include "step_helper.h"

/* The step's settings, borrowed from numaplace.so for the duration of each call. */
static const struct numaplace_step_settings *plugin;
/* Per-step facts, found once in slurmstepd (user_init) and inherited by every task's fork. */
static struct np_topology *topology;
static char topology_error[NP_ERR_MSG_MAX];
static hwloc_bitmap_t step_cpus; /* the step's CPUs on this host, NULL when unknown */
static bool have_preferred_many; /* the kernel takes MPOL_PREFERRED_MANY */
/* weighted-interleave's steps only: the kernel has it, and its weight of each node */
static bool have_weighted_interleave;
static unsigned char *interleave_weights;
static unsigned interleave_weights_count;
static struct np_step_helper helper = {.advise_fd = -1};
/* verbose=yes: slurmstepd's time in the plugin's hooks, logged at the step's end */
static uint64_t spent_advise_us, spent_topology_us, spent_register_us;
static unsigned registered_tasks;

/* Every entry point starts here: the settings (and the site) are borrowed for this call. */
static void borrow(const struct numaplace_step_settings *settings)
{
    plugin = settings;
    helper.site = settings ? settings->site : NULL;
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static enum np_policy step_policy(void)
{
    return plugin->request_given && plugin->request->policy_given ? plugin->request->policy
                                                                  : plugin->site->default_policy;
}

static int load_step_topology(spank_t sp)
{
    struct np_err err = {0};
    char *cores = NULL;
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
    if (step_policy() == NP_POLICY_WEIGHTED_INTERLEAVE) {
        for (unsigned i = 0; i < np_topology_node_count(topology); i++) {
            const unsigned n = np_topology_node(topology, i)->os_index + 1;
            interleave_weights_count = n > interleave_weights_count ? n : interleave_weights_count;
        }
        interleave_weights = calloc(interleave_weights_count, 1);
        have_weighted_interleave =
            interleave_weights &&
            np_interleave_weights(interleave_weights, interleave_weights_count) == 0;
    }
    step_cpus = hwloc_bitmap_alloc();
    if (step_cpus && (spank_get_item(sp, S_STEP_ALLOC_CORES, &cores) != ESPANK_SUCCESS || !cores ||
                      np_topology_cores_to_cpus(topology, cores, step_cpus, &err) < 0)) {
        if (cores)
            slurm_info("numaplace: %s; interleave uses each task's CPUs", err.msg);
        hwloc_bitmap_free(step_cpus);
        step_cpus = NULL;
    }
    return ESPANK_SUCCESS;
}

/* In slurmstepd, once per step: discover the machine once, then read the advice (asked in
 * init_post_opt); every task inherits both. */
static int task_user_init(spank_t sp, const struct numaplace_step_settings *settings)
{
    const uint64_t start = now_us();
    uint64_t loaded;
    int rc;

    borrow(settings);
    np_step_helper_start(&helper);
    rc = load_step_topology(sp);
    loaded = now_us();
    spent_topology_us += loaded - start;
    np_step_helper_advise_finish(&helper);
    spent_advise_us += now_us() - loaded;
    return rc;
}

/* As root, before any task forks: not in user_init, which runs under the job's euid, and
 * numaplaced answers advise to root only. */
static int task_init_post_opt(spank_t sp, const struct numaplace_step_settings *settings)
{
    const uint64_t start = now_us();
    uint64_t sent;

    borrow(settings);
    np_step_helper_start(&helper);
    np_step_helper_advise_start(&helper, sp, step_policy() == NP_POLICY_AUTO);
    sent = now_us();
    spent_advise_us += sent - start;
    np_step_helper_register_ahead(&helper, sp);
    spent_register_us += now_us() - sent;
    return ESPANK_SUCCESS;
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
    hwloc_bitmap_t nodes;
    bool bound;

    if (spank_getenv(sp, "SLURM_MEM_BIND_TYPE", type, sizeof(type)) == ESPANK_SUCCESS && type[0] &&
        strcmp(type, "none") != 0 && strcmp(type, "none,") != 0)
        return true;
    nodes = hwloc_bitmap_alloc();
    bound = nodes && np_mempolicy_get(&mode, nodes, NULL) == 0 && mode != NP_MODE_DEFAULT;
    hwloc_bitmap_free(nodes);
    return bound;
}

/* The class the user asked for, else the site's default. */
static enum np_sensitivity asked_sensitivity(void)
{
    return plugin->sensitivity_given ? plugin->sensitivity : plugin->site->default_sensitivity;
}

/* Whether the job's user may have @p asked: 1 yes (the site's own default is not a claim), 0 no,
 * -1 when the job's ids are unknown. */
static int claim_allowed(spank_t sp, enum np_sensitivity asked, uid_t *uid)
{
    gid_t gid = 0;

    if (asked != NP_SENSITIVITY_HIGH || !plugin->sensitivity_given)
        return 1;
    if (spank_get_item(sp, S_JOB_UID, uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
        return -1;
    return np_site_config_may_claim_high(plugin->site, *uid, gid);
}

/* Decide the task's class. 1: refuse the task; the class is low anyway, as Slurm ignores errors
 * of plugins not marked `required`. */
static int resolve_sensitivity(spank_t sp, enum np_sensitivity *out, bool *downgraded)
{
    uid_t uid = 0;

    *downgraded = false;
    *out = asked_sensitivity();
    if (claim_allowed(sp, *out, &uid) != 0) /* unknown ids: as asked */
        return 0;
    *out = NP_SENSITIVITY_LOW;
    *downgraded = true;
    if (plugin->site->high_unauthorized == NP_HIGH_REFUSE) {
        fprintf(stderr,
                "numaplace: refusing this job: user %u may not claim --numa-sensitivity=high on "
                "this cluster (plugstack high_users/high_groups, high_unauthorized=refuse)\n",
                (unsigned)uid);
        slurm_error("numaplace: refused uid %u claiming --numa-sensitivity=high", (unsigned)uid);
        return 1;
    }
    fprintf(stderr,
            "numaplace: warning: user %u may not claim --numa-sensitivity=high on this cluster; "
            "running as low\n",
            (unsigned)uid);
    slurm_info("numaplace: uid %u claimed --numa-sensitivity=high, downgraded to low",
               (unsigned)uid);
    return 0;
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
    np_step_helper_advice(&helper, facts);
}

/* The step's class without telling the user (task_init does that): for numaplaced. */
static enum np_sensitivity quiet_sensitivity(spank_t sp)
{
    const enum np_sensitivity sens = asked_sensitivity();
    uid_t uid = 0;

    return claim_allowed(sp, sens, &uid) > 0 ? sens : NP_SENSITIVITY_LOW;
}

/* In slurmstepd (root) after each task's fork, before it may exec: register it with numaplaced
 * so its counters start with the task. */
static int task_post_fork(spank_t sp, const struct numaplace_step_settings *settings)
{
    const uint64_t start = now_us();
    struct np_proto_request req = {.op = NP_OP_REGISTER};
    int local = -1;

    borrow(settings);
    if (!np_step_helper_enabled(&helper))
        return 0;
    if (spank_get_item(sp, S_JOB_ID, &req.reg.job_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &req.reg.step_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_TASK_PID, &req.reg.pid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &req.reg.uid) != ESPANK_SUCCESS)
        return 0;
    spank_get_item(sp, S_JOB_GID, &req.reg.gid);
    spank_get_item(sp, S_TASK_GLOBAL_ID, &req.reg.task_id);
    spank_get_item(sp, S_TASK_ID, &local);
    if (step_cpus)
        hwloc_bitmap_list_snprintf(req.reg.cpus, sizeof(req.reg.cpus), step_cpus);
    snprintf(req.reg.policy_requested, sizeof(req.reg.policy_requested), "%s",
             np_policy_name(step_policy()));
    snprintf(req.reg.sensitivity, sizeof(req.reg.sensitivity), "%s",
             np_sensitivity_name(quiet_sensitivity(sp)));
    req.reg.unlabelled = !plugin->sensitivity_given; /* class_default=auto may class it */
    registered_tasks++;
    np_step_helper_register(&helper, &req, local);
    spent_register_us += now_us() - start;
    return 0;
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

    borrow(settings);
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

    in.policy = step_policy();
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
    in.fast_tier_refused = plugin->site->fast_tier_high_only && sens != NP_SENSITIVITY_HIGH;
    in.have_weighted_interleave = have_weighted_interleave;
    in.interleave_weights = have_weighted_interleave ? interleave_weights : NULL;
    in.interleave_weights_count = interleave_weights_count;

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
    np_step_helper_applied(
        &helper, sp, np_policy_name(placed), np_mode_name(placement.mode), nodes_text, cpus_text,
        in.policy == NP_POLICY_AUTO ? placement.reason : "",
        in.policy == NP_POLICY_AUTO && placement.auto_choice.reason[0] ? &placement.auto_choice
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
    np_placement_fini(&placement);
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(allowed);
    return refuse ? -1 : rc;
}

static void task_exit(spank_t sp, const struct numaplace_step_settings *settings)
{
    borrow(settings);
    if (plugin->site->verbose && np_step_helper_enabled(&helper))
        slurm_info("numaplace: slurmstepd's time in the plugin: advise %lluus, topology %lluus, "
                   "registering %u task(s) %lluus",
                   (unsigned long long)spent_advise_us, (unsigned long long)spent_topology_us,
                   registered_tasks, (unsigned long long)spent_register_us);
    spent_advise_us = spent_topology_us = spent_register_us = 0;
    registered_tasks = 0;
    np_step_helper_end(&helper, sp);
    np_topology_free(topology);
    topology = NULL;
    hwloc_bitmap_free(step_cpus);
    step_cpus = NULL;
    free(interleave_weights);
    interleave_weights = NULL;
    interleave_weights_count = 0;
    have_weighted_interleave = false;
    borrow(NULL);
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
