/* The commands that talk to the local numaplaced: status, ping, set-class, migrate; and scenario,
 * which checks the files migrate --script runs. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numaplace/summary.h"

#include "cli.h"
#include "options.h"
#include "numaplace/names.h"
#include "numaplace/migration.h"
#include "numaplace/output_file.h"
#include "numaplace/scenario.h"
#include "numaplace/scenario_file.h"
#include "numaplace/json_reals.h"

int cli_job_id(const char *command, const char *text, uint32_t *id)
{
    char *end;
    const unsigned long v = strtoul(text, &end, 10);

    if (*end || !v || v > UINT32_MAX || !isdigit((unsigned char)text[0]))
        return cli_error(-1, "%s: \"%s\" is not a job id (a number above 0)", command, text);
    *id = (uint32_t)v;
    return 0;
}

/* One request to numaplaced, answered within @p timeout_ms. @return 0 or -errno with @p err */
static int call(const struct np_proto_request *req, unsigned timeout_ms, json_t **reply,
                struct np_err *err)
{
    char *line = np_proto_encode(req);
    const int rc = line ? np_proto_call(cli.socket_path, line, timeout_ms, reply, err)
                        : np_err_set(err, -ENOMEM, "out of memory");

    free(line);
    return rc;
}

int cli_call(const struct np_proto_request *req, json_t **reply)
{
    struct np_err err = {0};
    const int rc = call(req, cli.timeout_ms, reply, &err);

    if (rc < 0)
        fprintf(stderr, "numaplace: %s\n", err.msg);
    return rc;
}

/* A string member as the status shows it: "-" when absent or empty. */
static const char *dash(const char *s)
{
    return s && *s ? s : "-";
}

/* A figure in a status column: its number, or "unavailable", padded to @p width. */
static void print_figure_short(json_t *fig, int precision, int width)
{
    const struct np_figure_style style = {
        .scale = 1, .conv = 'f', .precision = precision, .width = width, .brief = true};

    if (!fig || np_figure_check(fig, NULL) != 0 || np_figure_print(stdout, fig, &style) < 0)
        printf("%-*s", width, "unavailable");
    putchar(' ');
}

/* The traffic each memory node serves, with its source; a proxy ranks only, so no MB/s. */
static void print_memory_nodes(json_t *nodes)
{
    json_t *node;
    size_t i;

    if (!json_array_size(nodes))
        return;
    printf("memory traffic by node:");
    json_array_foreach(nodes, i, node)
    {
        json_int_t id = 0;
        const char *source = NULL, *why = NULL;
        json_t *bw = NULL, *proxy = NULL;

        json_unpack(node, "{s?I s?s s?o s?o s?s}", "node", &id, "source", &source, "bytes_per_s",
                    &bw, "proxy_rank", &proxy, "unavailable", &why);
        printf("%s node%lld ", i ? "," : "", (long long)id);
        if (json_is_number(bw))
            printf("%.1f MB/s (%s)", json_number_value(bw) / 1e6, dash(source));
        else if (proxy)
            printf("proxy (ranks jobs, no MB/s)");
        else
            printf("unavailable (%s)", dash(why));
    }
    putchar('\n');
}

