/*
 * numaplace.so - the SPANK plugin: --numa-policy and --numa-sensitivity for srun, sbatch and
 * salloc, site defaults and limits from plugstack.conf, and the memory policy set in each task
 * just before it execs. A thin shim: parsing and decisions live in libnumaplace.
 *
 * Contexts:
 *   local/allocator (srun, sbatch, salloc): options are validated as they are parsed, so a bad
 *     value or a policy the site does not allow fails the command before anything is submitted.
 *   remote (slurmstepd): user_init loads the topology once per step (tasks inherit it across
 *     fork); task_init, in each task after Slurm's CPU and memory binding and before exec, reads
 *     the task's real CPUs, decides, applies set_mempolicy, and exports what was applied.
 *   helper (numaplaced, docs/protocol.md): slurmstepd registers each task after fork (root, so
 *     trusted), the task reports what it got before exec, and slurmstepd ends the step at exit.
 *     Every call has a short bounded timeout; a helper that is down or slow costs one log line
 *     per step and never holds up or fails the launch.
 * Own trouble (no topology, a refused system call) is logged and the task runs with the kernel
 * default, unless the site set on_error=fail. The node is never drained over it.
 */
#include <errno.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "numaplace/placement.h"
#include "numaplace/protocol.h"
#include "numaplace/siteconf.h"
#include "numaplace/topology.h"

SPANK_PLUGIN(numaplace, 1);

static struct np_site_config site;
static bool site_ready;
static struct np_policy_request request; /* the user's --numa-policy, if given */
static bool request_given;
static enum np_sensitivity sensitivity; /* the user's --numa-sensitivity, if given */
static bool sensitivity_given;
/* Per-step facts, found once in slurmstepd (user_init) and inherited by every task's fork. */
static struct np_topology *topology;
static char topology_error[NP_ERR_MSG_MAX];
static hwloc_bitmap_t step_cpus; /* the step's CPUs on this host, NULL when unknown */
static bool have_preferred_many; /* the kernel takes MPOL_PREFERRED_MANY */
static bool helper_registered;   /* slurmstepd registered at least one task of this step */
static bool helper_warned;       /* the one log line per step about an unreachable helper */

static int policy_option(int val, const char *value, int remote);
static int sensitivity_option(int val, const char *value, int remote);

static struct spank_option options[] = {
    {"numa-policy", "[verbose,]POLICY",
     "NUMA memory policy for each task: local, local-strict, interleave, interleave-all or none; "
     "'verbose,' reports what each task got; 'help' lists the choices",
     1, 0, policy_option},
    {"numa-sensitivity", "high|low",
     "how sensitive the job is to memory placement: high jobs are kept local and never have "
     "their memory moved; low jobs may",
     1, 0, sensitivity_option},
    SPANK_OPTIONS_TABLE_END};

static void log_to_slurm(enum np_log_level level, const char *msg, void *arg)
{
    (void)arg;
    if (level == NP_LOG_ERROR)
        slurm_error("%s", msg);
    else if (level == NP_LOG_WARNING || level == NP_LOG_INFO)
        slurm_info("%s", msg);
    else
        slurm_debug("%s", msg);
}

static const struct np_log slurm_log = {log_to_slurm, NULL};

static bool local_side(void)
{
    const spank_context_t ctx = spank_context();
    return ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR;
}

static void print_help(void)
{
    char allowed[128];

    printf("numaplace: --numa-policy=[verbose,]POLICY, where POLICY is one of\n");
    for (unsigned p = 0; p < NP_POLICY_COUNT; p++)
        printf("  %-15s %s%s\n", np_policy_name((enum np_policy)p),
               np_policy_help((enum np_policy)p),
               np_site_config_allows(&site, (enum np_policy)p) ? "" : " (not allowed here)");
    printf("  %-15s %s\n", "help", "this list");
    printf("'verbose,' before the policy prints what each task got, like --mem-bind=verbose.\n");
    printf("Site default: %s. Allowed here: %s.\n", np_policy_name(site.default_policy),
           np_site_config_allowed_names(&site, allowed, sizeof(allowed)));
    printf("--numa-sensitivity=high|low (default %s): high jobs are kept local and never have "
           "their memory moved.\n",
           np_sensitivity_name(site.default_sensitivity));
}

