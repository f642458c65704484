/* Writing a named file without following what is at the name (see output_file.h). */
#include "numaplace/output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int np_output_file_open(struct np_output_file *o, const char *path, struct np_err *err)
{
    const char *slash = strrchr(path, '/');
    const int dirlen = slash ? (int)(slash - path) + 1 : 0;
    struct stat st;

    o->fd = -1;
    o->tmp[0] = '\0';
    if ((size_t)snprintf(o->path, sizeof(o->path), "%s", path) >= sizeof(o->path) ||
        (size_t)snprintf(o->tmp, sizeof(o->tmp), "%.*s.%s.XXXXXX", dirlen, path, path + dirlen) >=
            sizeof(o->tmp)) {
        o->tmp[0] = '\0';
        return np_err_set(err, -ENAMETOOLONG, "%s: name too long", path);
    }
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->tmp[0] = '\0';
        if (S_ISLNK(st.st_mode))
            return np_err_set(err, -ELOOP, "%s: a symlink (not written through)", path);
        return np_err_set(err, -EINVAL, "%s: not a regular file", path);
    }
    /* mkostemp opens with O_CREAT|O_EXCL: never an existing file, nor through a symlink */
    o->fd = mkostemp(o->tmp, O_CLOEXEC);
    if (o->fd < 0) {
        const int e = errno;
        o->tmp[0] = '\0';
        return np_err_set(err, -e, "%s: cannot create a file next to it: %s", path, strerror(e));
    }
    if (fchmod(o->fd, 0644) < 0) {
        const int e = errno;
        np_output_file_abort(o);
        return np_err_set(err, -e, "%s: %s", path, strerror(e));
    }
    return 0;
}

int np_output_file_commit(struct np_output_file *o, struct np_err *err)
{
    int rc = 0;

    if (fsync(o->fd) < 0 || close(o->fd) < 0)
        rc = -errno;
    o->fd = -1;
    if (rc == 0 && rename(o->tmp, o->path) < 0)
        rc = -errno;
    if (rc < 0) {
        np_output_file_abort(o);
        return np_err_set(err, rc, "cannot write %s: %s", o->path, strerror(-rc));
    }
    o->tmp[0] = '\0';
    return 0;
}

void np_output_file_abort(struct np_output_file *o)
{
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (o->tmp[0])
        unlink(o->tmp);
    o->tmp[0] = '\0';
}
