/*
 * numaplace - the user's and administrator's view of numaplaced (numaplace(1)).
 *
 *   numaplace status [--json] [JOBID]      the jobs the local helper tracks, latest figures
 *   numaplace report [--json] JOBID[.STEP]  the job's reports from the spool
 *   numaplace replay [--json] TRACE         reports rebuilt from a recorded trace
 *   numaplace ping                          is the helper up
 *   numaplace set-class JOBID high|low      change a running job's class (root, admin_group)
 *   numaplace migrate --from S --to D --pages N [--order O] [--dry-run]
 *   numaplace migrate --script FILE         timed requests, one per line (root, admin_group)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <pwd.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "numaplace/helperconf.h"
#include "numaplace/protocol.h"
#include "numaplace/report.h"
#include "numaplace/summary.h"

#include "accounting.h"

#define DEFAULT_SPOOL "/var/spool/numaplace"

static const char *socket_path = NP_HELPER_DEFAULT_SOCKET;
static const char *spool_dir = DEFAULT_SPOOL;
static unsigned timeout_ms = 5000;
static bool as_json;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: numaplace [--socket PATH] [--spool DIR] [--json] COMMAND [ARGS]\n"
            "  status [JOBID]        jobs the local numaplaced tracks, with class, pages per node\n"
            "                        and the latest figures (users see their own jobs)\n"
            "  report [--plot FILE.png|FILE.svg [--node NODE]] JOBID\n"
            "                        the job's NUMA summary from Slurm accounting (else this\n"
            "                        node's spool %s), seff-like text with advice, or --json\n"
            "  report --steps JOBID[.STEP]\n"
            "                        this node's per-step reports from the spool\n"
            "  jobs [--user NAME] [--since TIME] [--until TIME]\n"
            "                        finished jobs with a summary, worst local share first\n"
            "  replay TRACE          reports rebuilt from a trace numaplaced recorded (record=)\n"
            "  ping                  is numaplaced up\n"
            "  set-class JOBID high|low\n"
            "                        change a running job's class (root or admin_group)\n"
            "  migrate --from S --to D --pages N [--order ORDER] [--dry-run]\n"
            "                        move at least N pages from node S to node D, taking low\n"
            "                        jobs in ORDER (best-plus, best, random, worst, worst-plus)\n"
            "  migrate --script FILE lines of \"DELAY_S FROM TO PAGES [ORDER]\": each request\n"
            "                        DELAY_S seconds after the previous one ('#' comments)\n"
            "  store JOBID [--nodes HOSTLIST]\n"
            "                        (epilog, root) add this node's reports to the job's summary\n"
            "                        in its AdminComment\n",
            DEFAULT_SPOOL);
}

static void stderr_log(enum np_log_level level, const char *msg, void *arg)
{
    (void)arg;
    fprintf(stderr, "numaplace: %s: %s\n", np_log_level_name(level), msg);
}

static int call(const struct np_proto_request *req, json_t **reply)
{
    struct np_err err = {0};
    char *line = np_proto_encode(req);
    int rc;

    if (!line) {
        fprintf(stderr, "numaplace: out of memory\n");
        return -ENOMEM;
    }
    rc = np_proto_call(socket_path, line, timeout_ms, reply, &err);
    free(line);
    if (rc < 0)
        fprintf(stderr, "numaplace: %s\n", err.msg);
    return rc;
}

static const char *str(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s && *s ? s : "-";
}

static void print_figure_short(json_t *fig, int precision, int width)
{
    if (json_is_number(json_object_get(fig, "value")))
        printf("%-*.*f ", width, precision, json_number_value(json_object_get(fig, "value")));
    else
        printf("%-*s ", width, "unavailable");
}

static int cmd_status(int argc, char **argv)
{
    struct np_proto_request req = {.op = NP_OP_STATUS};
    json_t *reply = NULL, *jobs, *job, *helper;
    size_t i;

    if (argc > 1) {
        char *end;
        unsigned long id = strtoul(argv[1], &end, 10);
        if (*end || !id || id > UINT32_MAX) {
            fprintf(stderr, "numaplace: status: \"%s\" is not a job id (a number above 0)\n",
                    argv[1]);
            return 2;
        }
        req.job_id = (uint32_t)id;
    }
    if (call(&req, &reply) < 0)
        return 1;
    if (as_json) {
        json_dumpf(reply, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(reply);
        return 0;
    }
    helper = json_object_get(reply, "helper");
    jobs = json_object_get(reply, "jobs");
    printf("numaplaced on %s: pid %lld, up %.0f s, %.3f s CPU used, interval %lld ms, backends "
           "%s, %zu job step(s) shown\n",
           str(helper, "node"), (long long)json_integer_value(json_object_get(helper, "pid")),
           json_number_value(json_object_get(helper, "uptime_s")),
           json_number_value(json_object_get(helper, "cpu_time_s")),
           (long long)json_integer_value(json_object_get(helper, "interval_ms")),
           str(helper, "backends"), json_array_size(jobs));
    if (json_array_size(jobs))
        printf("%-10s %-11s %-6s %-5s %-16s %-8s %-5s %-7s %-7s %-11s %s\n", "JOBID", "STEP", "UID",
               "CLASS", "POLICY", "CPUS", "PROCS", "SAMPLES", "CORES", "CPI", "PAGES PER NODE");
    json_array_foreach(jobs, i, job)
    {
        json_t *latest = json_object_get(job, "latest");
        json_t *pages = json_object_get(latest, "pages");
        const char *key;
        json_t *v;

        printf("%-10lld %-11s %-6lld %-5s %-16s %-8s %-5lld %-7lld ",
               (long long)json_integer_value(json_object_get(job, "job")), str(job, "step_name"),
               (long long)json_integer_value(json_object_get(job, "uid")), str(job, "class"),
               str(job, "policy"), str(job, "cpus"),
               (long long)json_integer_value(json_object_get(latest, "processes")),
               (long long)json_integer_value(json_object_get(latest, "samples")));
        print_figure_short(json_object_get(latest, "cpu_use"), 2, 7);
        print_figure_short(json_object_get(latest, "cpi"), 3, 11);
        if (json_object_get(pages, "unavailable"))
            printf("unavailable");
        json_object_foreach(json_object_get(pages, "node_bytes"), key, v)
        {
            printf("node%s=%.1fMiB ", key, (double)json_integer_value(v) / 1048576.0);
        }
        putchar('\n');
    }
    json_decref(reply);
    return 0;
}

static int print_report(json_t *report, void *arg)
{
    (void)arg;
    if (as_json) {
        json_dumpf(report, stdout, JSON_INDENT(2));
        putchar('\n');
    } else {
        np_report_print(stdout, report);
        putchar('\n');
    }
    return 0;
}

/* The per-step reports of this node's spool (`report --steps`, and JOBID.STEP). */
static int report_steps(const char *job_arg)
{
    struct np_err err = {0};
    json_t *reports = json_array();
    int denied, bad, n;

    n = acct_spool_reports(spool_dir, job_arg, reports, &denied, &bad, &err);
    if (n < 0) {
        fprintf(stderr, "numaplace: %s\n", err.msg);
        json_decref(reports);
        return 1;
    }
    if (as_json && n) {
        json_dumpf(reports, stdout, JSON_INDENT(2));
        putchar('\n');
    } else {
        json_t *report;
        size_t i;
        json_array_foreach(reports, i, report)
        {
            print_report(report, NULL);
        }
    }
    json_decref(reports);
    if (denied && !n) {
        fprintf(stderr,
                "numaplace: job %s is not yours: its reports are readable by its owner "
                "and root only\n",
                job_arg);
        return 1;
    }
    if (!n && !bad) {
        fprintf(stderr,
                "numaplace: no report for job %s in %s (it may still run: see "
                "`numaplace status`)\n",
                job_arg, spool_dir);
        return 1;
    }
    return bad ? 1 : 0;
}

