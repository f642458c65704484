/*
 * numaplace/names.h - every enum's names come from one table.
 *
 * Each enum that users see (placement policies and modes, migration orders, triggers, classes,
 * move failures) has one static table of names; printing a value, parsing a name and every list
 * of accepted names in help, errors and man pages (docs/CMakeLists.txt) come from that table,
 * so a new entry cannot be forgotten in one of them.
 */
#ifndef NUMAPLACE_NAMES_H
#define NUMAPLACE_NAMES_H

#include <stddef.h>

#include "numaplace/common.h"

/** The names of an enum's values 0..count-1, and what they name (for error messages). */
struct np_name_table {
    const char *what;         /**< "NUMA policy", "class", ... */
    const char *const *names; /**< names[value]; borrowed, static */
    size_t count;
    const unsigned *list_order; /**< the order lists print values in; NULL = by value */
};

/** The name of @p value, or "unknown" past the table's end. Borrowed, static. */
NP_API const char *np_name_of(const struct np_name_table *table, unsigned value);

/**
 * The value named @p text (exact match).
 * @return 0, or -EINVAL with @p err "invalid WHAT 'TEXT': accepted values are a, b, c"
 */
NP_API int np_name_parse(const struct np_name_table *table, const char *text, unsigned *out,
                         struct np_err *err);

/** Write "a, b, c" into @p buf (cut, never overflowed). @return the length it needed. */
NP_API size_t np_name_list(const struct np_name_table *table, char *buf, size_t len);

/** The list "a, b, c" (with @p separator between names), built once per table and separator.
 *  Borrowed: valid for the life of the process. Thread-safe. */
NP_API const char *np_name_list_static(const struct np_name_table *table, const char *separator);

#endif /* NUMAPLACE_NAMES_H */
