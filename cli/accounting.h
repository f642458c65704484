/*
 * accounting.h - the `numaplace` command's side of Slurm accounting: a job's per-node reports
 * from the spool, the merged job summary (numaplace/summary.h) stored in the job's AdminComment
 * the way Princeton's jobstats stores its own, read back with sacct, and the admin's job list.
 *
 * Slurm is reached through its own commands (sacct, scontrol, sacctmgr), exec'd without a shell,
 * as seff and jobstats do: they honour the site's slurm.conf, PrivateData and authentication.
 */
#ifndef NUMAPLACE_ACCOUNTING_H
#define NUMAPLACE_ACCOUNTING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "numaplace/common.h"

/**
 * Run @p argv (argv[0] looked up in PATH, no shell) and capture its standard output, read as
 * acct_run_lines reads it (its lines, each with a newline; the first 16 MiB); its standard
 * error goes to @p errbuf (first line kept) when not NULL.
 * @param out new NUL-terminated text (free()), also on a non-zero exit
 * @return the exit status (>= 0), or -errno when it could not run, with @p err
 */
int acct_run(char *const argv[], char **out, char *errbuf, size_t errlen, struct np_err *err);

/** The longest line acct_run_lines passes on: sacct's fields and a 64 KiB AdminComment. */
#define ACCT_LINE_MAX (128u << 10)

/**
 * acct_run, its standard output passed to @p on_line one line at a time (newline removed, at most
 * ACCT_LINE_MAX bytes: longer lines are skipped) and never held whole. @p on_line returns
 * non-zero to stop being called (the output is still read to the end).
 * @return the exit status (>= 0), or -errno when it could not run, with @p err
 */
int acct_run_lines(char *const argv[], int (*on_line)(char *line, void *arg), void *arg,
                   char *errbuf, size_t errlen, struct np_err *err);

/** The job's user as numaplaced named it: the read ACL entry of its reports. */
struct acct_spool_reader {
    bool known;    /**< some report had the entry */
    bool conflict; /**< two reports named different users */
    uid_t uid;
};

/**
 * The reports of job @p job_arg ("42" or "42.batch") in @p spool, appended to @p reports, and
 * their reader in @p reader (may be NULL). @p denied / @p bad count files the caller may not
 * read / that are not reports (message on stderr for each bad one). Run as root, only reports
 * numaplaced wrote are read (owned by root or by the spool's owner, not writable by group or
 * others: cli_load_report); any other is counted in @p bad with a message naming it and why.
 * @return the number appended, or -errno when the spool cannot be read (with @p err)
 */
int acct_spool_reports(const char *spool, const char *job_arg, json_t *reports, int *denied,
                       int *bad, struct acct_spool_reader *reader, struct np_err *err);

/**
 * Store @p value (borrowed) as job @p job_id's AdminComment in slurmdbd, byte for byte, through
 * libslurm (cli/slurmdb_comment.c: why not scontrol or sacctmgr). Waits up to 15 s for the
 * job's row to reach slurmdbd. @return 0, or -errno with @p err
 */
int acct_set_admin_comment(uint32_t job_id, const char *value, struct np_err *err);

/**
 * The job's stored summary from accounting (sacct's AdminComment).
 * @param summary new reference on 0
 * @param uid the job's uid on 0 and -ENOMSG
 * @return 0; -ENOENT (sacct does not know the job, or the caller may not see it); -ENOMSG (the
 *         job has no numaplace summary: AdminComment empty or another tool's); -EBADMSG (a
 *         corrupt summary); -EIO (sacct failed); each with @p err
 */
int acct_load_summary(uint32_t job_id, json_t **summary, uid_t *uid, struct np_err *err);

/**
 * sacct's view of one job: its uid and AdminComment (@p comment new, free()). @p full (may be
 * NULL) says whether slurmctld's own record of the job is in: until then (a few seconds after the
 * job ended) slurmdbd holds a placeholder row made from the steps, with no account, which a
 * modify does not reach. @return 0; -ENOENT when sacct does not show it; -EIO; with @p err
 */
int acct_sacct_job(uint32_t job_id, uid_t *uid, char **comment, bool *full, struct np_err *err);
/** "node[1-2],x" -> "node1,node2,x" by Slurm's rules (libslurm's hostlist, as `scontrol show
 *  hostnames`): a new string; NULL when Slurm refuses @p list, when it names more than @p max
 *  hosts (errno E2BIG; counted before anything is expanded; @p max <= 0: no bound), or out of
 *  memory. */
char *acct_hostlist_expand(const char *list, long max);
/** @p list ("n9,n[10-11]") as Slurm writes it ("n[9-11]"), a new string, NULL when Slurm refuses
 *  it. @p sorted: sorted and without duplicates (slurm_hostlist_uniq); else in @p list's order,
 *  as `scontrol show hostlist`. */
char *acct_hostlist_ranged(const char *list, bool sorted);
/** @p n names as one hostlist for reading (acct_hostlist_ranged, sorted), a new string or NULL;
 *  the summary printer's np_hostlist_fn. */
char *acct_hostlist_of_names(const char *const *names, size_t n);
/** A job as slurmctld holds it while it is there, read as the record's fields (slurm_load_job),
 *  never from text a job's name or comment could add to. */
struct acct_controller_job {
    char *admin_comment; /**< "" when none (another tool may have set it with scontrol) */
    char *nodes;         /**< its nodes, a Slurm hostlist; NULL when none (shrinks as nodes end) */
    long num_nodes;      /**< its node count */
};

/** Job @p job_id's record from slurmctld into @p job (free with acct_controller_job_free).
 *  @return 0; -ENOENT when slurmctld does not show it (gone, or unreachable); -ENOMEM */
int acct_controller_job(uint32_t job_id, struct acct_controller_job *job, struct np_err *err);
void acct_controller_job_free(struct acct_controller_job *job);

/**
 * May the caller read job @p job_uid's report? Root, the job's owner, and Slurm operators and
 * administrators (sacctmgr's AdminLevel), as sacct itself allows.
 */
bool acct_may_read(uid_t job_uid);

#endif /* NUMAPLACE_ACCOUNTING_H */
