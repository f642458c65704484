/* Parts on disk (store.h): this node's waiting for accounting, large jobs' for their one merge. */
#include "store.h"

#include <ctype.h>
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

#include "numaplace/summary.h"

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

/* Directory @p dirfd listed from its start, on a descriptor of its own; NULL with errno. */
static DIR *listing_of(int dirfd)
{
    const int fd = dup(dirfd);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;

    if (dir)
        rewinddir(dir);
    else if (fd >= 0)
        close(fd);
    return dir;
}

/* The jobs of @p dirfd's entries JOBID@p suffix, oldest first, at most @p max in @p jobs. */
static int store_list_jobs(int dirfd, const char *suffix, uint32_t *jobs, size_t max)
{
    DIR *dir = listing_of(dirfd);
    const struct dirent *entry;
    size_t n = 0;

    if (!dir)
        return -errno;
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

const char *store_parts_dir(void)
{
    const char *dir = getenv("NUMAPLACE_PARTS_DIR");

    return dir && dir[0] == '/' ? dir : NULL;
}

/* A node name as Slurm allows it in a file name: letters, digits, '.', '-', '_'. */
static bool node_name_ok(const char *name)
{
    size_t len = strlen(name);

    if (!len || len > 200 || name[0] == '.')
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr(".-_", name[i]))
            return false;
    return true;
}

/* The one node of @p part, or NULL. */
static const char *only_node(const json_t *part)
{
    const json_t *nodes = json_object_get(part, "nodes");
    const char *name = NULL;
    const json_t *v;
    const char *key;

    if (!json_is_object(nodes) || json_object_size(nodes) != 1)
        return NULL;
    json_object_foreach((json_t *)nodes, key, v)
    {
        name = key;
    }
    return name;
}

static int job_dir_open(const char *dir, uint32_t job_id, bool create, struct np_err *err)
{
    char path[4096];
    int base;

    base = safe_dir_open(dir, err);
    if (base < 0)
        return base;
    snprintf(path, sizeof(path), "%" PRIu32, job_id);
    if (create && mkdirat(base, path, 0750) < 0 && errno != EEXIST) {
        const int e = errno;
        close(base);
        return np_err_set(err, -e, "cannot make %s/%s: %s", dir, path, strerror(e));
    }
    close(base);
    if ((size_t)snprintf(path, sizeof(path), "%s/%" PRIu32, dir, job_id) >= sizeof(path))
        return np_err_set(err, -ENAMETOOLONG, "parts directory path too long: %s", dir);
    return safe_dir_open(path, err);
}

int store_parts_deposit(const char *dir, uint32_t job_id, const json_t *part, struct np_err *err)
{
    const char *node = only_node(part);
    char name[256], *text;
    size_t len;
    int fd, rc;

    if (!node || !node_name_ok(node))
        return np_err_set(err, -EINVAL, "job %" PRIu32 ": a part must name one node", job_id);
    text = json_dumps(part, JSON_COMPACT | JSON_SORT_KEYS | NP_JSON_REALS);
    if (!text)
        return np_err_set(err, -ENOMEM, "out of memory");
    len = strlen(text);
    if (len > STORE_PENDING_MAX_BYTES) {
        free(text);
        return np_err_set(err, -E2BIG, "job %" PRIu32 ": this node's part is %zu bytes, over %u",
                          job_id, len, STORE_PENDING_MAX_BYTES);
    }
    fd = job_dir_open(dir, job_id, true, err);
    if (fd < 0) {
        free(text);
        return fd;
    }
    snprintf(name, sizeof(name), "%s.json", node);
    /* Read by the merger (EpilogSlurmctld runs as SlurmUser): the site gives the directory its
     * group (setgid), group and others never write. */
    rc = safe_write_at(fd, name, text, len, (uid_t)-1, 0640, err);
    close(fd);
    free(text);
    return rc < 0 ? rc : 0;
}

/* Job @p job_id's part in @p fd (file @p name), checked: root wrote it, it is of this job and
 * user, and names only the node its file names. @return a new reference, NULL with @p why */
static json_t *load_part(int fd, const char *name, uint32_t job_id, uid_t uid, char *why,
                         size_t len)
{
    struct stat st;
    json_error_t jerr;
    json_t *part = NULL;
    json_int_t part_job = 0, part_uid = 0;
    char *text = NULL;
    const char *node;
    ssize_t n;

    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
        (st.st_mode & (S_IWGRP | S_IWOTH))) {
        snprintf(why, len, "not a file of root's that only root may write");
        return NULL;
    }
    if (st.st_size > (off_t)STORE_PENDING_MAX_BYTES) {
        snprintf(why, len, "%lld bytes, over %u", (long long)st.st_size, STORE_PENDING_MAX_BYTES);
        return NULL;
    }
    text = malloc((size_t)st.st_size + 1);
    n = text ? pread(fd, text, (size_t)st.st_size, 0) : -1;
    if (n == (ssize_t)st.st_size)
        part = json_loadb(text, (size_t)n, 0, &jerr);
    free(text);
    node = part ? only_node(part) : NULL;
    if (part)
        json_unpack(part, "{s?I s?I}", "job_id", &part_job, "uid", &part_uid);
    if (!part || np_summary_check(part, NULL) < 0 || !node) {
        snprintf(why, len, "not one node's summary part");
    } else if (part_job != (json_int_t)job_id || part_uid != (json_int_t)uid) {
        snprintf(why, len,
                 "another job's or user's part (job %lld, uid %lld; the merge's: %" PRIu32
                 ", %lld)",
                 (long long)part_job, (long long)part_uid, job_id, (long long)uid);
    } else if (strncmp(name, node, strlen(node)) != 0 ||
               strcmp(name + strlen(node), ".json") != 0) {
        snprintf(why, len, "its part names node %s", node);
    } else {
        return part;
    }
    json_decref(part);
    return NULL;
}

