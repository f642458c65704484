/*
 * numaplace/labels.h - the two high/low words of numaplace, kept apart on purpose.
 *
 * A job's *sensitivity* is the label its user gives (--numa-sensitivity): how much it suffers
 * from remote memory. Its *class* is the priority numaplaced keeps it in: high jobs are kept
 * local and never moved away, low jobs may be moved. A sensitive job can be unimportant; the
 * site's class_map (numaplaced.conf) decides which label becomes which class.
 */
#ifndef NUMAPLACE_LABELS_H
#define NUMAPLACE_LABELS_H

#include "numaplace/common.h"

enum np_sensitivity {
    NP_SENSITIVITY_LOW = 0, /**< memory may be moved by numaplaced */
    NP_SENSITIVITY_HIGH,    /**< kept local, never moved away */
    NP_SENSITIVITY_COUNT
};

NP_API const char *np_sensitivity_name(enum np_sensitivity s);
/** Accepts "high" and "low". @return 0 or -EINVAL naming @p text and the accepted values. */
NP_API int np_sensitivity_from_name(const char *text, enum np_sensitivity *out, struct np_err *err);
/** "high, low". Borrowed, static. */
NP_API const char *np_sensitivity_names(void);

/** Priority class: high jobs are kept local and never moved away; low jobs may be moved. */
enum np_class { NP_CLASS_LOW = 0, NP_CLASS_HIGH = 1, NP_CLASS_COUNT };

NP_API const char *np_class_name(enum np_class c);
NP_API int np_class_from_name(const char *text, enum np_class *out, struct np_err *err);
/** "high, low". Borrowed, static. */
NP_API const char *np_class_names(void);

#endif /* NUMAPLACE_LABELS_H */
