/* The measured slowdown model and the replay's footprints (numaplace/model.h, footprint.h). */
#include "numaplace/footprint.h"
#include "numaplace/model.h"

#include <stdlib.h>
#include <string.h>

void np_model_free(struct np_model *model)
{
    if (!model)
        return;
    free(model->rows);
    model->rows = NULL;
    model->count = 0;
}

const struct np_model_row *np_model_find(const struct np_model *model, const char *benchmark,
                                         const char *input)
{
    for (size_t i = 0; i < model->count; i++)
        if (strcmp(model->rows[i].benchmark, benchmark) == 0 &&
            (!input || strcmp(model->rows[i].input, input) == 0))
            return &model->rows[i];
    return NULL;
}

double np_model_slowdown(const struct np_model_row *row, double remote_share)
{
    const double x = remote_share < 0 ? 0 : remote_share > 1 ? 1 : remote_share;

    if (x <= 0.5)
        return 1.0 + (row->interleave - 1.0) * (x / 0.5);
    return row->interleave + (row->remote - row->interleave) * ((x - 0.5) / 0.5);
}

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
