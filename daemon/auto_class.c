/* class_default=auto: unlabelled steps classed by their predicted sensitivity (daemon.h). */
#include "daemon.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "numaplace/penalty.h"
#include "numaplace/profile.h"
#include "numaplace/tables.h"

/* The perf events the prediction needs: cycles, instructions, LLC load and store misses. */
static const enum np_perf_event needed[] = {NP_PERF_CYCLES, NP_PERF_INSTRUCTIONS,
                                            NP_PERF_LLC_LOAD_MISSES, NP_PERF_LLC_STORE_MISSES};
#define NNEEDED (sizeof(needed) / sizeof(needed[0]))

int auto_class_file_is_safe(const char *what, const char *path, struct np_err *err)
{
    struct stat st;

    if (lstat(path, &st) < 0)
        return np_err_set(err, -errno, "%s %s: %s", what, path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return np_err_set(err, -EPERM,
                          "%s %s: not a regular file (symlinks are "
                          "not followed)",
                          what, path);
    if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH)))
        return np_err_set(err, -EPERM,
                          "%s %s: owned by uid %u with mode %03o; it must be "
                          "root's (or numaplaced's) and not group- or world-writable",
                          what, path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
    return 0;
}

/* Predictions scaled to this machine's profile (numaplace characterize), else the reference's. */
static void use_machine_profile(struct np_daemon *d, const char *user)
{
    const char *path = d->cfg.machine_profile[0] ? d->cfg.machine_profile : NP_PROFILE_DEFAULT_PATH;
    struct np_profile *profile = NULL;
    struct np_err err = {0};
    double penalty = NAN;

    if (auto_class_file_is_safe("machine profile", path, &err) == 0 &&
        np_profile_load(path, &profile, &err) == 0) {
        penalty = np_profile_near_penalty(profile);
        np_profile_free(profile);
    }
    if (isfinite(penalty)) {
        d->sens_model.remote_penalty = penalty;
        NPD_LOG(d, INFO,
                "%s: predictions scaled to this machine (%s: near-node "
                "remote penalty %.2fx, the reference's %.2fx)",
                user, path, penalty, NP_REFERENCE_REMOTE_PENALTY);
    } else {
        np_logf(&d->log, err.code == -ENOENT ? NP_LOG_INFO : NP_LOG_WARNING,
                "%s: predictions are the reference machine's (no usable machine "
                "profile: %s)",
                user, err.code ? err.msg : "no remote pair measured");
    }
}

void auto_class_load(struct np_daemon *d)
{
    const char *path =
        d->cfg.sensitivity_table[0] ? d->cfg.sensitivity_table : np_sensitivity_default_table();
    const struct np_order_ops *order = np_order_lookup(d->cfg.migration_order);
    /* An order that ranks by predicted effect needs the model too (np_job_view). */
    const bool for_order = d->cfg.migration && order && order->uses_prediction;
    const char *user = d->cfg.class_default_auto ? "class_default=auto" : "migration order";
    struct np_err err = {0};

    d->sens_loaded = false;
    d->sens_why[0] = '\0';
    if (!d->cfg.class_default_auto && !for_order)
        return;
    if (auto_class_file_is_safe("sensitivity_table", path, &err) == 0 &&
        np_sensitivity_load(&d->sens_model, path, &err) == 0) {
        d->sens_loaded = true;
        use_machine_profile(d, user);
        NPD_LOG(d, INFO, "%s: sensitivity table %s (%zu rows, sensitive from %.2fx)", user, path,
                d->sens_model.rows, d->sens_model.threshold);
        return;
    }
    snprintf(d->sens_why, sizeof(d->sens_why), "%s", err.msg);
    NPD_LOG(d, ERROR, "%s: %s: %s", user,
            d->cfg.class_default_auto ? "unlabelled steps keep the default class"
                                      : "no predictions, the order falls back to best-plus",
            d->sens_why);
}

/* Why @p s lacks a counter the prediction needs, or NULL. */
static const char *missing_counter(const struct np_sample *s)
{
    for (size_t k = 0; k < NNEEDED; k++)
        if (!s->have_perf[needed[k]])
            return s->perf_reason[needed[k]][0] ? s->perf_reason[needed[k]] : "not counted";
    return NULL;
}

int auto_class_predict(const struct np_daemon *d, const struct np_sample *s,
                       struct np_sens_inputs *in, double *slowdown, struct np_err *err)
{
    const char *missing;

    *in = (struct np_sens_inputs){NAN, NAN, NAN, NAN, NULL};
    *slowdown = NAN;
    if (!d->sens_loaded)
        return np_err_set(err, -ENODATA, "unavailable: %s",
                          d->sens_why[0] ? d->sens_why : "no sensitivity model loaded");
    if ((missing = missing_counter(s)) != NULL)
        return np_err_set(err, -ENODATA, "unavailable: %s", missing);
    /* The counts are cumulative since registration: the step's whole run so far. */
    if (s->perf[NP_PERF_INSTRUCTIONS] > 0) {
        in->cpi = (double)s->perf[NP_PERF_CYCLES] / (double)s->perf[NP_PERF_INSTRUCTIONS];
        in->llc_mpki =
            (double)(s->perf[NP_PERF_LLC_LOAD_MISSES] + s->perf[NP_PERF_LLC_STORE_MISSES]) /
            (double)s->perf[NP_PERF_INSTRUCTIONS] * 1000.0;
    } else {
        in->why = "no instructions counted";
    }
    return np_sensitivity_predict(&d->sens_model, in, slowdown, err);
}

void auto_class_consider(struct np_daemon *d, struct np_daemon_job *j, const struct np_sample *s)
{
    const char *missing;
    struct np_sens_inputs in;
    struct np_err err = {0};
    char source[sizeof(j->meta.class_source)];
    double slowdown;
    bool sensitive, high;

    /* Only a step whose class came from the default: a label, the site or an admin decided. */
    if (!d->cfg.class_default_auto || !j->unlabelled ||
        strncmp(j->meta.class_source, "default", 7) != 0)
        return;
    if (!d->sens_loaded || (missing = missing_counter(s)) != NULL) {
        snprintf(source, sizeof(source), "default (auto unavailable: %.150s)",
                 d->sens_loaded ? missing : d->sens_why);
        job_set_class_source(j, source);
        return;
    }
    if (++j->counter_samples < NPD_AUTO_CLASS_SAMPLES)
        return;
    if (auto_class_predict(d, s, &in, &slowdown, &err) < 0) {
        snprintf(source, sizeof(source), "default (auto %.160s)", err.msg);
        job_set_class_source(j, source);
        return;
    }
    sensitive = np_sensitivity_is_sensitive(&d->sens_model, slowdown);
    /* The prediction stands in for the label; class_map turns a label into a class. */
    high = sensitive ? d->cfg.class_high_is_high : d->cfg.class_low_is_high;
    const struct np_class_prediction p = {.known = true,
                                          .sensitive = sensitive,
                                          .slowdown = slowdown,
                                          .llc_mpki = in.llc_mpki,
                                          .cpi = in.cpi};
    np_class_prediction_text(&p, source, sizeof(source)); /* the fields' words, for people */
    NPD_LOG(d, INFO, "job %u.%s: class %s -> %s (%s)", j->meta.job_id,
            np_step_name(j->meta.step_id), np_class_name(j->job_class),
            np_class_name(high ? NP_CLASS_HIGH : NP_CLASS_LOW), source);
    job_set_class(j, high ? NP_CLASS_HIGH : NP_CLASS_LOW);
    job_set_class_source(j, source);
    j->meta.prediction = p; /* the report's class_prediction: what readers read */
}
