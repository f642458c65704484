/* Opening a named file only when it is a regular file (see open_regular.h). */
#include "numaplace/open_regular.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int not_regular(const char *path, struct np_err *err)
{
    return np_err_set(err, -EINVAL, "%s: not a regular file", path);
}

int np_open_regular(const char *path, int no_follow, struct np_err *err)
{
    struct stat before, st;
    int fd;

    if ((no_follow ? lstat(path, &before) : stat(path, &before)) != 0)
        return np_err_set(err, -errno, "%s: %s", path, strerror(errno));
    if (S_ISLNK(before.st_mode))
        return np_err_set(err, -ELOOP, "%s: a symlink (not followed)", path);
    if (!S_ISREG(before.st_mode))
        return not_regular(path, err);
    /* O_NONBLOCK and O_NOCTTY: harmless on a regular file, and the name may have changed. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (no_follow ? O_NOFOLLOW : 0));
    if (fd < 0)
        return np_err_set(err, -errno, "%s: %s%s", path, strerror(errno),
                          errno == ELOOP ? " (a symlink: not followed)" : "");
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != before.st_dev ||
        st.st_ino != before.st_ino) {
        close(fd);
        return not_regular(path, err);
    }
    return fd;
}