/* The job summary: from Slurm accounting, else merged from this node's spool. */
static int report_summary(uint32_t job_id, const char *job_arg, const char *plot,
                          const char *plot_node)
{
    struct np_err err = {0}, acct_err = {0};
    json_t *summary = NULL;
    uid_t uid = 0;
    int rc;
    char source[700];

    rc = acct_load_summary(job_id, &summary, &uid, &acct_err);
    if (rc == 0 && !acct_may_read(uid)) {
        fprintf(stderr,
                "numaplace: job %s is not yours: its report is readable by its owner, Slurm "
                "operators and root only\n",
                job_arg);
        json_decref(summary);
        return 1;
    }
    if (rc == 0) {
        snprintf(source, sizeof(source), "Slurm accounting (the job's AdminComment)");
    } else {
        /* Not in accounting (yet, or the site stores none): this node's spool serves. */
        json_t *reports = json_array();
        int denied = 0, bad = 0;
        const int n = acct_spool_reports(spool_dir, job_arg, reports, &denied, &bad, &err);

        if (n > 0) {
            json_t *report;
            size_t i;
            const struct passwd *pw = getpwuid(
                (uid_t)json_integer_value(json_object_get(json_array_get(reports, 0), "uid")));
            summary = np_summary_new(job_id);
            if (pw)
                np_summary_set_user(summary, pw->pw_name, NULL);
            json_array_foreach(reports, i, report)
            {
                if (np_summary_add_report(summary, report, &err) < 0)
                    fprintf(stderr, "numaplace: a report left out: %s\n", err.msg);
            }
        }
        json_decref(reports);
        if (!summary) {
            if (denied)
                fprintf(stderr,
                        "numaplace: job %s is not yours: its reports are readable by its owner "
                        "and root only\n",
                        job_arg);
            else
                fprintf(stderr,
                        "numaplace: no report for job %s: %s; and none in this node's spool %s%s\n",
                        job_arg, acct_err.msg, spool_dir,
                        n < 0 ? " (unreadable)" : " (it may still run: see `numaplace status`)");
            return 1;
        }
        snprintf(source, sizeof(source), "this node's spool %s (accounting: %s)", spool_dir,
                 acct_err.msg);
    }
    if (as_json) {
        json_dumpf(summary, stdout, JSON_INDENT(2));
        putchar('\n');
    } else {
        np_summary_print(stdout, summary);
        printf("source: %s\n", source);
    }
    rc = 0;
    if (plot) {
        if (np_summary_plot(summary, plot_node, plot, &err) < 0) {
            fprintf(stderr, "numaplace: --plot %s: %s\n", plot, err.msg);
            rc = 1;
        } else if (!as_json) {
            printf("plot: %s\n", plot);
        }
    }
    json_decref(summary);
    return rc;
}