static int policy_option(int val, const char *value, int remote)
{
    struct np_err err = {0};

    (void)val;
    if (np_policy_request_parse(value, &request, &err) < 0) {
        slurm_error("numaplace: %s", err.msg);
        return -1;
    }
    if (request.help) {
        if (!remote) {
            print_help();
            exit(0);
        }
        return 0;
    }
    if (request.policy_given && !np_site_config_allows(&site, request.policy)) {
        char allowed[128];
        slurm_error("numaplace: --numa-policy=%s is not allowed on this cluster; allowed: %s",
                    np_policy_name(request.policy),
                    np_site_config_allowed_names(&site, allowed, sizeof(allowed)));
        return -1;
    }
    request_given = true;
    return 0;
}

/* Whether the submitting user (local side) may claim high, per the site's lists. */
static int check_high_locally(void)
{
    if (np_site_config_may_claim_high(&site, getuid(), getgid()))
        return 0;
    if (site.high_unauthorized == NP_HIGH_REFUSE) {
        slurm_error("numaplace: --numa-sensitivity=high is reserved on this cluster "
                    "(plugstack high_users/high_groups); refusing the job");
        return -1;
    }
    slurm_info("numaplace: warning: --numa-sensitivity=high is reserved on this cluster; the "
               "job will run as low");
    return 0;
}

static int sensitivity_option(int val, const char *value, int remote)
{
    struct np_err err = {0};

    (void)val;
    if (np_sensitivity_from_name(value, &sensitivity, &err) < 0) {
        slurm_error("numaplace: %s", err.msg);
        return -1;
    }
    sensitivity_given = true;
    if (!remote && local_side() && sensitivity == NP_SENSITIVITY_HIGH)
        return check_high_locally();
    return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    const spank_context_t ctx = spank_context();

    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE)
        return 0;
    if (!site_ready) {
        if (np_site_config_init(&site) < 0)
            return ESPANK_ERROR;
        /* Bad arguments are logged and ignored: a typo never fails jobs by itself. */
        if (np_site_config_parse(&site, ac, av, &slurm_log) == -ENOMEM)
            return ESPANK_ERROR;
        site_ready = true;
    }
    for (struct spank_option *opt = options; opt->name; opt++)
        if (spank_option_register(sp, opt) != ESPANK_SUCCESS) {
            slurm_error("numaplace: cannot register --%s", opt->name);
            return site.fail_on_error ? ESPANK_ERROR : ESPANK_SUCCESS;
        }
    return ESPANK_SUCCESS;
}

