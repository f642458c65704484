/* Reading /proc/<pid>/numa_maps (see numaplace/numa_maps.h). */
#include "numaplace/numa_maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel prints white space, '=' and backslashes in a path as octal escapes (\040): undo
 * in place, so the path is the file's real name. */
static char *unescape(char *path)
{
    char *w = path;

    for (const char *r = path; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 | (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    return path;
}

int np_numa_maps_parse_line(char *line, struct np_numa_mapping *out)
{
    char *save = NULL, *tok, *end;

    memset(out, 0, sizeof(*out));
    out->page_kb = (unsigned long)sysconf(_SC_PAGESIZE) / 1024;
    line[strcspn(line, "\n")] = '\0';
    tok = strtok_r(line, " ", &save);
    if (!tok)
        return -EINVAL;
    errno = 0;
    out->start = (uintptr_t)strtoull(tok, &end, 16);
    if (errno || end == tok || *end)
        return -EINVAL;
    tok = strtok_r(NULL, " ", &save);
    if (!tok)
        return -EINVAL; /* truncated after the address */
    snprintf(out->policy, sizeof(out->policy), "%s", tok);
    while ((tok = strtok_r(NULL, " ", &save))) {
        unsigned node;
        unsigned long long value;
        char tail;

        if (sscanf(tok, "N%u=%llu%c", &node, &value, &tail) == 2) {
            if (node < NP_NUMA_MAPS_MAX_NODES)
                out->pages[node] = value;
        } else if (sscanf(tok, "kernelpagesize_kB=%llu%c", &value, &tail) == 1 && value) {
            out->page_kb = (unsigned long)value;
        } else if (strncmp(tok, "file=", 5) == 0) {
            out->path = unescape(tok + 5);
        } else if (strncmp(tok, "anon=", 5) == 0) {
            out->anon = true;
        } else if (strcmp(tok, "heap") == 0) {
            out->heap = out->anon = true;
        } else if (strcmp(tok, "stack") == 0) {
            out->stack = out->anon = true;
        } else if (strcmp(tok, "huge") == 0) {
            out->hugetlb = true;
        }
        /* anything else (dirty=, mapped=, active=, new kernels' tokens): ignored */
    }
    return 0;
}

int np_numa_maps_each(const char *root, pid_t pid, np_numa_maps_fn *fn, void *arg,
                      unsigned *skipped, struct np_err *err)
{
    char path[4096];
    char *line = NULL;
    size_t cap = 0;
    unsigned bad = 0;
    FILE *f;
    int rc = 0;

    snprintf(path, sizeof(path), "%s/proc/%d/numa_maps", root && *root ? root : "", (int)pid);
    f = fopen(path, "re");
    if (!f) {
        if (errno == ENOENT || errno == ESRCH)
            return np_err_set(err, -ESRCH, "no process %d (%s)", (int)pid, path);
        return np_err_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
    }
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        struct np_numa_mapping m;
        if (np_numa_maps_parse_line(line, &m) < 0) {
            bad++;
            continue;
        }
        rc = fn(&m, arg);
    }
    free(line);
    fclose(f);
    if (skipped)
        *skipped = bad;
    return rc;
}

static int add_usage(const struct np_numa_mapping *m, void *arg)
{
    struct np_numa_usage *u = arg;

    u->mappings++;
    for (int n = 0; n < NP_NUMA_MAPS_MAX_NODES; n++) {
        const uint64_t bytes = m->pages[n] * m->page_kb * 1024;
        if (!bytes)
            continue;
        if (m->path && !m->anon)
            u->file_bytes[n] += bytes;
        else
            u->anon_bytes[n] += bytes;
        u->total_bytes += bytes;
        if (n > u->max_node)
            u->max_node = n;
    }
    return 0;
}

int np_numa_maps_usage(const char *root, pid_t pid, struct np_numa_usage *out, struct np_err *err)
{
    memset(out, 0, sizeof(*out));
    out->max_node = -1;
    return np_numa_maps_each(root, pid, add_usage, out, &out->skipped_lines, err);
}
