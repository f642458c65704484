/* Writing a named file without following what is at the name (see output_file.h). */
#include "numaplace/output_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The process's umask, which only umask(2) itself tells (the command is single-threaded). */
static mode_t current_umask(void)
{
    const mode_t mask = umask(022);

    umask(mask);
    return mask;
}

/* Whether @p name in @p dir is a temporary of ours for @p base (".BASE.XXXXXX") whose writer is
 * gone (its lock is free): a regular file of this user's, never followed, opened without
 * blocking. */
static bool stale_temporary(int dir, const char *name, const char *base)
{
    const size_t blen = strlen(base);
    struct stat st, opened;
    bool stale = false;
    int fd;

    if (name[0] != '.' || strncmp(name + 1, base, blen) != 0 || name[1 + blen] != '.' ||
        strlen(name + 2 + blen) != 6)
        return false;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != geteuid())
        return false;
    fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    if (fstat(fd, &opened) == 0 && opened.st_ino == st.st_ino && opened.st_dev == st.st_dev)
        stale = flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd);
    return stale;
}

/* Remove what an earlier writer of @p path left when it was killed before its rename. */
static void remove_stale_temporaries(const char *path, int dirlen)
{
    char dirname[PATH_MAX];
    DIR *d;
    int dfd;

    snprintf(dirname, sizeof(dirname), "%.*s", dirlen ? dirlen : 1, dirlen ? path : ".");
    if (!(d = opendir(dirname)))
        return;
    dfd = dirfd(d);
    for (const struct dirent *e; (e = readdir(d));)
        if (stale_temporary(dfd, e->d_name, path + dirlen))
            unlinkat(dfd, e->d_name, 0);
    closedir(d);
}

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
    remove_stale_temporaries(path, dirlen);
    /* mkostemp opens with O_CREAT|O_EXCL: never an existing file, nor through a symlink */
    o->fd = mkostemp(o->tmp, O_CLOEXEC);
    if (o->fd < 0) {
        const int e = errno;
        o->tmp[0] = '\0';
        return np_err_set(err, -e, "%s: cannot create a file next to it: %s", path, strerror(e));
    }
    /* Held until the rename: a later writer removes the temporary only once its lock is free
     * (this one killed). The umask applies as it would to any file the user creates. */
    if (flock(o->fd, LOCK_EX | LOCK_NB) < 0 || fchmod(o->fd, 0644 & ~current_umask()) < 0) {
        const int e = errno;
        np_output_file_abort(o);
        return np_err_set(err, -e, "%s: %s", path, strerror(e));
    }
    return 0;
}

int np_file_replace_at(int dirfd, int fd, const char *tmp, const char *name, bool durable)
{
    int rc = 0;

    if (fsync(fd) < 0)
        rc = -errno;
    if (close(fd) < 0 && rc == 0) /* closed whatever fsync said */
        rc = -errno;
    if (rc == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
        rc = -errno;
    /* The rename is durable only once the directory is on disk too. */
    if (rc == 0 && durable && fsync(dirfd) < 0)
        rc = -errno;
    if (rc < 0)
        unlinkat(dirfd, tmp, 0);
    return rc;
}

int np_output_file_commit(struct np_output_file *o, struct np_err *err)
{
    const int rc = np_file_replace_at(AT_FDCWD, o->fd, o->tmp, o->path, false);

    o->fd = -1;
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