static int add_part(struct store_parts_job *job, const char *name, ino_t ino)
{
    struct store_part_file *files = realloc(job->files, (job->n + 1) * sizeof(*files));

    if (!files)
        return -ENOMEM;
    job->files = files;
    if (!(files[job->n].name = strdup(name)))
        return -ENOMEM;
    files[job->n++].ino = ino;
    return 0;
}

/* Merge each part file of @p job into @p merged: decoded once each, so the merge of thousands
 * of parts costs about as many node copies, not their square. @return 0 or -errno */
static int merge_files(struct store_parts_job *job, uint32_t job_id, uid_t uid, json_t *merged,
                       struct store_parts_found *found, const struct np_log *log)
{
    DIR *listing = listing_of(job->dirfd);
    const struct dirent *e;
    int rc = 0;

    if (!listing)
        return -errno;
    while (rc == 0 && (e = readdir(listing)) != NULL) {
        const size_t len = strlen(e->d_name);
        char why[NP_ERR_MSG_MAX] = "";
        struct stat st;
        json_t *part;
        int fd;

        if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue; /* ".", "..", temporaries */
        fd = openat(job->dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        part = fd >= 0 ? load_part(fd, e->d_name, job_id, uid, why, sizeof(why)) : NULL;
        if (fd < 0)
            snprintf(why, sizeof(why), "%s", strerror(errno));
        if (part && fstat(fd, &st) == 0) {
            struct np_err merr = {0};
            if (np_summary_validate(part, &merr) < 0 ||
                np_summary_merge_deferred(merged, part, &merr) < 0)
                snprintf(why, sizeof(why), "%s", merr.msg);
            else
                rc = add_part(job, e->d_name, st.st_ino);
        }
        if (why[0]) {
            found->rejected++;
            np_logf(log, NP_LOG_WARNING, "job %" PRIu32 ": part %s left out: %s", job_id, e->d_name,
                    why);
        } else if (part) {
            found->parts++;
        }
        json_decref(part);
        if (fd >= 0)
            close(fd);
    }
    closedir(listing);
    return rc;
}

int store_parts_merge(const char *dir, uint32_t job_id, uid_t uid, struct store_parts_job *job,
                      json_t **merged, struct store_parts_found *found, const struct np_log *log,
                      struct np_err *err)
{
    json_t *acc;
    int rc;

    memset(job, 0, sizeof(*job));
    memset(found, 0, sizeof(*found));
    *merged = NULL;
    job->dirfd = job_dir_open(dir, job_id, false, err);
    if (job->dirfd < 0)
        return job->dirfd;
    if (flock(job->dirfd, LOCK_EX | LOCK_NB) < 0) {
        rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
        store_parts_release(dir, job_id, job, false);
        return np_err_set(err, rc, "job %" PRIu32 ": another merge has its parts", job_id);
    }
    acc = np_summary_new(job_id);
    rc = acc ? merge_files(job, job_id, uid, acc, found, log) : -ENOMEM;
    if (rc == 0 && np_summary_recompute(acc) < 0) /* once, after the last part */
        rc = -ENOMEM;
    if (rc == 0 && found->parts == 0)
        rc = np_err_set(err, -ENOENT, "job %" PRIu32 ": no part to merge in %s", job_id, dir);
    else if (rc < 0)
        np_err_set(err, rc, "job %" PRIu32 ": merging its parts: %s", job_id, strerror(-rc));
    if (rc < 0) {
        json_decref(acc);
        store_parts_release(dir, job_id, job, false);
        return rc;
    }
    *merged = acc;
    return 0;
}

void store_parts_release(const char *dir, uint32_t job_id, struct store_parts_job *job, bool stored)
{
    for (size_t i = 0; i < job->n; i++) {
        struct stat now;
        /* Only the file merged: a node that stored again meanwhile left a newer one. */
        if (stored && fstatat(job->dirfd, job->files[i].name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
            now.st_ino == job->files[i].ino)
            unlinkat(job->dirfd, job->files[i].name, 0);
        free(job->files[i].name);
    }
    if (stored) { /* fails while a part came in meanwhile: the next pass merges it */
        const int base = safe_dir_open(dir, NULL);
        char name[16];
        snprintf(name, sizeof(name), "%" PRIu32, job_id);
        if (base >= 0) {
            unlinkat(base, name, AT_REMOVEDIR);
            close(base);
        }
    }
    if (job->dirfd >= 0)
        close(job->dirfd); /* and with it the lock */
    free(job->files);
    memset(job, 0, sizeof(*job));
    job->dirfd = -1;
}

int store_parts_count(const char *dir, uint32_t job_id)
{
    const int fd = job_dir_open(dir, job_id, false, NULL);
    DIR *listing;
    const struct dirent *e;
    int n = 0;

    if (fd < 0)
        return fd == -ENOENT ? 0 : fd;
    listing = listing_of(fd);
    close(fd); /* the listing has its own */
    if (!listing)
        return -errno;
    while ((e = readdir(listing)) != NULL) {
        const size_t len = strlen(e->d_name);
        n += e->d_name[0] != '.' && len > 5 && strcmp(e->d_name + len - 5, ".json") == 0;
    }
    closedir(listing);
    return n;
}

int store_parts_list(const char *dir, uint32_t *jobs, size_t max, struct np_err *err)
{
    const int base = safe_dir_open(dir, err);
    int n;

    if (base < 0)
        return base;
    n = store_list_jobs(base, "", jobs, max);
    close(base);
    return n < 0 ? np_err_set(err, n, "%s: %s", dir, strerror(-n)) : n;
}