/* In slurmstepd, once per step: discover the machine once; every task inherits it. */
int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    struct np_err err = {0};
    int rc;

    (void)ac;
    (void)av;
    if (topology)
        return 0;
    rc = site.topology_xml ? np_topology_load(&topology, NP_TOPOLOGY_XML, site.topology_xml, &err)
                           : np_topology_load(&topology, NP_TOPOLOGY_LIVE, NULL, &err);
    if (rc < 0) {
        snprintf(topology_error, sizeof(topology_error), "%s", err.msg);
        slurm_error("numaplace: %s; tasks keep the kernel default memory policy", err.msg);
        return site.fail_on_error ? ESPANK_ERROR : ESPANK_SUCCESS;
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

/* The task's current affinity as an hwloc bitmap. */
static int task_cpus(hwloc_bitmap_t cpus)
{
    cpu_set_t set;

    if (sched_getaffinity(0, sizeof(set), &set) < 0)
        return -errno;
    hwloc_bitmap_zero(cpus);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            hwloc_bitmap_set(cpus, (unsigned)c);
    return 0;
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
    *out = sensitivity_given ? sensitivity : site.default_sensitivity;
    if (*out != NP_SENSITIVITY_HIGH || !sensitivity_given)
        return 0; /* the site's own default is not a claim */
    if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
        return 0;
    if (np_site_config_may_claim_high(&site, uid, gid))
        return 0;
    if (site.high_unauthorized == NP_HIGH_REFUSE) {
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
    return site_ready && site.helper_socket && strcmp(site.helper_socket, "none") != 0;
}

/* One request to numaplaced, bounded by helper_timeout_ms. @return 0 or -errno. */
static int helper_call(const struct np_proto_request *req, struct np_err *err)
{
    char *line = np_proto_encode(req);
    json_t *reply = NULL;
    int rc;

    if (!line)
        return np_err_set(err, -ENOMEM, "out of memory");
    rc = np_proto_call(site.helper_socket, line, site.helper_timeout_ms, &reply, err);
    free(line);
    json_decref(reply);
    return rc;
}

/* The step's class without telling the user (task_init does that): for the helper. */
static enum np_sensitivity quiet_sensitivity(spank_t sp)
{
    uid_t uid = 0;
    gid_t gid = 0;
    enum np_sensitivity sens = sensitivity_given ? sensitivity : site.default_sensitivity;

    if (sens != NP_SENSITIVITY_HIGH || !sensitivity_given)
        return sens;
    if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS ||
        !np_site_config_may_claim_high(&site, uid, gid))
        return NP_SENSITIVITY_LOW;
    return sens;
}

/* In slurmstepd (root) after each task's fork, before it may exec: register it with the helper
 * so its counters start with the task. */
int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
    struct np_proto_request req = {.op = NP_OP_REGISTER};
    struct np_err err = {0};
    uint32_t job = 0, step = 0;
    pid_t pid = 0;

    (void)ac;
    (void)av;
    if (spank_context() != S_CTX_REMOTE || !helper_enabled())
        return 0;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &req.reg.uid) != ESPANK_SUCCESS)
        return 0;
    spank_get_item(sp, S_JOB_GID, &req.reg.gid);
    spank_get_item(sp, S_TASK_GLOBAL_ID, &req.reg.task_id);
    req.reg.job_id = job;
    req.reg.step_id = step;
    req.reg.pid = pid;
    if (step_cpus)
        hwloc_bitmap_list_snprintf(req.reg.cpus, sizeof(req.reg.cpus), step_cpus);
    snprintf(req.reg.policy_requested, sizeof(req.reg.policy_requested), "%s",
             np_policy_name(request_given && request.policy_given ? request.policy
                                                                  : site.default_policy));
    snprintf(req.reg.sensitivity, sizeof(req.reg.sensitivity), "%s",
             np_sensitivity_name(quiet_sensitivity(sp)));
    if (helper_call(&req, &err) == 0) {
        helper_registered = true;
    } else if (!helper_warned) {
        helper_warned = true;
        slurm_info("numaplace: job %u step %u: helper not reached (%s); placement applies, the "
                   "step is not monitored",
                   job, step, err.msg);
    }
    return 0;
}

