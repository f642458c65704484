/*
 * np_admin_comment JOBID [CLUSTER] <VALUE: store VALUE (stdin, up to 1 MiB, byte for byte) as
 * the job's AdminComment in slurmdbd with the product's own call, acct_set_admin_comment (the
 * command's slurmdb_comment.c): a test-only entry point, so the harness never re-implements it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounting.h"

int main(int argc, char **argv)
{
    static char value[(1 << 20) + 1];
    struct np_err err = {0};
    char *end = NULL;
    unsigned long job;
    size_t n;

    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s JOBID [CLUSTER] <VALUE\n", argv[0]);
        return 2;
    }
    errno = 0;
    job = strtoul(argv[1], &end, 10);
    if (errno || !end || *end || job == 0 || job > 0xffffffffUL) {
        fprintf(stderr, "np_admin_comment: JOBID \"%s\": a job id above 0\n", argv[1]);
        return 2;
    }
    /* The product takes the cluster from the epilog's environment first. */
    if (argc == 3 && setenv("SLURM_CLUSTER_NAME", argv[2], 1) < 0)
        return 1;
    n = fread(value, 1, sizeof(value) - 1, stdin);
    value[n] = '\0';
    if (acct_set_admin_comment((uint32_t)job, value, &err) < 0) {
        fprintf(stderr, "np_admin_comment: job %lu: %s\n", job, err.msg);
        return 1;
    }
    return 0;
}
