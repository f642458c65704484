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
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "numaplace/helperconf.h"
#include "numaplace/protocol.h"
#include "numaplace/report.h"

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
            "  report JOBID[.STEP]   the job's reports from the spool (%s), as text or --json\n"
            "  replay TRACE          reports rebuilt from a trace numaplaced recorded (record=)\n"
            "  ping                  is numaplaced up\n"
            "  set-class JOBID high|low\n"
            "                        change a running job's class (root or admin_group)\n"
            "  migrate --from S --to D --pages N [--order ORDER] [--dry-run]\n"
            "                        move at least N pages from node S to node D, taking low\n"
            "                        jobs in ORDER (best-plus, best, random, worst, worst-plus)\n"
            "  migrate --script FILE lines of \"DELAY_S FROM TO PAGES [ORDER]\": each request\n"
            "                        DELAY_S seconds after the previous one ('#' comments)\n",
            DEFAULT_SPOOL);
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

static int cmd_report(int argc, char **argv)
{
    char prefix[64], *end;
    unsigned long id;
    struct dirent **names = NULL;
    int n, shown = 0, denied = 0, bad = 0;
    json_t *all = json_array();

    if (argc != 2) {
        fprintf(stderr, "numaplace: report needs one JOBID or JOBID.STEP\n");
        return 2;
    }
    id = strtoul(argv[1], &end, 10);
    if (!id || id > UINT32_MAX || (*end && *end != '.')) {
        fprintf(stderr,
                "numaplace: report: \"%s\" is not a job id (JOBID or JOBID.STEP, e.g. 42 or "
                "42.batch)\n",
                argv[1]);
        return 2;
    }
    snprintf(prefix, sizeof(prefix), "%s.", argv[1]); /* 42. or 42.batch. */
    n = scandir(spool_dir, &names, NULL, alphasort);
    if (n < 0) {
        fprintf(stderr, "numaplace: cannot read the spool %s: %s\n", spool_dir, strerror(errno));
        json_decref(all);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        size_t len = strlen(name);
        char path[4096];
        json_error_t jerr;
        struct np_err err = {0};
        json_t *report;

        if (strncmp(name, prefix, strlen(prefix)) != 0 || len < 5 ||
            strcmp(name + len - 5, ".json") != 0) {
            free(names[i]);
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", spool_dir, name);
        free(names[i]);
        if (access(path, R_OK) < 0) {
            denied++;
            continue;
        }
        report = json_load_file(path, 0, &jerr);
        if (!report || np_report_check(report, &err) < 0) {
            fprintf(stderr, "numaplace: %s: %s\n", path, report ? err.msg : jerr.text);
            json_decref(report);
            bad++;
            continue;
        }
        if (as_json)
            json_array_append(all, report);
        else
            print_report(report, NULL);
        json_decref(report);
        shown++;
    }
    free(names);
    if (as_json && shown) {
        json_dumpf(all, stdout, JSON_INDENT(2));
        putchar('\n');
    }
    json_decref(all);
    if (denied && !shown) {
        fprintf(stderr,
                "numaplace: job %s is not yours: its reports are readable by its owner "
                "and root only\n",
                argv[1]);
        return 1;
    }
    if (!shown && !bad) {
        fprintf(stderr,
                "numaplace: no report for job %s in %s (it may still run: see "
                "`numaplace status`)\n",
                argv[1], spool_dir);
        return 1;
    }
    return bad ? 1 : 0;
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
        printf("  job %lld.%lld (%s): planned %lld, moved %lld pages in %.3f s%s",
               (long long)json_integer_value(json_object_get(job, "job")),
               (long long)json_integer_value(json_object_get(job, "step")),
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
    if (strcmp(argv[i], "migrate") == 0)
        return cmd_migrate(argc - i, argv + i);
    fprintf(stderr,
            "numaplace: unknown command \"%s\"; accepted: status, report, replay, ping, "
            "set-class, migrate\n",
            argv[i]);
    return 2;
}
