/* Per-benchmark memory footprints for the replay (see numaplace/footprint.h). */
#include "numaplace/footprint.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void np_footprints_free(struct np_footprints *table)
{
    if (!table)
        return;
    free(table->rows);
    table->rows = NULL;
    table->count = 0;
}

const struct np_footprint *np_footprint_find(const struct np_footprints *table,
                                             const char *benchmark, const char *input)
{
    for (size_t i = 0; i < table->count; i++) {
        const struct np_footprint *row = &table->rows[i];
        if (strcmp(row->benchmark, benchmark) == 0 &&
            (!row->input[0] || (input && strcmp(row->input, input) == 0)))
            return row;
    }
    return NULL;
}

uint64_t np_footprint_pages(const struct np_footprints *table, const char *benchmark,
                            const char *input)
{
    const struct np_footprint *row = np_footprint_find(table, benchmark, input);

    return row ? row->pages : 0;
}
