/* accounting.h - the command's side of Slurm accounting: a job's reports, its summary in its
 * AdminComment (as jobstats); Slurm's commands run without a shell, honouring slurm.conf. */
#ifndef NUMAPLACE_ACCOUNTING_H
#define NUMAPLACE_ACCOUNTING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "numaplace/common.h"

/** acct_run_lines with the first 16 MiB of its output in @p out (new, free(); also on a non-zero
 *  exit), each line with its newline. @return as acct_run_lines */
int acct_run(char *const argv[], char **out, char *errbuf, size_t errlen, struct np_err *err);

/** The longest line acct_run_lines passes on: sacct's fields and a 64 KiB AdminComment. */
#define ACCT_LINE_MAX (128u << 10)

/**
 * Run @p argv (from PATH, no shell), each line of its output to @p on_line (newline removed, lines
 * over ACCT_LINE_MAX skipped) until it returns non-zero (the rest is still read); the first line
 * of its stderr in @p errbuf (may be NULL).
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
 * that are not reports (as root, also those numaplaced did not write), each said on stderr.
 * @return how many were appended, or -errno with @p err
 */
int acct_spool_reports(const char *spool, const char *job_arg, json_t *reports, int *denied,
                       int *bad, struct acct_spool_reader *reader, struct np_err *err);

/** Store @p value (borrowed) as job @p job_id's AdminComment in slurmdbd, byte for byte, through
 *  libslurm (slurmdb_comment.c says why), waiting up to 15 s for the job's row there.
 *  @return 0, or -errno with @p err */
int acct_set_admin_comment(uint32_t job_id, const char *value, struct np_err *err);

/** The job's stored summary (new in @p summary) from sacct, its uid in @p uid (also on -ENOMSG).
 *  @return 0; -ENOENT (not shown to the caller); -ENOMSG (no numaplace summary); -EBADMSG
 *  (corrupt); -EIO (sacct failed); with @p err */
int acct_load_summary(uint32_t job_id, json_t **summary, uid_t *uid, struct np_err *err);

/** sacct's view of one job: its uid and AdminComment (@p comment new, free()); @p full (may be
 *  NULL): slurmctld's record is in (until then slurmdbd has a placeholder row a modify misses).
 *  @return 0; -ENOENT when sacct does not show it; -EIO; with @p err */
int acct_sacct_job(uint32_t job_id, uid_t *uid, char **comment, bool *full, struct np_err *err);
/** "node[1-2],x" -> "node1,node2,x" (a new string) by libslurm's hostlist; NULL when Slurm refuses
 *  @p list, when it names over @p max hosts (errno E2BIG; @p max <= 0: no bound), or no memory. */
char *acct_hostlist_expand(const char *list, long max);
/** @p list ("n9,n[10-11]") as Slurm writes it ("n[9-11]"), new, NULL when Slurm refuses it;
 *  @p sorted: sorted and unique, else in @p list's order (as `scontrol show hostlist`). */
char *acct_hostlist_ranged(const char *list, bool sorted);
/** @p n names as one sorted hostlist (new, or NULL): the summary printer's np_hostlist_fn. */
char *acct_hostlist_of_names(const char *const *names, size_t n);
/** A job as slurmctld holds it, from the record's fields (never text a job's name could add to). */
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
