/*
 * accounting.h - the command's side of Slurm accounting: a job's reports from the spool, the job
 * summary (numaplace/summary.h) stored in its AdminComment as Princeton's jobstats stores its own
 * and read back with sacct, and the admin's job list. Slurm's commands (sacct, scontrol,
 * sacctmgr) run without a shell, as seff and jobstats do: they honour the site's slurm.conf,
 * PrivateData and authentication.
 */
#ifndef NUMAPLACE_ACCOUNTING_H
#define NUMAPLACE_ACCOUNTING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "numaplace/common.h"

/** acct_run_lines, its output captured into @p out (new, free(); also on a non-zero exit): its
 *  lines, each with a newline, the first 16 MiB. @return as acct_run_lines */
int acct_run(char *const argv[], char **out, char *errbuf, size_t errlen, struct np_err *err);

/** The longest line acct_run_lines passes on: sacct's fields and a 64 KiB AdminComment. */
#define ACCT_LINE_MAX (128u << 10)

/**
 * Run @p argv (argv[0] looked up in PATH, no shell), its standard output passed to @p on_line a
 * line at a time (newline removed; lines over ACCT_LINE_MAX skipped), never held whole; non-zero
 * from @p on_line stops the calls (the output is still read to the end). The first line of its
 * standard error goes to @p errbuf (may be NULL).
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
 * The reports of job @p job_arg ("42" or "42.batch") in @p spool, appended to @p reports, their
 * reader in @p reader (may be NULL). @p denied counts files the caller may not read, @p bad those
 * that are not reports, each said on stderr; as root, so is any report numaplaced did not write
 * (cli_load_report's trust). @return how many were appended, or -errno with @p err
 */
int acct_spool_reports(const char *spool, const char *job_arg, json_t *reports, int *denied,
                       int *bad, struct acct_spool_reader *reader, struct np_err *err);

/** Store @p value (borrowed) as job @p job_id's AdminComment in slurmdbd, byte for byte, through
 *  libslurm (slurmdb_comment.c says why), waiting up to 15 s for the job's row there.
 *  @return 0, or -errno with @p err */
int acct_set_admin_comment(uint32_t job_id, const char *value, struct np_err *err);

/**
 * The job's stored summary (new in @p summary) from sacct's AdminComment, its uid in @p uid (also
 * on -ENOMSG). @return 0; -ENOENT (sacct does not show the job to the caller); -ENOMSG (no
 * numaplace summary: empty, or another tool's); -EBADMSG (corrupt); -EIO (sacct failed); with
 * @p err
 */
int acct_load_summary(uint32_t job_id, json_t **summary, uid_t *uid, struct np_err *err);

/**
 * sacct's view of one job: its uid and AdminComment (@p comment new, free()); @p full (may be
 * NULL): whether slurmctld's own record is in (until then slurmdbd holds a placeholder row from
 * the steps, with no account, which a modify does not reach).
 * @return 0; -ENOENT when sacct does not show it; -EIO; with @p err
 */
int acct_sacct_job(uint32_t job_id, uid_t *uid, char **comment, bool *full, struct np_err *err);
/** "node[1-2],x" -> "node1,node2,x" by libslurm's hostlist (`scontrol show hostnames`): a new
 *  string; NULL when Slurm refuses @p list, when it names more than @p max hosts (errno E2BIG,
 *  counted unexpanded; @p max <= 0: no bound), or out of memory. */
char *acct_hostlist_expand(const char *list, long max);
/** @p list ("n9,n[10-11]") as Slurm writes it ("n[9-11]"), a new string, NULL when Slurm refuses
 *  it. @p sorted: sorted and without duplicates (slurm_hostlist_uniq); else in @p list's order,
 *  as `scontrol show hostlist`. */
char *acct_hostlist_ranged(const char *list, bool sorted);
/** @p n names as one sorted hostlist (new, or NULL): the summary printer's np_hostlist_fn. */
char *acct_hostlist_of_names(const char *const *names, size_t n);
/** A job as slurmctld holds it while it is there, read as the record's fields (slurm_load_job),
 *  never from text a job's name or comment could add to. */
struct acct_controller_job {
    char *admin_comment; /**< "" when none (another tool may have set it with scontrol) */
    char *nodes;         /**< its nodes, a Slurm hostlist; NULL when none (shrinks as nodes end) */
    long num_nodes;      /**< its node count */
};

/** Job @p job_id's record from slurmctld (acct_controller_job_free). @return 0, -ENOENT, -ENOMEM */
int acct_controller_job(uint32_t job_id, struct acct_controller_job *job, struct np_err *err);
void acct_controller_job_free(struct acct_controller_job *job);

/** May the caller read job @p job_uid's report? As sacct: root, its owner, operators, admins. */
bool acct_may_read(uid_t job_uid);

#endif /* NUMAPLACE_ACCOUNTING_H */