int cmd_status(int argc, char **argv)
{
    struct np_proto_request req = {.op = NP_OP_STATUS};
    json_t *reply = NULL, *jobs = NULL, *nodes = NULL, *job;
    const char *node = NULL, *backends = NULL, *controllers = NULL;
    json_int_t pid = 0, interval_ms = 0;
    double uptime_s = 0, cpu_s = 0;
    size_t i;

    if (argc > 1 && cli_job_id("status", argv[1], &req.job_id) < 0)
        return 2;
    if (cli_call(&req, &reply) < 0)
        return 1;
    if (cli.as_json) {
        json_dumpf(reply, stdout, JSON_INDENT(2) | NP_JSON_REALS);
        putchar('\n');
        json_decref(reply);
        return 0;
    }
    json_unpack(reply, "{s?{s?s s?I s?F s?F s?I s?s s?s} s?o s?o}", "helper", "node", &node, "pid",
                &pid, "uptime_s", &uptime_s, "cpu_time_s", &cpu_s, "interval_ms", &interval_ms,
                "backends", &backends, "memory_controllers", &controllers, "jobs", &jobs,
                "memory_nodes", &nodes);
    printf("numaplaced on %s: pid %lld, up %.0f s, %.3f s CPU used, interval %lld ms, backends "
           "%s, %zu job step(s) shown\n",
           dash(node), (long long)pid, uptime_s, cpu_s, (long long)interval_ms, dash(backends),
           json_array_size(jobs));
    if (controllers)
        printf("memory controllers: %s\n", dash(controllers));
    print_memory_nodes(nodes);
    if (json_array_size(jobs))
        printf("%-10s %-11s %-6s %-5s %-16s %-8s %-5s %-7s %-7s %-11s %s\n", "JOBID", "STEP", "UID",
               "CLASS", "POLICY", "CPUS", "PROCS", "SAMPLES", "CORES", "CPI", "PAGES PER NODE");
    json_array_foreach(jobs, i, job)
    {
        json_int_t id = 0, uid = 0, processes = 0, samples = 0;
        const char *step = NULL, *job_class = NULL, *policy = NULL, *cpus = NULL, *cut = NULL;
        const char *job_backends = NULL, *reason = NULL, *key;
        json_t *cpu_use = NULL, *cpi = NULL, *pages = NULL, *by_tier = NULL, *v;
        int ending = 0;

        json_unpack(job, "{s?I s?s s?I s?s s?s s?s s?{s?I s?I s?o s?o s?o} s?s s?b s?s s?s s?o}",
                    "job", &id, "step_name", &step, "uid", &uid, "class", &job_class, "policy",
                    &policy, "cpus", &cpus, "latest", "processes", &processes, "samples", &samples,
                    "cpu_use", &cpu_use, "cpi", &cpi, "pages", &pages, "processes_cut", &cut,
                    "ending", &ending, "backends", &job_backends, "backends_reason", &reason,
                    "pages_by_tier", &by_tier);
        printf("%-10lld %-11s %-6lld %-5s %-16s %-8s %-5lld %-7lld ", (long long)id, dash(step),
               (long long)uid, dash(job_class), dash(policy), dash(cpus), (long long)processes,
               (long long)samples);
        print_figure_short(cpu_use, 2, 7);
        print_figure_short(cpi, 3, 11);
        if (json_object_get(pages, "unavailable"))
            printf("unavailable");
        json_object_foreach(json_object_get(pages, "node_bytes"), key, v)
        {
            printf("node%s=%.1fMiB ", key, (double)json_integer_value(v) / 1048576.0);
        }
        json_object_foreach(by_tier, key, v) /* a tiered node: 0 the fastest */
        {
            printf("tier%s=%.1fMiB ", key, (double)json_integer_value(v) / 1048576.0);
        }
        putchar('\n');
        if (cut) /* the figures are partial */
            printf("%-10s processes left out: %s\n", "", dash(cut));
        if (ending) /* its report is being written */
            printf("%-10s ended; its report is on its way to the spool\n", "");
        if (reason) /* no perf counters */
            printf("%-10s backends %s: %s\n", "", dash(job_backends), dash(reason));
    }
    json_decref(reply);
    return 0;
}

/* Steps of @p job_id numaplaced lists within 1 s (@p ending_only: "ending"); 0: no answer. */
static size_t steps_listed(uint32_t job_id, bool ending_only)
{
    struct np_proto_request req = {.op = NP_OP_STATUS, .job_id = job_id};
    struct np_err err = {0};
    json_t *reply = NULL;
    size_t n = 0;

    if (call(&req, 1000, &reply, &err) == 0) {
        json_t *step;
        size_t i;
        json_array_foreach(json_object_get(reply, "jobs"), i, step)
        {
            n += !ending_only || json_is_true(json_object_get(step, "ending"));
        }
    }
    json_decref(reply);
    return n;
}