/* In the task, before exec: tell the helper what this task got (it may speak for itself only). */
static void helper_applied(spank_t sp, const char *policy, const char *mode, const char *nodes,
                           const char *cpus)
{
    struct np_proto_request req = {.op = NP_OP_APPLIED};
    struct np_err err = {0};
    char *line;

    if (!helper_enabled() || spank_get_item(sp, S_JOB_ID, &req.applied.job_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &req.applied.step_id) != ESPANK_SUCCESS)
        return;
    req.applied.pid = getpid();
    snprintf(req.applied.policy, sizeof(req.applied.policy), "%s", policy);
    snprintf(req.applied.mode, sizeof(req.applied.mode), "%s", mode);
    snprintf(req.applied.nodes, sizeof(req.applied.nodes), "%s", nodes);
    snprintf(req.applied.cpus, sizeof(req.applied.cpus), "%s", cpus);
    line = np_proto_encode(&req);
    if (line) /* no wait for the reply; slurmstepd already logged an unreachable helper */
        np_proto_send(site.helper_socket, line, site.helper_timeout_ms, &err);
    free(line);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    const uint64_t start = now_us();
    struct np_place_input in = {0};
    struct np_placement placement;
    struct np_err err = {0};
    enum np_sensitivity sens;
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    char nodes_text[128] = "", cpus_text[128] = "", host[64] = "?", note[2 * NP_ERR_MSG_MAX] = "";
    const bool verbose = site.verbose || (request_given && request.verbose);
    bool downgraded, refuse = false;
    int taskid = -1, rc = 0;

    (void)ac;
    (void)av;
    spank_get_item(sp, S_TASK_GLOBAL_ID, &taskid);
    gethostname(host, sizeof(host) - 1);
    if (np_placement_init(&placement) < 0 || !cpus || !allowed) {
        slurm_error("numaplace: out of memory");
        rc = site.fail_on_error ? -1 : 0;
        goto out;
    }
    refuse = resolve_sensitivity(sp, &sens, &downgraded) > 0;
    export(sp, "NUMAPLACE_SENSITIVITY", np_sensitivity_name(sens));

    in.policy = request_given && request.policy_given ? request.policy : site.default_policy;
    if (!np_site_config_allows(&site, in.policy)) {
        /* The local side refuses this; a job submitted around it is refused here too, and runs
         * with the site default where Slurm ignores the refusal (an `optional` plugin). */
        fprintf(stderr,
                "numaplace: refusing this task: --numa-policy=%s is not allowed on this "
                "cluster\n",
                np_policy_name(in.policy));
        slurm_error("numaplace: refused --numa-policy=%s (not in allowed_policies)",
                    np_policy_name(in.policy));
        in.policy = site.default_policy;
        refuse = true;
    }
    if (in.policy != NP_POLICY_NONE && user_mem_bind(sp)) {
        if (!(request_given && request.policy_given)) {
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
        rc = site.fail_on_error ? -1 : 0;
        goto report;
    }
    if (task_cpus(cpus) < 0) {
        slurm_error("numaplace: cannot read task %d's CPU affinity: %s", taskid, strerror(errno));
        rc = site.fail_on_error ? -1 : 0;
        goto out;
    }
    in.task_cpus = cpus;
    if (step_cpus && hwloc_bitmap_intersects(step_cpus, cpus))
        in.step_cpus = step_cpus;
    if (np_mems_allowed(allowed, NULL) == 0)
        in.mems_allowed = allowed;
    in.include_cpuless = site.include_cpuless;
    in.have_preferred_many = have_preferred_many;

    if (in.policy == NP_POLICY_NONE) {
        np_place(topology, &in, &placement); /* explains itself; applies nothing */
    } else if (np_place(topology, &in, &placement) < 0 ||
               np_placement_apply(&placement, &err) < 0) {
        slurm_error("numaplace: task %d: %s; kernel default kept", taskid,
                    err.msg[0] ? err.msg : "placement failed");
        snprintf(note, sizeof(note), "%s: kernel default kept", err.msg);
        np_placement_fini(&placement);
        np_placement_init(&placement);
        rc = site.fail_on_error ? -1 : 0;
    }
    if (!hwloc_bitmap_iszero(placement.nodes))
        hwloc_bitmap_list_snprintf(nodes_text, sizeof(nodes_text), placement.nodes);
    export(sp, "NUMAPLACE_POLICY",
           np_policy_name(placement.mode == NP_MODE_DEFAULT && in.policy != NP_POLICY_NONE
                              ? NP_POLICY_NONE
                              : in.policy));
    export(sp, "NUMAPLACE_MODE", np_mode_name(placement.mode));
    export(sp, "NUMAPLACE_NODES", nodes_text);
    hwloc_bitmap_list_snprintf(cpus_text, sizeof(cpus_text), cpus);
    helper_applied(sp,
                   np_policy_name(placement.mode == NP_MODE_DEFAULT && in.policy != NP_POLICY_NONE
                                      ? NP_POLICY_NONE
                                      : in.policy),
                   np_mode_name(placement.mode), nodes_text, cpus_text);
report:
    if (verbose) {
        hwloc_bitmap_list_snprintf(cpus_text, sizeof(cpus_text), cpus);
        fprintf(stderr,
                "numaplace: task %d on %s: policy=%s mode=%s nodes=%s cpus=%s sensitivity=%s%s "
                "took=%lluus (%s)\n",
                taskid, host, np_policy_name(in.policy), np_mode_name(placement.mode),
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

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_context() == S_CTX_REMOTE && helper_registered && helper_enabled()) {
        /* slurmstepd at the step's end: the helper writes the step's report now. */
        struct np_proto_request req = {.op = NP_OP_STEP_END};
        struct np_err err = {0};
        if (spank_get_item(sp, S_JOB_ID, &req.job_id) == ESPANK_SUCCESS &&
            spank_get_item(sp, S_JOB_STEPID, &req.step_id) == ESPANK_SUCCESS &&
            helper_call(&req, &err) < 0)
            slurm_info("numaplace: job %u step %u: could not tell the helper the step ended "
                       "(%s); it ends the step itself when the tasks are gone",
                       req.job_id, req.step_id, err.msg);
        helper_registered = false;
    }
    np_topology_free(topology);
    topology = NULL;
    hwloc_bitmap_free(step_cpus);
    step_cpus = NULL;
    np_site_config_fini(&site);
    site_ready = false;
    return 0;
}
