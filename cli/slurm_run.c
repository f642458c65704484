/* Slurm's commands (sacct, scontrol, sacctmgr) run without a shell, their output read. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "accounting.h"
#include "parse.h"

#define CAPTURE_MAX (16u << 20) /* what acct_run keeps; its callers read far less */

/* Start argv[0], its stdout and stderr on pipes *@p out_fd, *@p err_fd. @return its pid, -errno */
static pid_t spawn_piped(char *const argv[], int *out_fd, int *err_fd, struct np_err *err)
{
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    pid_t pid = -1;

    *out_fd = *err_fd = -1;
    if (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
        const int e = errno, fds[] = {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]};
        for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
            if (fds[i] >= 0)
                close(fds[i]);
        return np_err_set(err, -e, "%s: %s", err_pipe[0] < 0 ? "pipe" : "fork", strerror(e));
    }
    if (pid == 0) {
        dup2(out_pipe[1], STDOUT_FILENO);
        dup2(err_pipe[1], STDERR_FILENO);
        execvp(argv[0], argv);
        dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    *out_fd = out_pipe[0];
    *err_fd = err_pipe[0];
    return pid;
}

/* The child's stderr, kept up to its size (its first line is what a failure says). */
struct child_stderr {
    char text[1024];
    size_t len;
};

/* Read what the child wrote on stderr; at its end close it and set *@p fd to -1. */
static void read_stderr(int *fd, struct child_stderr *e)
{
    char chunk[512];
    const ssize_t n = read(*fd, chunk, sizeof(chunk));

    if (n <= 0) {
        close(*fd);
        *fd = -1;
    } else if (e->len + (size_t)n < sizeof(e->text)) {
        memcpy(e->text + e->len, chunk, (size_t)n);
        e->len += (size_t)n;
    }
}

/* Wait for the child and say how it ended: its exit status (128 + the signal that killed it), or
 * -ENOENT with @p err when argv[0] could not be run; the first line of its stderr in @p errbuf. */
static int child_status(pid_t pid, char *const argv[], struct child_stderr *e, char *errbuf,
                        size_t errlen, struct np_err *err)
{
    int status = 0;

    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    e->text[e->len] = '\0';
    if (errbuf && errlen) {
        snprintf(errbuf, errlen, "%s", e->text);
        errbuf[strcspn(errbuf, "\n")] = '\0';
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && strstr(e->text, "cannot run"))
        return np_err_set(err, -ENOENT, "%s", e->text[0] ? strtok(e->text, "\n") : argv[0]);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* acct_run's line sink: each line and its newline into the stream, until CAPTURE_MAX. */
static int capture_line(char *line, void *stream)
{
    return fprintf(stream, "%s\n", line) < 0 || ftell(stream) > (long)CAPTURE_MAX;
}

int acct_run(char *const argv[], char **out, char *errbuf, size_t errlen, struct np_err *err)
{
    size_t len = 0;
    FILE *f = open_memstream(out, &len);
    int rc;

    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (!f) {
        *out = NULL;
        return np_err_set(err, -ENOMEM, "out of memory");
    }
    rc = acct_run_lines(argv, capture_line, f, errbuf, errlen, err);
    if (fclose(f) != 0) {
        free(*out);
        *out = NULL;
        return rc < 0 ? rc : np_err_set(err, -ENOMEM, "out of memory");
    }
    return rc;
}

int acct_sacct_job(uint32_t job_id, uid_t *uid, char **comment, bool *full, struct np_err *err)
{
    char id[16], errbuf[256], *out = NULL;
    const char *text;
    char *argv[] = {"sacct", "-j", id, "-X", "-n", "-P", "-o", "UID,Account,AdminComment", NULL};
    int rc;

    *comment = NULL;
    snprintf(id, sizeof(id), "%" PRIu32, job_id);
    rc = acct_run(argv, &out, errbuf, sizeof(errbuf), err);
    if (rc != 0) {
        free(out);
        return rc < 0 ? rc
                      : np_err_set(err, -EIO, "sacct -j %s failed (exit %d): %s", id, rc,
                                   errbuf[0] ? errbuf : "no message");
    }
    if (cli_parse_sacct_job(out, uid, full, &text) != 0) {
        free(out);
        return np_err_set(err, -ENOENT,
                          "sacct knows no job %s (not in accounting yet, or not yours to see)", id);
    }
    *comment = strdup(text);
    free(out);
    return *comment ? 0 : np_err_set(err, -ENOMEM, "out of memory");
}

int acct_load_summary(uint32_t job_id, json_t **summary, uid_t *uid, struct np_err *err)
{
    char *comment = NULL;
    int rc;

    *summary = NULL;
    rc = acct_sacct_job(job_id, uid, &comment, NULL, err);
    if (rc < 0)
        return rc;
    rc = cli_decode_admin_comment(comment, job_id, summary, err);
    free(comment);
    return rc;
}

bool acct_may_read(uid_t job_uid)
{
    const uid_t me = getuid();
    const struct passwd *pw;
    char *argv[] = {"sacctmgr", "-n", "-P", "show", "user", NULL, "format=AdminLevel", NULL};
    char *out = NULL;
    bool ok;

    if (me == 0 || me == job_uid)
        return true;
    pw = getpwuid(me);
    if (!pw)
        return false;
    argv[5] = pw->pw_name;
    ok = acct_run(argv, &out, NULL, 0, NULL) == 0 && out &&
         (strstr(out, "Operator") || strstr(out, "Administrator"));
    free(out);
    return ok;
}

int acct_run_lines(char *const argv[], int (*on_line)(char *line, void *arg), void *arg,
                   char *errbuf, size_t errlen, struct np_err *err)
{
    int out_fd = -1, err_fd = -1, stop = 0;
    size_t len = 0;
    char *line = malloc(ACCT_LINE_MAX + 1);
    struct child_stderr e = {.len = 0};
    bool skipping = false; /* in a line longer than ACCT_LINE_MAX: not one of ours */
    pid_t pid;

    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (!line)
        return np_err_set(err, -ENOMEM, "out of memory");
    pid = spawn_piped(argv, &out_fd, &err_fd, err);
    if (pid < 0) {
        free(line);
        return (int)pid;
    }
    /* A line at a time (a month of jobs is never held whole), both pipes at once (a chatty stderr
     * must not block the child). */
    while (out_fd >= 0 || err_fd >= 0) {
        struct pollfd pfd[2] = {{.fd = out_fd, .events = POLLIN}, {.fd = err_fd, .events = POLLIN}};
        char chunk[4096];
        if (poll(pfd, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (out_fd >= 0 && pfd[0].revents) {
            const ssize_t n = read(out_fd, chunk, sizeof(chunk));
            if (n <= 0) {
                close(out_fd);
                out_fd = -1;
            }
            for (ssize_t i = 0; i < n; i++) {
                if (chunk[i] != '\n') {
                    if (len < ACCT_LINE_MAX)
                        line[len++] = chunk[i];
                    else
                        skipping = true;
                    continue;
                }
                line[len] = '\0';
                if (!skipping && !stop)
                    stop = on_line(line, arg);
                len = 0;
                skipping = false;
            }
        }
        if (err_fd >= 0 && pfd[1].revents)
            read_stderr(&err_fd, &e);
    }
    if (out_fd >= 0)
        close(out_fd);
    if (err_fd >= 0)
        close(err_fd);
    if (len && !skipping && !stop) {
        line[len] = '\0';
        on_line(line, arg);
    }
    free(line);
    return child_status(pid, argv, &e, errbuf, errlen, err);
}