size_t cli_wait_for_steps_to_end(uint32_t job_id, double max_s, bool ending_only)
{
    const double start = np_monotonic_s();
    useconds_t pause_us = 5000;
    size_t left;

    while ((left = steps_listed(job_id, ending_only)) > 0) {
        if (np_monotonic_s() - start >= max_s)
            break;
        usleep(pause_us);
        pause_us = pause_us < 250000 / 2 ? pause_us * 2 : 250000;
    }
    return left;
}

int cmd_set_class(int argc, char **argv)
{
    struct np_proto_request req = {.op = NP_OP_SET_CLASS};
    json_t *reply = NULL;

    if (argc != 3)
        return cli_error(2, "set-class needs JOBID and high or low");
    if (cli_job_id("set-class", argv[1], &req.job_id) < 0)
        return 2;
    if (strcmp(argv[2], "high") != 0 && strcmp(argv[2], "low") != 0)
        return cli_error(2, "set-class: class \"%s\": accepted: %s", argv[2], np_class_names());
    snprintf(req.job_class, sizeof(req.job_class), "%s", argv[2]);
    if (cli_call(&req, &reply) < 0)
        return 1;
    printf("job %" PRIu32 ": class %s (%lld step(s) on this node)\n", req.job_id, argv[2],
           (long long)json_integer_value(json_object_get(reply, "steps")));
    json_decref(reply);
    return 0;
}

static void print_migration(json_t *result)
{
    json_t *job;
    size_t i;

    if (cli.as_json) {
        json_dumpf(result, stdout, JSON_INDENT(2) | NP_JSON_REALS);
        putchar('\n');
        return;
    }
    printf("%s\n", dash(json_string_value(json_object_get(result, "summary"))));
    json_array_foreach(json_object_get(result, "jobs"), i, job)
    {
        json_int_t id = 0, step = 0, planned = 0, moved = 0;
        const char *job_class = NULL, *key;
        json_t *failed = NULL, *v;
        double moving_s = 0;
        int gone = 0;

        json_unpack(job, "{s?I s?I s?s s?I s?I s?F s?b s?o}", "job", &id, "step", &step, "class",
                    &job_class, "planned_pages", &planned, "moved_pages", &moved, "moving_s",
                    &moving_s, "process_gone", &gone, "failed_pages", &failed);
        printf("  job %lld.%s (%s): planned %lld, moved %lld pages in %.3f s%s", (long long)id,
               np_step_name((uint32_t)step), dash(job_class), (long long)planned, (long long)moved,
               moving_s, gone ? ", a process exited" : "");
        json_object_foreach(failed, key, v)
        {
            printf(", %lld %s", (long long)json_integer_value(v), key);
        }
        putchar('\n');
    }
}

/* One request: to node @p to, or (@p tier "down" or "up", @p to NP_PROTO_NO_NODE) one tier away. */
static int migrate_once(unsigned from, unsigned to, const char *tier, uint64_t pages,
                        const char *order, bool dry_run)
{
    struct np_proto_request req = {
        .op = NP_OP_MIGRATE,
        .migrate = {.from = from, .to = to, .pages = pages, .dry_run = dry_run}};
    json_t *reply = NULL;

    snprintf(req.migrate.order, sizeof(req.migrate.order), "%s", order ? order : "");
    snprintf(req.migrate.tier, sizeof(req.migrate.tier), "%s", tier ? tier : "");
    if (cli_call(&req, &reply) < 0)
        return 1;
    print_migration(json_object_get(reply, "result"));
    json_decref(reply);
    return 0;
}

/* A word that is all digits, from 0 to @p max (strtoull alone takes "-1" and "7x"). */
static bool word_count(const char *word, unsigned long long max, unsigned long long *out)
{
    char *end;

    if (!word || word[strspn(word, "0123456789")] != '\0' || !*word)
        return false;
    errno = 0;
    *out = strtoull(word, &end, 10);
    return errno == 0 && *out <= max;
}

static int parse_count(const char *what, const char *text, unsigned long long max,
                       unsigned long long *out)
{
    if (word_count(text, max, out))
        return 0;
    return cli_error(-1, "migrate: %s \"%s\" is not a number from 0 to %llu", what, text, max);
}

