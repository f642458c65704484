/*
 * A numaplaced context for the daemon's unit suites: the fixture /proc tree, a temporary state
 * and spool directory, a log that records what was said, and no socket, Slurm or root.
 */
#ifndef NP_DAEMON_TEST_H
#define NP_DAEMON_TEST_H

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "np_test.h"

/* The fixture pid with stat and status under test/fixtures/roots/host/proc. */
#define NP_TEST_LIVE_PID 300

struct np_test_log {
    char text[16384]; /* every message, one per line, cut when full */
    unsigned errors;
};

static void np_test_log_capture(enum np_log_level level, const char *msg, void *arg)
{
    struct np_test_log *log = arg;
    const size_t len = strlen(log->text);

    if (level == NP_LOG_ERROR)
        log->errors++;
    snprintf(log->text + len, sizeof(log->text) - len, "%s: %s\n", np_log_level_name(level), msg);
}

struct np_test_daemon {
    struct np_daemon *d; /* large (every client's buffer): on the heap */
    struct np_test_log log;
    char dir[256];
};

/* A daemon on the fixture /proc, its state and spool in a new temporary directory. */
static inline void np_test_daemon_init(struct np_test_daemon *t)
{
    memset(&t->log, 0, sizeof(t->log));
    t->d = malloc(sizeof(*t->d));
    ck_assert_ptr_nonnull(t->d);
    np_daemon_init(t->d);
    t->d->log.fn = np_test_log_capture;
    t->d->log.arg = &t->log;
    snprintf(t->dir, sizeof(t->dir), "/tmp/np-daemon-test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(t->dir));
    snprintf(t->d->cfg.state_dir, sizeof(t->d->cfg.state_dir), "%s/state", t->dir);
    snprintf(t->d->cfg.spool_dir, sizeof(t->d->cfg.spool_dir), "%s/spool", t->dir);
    ck_assert_int_eq(mkdir(t->d->cfg.state_dir, 0700), 0);
    ck_assert_int_eq(mkdir(t->d->cfg.spool_dir, 0755), 0);
    {
        const char *root = np_test_root("host");
        ck_assert_uint_lt(strlen(root), sizeof(t->d->cfg.proc_root));
        memcpy(t->d->cfg.proc_root, root, strlen(root) + 1);
    }
    snprintf(t->d->host, sizeof(t->d->host), "testhost");
    t->d->cfg.perf = false;
    ck_assert_int_eq(np_node_counters_init(&t->d->counters, 64), 0);
}

static int np_test_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static inline void np_test_daemon_fini(struct np_test_daemon *t)
{
    np_daemon_fini(t->d);
    free(t->d);
    t->d = NULL;
    nftw(t->dir, np_test_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Does <spool>/<job>.<step>.testhost.json exist? */
static inline int np_test_report_exists(const struct np_test_daemon *t, const char *name)
{
    char path[2048];

    snprintf(path, sizeof(path), "%s/%s.testhost.json", t->d->cfg.spool_dir, name);
    return access(path, F_OK) == 0;
}

/* A peer as SO_PEERCRED would give it. */
static inline struct np_peer np_test_peer(pid_t pid, uid_t uid, gid_t gid)
{
    struct np_peer c = {.pid = pid, .uid = uid, .gid = gid};
    return c;
}

/* Is @p reply {"ok": true}? Its error otherwise (for messages). */
static inline int np_test_reply_ok(json_t *reply)
{
    return reply && json_is_true(json_object_get(reply, "ok"));
}

static inline const char *np_test_reply_error(json_t *reply)
{
    const char *e = json_string_value(json_object_get(reply, "error"));
    return e ? e : "";
}

#endif /* NP_DAEMON_TEST_H */
