/* Named files: written atomically, opened only when regular; text escaped for a terminal. */
#include "numaplace/output_file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int np_file_temp_at(int dirfd, const char *name, mode_t mode, char *tmp, size_t size)
{
    int fd = -EEXIST;

    if ((size_t)snprintf(tmp, size, ".%s.%ld.tmp", name, (long)getpid()) >= size)
        return -ENAMETOOLONG;
    /* Ours alone (the pid): a leftover of this process goes; O_EXCL then refuses whatever
     * anyone else put there, a link included. */
    unlinkat(dirfd, tmp, 0);
    /* What another user planted at that name (in a shared directory we cannot remove it) must
     * not stop the write: then a name nobody can guess, still ending in our pid. */
    for (int attempt = 0; fd == -EEXIST && attempt < 8; attempt++) {
        unsigned long long guess = 0;

        if (attempt > 0 && getrandom(&guess, sizeof(guess), 0) != (ssize_t)sizeof(guess))
            return -EEXIST;
        if (attempt > 0 &&
            (size_t)snprintf(tmp, size, ".%s.%016llx.%ld.tmp", name, guess, (long)getpid()) >= size)
            return -ENAMETOOLONG;
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
            fd = -errno;
    }
    return fd;
}

long np_file_temp_pid(const char *name)
{
    const size_t len = strlen(name);
    const char *pid_at;
    char *end;
    long pid;

    if (name[0] != '.' || len < 7 || strcmp(name + len - 4, ".tmp") != 0)
        return -1;
    pid_at = name + len - 5;
    while (pid_at > name && isdigit((unsigned char)*pid_at))
        pid_at--;
    if (*pid_at != '.' || pid_at == name || !isdigit((unsigned char)pid_at[1]))
        return -1;
    pid = strtol(pid_at + 1, &end, 10);
    return strcmp(end, ".tmp") == 0 ? pid : -1;
}