/* When a script's requests go out: each delay after the previous answer, or (--clock fixed) at the
 * sum of the delays from the start, so every run of a comparison asks at the same moments. */
struct pacing {
    bool fixed;
    double due;   /* s after start: when the next request is due */
    double start; /* np_monotonic_s */
};

/* Wait for the next request's time; @return how late it is (0 when on time). */
static double pace(struct pacing *p, double delay_s)
{
    double now;

    if (!p->fixed) {
        np_sleep_s(delay_s);
        return 0;
    }
    p->due += delay_s;
    now = np_monotonic_s() - p->start;
    if (now < p->due) {
        np_sleep_s(p->due - now);
        return 0;
    }
    return now - p->due;
}

/* Say a request went late, when by half a second or more. */
static void say_late(double late_s)
{
    if (late_s >= 0.5)
        printf("(late by %.1f s) ", late_s);
}

/* A scenario file's requests, paced by @p pacing, all in @p order (NULL: numaplaced's own). */
static int run_scenario(FILE *f, const char *path, const char *order, bool dry_run,
                        struct pacing *pacing)
{
    struct np_scenario s;
    struct np_err err = {0};
    int failed = 0;

    if (np_scenario_read(f, path, &s, &err) != 0)
        return cli_error(1, "migrate: %s", err.msg);
    printf("scenario %s: %zu request(s), order %s%s%s\n", s.name, s.nrequests,
           order ? order : "as numaplaced is configured", dry_run ? ", dry run" : "",
           pacing->fixed ? ", at fixed times" : "");
    fflush(stdout);
    for (size_t i = 0; i < s.nrequests; i++) {
        const struct np_scenario_request *r = &s.requests[i];
        const double late = pace(pacing, r->delay_s);
        printf("[%s requests[%zu]] ", s.name, i);
        say_late(late);
        fflush(stdout);
        failed |= migrate_once(r->from, r->to, NULL, r->pages, order, dry_run);
    }
    np_scenario_fini(&s);
    return failed;
}

/* One line of the line format, checked with every other line before the first is sent. */
struct script_line {
    unsigned lineno, from, to;
    double delay_s;
    unsigned long long pages;
    const char *order; /* the line's own (static, from the order table), or NULL */
};

/* Line @p lineno's words into @p out. @return 0, or -1 with the reason printed as FILE:LINE: */
static int parse_script_line(char **words, unsigned nwords, const char *path, unsigned lineno,
                             struct script_line *out)
{
    const struct np_order_ops *ops = NULL;
    struct np_err err = {0};
    unsigned long long from = 0, to = 0;
    const struct {
        const char *name;
        unsigned long long max, *out;
    } counts[] = {{"FROM", 4095, &from}, {"TO", 4095, &to}, {"PAGES", INT64_MAX, &out->pages}};
    char *end = NULL;

    *out = (struct script_line){.lineno = lineno};
    out->delay_s = nwords >= 4 ? strtod(words[0], &end) : -1;
    if (!end || *end || !(out->delay_s >= 0 && out->delay_s <= NP_SCENARIO_MAX_DELAY_S))
        return cli_error(-1,
                         "%s:%u: expected \"DELAY_S FROM TO PAGES [ORDER]\" with DELAY_S from 0 "
                         "to %.0f",
                         path, lineno, NP_SCENARIO_MAX_DELAY_S);
    for (unsigned i = 0; i < 3; i++)
        if (!word_count(words[i + 1], counts[i].max, counts[i].out))
            return cli_error(-1, "%s:%u: %s \"%s\" is not a number from 0 to %llu", path, lineno,
                             counts[i].name, words[i + 1], counts[i].max);
    if (nwords >= 5 && np_order_find(words[4], &ops, &err) != 0)
        return cli_error(-1, "%s:%u: ORDER: %s", path, lineno, err.msg);
    out->from = (unsigned)from;
    out->to = (unsigned)to;
    out->order = ops ? ops->name : NULL;
    return 0;
}

/* Each "DELAY_S FROM TO PAGES [ORDER]" line, NP_SCENARIO_MAX_REQUESTS at most. @return n or -1 */
static long read_script_lines(FILE *f, const char *path, unsigned lineno,
                              struct script_line **lines)
{
    char line[512];
    size_t n = 0;

