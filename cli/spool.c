/* A job's reports in this node's spool (accounting.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numaplace/report.h"
#include "numaplace/report_model.h"

#include "accounting.h"
#include "parse.h"

int acct_spool_reports(const char *spool, const char *job_arg, json_t *reports, int *denied,
                       int *bad, struct np_err *err)
{
    struct dirent **names = NULL;
    int n, added = 0;

    *denied = *bad = 0;
    n = scandir(spool, &names, NULL, alphasort);
    if (n < 0)
        return np_err_set(err, -errno, "cannot read the spool %s: %s", spool, strerror(errno));
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char path[4096];
        struct np_err rerr = {0};
        json_t *report;

        if (!cli_spool_name_matches(name, job_arg)) {
            free(names[i]);
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", spool, name);
        free(names[i]);
        if (access(path, R_OK) < 0) {
            (*denied)++;
            continue;
        }
        if (cli_load_report(path, CLI_REPORT_MAX_BYTES, &report, &rerr) < 0 ||
            np_report_check(report, &rerr) < 0) {
            fprintf(stderr, "numaplace: %s: %s\n", path, rerr.msg);
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

uid_t acct_report_uid(const json_t *report)
{
    struct np_report r;
    uid_t uid = 0;

    /* the ids only: enough for the uid, and never refused for what follows them */
    if (np_report_model_decode(report, false, &r, NULL) == 0) {
        uid = r.has_uid ? (uid_t)r.uid : 0;
        np_report_model_free(&r);
    }
    return uid;
}