int np_file_replace_at(int dirfd, int fd, const char *tmp, const char *name)
{
    int rc = 0;

    if (fsync(fd) < 0)
        rc = -errno;
    if (close(fd) < 0 && rc == 0) /* closed whatever fsync said */
        rc = -errno;
    if (rc == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
        rc = -errno;
    /* The rename is durable only once the directory is on disk too. */
    if (rc == 0 && fsync(dirfd) < 0)
        rc = -errno;
    if (rc < 0)
        unlinkat(dirfd, tmp, 0);
    return rc;
}

/* The process's umask, which only umask(2) itself tells (the command is single-threaded). */
static mode_t current_umask(void)
{
    const mode_t mask = umask(022);

    umask(mask);
    return mask;
}

/* Whether @p name in @p dir is a temporary of @p base's whose writer is gone (its lock is free):
 * a regular file of this user's, never followed, opened without blocking. */
static bool stale_temporary(int dir, const char *name, const char *base)
{
    const size_t blen = strlen(base);
    struct stat st, opened;
    bool stale = false;
    int fd;

    if (strncmp(name + 1, base, blen) != 0 || name[1 + blen] != '.' || np_file_temp_pid(name) < 0)
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

/* Remove what an earlier writer of @p base left when it was killed before its rename. */
static void remove_stale_temporaries(int dirfd, const char *base)
{
    const int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    for (const struct dirent *e; (e = readdir(d));)
        if (stale_temporary(dirfd, e->d_name, base))
            unlinkat(dirfd, e->d_name, 0);
    closedir(d);
}

int np_output_file_open(struct np_output_file *o, const char *path, struct np_err *err)
{
    const char *slash = strrchr(path, '/');
    const int dirlen = slash ? (int)(slash - path) + 1 : 0;
    char dir[PATH_MAX];
    struct stat st;
    int rc;

    o->fd = o->dirfd = -1;
    o->tmp[0] = '\0';
    if ((size_t)snprintf(o->path, sizeof(o->path), "%s", path) >= sizeof(o->path) ||
        (size_t)snprintf(o->name, sizeof(o->name), "%s", path + dirlen) >= sizeof(o->name))
        return np_err_set(err, -ENAMETOOLONG, "%s: name too long", path);
    snprintf(dir, sizeof(dir), "%.*s", dirlen ? dirlen : 1, dirlen ? path : ".");
    if ((o->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return np_err_set(err, -errno, "%s: cannot create a file next to it: %s", path,
                          strerror(errno));
    if (fstatat(o->dirfd, o->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
        np_output_file_abort(o);
        if (S_ISLNK(st.st_mode))
            return np_err_set(err, -ELOOP, "%s: a symlink (not written through)", path);
        return np_err_set(err, -EINVAL, "%s: not a regular file", path);
    }
    remove_stale_temporaries(o->dirfd, o->name);
    o->fd = np_file_temp_at(o->dirfd, o->name, 0600, o->tmp, sizeof(o->tmp));
    if (o->fd < 0) {
        rc = o->fd;
        o->tmp[0] = '\0';
        np_output_file_abort(o);
        return np_err_set(err, rc, "%s: cannot create a file next to it: %s", path, strerror(-rc));
    }
    /* Held until the rename: a later writer removes the temporary only once its lock is free
     * (this one killed). The umask applies as it would to any file the user creates. */
    if (flock(o->fd, LOCK_EX | LOCK_NB) < 0 || fchmod(o->fd, 0644 & ~current_umask()) < 0) {
        rc = -errno;
        np_output_file_abort(o);
        return np_err_set(err, rc, "%s: %s", path, strerror(-rc));
    }
    return 0;
}

int np_output_file_commit(struct np_output_file *o, struct np_err *err)
{
    const int rc = np_file_replace_at(o->dirfd, o->fd, o->tmp, o->name);

    o->fd = -1;
    o->tmp[0] = '\0'; /* removed on failure */
    np_output_file_abort(o);
    return rc < 0 ? np_err_set(err, rc, "cannot write %s: %s", o->path, strerror(-rc)) : 0;
}

void np_output_file_abort(struct np_output_file *o)
{
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (o->tmp[0])
        unlinkat(o->dirfd, o->tmp, 0);
    o->tmp[0] = '\0';
    if (o->dirfd >= 0)
        close(o->dirfd);
    o->dirfd = -1;
}

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

/* One byte of text; @p lead: the previous byte was 0xc2 and was held back. @return whether
 * this byte is held back in its turn (a 0xc2 that may start a C1 control). */
static bool put_byte(FILE *out, unsigned char c, bool *lead, bool keep_layout)
{
    if (*lead) {
        *lead = false;
        if (c >= 0x80 && c <= 0x9f) {
            fprintf(out, "\\u%04x", c);
            return false;
        }
        fputc(0xc2, out);
    }
    if (c == 0xc2) {
        *lead = true;
        return true;
    }
    if ((c < 0x20 || c == 0x7f) && !(keep_layout && (c == '\n' || c == '\t')))
        fprintf(out, "\\x%02x", c);
    else
        fputc(c, out);
    return false;
}

void np_print_text(FILE *out, const char *s)
{
    bool lead = false;

    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        put_byte(out, *p, &lead, false);
    if (lead)
        fputc(0xc2, out);
}

struct safe_stream {
    FILE *out;
    bool lead;
};

static ssize_t safe_write(void *cookie, const char *buf, size_t size)
{
    struct safe_stream *s = cookie;

    for (size_t i = 0; i < size; i++)
        put_byte(s->out, (unsigned char)buf[i], &s->lead, true);
    return ferror(s->out) ? -1 : (ssize_t)size;
}

static int safe_close(void *cookie)
{
    struct safe_stream *s = cookie;
    int rc;

    if (s->lead)
        fputc(0xc2, s->out);
    rc = fflush(s->out);
    free(s);
    return rc;
}

FILE *np_safe_text_stream(FILE *out)
{
    struct safe_stream *s = calloc(1, sizeof(*s));
    FILE *f;

    if (!s)
        return NULL;
    s->out = out;
    f = fopencookie(s, "w", (cookie_io_functions_t){.write = safe_write, .close = safe_close});
    if (!f)
        free(s);
    return f;
}
