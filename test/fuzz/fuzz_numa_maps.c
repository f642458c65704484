/*
 * fuzz_numa_maps: /proc/<pid>/numa_maps, line by line (np_numa_maps_parse_line) and through the
 * reader the sampler uses (np_numa_maps_usage, over a scratch root holding the input).
 * Invariants: the policy is NUL-terminated; every line is a mapping or a skipped line; the
 * totals add up; no node is beyond the table.
 */
#include "fuzz_common.h"
#include "numaplace/procfs.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct np_numa_usage usage;
    struct np_err err = {0};
    char *text = fuzz_strndup(data, size), *line, *save = NULL;
    unsigned lines = 0, parsed = 0;
    uint64_t sum = 0;

    /* getline's lines: up to and with each '\n' (an embedded NUL ends what the parser sees). */
    for (const uint8_t *p = data, *end = data + size; p < end; lines++) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        struct np_numa_mapping m;
        if (np_numa_maps_parse_line(line, &m) == 0) {
            FUZZ_ASSERT(memchr(m.policy, '\0', sizeof(m.policy)) != NULL);
            FUZZ_ASSERT(m.page_kb > 0);
            parsed++;
        }
    }
    free(text);
    (void)parsed;

    fuzz_write("proc/1/numa_maps", data, size);
    FUZZ_ASSERT(np_numa_maps_usage(fuzz_root(), 1, &usage, &err) == 0);
    FUZZ_ASSERT(usage.mappings + usage.skipped_lines == lines);
    FUZZ_ASSERT(usage.max_node < NP_NUMA_MAPS_MAX_NODES);
    for (int n = 0; n < NP_NUMA_MAPS_MAX_NODES; n++)
        sum += usage.anon_bytes[n] + usage.file_bytes[n];
    FUZZ_ASSERT(sum == usage.total_bytes);
    return 0;
}
