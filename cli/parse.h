/*
 * cli/parse.h - the parts of the `numaplace` command that read Slurm's output and the spool
 * without running anything: sacct lines, scontrol's configuration, spool file names, a job's
 * AdminComment.
 * Built as a static library of its own (numaplace_cli_parse) so test/unit/test_cli_accounting.c
 * tests them without Slurm.
 */
#ifndef NUMAPLACE_CLI_PARSE_H
#define NUMAPLACE_CLI_PARSE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "numaplace/common.h"

/**
 * The first line of `sacct -j JOB -X -n -P -o UID,Account,AdminComment` (@p out, changed in
 * place). @p full: whether slurmctld's record is in (an Account is set; until then slurmdbd holds
 * a placeholder row). @p comment points into @p out.
 * @return 0, or -ENOENT when the line is empty or has fewer than three fields
 */
int cli_parse_sacct_job(char *out, uid_t *uid, bool *full, const char **comment);

/** One line of `sacct -X -n -P -o JobID,User,State,AdminComment`: fields point into @p line. */
struct cli_jobs_row {
    const char *id, *user, *state, *comment;
};

/** Split @p line in place. @return 0, or -EINVAL when it has fewer than four fields */
int cli_parse_jobs_line(char *line, struct cli_jobs_row *row);

/**
 * The value of @p key in `scontrol show config` output (@p out: lines "Key   = value", set by the
 * site's administrator): a new string, "" when the line is absent or "(null)", NULL on
 * out-of-memory.
 */
char *cli_config_value(const char *out, const char *key);

/** Whether spool file @p name is a report of @p job_arg ("42" or "42.batch"): JOB.*.json. */
bool cli_spool_name_matches(const char *name, const char *job_arg);

/** A report in the spool is at most this big (one step's report is a few kB to a few hundred). */
#define CLI_REPORT_MAX_BYTES (8u << 20)
/** Reports of one job read from one spool at most: a job's user chooses its step count (Slurm's
 *  MaxStepCount, 40,000 by default), and root's store holds what it reads. 1,024 reports are at
 *  most ~32 MB decoded; a summary keeps far fewer steps anyway. */
#define CLI_SPOOL_MAX_REPORTS 1024

/** Who root trusts to have written a report: numaplaced, i.e. root or @p helper_uid (the owner of
 *  the spool, which numaplaced writes only when nobody else can). */
struct cli_report_trust {
    uid_t helper_uid;
};

/** Where a loaded report came from: its file's owner and mode, and the reader numaplaced named
 *  in its ACL (the job's user; has_reader false when the file has no such entry). */
struct cli_report_origin {
    uid_t owner, reader;
    mode_t mode;
    bool has_reader;
};

/**
 * Load the spool report at @p path: a regular file (no symlink is followed: root reads the spool,
 * where users' files are), at most @p max bytes, parsed as JSON. With @p trust (NULL: any file),
 * only a file numaplaced wrote: owned by root or trust->helper_uid, not writable by group or
 * others (an ACL granting write shows in the group bits, its mask). @p origin (may be NULL) says
 * who owns it and whom its ACL lets read it.
 * @return 0 with @p out (new), or -ELOOP (a symlink), -EINVAL (not a regular file), -EPERM (not
 *         numaplaced's, with @p trust), -EFBIG (too big), -EBADMSG (not JSON), -errno; each with
 *         @p err naming the file and why
 */
int cli_load_report(const char *path, size_t max, const struct cli_report_trust *trust,
                    json_t **out, struct cli_report_origin *origin, struct np_err *err);

/**
 * Decode job @p job_id's AdminComment @p comment into a summary (new reference in @p summary).
 * @return 0; -ENOMSG when it holds no numaplace summary (empty, or another tool's text, each
 *         said in @p err); -EPROTO / -EBADMSG for an unknown version or a corrupt one
 */
int cli_decode_admin_comment(const char *comment, uint32_t job_id, json_t **summary,
                             struct np_err *err);

/**
 * Is @p report (borrowed) one of job @p job_id's, of @p uid, written on @p host? The epilog keeps
 * only those (numaplaced never writes another: a report that says otherwise is not believed).
 * @return 0, or -EINVAL with @p err naming what the report says and what Slurm says
 */
int cli_report_is_own(const json_t *report, uint32_t job_id, uid_t uid, const char *host,
                      struct np_err *err);

#endif /* NUMAPLACE_CLI_PARSE_H */