static int cmd_report(int argc, char **argv)
{
    const char *job_arg = NULL, *plot = NULL, *plot_node = NULL;
    bool steps = false;
    char *end;
    unsigned long id;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--steps") == 0) {
            steps = true;
        } else if (strcmp(argv[i], "--plot") == 0 && i + 1 < argc) {
            plot = argv[++i];
        } else if (strcmp(argv[i], "--node") == 0 && i + 1 < argc) {
            plot_node = argv[++i];
        } else if (argv[i][0] == '-' || job_arg) {
            fprintf(stderr,
                    "numaplace: report: unexpected \"%s\" (usage: report [--steps] [--plot "
                    "FILE.png|FILE.svg [--node NODE]] [--json] JOBID[.STEP])\n",
                    argv[i]);
            return 2;
        } else {
            job_arg = argv[i];
        }
    }
    if (!job_arg) {
        fprintf(stderr, "numaplace: report needs one JOBID or JOBID.STEP\n");
        return 2;
    }
    id = strtoul(job_arg, &end, 10);
    if (!id || id > UINT32_MAX || (*end && *end != '.') || !isdigit((unsigned char)job_arg[0])) {
        fprintf(stderr,
                "numaplace: report: \"%s\" is not a job id (JOBID or JOBID.STEP, e.g. 42 or "
                "42.batch)\n",
                job_arg);
        return 2;
    }
    if (steps || *end == '.')
        return report_steps(job_arg);
    return report_summary((uint32_t)id, job_arg, plot, plot_node);
}

/* The helper writes a step's report when the step ends; a step whose end it has not heard of yet
 * (slurmstepd's call timed out) it notices within two intervals. Wait for that, bounded. */
