/* The numaplace command's side of Slurm accounting (see accounting.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "accounting.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "numaplace/codec.h"
#include "numaplace/report.h"
#include "numaplace/summary.h"

#define CAPTURE_MAX (16u << 20) /* sacct over a busy month stays far below this */

int acct_run(char *const argv[], char **out, char *errbuf, size_t errlen, struct np_err *err)
{
    int out_pipe[2], err_pipe[2], status = 0;
    size_t len = 0, cap = 4096, elen = 0;
    char *buf = malloc(cap), ebuf[1024];
    pid_t pid;

    *out = NULL;
    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (!buf)
        return np_err_set(err, -ENOMEM, "out of memory");
    if (pipe2(out_pipe, O_CLOEXEC) < 0) {
        free(buf);
        return np_err_set(err, -errno, "pipe: %s", strerror(errno));
    }
    if (pipe2(err_pipe, O_CLOEXEC) < 0) {
        const int e = errno;
        close(out_pipe[0]);
        close(out_pipe[1]);
        free(buf);
        return np_err_set(err, -e, "pipe: %s", strerror(e));
    }
    pid = fork();
    if (pid < 0) {
        const int e = errno;
        close(out_pipe[0]);
        close(out_pipe[1]);
        close(err_pipe[0]);
        close(err_pipe[1]);
        free(buf);
        return np_err_set(err, -e, "fork: %s", strerror(e));
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
    /* Both pipes at once: a chatty stderr must not block the child while we wait on stdout. */
    for (int open_fds = 2; open_fds > 0;) {
        struct pollfd pfd[2] = {{.fd = out_pipe[0], .events = POLLIN},
                                {.fd = err_pipe[0], .events = POLLIN}};
        if (poll(pfd, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pfd[0].fd >= 0 && pfd[0].revents) {
            ssize_t n;
            if (len + 4096 + 1 > cap && cap < CAPTURE_MAX) {
                char *grown = realloc(buf, cap * 2);
                if (grown) {
                    buf = grown;
                    cap *= 2;
                }
            }
            n = len + 1 < cap ? read(out_pipe[0], buf + len, cap - len - 1) : 0;
            if (n <= 0) {
                close(out_pipe[0]);
                out_pipe[0] = -1;
                open_fds--;
            } else {
                len += (size_t)n;
            }
        }
        if (err_pipe[0] >= 0 && pfd[1].revents) {
            char chunk[512];
            ssize_t n = read(err_pipe[0], chunk, sizeof(chunk));
            if (n <= 0) {
                close(err_pipe[0]);
                err_pipe[0] = -1;
                open_fds--;
            } else if (elen + (size_t)n < sizeof(ebuf)) {
                memcpy(ebuf + elen, chunk, (size_t)n);
                elen += (size_t)n;
            }
        }
        if (out_pipe[0] < 0 && err_pipe[0] < 0)
            break;
    }
    if (out_pipe[0] >= 0)
        close(out_pipe[0]);
    if (err_pipe[0] >= 0)
        close(err_pipe[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    buf[len] = '\0';
    *out = buf;
    ebuf[elen] = '\0';
    if (errbuf && errlen) {
        snprintf(errbuf, errlen, "%s", ebuf);
        errbuf[strcspn(errbuf, "\n")] = '\0';
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && strstr(ebuf, "cannot run"))
        return np_err_set(err, -ENOENT, "%s", ebuf[0] ? strtok(ebuf, "\n") : argv[0]);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int acct_spool_reports(const char *spool, const char *job_arg, json_t *reports, int *denied,
                       int *bad, struct np_err *err)
{
    char prefix[64];
    struct dirent **names = NULL;
    int n, added = 0;

    *denied = *bad = 0;
    snprintf(prefix, sizeof(prefix), "%s.", job_arg); /* 42. or 42.batch. */
    n = scandir(spool, &names, NULL, alphasort);
    if (n < 0)
        return np_err_set(err, -errno, "cannot read the spool %s: %s", spool, strerror(errno));
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        const size_t len = strlen(name);
        char path[4096];
        json_error_t jerr;
        struct np_err rerr = {0};
        json_t *report;

        if (strncmp(name, prefix, strlen(prefix)) != 0 || len < 5 ||
            strcmp(name + len - 5, ".json") != 0) {
            free(names[i]);
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", spool, name);
        free(names[i]);
        if (access(path, R_OK) < 0) {
            (*denied)++;
            continue;
        }
        report = json_load_file(path, 0, &jerr);
        if (!report || np_report_check(report, &rerr) < 0) {
            fprintf(stderr, "numaplace: %s: %s\n", path, report ? rerr.msg : jerr.text);
            json_decref(report);
            (*bad)++;
            continue;
        }
        json_array_append_new(reports, report);
        added++;
    }
    free(names);
    return added;
}

/* sacct's view of one job: its uid and AdminComment. -ENOENT when sacct does not show it. @p full
 * (may be NULL) says whether slurmctld's own record of the job is in: until then (a few seconds
 * after the job ended) slurmdbd holds a placeholder row made from the steps, with no account,
 * which a modify does not reach. */
static int sacct_job(uint32_t job_id, uid_t *uid, char **comment, bool *full, struct np_err *err)
{
    char id[16], errbuf[256], *out = NULL, *bar, *bar2;
    char *argv[] = {"sacct", "-j", id, "-X", "-n", "-P", "-o", "UID,Account,AdminComment", NULL};
    int rc;

    *comment = NULL;
    snprintf(id, sizeof(id), "%" PRIu32, job_id);
    rc = acct_run(argv, &out, errbuf, sizeof(errbuf), err);
    if (rc < 0) {
        free(out);
        return rc;
    }
    if (rc != 0) {
        free(out);
        return np_err_set(err, -EIO, "sacct -j %s failed (exit %d): %s", id, rc,
                          errbuf[0] ? errbuf : "no message");
    }
    out[strcspn(out, "\n")] = '\0';
    bar = strchr(out, '|');
    bar2 = bar ? strchr(bar + 1, '|') : NULL;
    if (!out[0] || !bar2) {
        free(out);
        return np_err_set(err, -ENOENT,
                          "sacct knows no job %s (not in accounting yet, or not yours to see)", id);
    }
    *bar = *bar2 = '\0';
    *uid = (uid_t)strtoul(out, NULL, 10);
    if (full)
        *full = bar[1] != '\0';
    *comment = strdup(bar2 + 1);
    free(out);
    return *comment ? 0 : np_err_set(err, -ENOMEM, "out of memory");
}

static int sacct_admin_comment(uint32_t job_id, uid_t *uid, char **comment, struct np_err *err)
{
    return sacct_job(job_id, uid, comment, NULL, err);
}

int acct_load_summary(uint32_t job_id, json_t **summary, uid_t *uid, struct np_err *err)
{
    char *comment = NULL;
    int rc;

    *summary = NULL;
    rc = sacct_admin_comment(job_id, uid, &comment, err);
    if (rc < 0)
        return rc;
    if (!comment[0]) {
        free(comment);
        return np_err_set(err, -ENOMSG, "job %" PRIu32 " has no numaplace summary in accounting",
                          job_id);
    }
    rc = np_stored_decode(comment, summary, err);
    free(comment);
    if (rc == -ENOMSG)
        np_err_set(err, -ENOMSG,
                   "job %" PRIu32 "'s AdminComment holds another tool's text, not a numaplace "
                   "summary",
                   job_id);
    return rc;
}

/* "node[1-2],x" -> "node1,node2,x" through scontrol (Slurm's own hostlist rules). */
static char *expand_hostlist(const char *list)
{
    char *argv[] = {"scontrol", "show", "hostnames", (char *)list, NULL};
    char *out = NULL;

    if (acct_run(argv, &out, NULL, 0, NULL) != 0 || !out) {
        free(out);
        return strdup(list); /* a plain comma list works as it is */
    }
    for (char *p = out; *p; p++)
        if (*p == '\n')
            *p = p[1] ? ',' : '\0';
    return out;
}

/* The AdminComment slurmctld holds for the job while it is still there (another tool may have set
 * it with scontrol; slurmdbd sees it only seconds after the job ends). NULL: not known there. */
static char *controller_admin_comment(uint32_t job_id)
{
    char id[16], *out = NULL, *at, *value;
    char *argv[] = {"scontrol", "-o", "show", "job", id, NULL};

    snprintf(id, sizeof(id), "%" PRIu32, job_id);
    if (acct_run(argv, &out, NULL, 0, NULL) != 0) {
        free(out);
        return NULL;
    }
    at = strstr(out, " AdminComment=");
    value =
        at ? strndup(at + strlen(" AdminComment="), strcspn(at + strlen(" AdminComment="), " \n"))
           : strdup("");
    free(out);
    if (value && strcmp(value, "(null)") == 0)
        value[0] = '\0';
    return value;
}

/* The summary stored for the job in slurmdbd (where the epilogs write it; slurmctld does not
 * see those writes). *current NULL: nothing stored yet. -EEXIST: another tool's AdminComment. */
static int stored_summary(uint32_t job_id, json_t **current, struct np_err *err)
{
    char *comment = NULL;
    uid_t uid;
    int rc;

    *current = NULL;
    comment = controller_admin_comment(job_id);
    if (comment && comment[0] &&
        strncmp(comment, NP_STORED_PREFIX, strlen(NP_STORED_PREFIX)) != 0) {
        free(comment);
        return np_err_set(err, -EEXIST,
                          "job %" PRIu32 "'s AdminComment holds another tool's text: numaplace "
                          "does not overwrite it (the summary stays in the spool)",
                          job_id);
    }
    free(comment);
    comment = NULL;
    if (sacct_admin_comment(job_id, &uid, &comment, NULL) < 0 || !comment || !comment[0]) {
        free(comment);
        return 0; /* not there yet, or empty: store as the first */
    }
    rc = np_stored_decode(comment, current, err);
    free(comment);
    if (rc == -ENOMSG)
        return np_err_set(err, -EEXIST,
                          "job %" PRIu32 "'s AdminComment holds another tool's text: numaplace "
                          "does not overwrite it (the summary stays in the spool)",
                          job_id);
    if (rc < 0) /* a corrupt summary of ours: replaced */
        *current = NULL;
    return 0;
}

/* Every node of @p mine is in @p stored (the read-back check of a concurrent store). */
static bool holds_nodes_of(json_t *stored, json_t *mine)
{
    const char *node;
    json_t *v;

    json_object_foreach(json_object_get(mine, "nodes"), node, v)
    {
        if (!json_object_get(json_object_get(stored, "nodes"), node))
            return false;
    }
    return true;
}

int acct_store(uint32_t job_id, const char *spool, const char *nodes, const struct np_log *log,
               struct np_err *err)
{
    enum { ATTEMPTS = 8 };
    char job_arg[16], *expanded = NULL;
    json_t *reports = json_array(), *mine = NULL, *report;
    int denied, bad, n, rc = 0;
    size_t i;

    snprintf(job_arg, sizeof(job_arg), "%" PRIu32, job_id);
    n = acct_spool_reports(spool, job_arg, reports, &denied, &bad, err);
    if (n < 0)
        goto out;
    if (n == 0) {
        np_logf(log, NP_LOG_INFO, "job %s: no report on this node in %s: nothing to store", job_arg,
                spool);
        goto out;
    }
    mine = np_summary_new(job_id);
    if (!mine) {
        rc = np_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    json_array_foreach(reports, i, report)
    {
        struct np_err rerr = {0};
        if (np_summary_add_report(mine, report, &rerr) < 0)
            np_logf(log, NP_LOG_WARNING, "job %s: a report left out: %s", job_arg, rerr.msg);
    }
    {
        const json_int_t uid =
            json_integer_value(json_object_get(json_array_get(reports, 0), "uid"));
        const struct passwd *pw = getpwuid((uid_t)uid);
        if (pw)
            np_summary_set_user(mine, pw->pw_name, NULL);
    }
    if (nodes && *nodes)
        expanded = expand_hostlist(nodes);
    srandom((unsigned)(getpid() ^ time(NULL)));
    /* slurmdbd gets slurmctld's record of the job a few seconds after the job has ended, and
     * not before the epilogs are done: `numaplace store` runs detached from the epilog
     * (etc/numaplace-epilog) and waits here, bounded, so the nodes' writes meet a real row. */
    for (int waited = 0; waited < 480; waited++) {
        uid_t uid;
        char *comment = NULL;
        bool full = false;
        const int known = sacct_job(job_id, &uid, &comment, &full, NULL);
        free(comment);
        if (known == 0 && full)
            break;
        if (known < 0 && known != -ENOENT)
            break; /* sacct itself fails: the write below says why */
        usleep(250000);
    }
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
        json_t *merged = NULL, *check = NULL;
        char *stored = NULL;
        long len;

        rc = stored_summary(job_id, &merged, err);
        if (rc < 0)
            break;
        if (!merged)
            merged = json_deep_copy(mine);
        else if ((rc = np_summary_merge(merged, mine, err)) < 0) {
            json_decref(merged);
            break;
        }
        if (expanded)
            np_summary_expect_nodes(merged, expanded, NULL);
        len = np_summary_fit(merged, NP_SUMMARY_STORED_MAX, &stored, err);
        json_decref(merged);
        if (len < 0) {
            rc = (int)len;
            break;
        }
        rc = acct_set_admin_comment(job_id, stored, err);
        free(stored);
        if (rc < 0)
            break;
        /* Read back twice: soon, and again after the other nodes' epilogs (which run at the same
         * time) have had time to finish a write they based on what was stored before ours. A
         * part that was overwritten is merged in and written again. */
        usleep((useconds_t)(100000 + random() % 300000));
        if (stored_summary(job_id, &check, NULL) == 0 && check && holds_nodes_of(check, mine)) {
            json_decref(check);
            check = NULL;
            usleep((useconds_t)(2000000 + random() % 500000));
            if (stored_summary(job_id, &check, NULL) == 0 && check && holds_nodes_of(check, mine)) {
                json_decref(check);
                np_logf(log, NP_LOG_INFO,
                        "job %s: summary stored in AdminComment (%ld bytes, try %d)", job_arg, len,
                        attempt);
                rc = 0;
                goto out;
            }
        }
        json_decref(check);
        rc = np_err_set(err, -EAGAIN,
                        "job %s: this node's part was overwritten %d times by concurrent writers",
                        job_arg, attempt);
    }
out:
    free(expanded);
    json_decref(mine);
    json_decref(reports);
    return rc;
}

/* ---- numaplace jobs ---- */

/* The lowest local share over the summary's nodes, or NAN when no node has one. */
static double worst_local_share(json_t *summary)
{
    double worst = NAN;
    const char *node;
    json_t *v;

    json_object_foreach(json_object_get(summary, "nodes"), node, v)
    {
        json_t *share = json_object_get(json_object_get(v, "local_share"), "value");
        if (json_is_number(share) && (isnan(worst) || json_number_value(share) < worst))
            worst = json_number_value(share);
    }
    return worst;
}

struct listed_job {
    char id[32], user[64], state[32];
    double share;
    json_t *summary;
};

static int by_share(const void *a, const void *b)
{
    const struct listed_job *x = a, *y = b;
    if (isnan(x->share) != isnan(y->share))
        return isnan(x->share) ? 1 : -1; /* unknown shares last */
    return (x->share > y->share) - (x->share < y->share);
}

int acct_list_jobs(const struct acct_jobs_filter *filter, bool as_json, struct np_err *err)
{
    char *argv[16], errbuf[256], *out = NULL, *save = NULL;
    struct listed_job *jobs = NULL;
    size_t njobs = 0, cap = 0;
    int argc = 0, rc;

    argv[argc++] = "sacct";
    argv[argc++] = "-X";
    argv[argc++] = "-n";
    argv[argc++] = "-P";
    argv[argc++] = "-o";
    argv[argc++] = "JobID,User,State,AdminComment";
    if (filter->user) {
        argv[argc++] = "-u";
        argv[argc++] = (char *)filter->user;
    } else {
        argv[argc++] = "-a"; /* sacct itself limits what a user may see */
    }
    if (filter->since) {
        argv[argc++] = "-S";
        argv[argc++] = (char *)filter->since;
    }
    if (filter->until) {
        argv[argc++] = "-E";
        argv[argc++] = (char *)filter->until;
    }
    argv[argc] = NULL;
    rc = acct_run(argv, &out, errbuf, sizeof(errbuf), err);
    if (rc != 0) {
        free(out);
        return rc < 0 ? rc
                      : np_err_set(err, -EIO, "sacct failed (exit %d): %s", rc,
                                   errbuf[0] ? errbuf : "no message");
    }
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *field[4] = {line, NULL, NULL, NULL};
        json_t *summary = NULL;
        for (int f = 1; f < 4; f++) {
            char *bar = field[f - 1] ? strchr(field[f - 1], '|') : NULL;
            if (bar) {
                *bar = '\0';
                field[f] = bar + 1;
            }
        }
        if (!field[3] || np_stored_decode(field[3], &summary, NULL) < 0)
            continue; /* no numaplace summary: not one of ours */
        if (njobs == cap) {
            struct listed_job *grown = realloc(jobs, (cap ? cap * 2 : 64) * sizeof(*jobs));
            if (!grown) {
                json_decref(summary);
                break;
            }
            jobs = grown;
            cap = cap ? cap * 2 : 64;
        }
        snprintf(jobs[njobs].id, sizeof(jobs[njobs].id), "%s", field[0]);
        snprintf(jobs[njobs].user, sizeof(jobs[njobs].user), "%s", field[1]);
        snprintf(jobs[njobs].state, sizeof(jobs[njobs].state), "%s", field[2]);
        jobs[njobs].share = worst_local_share(summary);
        jobs[njobs].summary = summary;
        njobs++;
    }
    free(out);
    if (njobs)
        qsort(jobs, njobs, sizeof(*jobs), by_share);
    if (as_json) {
        json_t *arr = json_array();
        for (size_t i = 0; i < njobs; i++)
            json_array_append(arr, jobs[i].summary);
        json_dumpf(arr, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(arr);
    } else {
        printf("%-10s %-10s %-11s %-5s %-16s %-5s %-12s %s\n", "JOBID", "USER", "STATE", "NODES",
               "POLICY", "CLASS", "LOCAL(min)", "ADVICE");
        for (size_t i = 0; i < njobs; i++) {
            json_t *s = jobs[i].summary, *advice = np_summary_advice(s), *a;
            char share[16], rules[128] = "";
            size_t k;
            if (isnan(jobs[i].share))
                snprintf(share, sizeof(share), "unavailable");
            else
                snprintf(share, sizeof(share), "%.0f%%", 100 * jobs[i].share);
            json_array_foreach(advice, k, a)
            {
                const char *rule = json_string_value(json_object_get(a, "rule"));
                if (rule && strlen(rules) + strlen(rule) + 2 < sizeof(rules))
                    snprintf(rules + strlen(rules), sizeof(rules) - strlen(rules), "%s%s",
                             k ? "," : "", rule);
            }
            json_decref(advice);
            char policies[64] = "";
            json_t *p;
            json_array_foreach(json_object_get(s, "policy_requested"), k, p)
            {
                if (json_is_string(p))
                    snprintf(policies + strlen(policies), sizeof(policies) - strlen(policies),
                             "%s%s", k ? "," : "", json_string_value(p));
            }
            printf("%-10s %-10s %-11s %-5zu %-16s %-5s %-12s %s\n", jobs[i].id, jobs[i].user,
                   jobs[i].state, json_object_size(json_object_get(s, "nodes")),
                   policies[0] ? policies : "-",
                   json_string_value(json_object_get(s, "sensitivity"))
                       ? json_string_value(json_object_get(s, "sensitivity"))
                       : "-",
                   share, rules);
        }
        if (!njobs)
            printf("(no job with a numaplace summary in accounting for this selection)\n");
    }
    for (size_t i = 0; i < njobs; i++)
        json_decref(jobs[i].summary);
    free(jobs);
    return 0;
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
