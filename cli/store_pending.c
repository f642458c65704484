/* This node's summary parts waiting for Slurm accounting (store.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_file.h"
#include "numaplace/json_reals.h"

static void file_name(uint32_t job_id, char *name, size_t len)
{
    snprintf(name, len, "%" PRIu32 ".json", job_id);
}

/* "123" + @p suffix -> 123; anything else (temporary files, strays) -> 0. */
static uint32_t job_of(const char *name, const char *suffix)
{
    char *end;
    unsigned long id;

    if (name[0] < '1' || name[0] > '9')
        return 0;
    id = strtoul(name, &end, 10);
    return strcmp(end, suffix) == 0 && id <= UINT32_MAX ? (uint32_t)id : 0;
}

int store_pending_open(const char *spool, bool create, struct np_err *err)
{
    char path[4096];

    if ((size_t)snprintf(path, sizeof(path), "%s/%s", spool, STORE_PENDING_DIR) >= sizeof(path))
        return np_err_set(err, -ENAMETOOLONG, "spool path too long: %s", spool);
    if (create && mkdir(path, 0700) < 0 && errno != EEXIST)
        return np_err_set(err, -errno, "cannot make %s: %s", path, strerror(errno));
    return safe_dir_open(path, err);
}

static int compare_jobs(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int store_list_jobs(int dirfd, const char *suffix, uint32_t *jobs, size_t max)
{
    const int fd = dup(dirfd);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    const struct dirent *entry;
    size_t n = 0;

    if (!dir) {
        const int e = errno;
        if (fd >= 0)
            close(fd);
        return -e;
    }
    rewinddir(dir);
    while ((entry = readdir(dir)) != NULL && n < max) {
        const uint32_t id = job_of(entry->d_name, suffix);
        if (id)
            jobs[n++] = id;
    }
    closedir(dir);
    qsort(jobs, n, sizeof(*jobs), compare_jobs);
    return (int)n;
}

int store_pending_list(int dirfd, uint32_t *jobs, size_t max, struct np_err *err)
{
    const int n = store_list_jobs(dirfd, ".json", jobs, max);

    return n < 0 ? np_err_set(err, n, "cannot list the pending directory: %s", strerror(-n)) : n;
}

int store_pending_sweep(int dirfd, const struct np_log *log)
{
    struct np_err err = {0};
    const int removed = safe_dirfd_sweep_shared(dirfd, &err);

    if (removed < 0)
        np_logf(log, NP_LOG_WARNING, "cannot look for temporary files left in %s: %s",
                STORE_PENDING_DIR, err.msg);
    else if (removed > 0)
        np_logf(log, NP_LOG_INFO,
                "removed %d temporary file(s) a killed numaplace store left in %s", removed,
                STORE_PENDING_DIR);
    return removed;
}

/* Past the bound the oldest jobs go: their parts are the least likely to still be wanted. */
static void drop_oldest(int dirfd, uint32_t keep, const struct np_log *log)
{
    uint32_t *jobs = calloc(STORE_PENDING_MAX_FILES + 64, sizeof(*jobs));
    int n;

    if (!jobs)
        return;
    n = store_pending_list(dirfd, jobs, STORE_PENDING_MAX_FILES + 64, NULL);
    for (int i = 0; i + STORE_PENDING_MAX_FILES <= n; i++) {
        char name[32];
        if (jobs[i] == keep)
            continue;
        file_name(jobs[i], name, sizeof(name));
        if (unlinkat(dirfd, name, 0) == 0)
            np_logf(log, NP_LOG_WARNING,
                    "job %" PRIu32 ": its part waiting for accounting dropped: over %d jobs wait "
                    "(is slurmdbd down for long, or `numaplace store --pending` never run?)",
                    jobs[i], STORE_PENDING_MAX_FILES);
    }
    free(jobs);
}

int store_pending_save(int dirfd, uint32_t job_id, const json_t *part, const struct np_log *log,
                       struct np_err *err)
{
    char name[32], *text = json_dumps(part, JSON_COMPACT | JSON_SORT_KEYS | NP_JSON_REALS);
    size_t len;
    int rc;

    if (!text)
        return np_err_set(err, -ENOMEM, "out of memory");
    len = strlen(text);
    if (len > STORE_PENDING_MAX_BYTES) {
        free(text);
        return np_err_set(err, -E2BIG,
                          "job %" PRIu32 ": this node's part is %zu bytes, over the %u the "
                          "pending directory keeps",
                          job_id, len, STORE_PENDING_MAX_BYTES);
    }
    drop_oldest(dirfd, job_id, log);
    file_name(job_id, name, sizeof(name));
    rc = safe_write_at(dirfd, name, text, len, (uid_t)-1, 0600, err);
    free(text);
    return rc;
}

int store_pending_take(int dirfd, uint32_t job_id, struct np_err *err)
{
    char name[32];
    struct stat st;
    int fd;

    file_name(job_id, name, sizeof(name));
    fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return np_err_set(err, -errno, "pending/%s: %s", name, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        const int e = errno == EWOULDBLOCK ? -EBUSY : -errno;
        close(fd);
        return np_err_set(err, e, "job %" PRIu32 ": another numaplace store is storing it", job_id);
    }
    /* Taken after its holder stored and removed it: nothing left to do. */
    if (fstat(fd, &st) < 0 || st.st_nlink == 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return np_err_set(err, -ENOENT, "job %" PRIu32 ": already stored", job_id);
    }
    return fd;
}

int store_pending_hold(int dirfd, uint32_t job_id, const json_t *part, const struct np_log *log,
                       struct np_err *err)
{
    /* Renamed over an older file another process holds: its lock stays on the old inode, and
     * store_pending_release removes only the inode it took. */
    const int rc = store_pending_save(dirfd, job_id, part, log, err);

    return rc < 0 ? rc : store_pending_take(dirfd, job_id, err);
}

int store_pending_load(int fd, json_t **part, struct np_err *err)
{
    struct stat st;
    json_error_t jerr;
    char *text;
    ssize_t n;

    *part = NULL;
    if (fstat(fd, &st) < 0)
        return np_err_set(err, -errno, "pending file: %s", strerror(errno));
    if (st.st_size > (off_t)STORE_PENDING_MAX_BYTES)
        return np_err_set(err, -EBADMSG, "pending file of %lld bytes, over %u",
                          (long long)st.st_size, STORE_PENDING_MAX_BYTES);
    text = malloc((size_t)st.st_size + 1);
    if (!text)
        return np_err_set(err, -ENOMEM, "out of memory");
    n = pread(fd, text, (size_t)st.st_size, 0);
    if (n != (ssize_t)st.st_size) {
        free(text);
        return np_err_set(err, -EIO, "pending file: short read");
    }
    *part = json_loadb(text, (size_t)n, 0, &jerr);
    free(text);
    if (!*part || !json_is_object(*part)) {
        json_decref(*part);
        *part = NULL;
        return np_err_set(err, -EBADMSG, "pending file is not a summary: %s", jerr.text);
    }
    return 0;
}

void store_pending_release(int dirfd, uint32_t job_id, int fd, bool stored)
{
    struct stat held, now;
    char name[32];

    file_name(job_id, name, sizeof(name));
    /* Only the file this process took: a store of the same job may have saved a newer one. */
    if (stored && fstat(fd, &held) == 0 && fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
        held.st_ino == now.st_ino && held.st_dev == now.st_dev) {
        unlinkat(dirfd, name, 0);
        fsync(dirfd);
    }
    close(fd); /* and with it the lock */
}