    /* One allocation of the bound: 10,000 lines of 40 bytes. */
    *lines = calloc(NP_SCENARIO_MAX_REQUESTS, sizeof(**lines));
    if (!*lines)
        return cli_error(-1, "out of memory");
    while (fgets(line, sizeof(line), f)) {
        char *words[5] = {NULL}, *save = NULL, *hash = strchr(line, '#');
        unsigned nwords = 0;

        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            (void)cli_error(0, "%s:%u: longer than %zu bytes", path, lineno, sizeof(line) - 2);
            goto fail;
        }
        if (hash)
            *hash = '\0';
        for (char *w = strtok_r(line, " \t\r\n", &save); w && nwords < 5;
             w = strtok_r(NULL, " \t\r\n", &save))
            words[nwords++] = w;
        if (nwords == 0)
            continue;
        if (n == NP_SCENARIO_MAX_REQUESTS) {
            (void)cli_error(0, "%s:%u: more than %d requests", path, lineno,
                            NP_SCENARIO_MAX_REQUESTS);
            goto fail;
        }
        if (parse_script_line(words, nwords, path, lineno, &(*lines)[n]) < 0)
            goto fail;
        n++;
    }
    if (!ferror(f))
        return (long)n;
    fprintf(stderr, "numaplace: cannot read %s: %s\n", path, strerror(errno));
fail:
    free(*lines);
    *lines = NULL;
    return -1;
}

/* The line format, all of it checked before the first request; a line's ORDER wins. */
static int run_lines(FILE *f, const char *path, unsigned lineno, const char *order, bool dry_run,
                     struct pacing *pacing)
{
    struct script_line *lines;
    const long n = read_script_lines(f, path, lineno, &lines);
    int failed = 0;

    if (n < 0)
        return 1;
    for (long i = 0; i < n; i++) {
        const double late = pace(pacing, lines[i].delay_s);
        printf("[%s:%u] ", path, lines[i].lineno);
        say_late(late);
        fflush(stdout);
        failed |= migrate_once(lines[i].from, lines[i].to, NULL, lines[i].pages,
                               lines[i].order ? lines[i].order : order, dry_run);
    }
    free(lines);
    return failed;
}

/* @p path for reading if it is a regular file: a FIFO would wait for a writer for ever. */
static FILE *open_script(const char *path)
{
    struct np_err err = {0};
    const int fd = np_open_regular(path, 0, &err);
    FILE *f;

    if (fd < 0) {
        (void)cli_error(0, "cannot read %s (- reads standard input, a pipe too)", err.msg);
        return NULL;
    }
    if (!(f = fdopen(fd, "r"))) {
        fprintf(stderr, "numaplace: out of memory\n");
        close(fd);
    }
    return f;
}

/* --script FILE: a scenario file (a JSON object, by its first character) or the line format. */
static int run_script(const char *path, const char *order, bool dry_run, bool fixed_clock)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : open_script(path);
    struct pacing pacing = {.fixed = fixed_clock};
    unsigned blank_lines = 0;
    int c, failed;

    if (!f)
        return 1;
    pacing.start = np_monotonic_s();
    while ((c = getc(f)) == ' ' || c == '\t' || c == '\r' || c == '\n')
        blank_lines += c == '\n';
    if (c != EOF)
        ungetc(c, f);
    if (c == '{')
        failed = run_scenario(f, path, order, dry_run, &pacing);
    else
        failed = run_lines(f, path, blank_lines, order, dry_run, &pacing);
    if (f != stdin)
        fclose(f);
    return failed;
}

