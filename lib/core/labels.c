/* Sensitivity labels and priority classes, one name table each (see numaplace/labels.h). */
#include "numaplace/labels.h"

#include "numaplace/names.h"

/* Both lists read most important first, as every message and man page has always said them. */
static const unsigned high_first[2] = {1, 0};

static const char *const sensitivity_names[NP_SENSITIVITY_COUNT] = {
    [NP_SENSITIVITY_LOW] = "low",
    [NP_SENSITIVITY_HIGH] = "high",
};
static const struct np_name_table sensitivities = {"--numa-sensitivity value", sensitivity_names,
                                                   NP_SENSITIVITY_COUNT, high_first};

static const char *const class_names[NP_CLASS_COUNT] = {
    [NP_CLASS_LOW] = "low",
    [NP_CLASS_HIGH] = "high",
};
static const struct np_name_table classes = {"class", class_names, NP_CLASS_COUNT, high_first};

const char *np_sensitivity_name(enum np_sensitivity s)
{
    return np_name_of(&sensitivities, (unsigned)s);
}

int np_sensitivity_from_name(const char *text, enum np_sensitivity *out, struct np_err *err)
{
    unsigned v;
    const int rc = np_name_parse(&sensitivities, text ? text : "", &v, err);

    if (rc == 0)
        *out = (enum np_sensitivity)v;
    return rc;
}

const char *np_sensitivity_names(void)
{
    return np_name_list_static(&sensitivities, ", ");
}

const char *np_class_name(enum np_class c)
{
    return np_name_of(&classes, (unsigned)c);
}

int np_class_from_name(const char *text, enum np_class *out, struct np_err *err)
{
    unsigned v;
    const int rc = np_name_parse(&classes, text, &v, err);

    if (rc == 0)
        *out = (enum np_class)v;
    return rc;
}

const char *np_class_names(void)
{
    return np_name_list_static(&classes, ", ");
}
