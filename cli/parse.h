/* cli/parse.h - Slurm's output and the spool read without running anything (sacct lines,
 * scontrol's configuration, spool files, AdminComment): np_cli_parse, tested without Slurm. */
#ifndef NUMAPLACE_CLI_PARSE_H
#define NUMAPLACE_CLI_PARSE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "numaplace/common.h"

/** The first line of `sacct -j JOB -X -n -P -o UID,Account,AdminComment` (@p out, split in
 *  place; @p comment points into it). @p full: an Account is set, so slurmctld's record is in.
 *  @return 0, or -ENOENT when the line is empty or has fewer than three fields */
int cli_parse_sacct_job(char *out, uid_t *uid, bool *full, const char **comment);

/** One line of `sacct -X -n -P -o JobID,User,State,AdminComment`: fields point into @p line. */
struct cli_jobs_row {
    const char *id, *user, *state, *comment;
};

/** Split @p line in place. @return 0, or -EINVAL when it has fewer than four fields */
int cli_parse_jobs_line(char *line, struct cli_jobs_row *row);

/** The value of @p key in `scontrol show config` output (lines "Key   = value"): a new string,
 *  "" when the line is absent or "(null)", NULL when out of memory. */
char *cli_config_value(const char *out, const char *key);

/** Whether spool file @p name is a report of @p job_arg ("42" or "42.batch"): JOB.*.json. */
bool cli_spool_name_matches(const char *name, const char *job_arg);

/** A report in the spool is at most this big (one step's report is a few kB to a few hundred). */
#define CLI_REPORT_MAX_BYTES (8u << 20)
/** Reports of one job read from one spool at most: its user chooses the step count (40,000 by
 *  default); 1,024 are at most ~32 MB decoded, and a summary keeps far fewer steps anyway. */
#define CLI_SPOOL_MAX_REPORTS 1024

/** Who root trusts to have written a report: numaplaced, i.e. root or @p helper_uid (the owner of
 *  the spool, which numaplaced writes only when nobody else can). */
struct cli_report_trust {
    uid_t helper_uid;
};

/** A loaded report's file owner, and the reader (the job's user) numaplaced named in its ACL. */
struct cli_report_origin {
    uid_t owner, reader;
    bool has_reader;
};

/**
 * Load the spool report at @p path: a regular file (no symlink followed: users' files are in the
 * spool), at most @p max bytes, JSON. With @p trust (NULL: any file), only one numaplaced wrote:
 * owned by root or trust->helper_uid, not writable by group or others (nor by an ACL entry).
 * @p origin (may be NULL): its owner and its ACL's reader. @return 0 with @p out (new), or -ELOOP,
 * -EINVAL (not a regular file), -EPERM (not numaplaced's), -EFBIG, -EBADMSG, -errno; with @p err
 */
int cli_load_report(const char *path, size_t max, const struct cli_report_trust *trust,
                    json_t **out, struct cli_report_origin *origin, struct np_err *err);

/** Decode job @p job_id's AdminComment @p comment into a summary (new in @p summary).
 *  @return 0; -ENOMSG: no numaplace summary (empty, or another tool's text, said in @p err);
 *  -EPROTO / -EBADMSG: an unknown version or a corrupt one */
int cli_decode_admin_comment(const char *comment, uint32_t job_id, json_t **summary,
                             struct np_err *err);

/** Is @p report of job @p job_id, @p uid and @p host? @return 0, or -EINVAL with @p err (why) */
int cli_report_is_own(const json_t *report, uint32_t job_id, uid_t uid, const char *host,
                      struct np_err *err);

#endif /* NUMAPLACE_CLI_PARSE_H */
