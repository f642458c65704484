/* Node-wide /proc files kept open between intervals (see numaplace/kept_file.h). */
#include "numaplace/kept_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void np_kept_file_init(struct np_kept_file *k)
{
    memset(k, 0, sizeof(*k));
}

static void close_fd(struct np_kept_file *k)
{
    if (k->open)
        close(k->fd);
    k->open = false;
}

void np_kept_file_close(struct np_kept_file *k)
{
    if (!k)
        return;
    close_fd(k);
    free(k->path);
    free(k->text);
    np_kept_file_init(k);
}

/* The whole file from offset 0 into k->text; @return its length, or -1 with errno. */
static ssize_t read_whole(struct np_kept_file *k)
{
    size_t have = 0;

    for (;;) {
        ssize_t n;
        if (have + 1 >= k->cap) {
            const size_t cap = k->cap ? k->cap * 2 : 8192;
            char *grown = realloc(k->text, cap);
            if (!grown)
                return -1;
            k->text = grown;
            k->cap = cap;
        }
        n = pread(k->fd, k->text + have, k->cap - 1 - have, (off_t)have);
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        have += (size_t)n;
    }
    k->text[have] = '\0';
    return (ssize_t)have;
}

FILE *np_kept_file_open(struct np_kept_file *k, const char *path)
{
    ssize_t len = -1;

    if (!k)
        return fopen(path, "re");
    if (k->open && strcmp(k->path, path) != 0)
        close_fd(k); /* another root since */
    for (int attempt = 0; attempt < 2 && len < 0; attempt++) {
        if (!k->open) {
            char *copy = strdup(path);
            if (!copy || (k->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
                free(copy);
                return fopen(path, "re"); /* its error, as a fresh reader sees it */
            }
            free(k->path);
            k->path = copy;
            k->open = true;
        }
        if ((len = read_whole(k)) < 0)
            close_fd(k); /* replaced or gone: the next attempt opens it afresh */
    }
    /* An empty file (fmemopen refuses a size of 0) or a failed read: as a fresh reader sees it. */
    return len > 0 ? fmemopen(k->text, (size_t)len, "r") : fopen(path, "re");
}
