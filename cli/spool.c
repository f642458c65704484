/* A job's reports in this node's spool (accounting.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "numaplace/report.h"

#include "accounting.h"
#include "parse.h"

/* Root reads only what numaplaced wrote: root's files, or those of the spool's owner while the
 * spool is that owner's alone (numaplaced writes only into such a spool: daemon/safe_file.c). */
static bool root_trust(const char *spool, struct cli_report_trust *trust)
{
    struct stat st;

    if (geteuid() != 0)
        return false; /* a user reads with their own rights: nothing to trust */
    trust->helper_uid = 0;
    if (stat(spool, &st) == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH)))
        trust->helper_uid = st.st_uid;
    return true;
}

int acct_spool_reports(const char *spool, const char *job_arg, json_t *reports, int *denied,
                       int *bad, struct acct_spool_reader *reader, struct np_err *err)
{
    struct dirent **names = NULL;
    struct cli_report_trust trust;
    const bool as_root = root_trust(spool, &trust);
    int n, added = 0, left_out = 0;

    *denied = *bad = 0;
    if (reader)
        *reader = (struct acct_spool_reader){0};
    n = scandir(spool, &names, NULL, alphasort);
    if (n < 0)
        return np_err_set(err, -errno, "cannot read the spool %s: %s", spool, strerror(errno));
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char path[4096];
        struct np_err rerr = {0};
        struct cli_report_origin origin = {0};
        json_t *report;

        if (!cli_spool_name_matches(name, job_arg)) {
            free(names[i]);
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", spool, name);
        free(names[i]);
        if (added == CLI_SPOOL_MAX_REPORTS) {
            left_out++;
            continue;
        }
        if (access(path, R_OK) < 0) {
            (*denied)++;
            continue;
        }
        if (cli_load_report(path, CLI_REPORT_MAX_BYTES, as_root ? &trust : NULL, &report, &origin,
                            &rerr) < 0 ||
            np_report_check(report, &rerr) < 0) {
            fprintf(stderr, "numaplace: %s: %s\n", path, rerr.msg);
            json_decref(report);
            (*bad)++;
            continue;
        }
        if (reader && origin.has_reader) {
            reader->conflict |= reader->known && reader->uid != origin.reader;
            reader->known = true;
            reader->uid = origin.reader;
        }
        json_array_append_new(reports, report);
        added++;
    }
    free(names);
    if (left_out)
        fprintf(stderr,
                "numaplace: job %s: %d more report(s) in %s left out: at most %d of one job are "
                "read\n",
                job_arg, left_out, spool, CLI_SPOOL_MAX_REPORTS);
    return added;
}
