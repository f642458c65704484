/*
 * numaplace.so - the SPANK plugin: --numa-policy and --numa-sensitivity for srun, sbatch and
 * salloc, site defaults and limits from plugstack.conf, and the memory policy set in each task
 * just before it execs. In srun, sbatch and salloc it validates the options as they are parsed
 * (a bad value or a policy the site does not allow fails the command before anything is
 * submitted) and links nothing but libc; in slurmstepd it loads its step side,
 * numaplace_task.so (numaplace_task.h). Own trouble (no topology, a refused system call, the step
 * module missing) is logged and the task runs with the kernel default, unless the site set
 * on_error=fail; the node is never drained over it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "numaplace/names.h"
#include "numaplace/siteconf.h"
#include "numaplace_task.h"

SPANK_PLUGIN(numaplace, 1);

static struct np_site_config site;
static bool site_ready;
static struct np_policy_request request; /* the user's --numa-policy, if given */
static bool request_given;
static enum np_sensitivity sensitivity; /* the user's --numa-sensitivity, if given */
static bool sensitivity_given;
/* The step side (slurmstepd only): NULL until loaded, and when it could not be. It stays loaded
 * until slurmstepd exits. */
static const struct numaplace_task_ops *task_ops;

static int policy_option(int val, const char *value, int remote);
static int sensitivity_option(int val, const char *value, int remote);

static struct spank_option options[] = {
    {"numa-policy", "[verbose,]POLICY",
     "NUMA memory policy for each task ('help' lists the choices, 'auto' chooses per task); "
     "'verbose,' reports what each task got",
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
    char allowed[256];

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
        char allowed[256];
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

/* slurmstepd: load numaplace_task.so from this module's directory. @return 0 or -1 (logged). */
static int load_task_module(void)
{
    Dl_info self;
    char path[4096];
    const char *slash;
    const struct numaplace_task_ops *ops;
    void *task_module;

    if (task_ops)
        return 0;
    if (!dladdr((void *)load_task_module, &self) || !self.dli_fname ||
        !(slash = strrchr(self.dli_fname, '/'))) {
        slurm_error("numaplace: cannot find the directory numaplace.so was loaded from, so not "
                    "%s; tasks keep the kernel default memory policy",
                    NUMAPLACE_TASK_MODULE);
        return -1;
    }
    snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - self.dli_fname), self.dli_fname,
             NUMAPLACE_TASK_MODULE);
    task_module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!task_module) {
        slurm_error("numaplace: cannot load %s: %s; tasks keep the kernel default memory policy",
                    path, dlerror());
        return -1;
    }
    ops = (const struct numaplace_task_ops *)dlsym(task_module, NUMAPLACE_TASK_OPS_SYMBOL);
    if (!ops || ops->abi != NUMAPLACE_TASK_ABI) {
        slurm_error("numaplace: %s is from another numaplace build (%s %u, expected %u); tasks "
                    "keep the kernel default memory policy",
                    path, ops ? "interface" : "no interface", ops ? ops->abi : 0,
                    NUMAPLACE_TASK_ABI);
        dlclose(task_module);
        return -1;
    }
    task_ops = ops;
    return 0;
}

/* What the step side borrows: static, so a pointer it keeps between calls stays valid. */
static const struct numaplace_step_settings *step_settings(void)
{
    static struct numaplace_step_settings settings;

    settings = (struct numaplace_step_settings){.site = &site,
                                                .request = &request,
                                                .request_given = request_given,
                                                .sensitivity = sensitivity,
                                                .sensitivity_given = sensitivity_given};
    return &settings;
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
    if (ctx == S_CTX_REMOTE && load_task_module() < 0)
        return site.fail_on_error ? ESPANK_ERROR : ESPANK_SUCCESS;
    return ESPANK_SUCCESS;
}

/* The remote callbacks, in slurmstepd and its tasks: the step side does the work. */

/* Called in every context; only slurmstepd's (remote, still root) has step-side work. */
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_context() != S_CTX_REMOTE || !task_ops)
        return 0;
    return task_ops->init_post_opt(sp, step_settings());
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    return task_ops ? task_ops->user_init(sp, step_settings()) : 0;
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    return task_ops ? task_ops->task_post_fork(sp, step_settings()) : 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (!task_ops) /* said once at init; the task still runs, with the kernel default */
        return site_ready && site.fail_on_error ? -1 : 0;
    return task_ops->task_init(sp, step_settings());
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (task_ops)
        task_ops->exit(sp, step_settings());
    /* The step module stays loaded: slurmstepd exits right after, and unloading code whose
     * hwloc may have registered handlers gains nothing. */
    np_site_config_fini(&site);
    site_ready = false;
    return 0;
}