static void wait_for_steps_to_end(uint32_t job_id, double max_s)
{
    const unsigned saved_timeout = timeout_ms;

    timeout_ms = 1000;
    for (unsigned tries = 0; tries < (unsigned)(max_s * 4); tries++) { /* every 250 ms */
        struct np_proto_request req = {.op = NP_OP_STATUS, .job_id = job_id};
        struct np_err err = {0};
        char *line = np_proto_encode(&req);
        json_t *reply = NULL;
        int rc = line ? np_proto_call(socket_path, line, timeout_ms, &reply, &err) : -ENOMEM;
        const size_t running = rc == 0 ? json_array_size(json_object_get(reply, "jobs")) : 0;

        free(line);
        json_decref(reply);
        if (running == 0) /* none left, or no helper to ask: the spool is what there is */
            break;
        usleep(250000);
    }
    timeout_ms = saved_timeout;
}

/* `numaplace store JOBID`: the epilog's call (etc/numaplace-epilog). */
static int cmd_store(int argc, char **argv)
{
    struct np_log log = {stderr_log, NULL};
    struct np_err err = {0};
    const char *nodes = getenv("SLURM_JOB_NODELIST");
    char *end;
    unsigned long id;

    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc) {
            nodes = argv[++i];
        } else {
            fprintf(stderr,
                    "numaplace: store: unexpected \"%s\" (usage: store JOBID [--nodes "
                    "HOSTLIST])\n",
                    argv[i]);
            return 2;
        }
    }
    if (argc < 2) {
        fprintf(stderr, "numaplace: store needs a JOBID\n");
        return 2;
    }
    id = strtoul(argv[1], &end, 10);
    if (*end || !id || id > UINT32_MAX || !isdigit((unsigned char)argv[1][0])) {
        fprintf(stderr, "numaplace: store: \"%s\" is not a job id (a number above 0)\n", argv[1]);
        return 2;
    }
    if (getuid() != 0) {
        fprintf(stderr, "numaplace: store writes Slurm accounting: root only (the epilog)\n");
        return 1;
    }
    wait_for_steps_to_end((uint32_t)id, 10.0);
    if (acct_store((uint32_t)id, spool_dir, nodes, &log, &err) < 0) {
        fprintf(stderr, "numaplace: store: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* `numaplace jobs [--user U] [--since T] [--until T]`: finished jobs, worst placed first. */
static int cmd_jobs(int argc, char **argv)
{
    struct acct_jobs_filter filter = {0};
    struct np_err err = {0};

    for (int i = 1; i < argc; i++) {
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--user") == 0 && val)
            filter.user = argv[++i];
        else if (strcmp(argv[i], "--since") == 0 && val)
            filter.since = argv[++i];
        else if (strcmp(argv[i], "--until") == 0 && val)
            filter.until = argv[++i];
        else {
            fprintf(stderr,
                    "numaplace: jobs: unexpected \"%s\" (accepted: --user NAME, --since TIME, "
                    "--until TIME, in sacct's time forms, e.g. 2026-11-01 or now-7days)\n",
                    argv[i]);
            return 2;
        }
    }
    if (acct_list_jobs(&filter, as_json, &err) < 0) {
        fprintf(stderr, "numaplace: jobs: %s\n", err.msg);
        return 1;
    }
    return 0;
}

static int cmd_replay(int argc, char **argv)
{
    struct np_err err = {0};
    FILE *in;
    int n;

    if (argc != 2) {
        fprintf(stderr, "numaplace: replay needs one TRACE file\n");
        return 2;
    }
    in = strcmp(argv[1], "-") == 0 ? stdin : fopen(argv[1], "re");
    if (!in) {
        fprintf(stderr, "numaplace: cannot read %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    n = np_trace_replay(in, argv[1], print_report, NULL, &err);
    if (in != stdin)
        fclose(in);
    if (n < 0) {
        fprintf(stderr, "numaplace: %s\n", err.msg);
        return 1;
    }
    if (n == 0)
        fprintf(stderr, "numaplace: %s holds no job\n", argv[1]);
    return 0;
}

static int cmd_set_class(int argc, char **argv)
{
    struct np_proto_request req = {.op = NP_OP_SET_CLASS};
    json_t *reply = NULL;
    char *end;
    unsigned long id;

    if (argc != 3) {
        fprintf(stderr, "numaplace: set-class needs JOBID and high or low\n");
        return 2;
    }
    id = strtoul(argv[1], &end, 10);
    if (*end || !id || id > UINT32_MAX) {
        fprintf(stderr, "numaplace: set-class: \"%s\" is not a job id (a number above 0)\n",
                argv[1]);
        return 2;
    }
    if (strcmp(argv[2], "high") != 0 && strcmp(argv[2], "low") != 0) {
        fprintf(stderr, "numaplace: set-class: class \"%s\": accepted: high, low\n", argv[2]);
        return 2;
    }
    req.job_id = (uint32_t)id;
    snprintf(req.job_class, sizeof(req.job_class), "%s", argv[2]);
    if (call(&req, &reply) < 0)
        return 1;
    printf("job %lu: class %s (%lld step(s) on this node)\n", id, argv[2],
           (long long)json_integer_value(json_object_get(reply, "steps")));
    json_decref(reply);
    return 0;
}

static void print_migration(json_t *result)
{
    json_t *job;
    size_t i;

    if (as_json) {
        json_dumpf(result, stdout, JSON_INDENT(2));
        putchar('\n');
        return;
    }
    printf("%s\n", json_string_value(json_object_get(result, "summary")));
    json_array_foreach(json_object_get(result, "jobs"), i, job)
    {
        const char *key;
        json_t *v;
        printf("  job %lld.%s (%s): planned %lld, moved %lld pages in %.3f s%s",
               (long long)json_integer_value(json_object_get(job, "job")),
               np_step_name((uint32_t)json_integer_value(json_object_get(job, "step"))),
               json_string_value(json_object_get(job, "class")),
               (long long)json_integer_value(json_object_get(job, "planned_pages")),
               (long long)json_integer_value(json_object_get(job, "moved_pages")),
               json_number_value(json_object_get(job, "moving_s")),
               json_is_true(json_object_get(job, "process_gone")) ? ", a process exited" : "");
        json_object_foreach(json_object_get(job, "failed_pages"), key, v)
        {
            printf(", %lld %s", (long long)json_integer_value(v), key);
        }
        putchar('\n');
    }
}

static int migrate_once(unsigned from, unsigned to, uint64_t pages, const char *order, bool dry_run)
{
    struct np_proto_request req = {.op = NP_OP_MIGRATE};
    json_t *reply = NULL;

    req.migrate.from = from;
    req.migrate.to = to;
    req.migrate.pages = pages;
    req.migrate.dry_run = dry_run;
    snprintf(req.migrate.order, sizeof(req.migrate.order), "%s", order ? order : "");
    if (call(&req, &reply) < 0)
        return 1;
    print_migration(json_object_get(reply, "result"));
    json_decref(reply);
    return 0;
}

static int parse_count(const char *what, const char *text, unsigned long long max,
                       unsigned long long *out)
{
    char *end;

    errno = 0;
    *out = strtoull(text, &end, 10);
    if (!*text || *end || errno || *out > max || text[0] == '-') {
        fprintf(stderr, "numaplace: migrate: %s \"%s\" is not a number from 0 to %llu\n", what,
                text, max);
        return -1;
    }
    return 0;
}

static int run_script(const char *path)
{
    char line[512];
    unsigned lineno = 0;
    int failed = 0;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");

    if (!f) {
        fprintf(stderr, "numaplace: cannot read %s: %s\n", path, strerror(errno));
        return 1;
    }
    while (fgets(line, sizeof(line), f)) {
        char order[64] = "", *hash = strchr(line, '#');
        double delay;
        unsigned from, to;
        unsigned long long pages;
        int n;

        lineno++;
        if (hash)
            *hash = '\0';
        if (line[strspn(line, " \t\r\n")] == '\0')
            continue;
        n = sscanf(line, "%lf %u %u %llu %63s", &delay, &from, &to, &pages, order);
        if (n < 4 || delay < 0) {
            fprintf(stderr,
                    "numaplace: %s:%u: expected \"DELAY_S FROM TO PAGES [ORDER]\" with DELAY_S "
                    ">= 0\n",
                    path, lineno);
            failed = 1;
            break;
        }
        usleep((useconds_t)(delay * 1e6));
        printf("[%s:%u] ", path, lineno);
        fflush(stdout);
        failed |= migrate_once(from, to, pages, n == 5 ? order : NULL, false);
    }
    if (f != stdin)
        fclose(f);
    return failed;
}

static int cmd_migrate(int argc, char **argv)
{
    unsigned long long from = ~0ull, to = ~0ull, pages = ~0ull;
    const char *order = NULL, *script = NULL;
    bool dry_run = false;

    timeout_ms = 3600 * 1000; /* a rate-limited move of a large job takes its time */
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(opt, "--dry-run") == 0) {
            dry_run = true;
            continue;
        }
        if (!val) {
            fprintf(stderr, "numaplace: migrate: %s needs a value\n", opt);
            return 2;
        }
        i++;
        if (strcmp(opt, "--from") == 0) {
            if (parse_count("--from", val, 4095, &from) < 0)
                return 2;
        } else if (strcmp(opt, "--to") == 0) {
            if (parse_count("--to", val, 4095, &to) < 0)
                return 2;
        } else if (strcmp(opt, "--pages") == 0) {
            if (parse_count("--pages", val, INT64_MAX, &pages) < 0)
                return 2;
        } else if (strcmp(opt, "--order") == 0) {
            order = val;
        } else if (strcmp(opt, "--script") == 0) {
            script = val;
        } else {
            fprintf(stderr,
                    "numaplace: migrate: unknown option %s (accepted: --from, --to, --pages, "
                    "--order, --dry-run, --script)\n",
                    opt);
            return 2;
        }
    }
    if (script)
        return run_script(script);
    if (from == ~0ull || to == ~0ull || pages == ~0ull) {
        fprintf(stderr, "numaplace: migrate needs --from S --to D --pages N (or --script FILE)\n");
        return 2;
    }
    return migrate_once((unsigned)from, (unsigned)to, pages, order, dry_run);
}

static int cmd_ping(void)
{
    struct np_proto_request req = {.op = NP_OP_PING};
    json_t *reply = NULL;

    if (call(&req, &reply) < 0)
        return 1;
    printf("numaplaced at %s answers (protocol %lld)\n", socket_path,
           (long long)json_integer_value(json_object_get(reply, "version")));
    json_decref(reply);
    return 0;
}

int main(int argc, char **argv)
{
    int i = 1;
    const char *env_socket = getenv("NUMAPLACE_SOCKET"), *env_spool = getenv("NUMAPLACE_SPOOL");

    if (env_socket && *env_socket)
        socket_path = env_socket;
    if (env_spool && *env_spool)
        spool_dir = env_spool;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            as_json = true;
        } else if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
            socket_path = argv[++i];
        } else if (strcmp(argv[i], "--spool") == 0 && i + 1 < argc) {
            spool_dir = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "numaplace: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    /* Options may also follow the command (numaplace report 42 --json). */
    for (int k = i + 1; k < argc; k++)
        if (strcmp(argv[k], "--json") == 0) {
            as_json = true;
            memmove(&argv[k], &argv[k + 1], (size_t)(argc - k - 1) * sizeof(char *));
            argc--;
            k--;
        }
    if (strcmp(argv[i], "status") == 0)
        return cmd_status(argc - i, argv + i);
    if (strcmp(argv[i], "report") == 0)
        return cmd_report(argc - i, argv + i);
    if (strcmp(argv[i], "replay") == 0)
        return cmd_replay(argc - i, argv + i);
    if (strcmp(argv[i], "ping") == 0)
        return cmd_ping();
    if (strcmp(argv[i], "set-class") == 0)
        return cmd_set_class(argc - i, argv + i);
    if (strcmp(argv[i], "store") == 0)
        return cmd_store(argc - i, argv + i);
    if (strcmp(argv[i], "jobs") == 0)
        return cmd_jobs(argc - i, argv + i);
    if (strcmp(argv[i], "migrate") == 0)
        return cmd_migrate(argc - i, argv + i);
    fprintf(stderr,
            "numaplace: unknown command \"%s\"; accepted: status, report, jobs, replay, ping, "
            "set-class, migrate, store\n",
            argv[i]);
    return 2;
}
