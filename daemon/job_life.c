/* A step's life in the registry: registered, finished into a report, forgotten (daemon.h). */
#include "daemon.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "user_names.h"

bool job_keep_perf_for_task(struct np_daemon *d, struct np_daemon_job *j)
{
    char why[256];

    if (!j->sampler.perf_mask)
        return true;
    if (fd_check(d, fd_perf_need(j->sampler.perf_mask), why, sizeof(why)) == FD_OK)
        return true;
    /* Part of a step counted would be wrong figures: the whole step goes to /proc. */
    np_sampler_drop_perf(&j->sampler, why);
    snprintf(j->meta.backends, sizeof(j->meta.backends), "proc");
    snprintf(j->meta.backends_reason, sizeof(j->meta.backends_reason), "%s", why);
    return NPD_LOG_RC(d, WARNING, false, "job %u.%s: runs on /proc alone from now on (%s)",
                      j->meta.job_id, np_step_name(j->meta.step_id), why);
}

struct np_daemon_job *job_new(struct np_daemon *d, uint32_t job_id, uint32_t step_id, uid_t uid,
                              const char *cpus, const char *policy, const char *sensitivity,
                              struct np_err *err)
{
    const struct np_helper_config *cfg = &d->cfg;
    struct np_daemon_job *j;
    char fd_why[256];
    enum fd_verdict verdict;
    bool high, labelled;
    int rc;

    /* Steps whose report is held have ended: a full spool does not refuse new steps. */
    if (d->registry.count - d->report_hold.count >= cfg->max_jobs) {
        np_err_set(err, -ENOSPC, "the helper tracks %u steps already (max_jobs)",
                   d->registry.count - d->report_hold.count);
        return NULL;
    }
    /* Refused early, and said why, rather than failing later to open its report; without
     * room for its first task's perf counters it runs on /proc alone, and says so. */
    verdict = fd_check(d, fd_perf_need(d->perf_mask), fd_why, sizeof(fd_why));
    if (verdict == FD_REFUSE) {
        np_err_set(err, -EMFILE, "%s", fd_why);
        return NULL;
    }
    j = calloc(1, sizeof(*j));
    if (!j || np_sampler_init(&j->sampler, cfg->proc_root, verdict == FD_OK ? d->perf_mask : 0,
                              verdict == FD_OK ? d->perf_off_reason : fd_why, d->cpu_node,
                              d->cpu_node ? d->ncpus : 0, cpus, err) < 0) {
        free(j);
        if (!err->code)
            np_err_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    if (verdict == FD_NO_PERF)
        snprintf(j->meta.backends_reason, sizeof(j->meta.backends_reason), "%s", fd_why);
    np_sampler_set_fd_budget(&j->sampler, &d->fd_budget);
    np_step_figures_init(&j->stats);
    j->tasks = json_array();
    j->meta.job_id = job_id;
    j->meta.step_id = step_id;
    j->meta.uid = uid;
    j->meta.start_epoch = np_clock_s(CLOCK_REALTIME);
    j->meta.interval_s = cfg->interval_ms / 1000.0;
    snprintf(j->meta.node, sizeof(j->meta.node), "%s", d->host);
    snprintf(j->meta.cpus, sizeof(j->meta.cpus), "%s", cpus);
    snprintf(j->meta.policy_requested, sizeof(j->meta.policy_requested), "%s", policy);
    snprintf(j->meta.sensitivity, sizeof(j->meta.sensitivity), "%s", sensitivity);
    labelled = strcmp(sensitivity, "high") == 0 || strcmp(sensitivity, "low") == 0;
    high = !labelled               ? cfg->class_default_high
           : sensitivity[0] == 'h' ? cfg->class_high_is_high
                                   : cfg->class_low_is_high;
    job_set_class(j, high ? NP_CLASS_HIGH : NP_CLASS_LOW);
    job_set_class_source(j, labelled ? "label" : "default");
    j->stats.migration_enabled = cfg->migration;
    j->meta.registered_nodes = job_cpu_nodes_mask(d, j->sampler.cpus);
    j->meta.local_nodes = j->stats.local_nodes = j->meta.registered_nodes;
    snprintf(j->meta.backends, sizeof(j->meta.backends), "%s",
             d->perf_mask && verdict == FD_OK ? "perf,proc" : "proc");
    if (d->perf_mask && verdict == FD_OK)
        snprintf(j->meta.emulated_cpu, sizeof(j->meta.emulated_cpu), "%s", d->emulated_cpu);
    j->registered_mono = np_monotonic_s();
    user_name_want(uid); /* for the metrics page, looked up off the loop */
    j->last_pages_mono = j->last_detail_mono = -1e9;
    if ((rc = registry_insert(&d->registry, j)) < 0) {
        job_free(j);
        if (rc == -EEXIST)
            np_err_set(err, rc, "job %u.%s is tracked already", job_id, np_step_name(step_id));
        else
            np_err_set(err, rc, "out of memory");
        return NULL;
    }
    return j;
}

/* Out of the registry (journaled) and freed, with no report. */
static void job_forget(struct np_daemon *d, struct np_daemon_job *j)
{
    registry_remove(&d->registry, j);
    registry_note_end(d, j->meta.job_id, j->meta.step_id);
    job_free(j);
}

void job_finish(struct np_daemon *d, struct np_daemon_job *j, bool complete)
{
    if (!j->ended) {
        /* The final figures: perf totals include every exited thread and child. */
        np_node_counters_read(&d->counters, d->cfg.proc_root);
        sampling_sample_job(d, j, np_monotonic_s(), true, true);
        j->ended = true;
    }
    if (!j->finishing && !j->final_report) /* restored with its report: remembered before */
        hint_remember(d, j);
    /* numaplaced restarted during the step: its figures cover only the time since. */
    j->finishing = report_out_write(d, j, complete && !j->restored);
    if (j->traced)
        trace_line(d, np_trace_end_line(j->meta.job_id, j->meta.step_id, j->meta.end_epoch));
    /* Until its report is on disk, its entry with the report is journaled before step_end is
     * answered: after a kill -9 meanwhile, the restart writes that report. */
    if (j->finishing)
        registry_note(d, j);
    else
        job_forget(d, j);
}

void job_report_done(struct np_daemon *d, struct np_daemon_job *j)
{
    const uint64_t tag = j->reply_tag;

    j->reply_tag = 0;
    /* Held: it stays, listed ending, until the spool takes it (report_out.c). */
    if (!j->report_held)
        job_forget(d, j);
    if (tag) /* the epilog reads the report right after: step_end is answered only now */
        client_answer_tag(d, tag, np_proto_reply_ok());
}
