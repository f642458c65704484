/* `numaplace characterize`: measure this node type once (root, idle node) and write its machine
 * profile; `--print FILE` shows a written profile again. */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "numaplace/profile.h"
#include "safe_file.h"

#define DEFAULT_SECONDS  0.3
#define DEFAULT_SIZE_MIB 256

/* On a terminal, one line redrawn in place ('\r'); in a file or a pipe, a line per step. */
static void progress(unsigned done, unsigned total, const char *what, void *arg)
{
    FILE *err = cli_unguarded_stderr();
    const bool tty = isatty(fileno(err));

    (void)arg;
    if (tty)
        fprintf(err, "\rnumaplace characterize: [%u/%u] %-48s", done, total, what);
    else
        fprintf(err, "numaplace characterize: [%u/%u] %s", done, total, what);
    if (!tty || done == total)
        fputc('\n', err);
    fflush(err);
}

static int parse_loaders(const char *text, struct np_characterize_opts *o)
{
    char *copy = strdup(text), *save = NULL, *tok;
    int rc = 0;

    o->loader_count = 0;
    for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        unsigned long k = strtoul(tok, &end, 10);
        if (*end || k < 1 || k > 1024 || o->loader_count == NP_PROFILE_MAX_LOADS ||
            (o->loader_count && k <= o->loaders[o->loader_count - 1])) {
            rc = -1;
            break;
        }
        o->loaders[o->loader_count++] = (unsigned)k;
    }
    free(copy);
    if (rc < 0 || !copy)
        fprintf(stderr,
                "numaplace characterize: --loaders \"%s\": accepted: up to %d ascending counts "
                "1..1024, comma-separated (\"1,4\")\n",
                text, NP_PROFILE_MAX_LOADS);
    return rc;
}

/* Running steps make the figures wrong and are slowed by them: ask numaplaced, when it is up. */
static int check_idle(bool force)
{
    struct np_proto_request req = {.op = NP_OP_STATUS};
    struct stat st;
    json_t *reply = NULL;
    size_t steps;

    if (stat(cli.socket_path, &st) < 0)
        return 0;
    if (cli_call(&req, &reply) < 0) {
        fprintf(stderr,
                "numaplace characterize: warning: numaplaced at %s does not answer; "
                "cannot tell whether jobs run here\n",
                cli.socket_path);
        return 0;
    }
    steps = json_array_size(json_object_get(reply, "jobs"));
    json_decref(reply);
    if (!steps)
        return 0;
    fprintf(stderr,
            "numaplace characterize: %s: numaplaced tracks %zu running job step(s): the figures "
            "would be wrong and the jobs slowed%s\n",
            force ? "warning" : "error", steps,
            force ? " (--force)" : "; drain the node first, or --force");
    return force ? 0 : -1;
}

static int write_profile(const char *path, const char *text)
{
    char *dup_dir = strdup(path), *dup_base = strdup(path);
    struct np_err err = {0};
    int rc = -ENOMEM;

    if (dup_dir && dup_base) {
        const char *dir = dirname(dup_dir);
        /* The default directory is ours to create; any other must exist. */
        if (strcmp(path, NP_PROFILE_DEFAULT_PATH) == 0)
            mkdir(dir, 0755);
        rc = safe_write(dir, basename(dup_base), text, strlen(text), (uid_t)-1, 0644, &err);
        if (rc < 0)
            fprintf(stderr, "numaplace characterize: cannot write %s: %s\n", path,
                    err.msg[0] ? err.msg : np_strerror(rc));
    }
    free(dup_dir);
    free(dup_base);
    return rc;
}

static int print_file(const char *path)
{
    struct np_profile *p = NULL;
    struct np_err err = {0};

    if (np_profile_load(path, &p, &err) < 0) {
        fprintf(stderr, "numaplace characterize: %s\n", err.msg);
        return 1;
    }
    np_profile_print(stdout, p);
    np_profile_free(p);
    return 0;
}

static int usage_error(const char *what)
{
    char synopsis[512];

    cli_options_synopsis(cli_command_find("characterize"), synopsis, sizeof(synopsis));
    fprintf(stderr, "numaplace characterize: %s\nusage: numaplace characterize %s\n", what,
            synopsis);
    return 2;
}

int cmd_characterize(int argc, char **argv)
{
    struct np_characterize_opts o = {.seconds = DEFAULT_SECONDS,
                                     .buffer_bytes = (size_t)DEFAULT_SIZE_MIB << 20,
                                     .loaders = {1, 4},
                                     .loader_count = 2,
                                     .progress = progress};
    const char *output =
        cli.opt[CLI_CHAR_OUTPUT] ? cli.opt[CLI_CHAR_OUTPUT] : NP_PROFILE_DEFAULT_PATH;
    struct np_topology *topo = NULL;
    struct np_profile *p = NULL;
    struct np_err err = {0};
    const char *val;
    char *text, *end;
    int rc;

    (void)argc;
    (void)argv;
    if (cli.opt[CLI_CHAR_PRINT])
        return print_file(cli.opt[CLI_CHAR_PRINT]);
    if ((val = cli.opt[CLI_CHAR_SECONDS]) != NULL) {
        o.seconds = strtod(val, &end);
        if (*end || !(o.seconds > 0 && o.seconds <= 10))
            return usage_error("--seconds: accepted: a number above 0, at most 10");
    }
    if ((val = cli.opt[CLI_CHAR_SIZE]) != NULL) {
        unsigned long mib = strtoul(val, &end, 10);
        if (*end || mib < 1 || mib > (1ul << 20))
            return usage_error("--size: accepted: MiB per thread, 1..1048576");
        o.buffer_bytes = (size_t)mib << 20;
    }
    if ((val = cli.opt[CLI_CHAR_LOADERS]) != NULL && parse_loaders(val, &o) < 0)
        return 2;
    if (geteuid() != 0) {
        fprintf(stderr,
                "numaplace characterize: run it as root on an idle node (it binds "
                "memory on every node and writes %s)\n",
                NP_PROFILE_DEFAULT_PATH);
        return 2;
    }
    if (check_idle(cli.opt[CLI_CHAR_FORCE] != NULL) < 0)
        return 2;
    if (np_topology_load(&topo, NP_TOPOLOGY_LIVE, NULL, &err) < 0) {
        fprintf(stderr, "numaplace characterize: topology: %s\n", err.msg);
        return 1;
    }
    fprintf(stderr,
            "numaplace characterize: %u measurements of about %.2f s each (%.0f MiB buffers)\n",
            np_characterize_count(topo, &o), o.seconds, (double)o.buffer_bytes / (1 << 20));
    rc = np_characterize_run(topo, &o, &p, &err);
    np_topology_free(topo);
    if (rc < 0) {
        fprintf(stderr, "\nnumaplace characterize: %s\n", err.msg[0] ? err.msg : np_strerror(rc));
        return 1;
    }
    text = np_profile_encode(p);
    rc = text ? write_profile(output, text) : -ENOMEM;
    free(text);
    if (rc == 0) {
        np_profile_print(stdout, p);
        printf("Profile written to %s\n", output);
    }
    np_profile_free(p);
    return rc < 0 ? 1 : 0;
}
