/* Programs run without a shell (see command.h). posix_spawn rather than fork: the daemon has a
 * worker thread, and the child must not run anything between fork and exec. */
#include "command.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int spawn(char *const argv[], int out_fd, pid_t *pid)
{
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    sigset_t none, all;
    int rc;

    sigemptyset(&none);
    sigfillset(&all);
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    /* The daemon blocks the signals its signalfd reads and ignores SIGPIPE: not for the child. */
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    rc = posix_spawnp(pid, argv[0], &actions, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return -rc;
}

int command_run(char *const argv[], int timeout_ms, char *out, size_t size, struct np_err *err)
{
    const double deadline = now_ms() + timeout_ms;
    size_t len = 0;
    bool timed_out = false;
    int pipe_fd[2], status = 0, rc;
    pid_t pid;

    if (size)
        out[0] = '\0';
    if (pipe2(pipe_fd, O_CLOEXEC) < 0)
        return np_err_set(err, -errno, "pipe: %s", strerror(errno));
    rc = spawn(argv, pipe_fd[1], &pid);
    close(pipe_fd[1]);
    if (rc < 0) {
        close(pipe_fd[0]);
        return np_err_set(err, rc, "cannot run %s: %s", argv[0], strerror(-rc));
    }
    for (;;) {
        struct pollfd pfd = {.fd = pipe_fd[0], .events = POLLIN};
        const double left = deadline - now_ms();
        char chunk[4096];
        ssize_t n;

        if (left <= 0)
            break; /* the wait below kills it */
        if (poll(&pfd, 1, (int)left + 1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (!pfd.revents)
            continue;
        n = read(pipe_fd[0], chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (size && len + 1 < size) {
            const size_t keep = (size_t)n < size - 1 - len ? (size_t)n : size - 1 - len;
            memcpy(out + len, chunk, keep);
            len += keep;
            out[len] = '\0';
        }
    }
    close(pipe_fd[0]);
    /* Its stdout closed; it may still linger: it gets until the deadline, like its output. */
    for (;;) {
        const pid_t got = waitpid(pid, &status, timed_out ? 0 : WNOHANG);
        if (got == pid)
            break;
        if (got < 0 && errno != EINTR)
            return np_err_set(err, -errno, "waitpid %s: %s", argv[0], strerror(errno));
        if (got == 0 && now_ms() >= deadline) {
            timed_out = true;
            kill(pid, SIGKILL);
        } else if (got == 0) {
            const struct timespec pause = {.tv_nsec = 10 * 1000000L};
            nanosleep(&pause, NULL);
        }
    }
    if (timed_out)
        return np_err_set(err, -ETIMEDOUT, "%s ran over %d ms; killed", argv[0], timeout_ms);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
