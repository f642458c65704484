/* Helpers the harnesses share (fuzz_common.h). */
#include "fuzz_common.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[PATH_MAX];

void fuzz_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: invariant failed: %s\n", file, line, what);
    abort();
}

char *fuzz_strndup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    FUZZ_ASSERT(s != NULL);
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_root(void)
{
    if (root[0])
        nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_root(void)
{
    if (!root[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(root, sizeof(root), "%s/numaplace-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        FUZZ_ASSERT(mkdtemp(root) != NULL);
        atexit(remove_root);
    }
    return root;
}

/* mkdir -p of @p path's parent directories. */
static void make_parents(char *path)
{
    for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        FUZZ_ASSERT(mkdir(path, 0700) == 0 || errno == EEXIST);
        *slash = '/';
    }
}

const char *fuzz_write(const char *relpath, const uint8_t *data, size_t size)
{
    static char path[PATH_MAX];
    size_t done = 0;
    int fd;

    snprintf(path, sizeof(path), "%s/%s", fuzz_root(), relpath);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 && errno == ENOENT) {
        make_parents(path);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    }
    FUZZ_ASSERT(fd >= 0);
    while (done < size) {
        const ssize_t n = write(fd, data + done, size - done);
        FUZZ_ASSERT(n > 0);
        done += (size_t)n;
    }
    FUZZ_ASSERT(close(fd) == 0);
    return path;
}

FILE *fuzz_devnull(void)
{
    static FILE *null;

    if (!null)
        null = fopen("/dev/null", "we");
    FUZZ_ASSERT(null != NULL);
    return null;
}
