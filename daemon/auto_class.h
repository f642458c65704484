/*
 * auto_class.h - class_default=auto (docs/sensitivity.md): a step registered without a
 * --numa-sensitivity label is classed by its predicted sensitivity once it has
 * NPD_AUTO_CLASS_SAMPLES samples with counters, through class_map. A label, the site's refusal of
 * one, or an administrator's set-class wins; the report's class_source says which decided.
 */
#ifndef NUMAPLACED_AUTO_CLASS_H
#define NUMAPLACED_AUTO_CLASS_H

#include "daemon.h"

/* Samples with counters before an unlabelled step is classed: its start-up (loading input,
 * allocating) is not what it runs like; at the default 1 s interval, half a minute. */
#define NPD_AUTO_CLASS_SAMPLES 30

/** Load the sensitivity table (sensitivity_table) when class_default=auto or the migration order
 * ranks by prediction, or say why it cannot be; a table a user could write is refused (root
 * reads it). Logs the outcome. */
void auto_class_load(struct np_daemon *d);

/** After each sample of @p j: count it when it has the counters, and class the step when due. */
void auto_class_consider(struct np_daemon *d, struct np_daemon_job *j, const struct np_sample *s);

/** The model's predicted remote slowdown for a job whose last sample is @p s (its cumulative
 * counters), with the inputs used. @return 0, or -ENODATA with @p err "unavailable: why" (no
 * model loaded, a counter missing). */
int auto_class_predict(const struct np_daemon *d, const struct np_sample *s,
                       struct np_sens_inputs *in, double *slowdown, struct np_err *err);

/** Root reads only files no other user could have written: a regular file, not a symlink,
 *  root's (or numaplaced's) and not group- or world-writable. @return 0 or -errno with @p err */
int auto_class_file_is_safe(const char *what, const char *path, struct np_err *err);

#endif /* NUMAPLACED_AUTO_CLASS_H */