int cmd_migrate(int argc, char **argv)
{
    unsigned long long from = ~0ull, to = ~0ull, pages = ~0ull;
    const char *order = cli.opt[CLI_MIGRATE_ORDER], *script = cli.opt[CLI_MIGRATE_SCRIPT];
    const char *from_arg = cli.opt[CLI_MIGRATE_FROM], *to_arg = cli.opt[CLI_MIGRATE_TO];
    const char *pages_arg = cli.opt[CLI_MIGRATE_PAGES], *clock_arg = cli.opt[CLI_MIGRATE_CLOCK];
    const char *tier = cli.opt[CLI_MIGRATE_TIER];
    const bool dry_run = cli.opt[CLI_MIGRATE_DRY_RUN] != NULL;
    struct np_err err = {0};

    (void)argc;
    (void)argv;
    cli.timeout_ms = 3600 * 1000; /* a rate-limited move of a large job takes its time */
    if ((from_arg && parse_count("--from", from_arg, 4095, &from) < 0) ||
        (to_arg && parse_count("--to", to_arg, 4095, &to) < 0) ||
        (pages_arg && parse_count("--pages", pages_arg, INT64_MAX, &pages) < 0))
        return 2;
    if (order) { /* checked here, before a script's first delay */
        const struct np_order_ops *ops;
        if (np_order_find(order, &ops, &err) != 0)
            return cli_error(2, "migrate: --order: %s", err.msg);
    }
    if (clock_arg && strcmp(clock_arg, "after-reply") != 0 && strcmp(clock_arg, "fixed") != 0)
        return cli_error(2, "migrate: --clock \"%s\": accepted: after-reply, fixed", clock_arg);
    if (clock_arg && !script)
        return cli_error(2, "migrate: --clock paces a --script; give --script FILE");
    if (tier && strcmp(tier, "down") != 0 && strcmp(tier, "up") != 0)
        return cli_error(2, "migrate: --tier \"%s\": accepted: down, up", tier);
    if (tier && (to_arg || script))
        return cli_error(2, "migrate: --tier names the destination: give it instead of --to, "
                            "without --script");
    if (script)
        return run_script(script, order, dry_run, clock_arg && strcmp(clock_arg, "fixed") == 0);
    if (from == ~0ull || (to == ~0ull && !tier) || pages == ~0ull)
        return cli_error(2, "migrate needs --from S --to D --pages N (or --from S --tier down|up "
                            "--pages N, or --script FILE)");
    return migrate_once((unsigned)from, tier ? NP_PROTO_NO_NODE : (unsigned)to, tier, pages, order,
                        dry_run);
}

int cmd_ping(int argc, char **argv)
{
    struct np_proto_request req = {.op = NP_OP_PING};
    json_t *reply = NULL;

    (void)argc;
    (void)argv;
    if (cli_call(&req, &reply) < 0)
        return 1;
    printf("numaplaced at %s answers (protocol %lld)\n", cli.socket_path,
           (long long)json_integer_value(json_object_get(reply, "version")));
    json_decref(reply);
    return 0;
}

/* `scenario FILE`: check a scenario file (docs/scenarios.md) and show its summary, or (--jobs,
 * --runs) plain lines for the runner script, so no shell parses JSON. */
int cmd_scenario(int argc, char **argv)
{
    const bool jobs = cli.opt[CLI_SCENARIO_JOBS] != NULL, runs = cli.opt[CLI_SCENARIO_RUNS] != NULL;
    const char *path = argc > 1 ? argv[1] : NULL;
    struct np_scenario s;
    struct np_err err = {0};
    int rc;

    if (jobs && runs)
        return cli_error(2, "scenario: --jobs and --runs: one view at a time");
    if (!path)
        return cli_error(2, "scenario needs a FILE (a scenario file, or - for stdin)");
    if (cli.as_json)
        return cli_error(2, "scenario: --json is not offered (the file is the JSON)");
    rc = strcmp(path, "-") == 0 ? np_scenario_read(stdin, "-", &s, &err)
                                : np_scenario_load(path, &s, &err);
    if (rc != 0)
        return cli_error(1, "scenario: %s", err.msg);
    rc = jobs   ? np_scenario_print_jobs(stdout, &s)
         : runs ? np_scenario_print_runs(stdout, &s)
                : np_scenario_print_summary(stdout, &s);
    np_scenario_fini(&s);
    if (rc == 0 && fflush(stdout) != 0)
        rc = -1;
    if (rc != 0)
        return cli_error(1, "scenario: cannot write the output");
    return 0;
}
