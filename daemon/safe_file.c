/* Durable, atomic writes into verified directories (see safe_file.h). */
#include "safe_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sys/acl.h>

#include "numaplace/output_file.h"

int safe_dir_open(const char *path, struct np_err *err)
{
    struct stat st;
    const int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return np_err_set(err, -errno, "%s: %s", path, strerror(errno));
    if (fstat(fd, &st) < 0) {
        const int e = errno;
        close(fd);
        return np_err_set(err, -e, "%s: %s", path, strerror(e));
    }
    /* Whoever else may write here could swap a file for a link between our checks and use. */
    if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        close(fd);
        return np_err_set(err, -EPERM,
                          "%s is owned by uid %u with mode %04o: numaplace writes only into a "
                          "directory of root's (or the writer's own) that group and others "
                          "cannot write",
                          path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
    }
    return fd;
}

static int add_acl_entry(acl_t *acl, acl_tag_t tag, const uid_t *qualifier, bool read, bool write)
{
    acl_entry_t entry;
    acl_permset_t perms;

    if (acl_create_entry(acl, &entry) < 0 || acl_set_tag_type(entry, tag) < 0 ||
        (qualifier && acl_set_qualifier(entry, qualifier) < 0) ||
        acl_get_permset(entry, &perms) < 0 || acl_clear_perms(perms) < 0 ||
        (read && acl_add_perm(perms, ACL_READ) < 0) ||
        (write && acl_add_perm(perms, ACL_WRITE) < 0))
        return -errno;
    return 0;
}

/* user::rw- user:READER:r-- group::--- mask::r-- other::---: the owner (numaplaced) writes, the
 * reader reads, nobody else. @return 0, -EOPNOTSUPP (the filesystem has no ACLs) or -errno */
static int grant_read(int fd, uid_t reader)
{
    acl_t acl = acl_init(5);
    int rc;

    if (!acl)
        return -errno;
    if ((rc = add_acl_entry(&acl, ACL_USER_OBJ, NULL, true, true)) == 0 &&
        (rc = add_acl_entry(&acl, ACL_USER, &reader, true, false)) == 0 &&
        (rc = add_acl_entry(&acl, ACL_GROUP_OBJ, NULL, false, false)) == 0 &&
        (rc = add_acl_entry(&acl, ACL_MASK, NULL, true, false)) == 0 &&
        (rc = add_acl_entry(&acl, ACL_OTHER, NULL, false, false)) == 0 && acl_set_fd(fd, acl) < 0)
        rc = errno == ENOTSUP ? -EOPNOTSUPP : -errno;
    acl_free(acl);
    return rc;
}

int safe_write_at(int dirfd, const char *name, const char *data, size_t len, uid_t reader,
                  mode_t mode, struct np_err *err)
{
    char tmp[NAME_MAX + 1];
    size_t done = 0;
    int fd, rc = 0;
    bool no_acl = false;

    fd = np_file_temp_at(dirfd, name, mode, tmp, sizeof(tmp));
    if (fd < 0)
        return np_err_set(err, fd, "%s: %s", tmp, strerror(-fd));
    while (done < len && rc == 0) {
        const ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno != EINTR)
            rc = -errno;
        else if (n > 0)
            done += (size_t)n;
    }
    /* Before the rename: the file never exists under its name without its reader, and the
     * reader can never write it (the owner stays the helper). */
    if (rc == 0 && reader != (uid_t)-1) {
        rc = grant_read(fd, reader);
        if (rc == -EOPNOTSUPP) {
            no_acl = true;
            rc = 0;
        }
    }
    if (rc < 0) {
        close(fd);
        unlinkat(dirfd, tmp, 0);
        return np_err_set(err, rc, "%s: %s", name, strerror(-rc));
    }
    if ((rc = np_file_replace_at(dirfd, fd, tmp, name)) < 0)
        return np_err_set(err, rc, "%s: %s", name, strerror(-rc));
    return no_acl ? SAFE_WRITE_NO_ACL : 0;
}

/* Is @p name a temporary file left by another process? With @p shared, other live processes
 * write here too: only a dead one's, and only once it is old. */
static bool stale_temp(int dirfd, const char *name, bool shared)
{
    const long pid = np_file_temp_pid(name);
    struct stat st;

    if (pid < 0 || pid == (long)getpid())
        return false;
    if (!shared)
        return true;
    if (pid > 0 && pid <= INT_MAX && (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
        return false;
    return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           time(NULL) - st.st_mtime >= SAFE_SWEEP_SHARED_MIN_AGE_S;
}

static int sweep_at(int dirfd, const char *dir, bool shared, struct np_err *err)
{
    const struct dirent *e;
    DIR *listing;
    int removed = 0;
    const int fd = dup(dirfd);

    if (fd < 0 || !(listing = fdopendir(fd))) {
        const int e2 = errno;
        if (fd >= 0)
            close(fd);
        return np_err_set(err, -e2, "%s: %s", dir, strerror(e2));
    }
    rewinddir(listing);
    while ((e = readdir(listing)))
        if (stale_temp(dirfd, e->d_name, shared) && unlinkat(dirfd, e->d_name, 0) == 0)
            removed++;
    closedir(listing);
    return removed;
}

int safe_dir_sweep(const char *dir, struct np_err *err)
{
    const int dirfd = safe_dir_open(dir, err);
    int removed;

    if (dirfd < 0)
        return dirfd;
    removed = sweep_at(dirfd, dir, false, err);
    close(dirfd);
    return removed;
}

int safe_dirfd_sweep_shared(int dirfd, struct np_err *err)
{
    return sweep_at(dirfd, "the directory", true, err);
}

int safe_write(const char *dir, const char *name, const char *data, size_t len, uid_t reader,
               mode_t mode, struct np_err *err)
{
    const int dirfd = safe_dir_open(dir, err);
    int rc;

    if (dirfd < 0)
        return dirfd;
    rc = safe_write_at(dirfd, name, data, len, reader, mode, err);
    close(dirfd);
    return rc;
}
