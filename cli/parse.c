/* Slurm's output and spool names read without running anything (cli/parse.h). */
#include "parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <acl/libacl.h>
#include <sys/acl.h>

#include "numaplace/output_file.h"
#include "numaplace/summary.h"

int cli_parse_sacct_job(char *out, uid_t *uid, bool *full, const char **comment)
{
    char *bar, *bar2;

    out[strcspn(out, "\n")] = '\0';
    bar = strchr(out, '|');
    bar2 = bar ? strchr(bar + 1, '|') : NULL;
    if (!out[0] || !bar2)
        return -ENOENT;
    *bar = *bar2 = '\0';
    *uid = (uid_t)strtoul(out, NULL, 10);
    if (full)
        *full = bar[1] != '\0';
    *comment = bar2 + 1;
    return 0;
}

int cli_parse_jobs_line(char *line, struct cli_jobs_row *row)
{
    char *user = strchr(line, '|'), *state = user ? strchr(user + 1, '|') : NULL;
    char *comment = state ? strchr(state + 1, '|') : NULL;

    if (!comment)
        return -EINVAL;
    *user = *state = *comment = '\0';
    *row = (struct cli_jobs_row){line, user + 1, state + 1, comment + 1};
    return 0;
}

char *cli_config_value(const char *out, const char *key)
{
    const size_t klen = strlen(key);

    for (const char *line = out; line && *line;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        const char *p = line + klen;
        size_t len;

        if (strncmp(line, key, klen) != 0 || (*p != ' ' && *p != '='))
            continue;
        p += strspn(p, " ");
        if (*p != '=')
            continue;
        p++;
        p += strspn(p, " ");
        len = strcspn(p, "\n");
        while (len && p[len - 1] == ' ')
            len--;
        if (len == 6 && strncmp(p, "(null)", 6) == 0)
            len = 0;
        return strndup(p, len);
    }
    return strdup("");
}

bool cli_spool_name_matches(const char *name, const char *job_arg)
{
    char prefix[64];
    const size_t len = strlen(name);

    snprintf(prefix, sizeof(prefix), "%s.", job_arg); /* 42. or 42.batch. */
    return strncmp(name, prefix, strlen(prefix)) == 0 && len >= 5 &&
           strcmp(name + len - 5, ".json") == 0;
}

int cli_decode_admin_comment(const char *comment, uint32_t job_id, json_t **summary,
                             struct np_err *err)
{
    int rc;

    *summary = NULL;
    if (!comment || !comment[0])
        return np_err_set(err, -ENOMSG, "job %" PRIu32 " has no numaplace summary in accounting",
                          job_id);
    rc = np_stored_decode(comment, summary, err);
    if (rc == -ENOMSG)
        np_err_set(err, -ENOMSG,
                   "job %" PRIu32 "'s AdminComment holds another tool's text, not a numaplace "
                   "summary",
                   job_id);
    return rc;
}

/* The first named user an ACL lets read the file: numaplaced's one entry, the job's user. */
static bool acl_reader(int fd, uid_t *reader)
{
    acl_t acl = acl_get_fd(fd);
    acl_entry_t entry;
    bool found = false;

    if (!acl)
        return false; /* no ACL support: no reader */
    for (int which = ACL_FIRST_ENTRY; !found && acl_get_entry(acl, which, &entry) == 1;
         which = ACL_NEXT_ENTRY) {
        acl_tag_t tag;
        acl_permset_t perms;
        if (acl_get_tag_type(entry, &tag) == 0 && tag == ACL_USER &&
            acl_get_permset(entry, &perms) == 0 && acl_get_perm(perms, ACL_READ) == 1) {
            uid_t *q = acl_get_qualifier(entry);
            if (q) {
                *reader = *q;
                found = true;
                acl_free(q);
            }
        }
    }
    acl_free(acl);
    return found;
}

/* Root trusts only what numaplaced wrote: nobody else may have been able to write the file. */
static int check_writer(const char *path, const struct stat *st,
                        const struct cli_report_trust *trust, struct np_err *err)
{
    if (st->st_uid != 0 && st->st_uid != trust->helper_uid)
        return np_err_set(err, -EPERM,
                          "%s is owned by uid %u: not trusted (root reads only reports numaplaced "
                          "wrote: owned by root or numaplaced's uid %u, not writable by group or "
                          "others)",
                          path, (unsigned)st->st_uid, (unsigned)trust->helper_uid);
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return np_err_set(err, -EPERM,
                          "%s has mode %04o: writable by %s, not trusted (root reads only reports "
                          "numaplaced wrote, which nobody else can write)",
                          path, (unsigned)(st->st_mode & 07777),
                          st->st_mode & S_IWOTH ? "others" : "its group or an ACL entry");
    return 0;
}

int cli_load_report(const char *path, size_t max, const struct cli_report_trust *trust,
                    json_t **out, struct cli_report_origin *origin, struct np_err *err)
{
    struct stat st;
    json_error_t jerr;
    char *text;
    size_t got = 0;
    int fd, rc = 0;

    *out = NULL;
    fd = np_open_regular(path, 1, err);
    if (fd < 0)
        return fd;
    if (fstat(fd, &st) < 0)
        rc = np_err_set(err, -errno, "%s: %s", path, strerror(errno));
    else if ((size_t)st.st_size > max)
        rc = np_err_set(err, -EFBIG, "%s: %lld bytes, over the %zu a report can have", path,
                        (long long)st.st_size, max);
    else if (trust)
        rc = check_writer(path, &st, trust, err);
    if (rc == 0 && origin) {
        origin->owner = st.st_uid;
        origin->has_reader = acl_reader(fd, &origin->reader);
    }
    if (rc < 0) {
        close(fd);
        return rc;
    }
    text = malloc((size_t)st.st_size + 1);
    while (text && got < (size_t)st.st_size) {
        const ssize_t n = read(fd, text + got, (size_t)st.st_size - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!text)
        return np_err_set(err, -ENOMEM, "%s: out of memory", path);
    *out = json_loadb(text, got, 0, &jerr);
    free(text);
    if (!*out)
        return np_err_set(err, -EBADMSG, "%s: %s", path, jerr.text);
    return 0;
}

int cli_report_is_own(const json_t *report, uint32_t job_id, uid_t uid, const char *host,
                      struct np_err *err)
{
    const json_t *job = json_object_get(report, "job_id"), *owner = json_object_get(report, "uid");
    const char *node = json_string_value(json_object_get(report, "node"));

    if (json_is_integer(job) && json_integer_value(job) == (json_int_t)job_id &&
        json_is_integer(owner) && json_integer_value(owner) == (json_int_t)uid && node &&
        strcmp(node, host) == 0)
        return 0;
    return np_err_set(err, -EINVAL,
                      "a report naming job %lld, uid %lld, node %s: Slurm says job %" PRIu32
                      ", uid %u, and this is node %s",
                      (long long)json_integer_value(job), (long long)json_integer_value(owner),
                      node ? node : "(none)", job_id, (unsigned)uid, host);
}
