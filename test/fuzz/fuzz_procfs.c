/*
 * fuzz_procfs: /proc/<pid>/stat, status and task/<tid>/children, chosen by the input's first
 * byte (% 3: stat, status, children); the rest is the file. Each goes through its buffer-level
 * parser (np_proc_stat_parse, np_proc_status_parse_line) where there is one, and through the
 * reader the helper uses over a scratch root holding the file (np_proc_stat_read,
 * np_proc_status_read, np_proc_children with one thread and with the thread walk).
 * Invariants: strings NUL-terminated; a parsed stat line gives the pid it starts with; a
 * reader never reports more children than it stored (the count may exceed max: it says so).
 */
#include "fuzz_common.h"
#include "numaplace/procfs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_stat(const uint8_t *data, size_t size)
{
    struct np_proc_stat st;
    struct np_err err = {0};
    char *line = fuzz_strndup(data, size);

    if (np_proc_stat_parse(line, &st, &err) == 0)
        FUZZ_ASSERT(memchr(st.comm, '\0', sizeof(st.comm)) != NULL);
    else
        FUZZ_ASSERT(err.code == -EINVAL);
    free(line);
    fuzz_write("proc/1/stat", data, size);
    if (np_proc_stat_read(fuzz_root(), 1, &st, &err) == 0)
        FUZZ_ASSERT(memchr(st.comm, '\0', sizeof(st.comm)) != NULL);
}

static void fuzz_status(const uint8_t *data, size_t size)
{
    struct np_proc_status ps;
    struct np_err err = {0};
    char *text = fuzz_strndup(data, size), *line, *save = NULL;

    memset(&ps, 0, sizeof(ps));
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        np_proc_status_parse_line(line, &ps);
    free(text);
    fuzz_write("proc/1/status", data, size);
    FUZZ_ASSERT(np_proc_status_read(fuzz_root(), 1, &ps, &err) == 0);
    FUZZ_ASSERT(memchr(ps.cpus_allowed_list, '\0', sizeof(ps.cpus_allowed_list)) != NULL);
    FUZZ_ASSERT(memchr(ps.mems_allowed_list, '\0', sizeof(ps.mems_allowed_list)) != NULL);
}

static void fuzz_children(const uint8_t *data, size_t size)
{
    enum { MAX = 64 };
    struct np_err err = {0};
    pid_t out[MAX + 1];

    fuzz_write("proc/1/task/1/children", data, size);
    out[MAX] = -12345; /* a write past max would change it */
    for (long threads = 1; threads <= 2; threads++) {
        const int n = np_proc_children(fuzz_root(), 1, threads, out, MAX, NULL, &err);
        FUZZ_ASSERT(n >= 0);
        FUZZ_ASSERT(out[MAX] == -12345);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    switch (data[0] % 3) {
    case 0:
        fuzz_stat(data + 1, size - 1);
        break;
    case 1:
        fuzz_status(data + 1, size - 1);
        break;
    default:
        fuzz_children(data + 1, size - 1);
        break;
    }
    return 0;
}
