#!/usr/bin/env bash
# A throwaway real Slurm cluster on localhost for numaplace's integration tests, demo and bench.
# Sourced (bash). Everything it starts lives in one temp directory and is stopped on exit.
#
# Cluster:
#   np_cluster_start [PLUGSTACK_LINE...]  start munged, slurmctld and slurmd in a temp directory,
#                                         wait (bounded) until the node is idle; exports SLURM_CONF
#   np_cluster_set_plugstack [LINE...]    rewrite plugstack.conf; srun and slurmstepd read it at
#                                         every step, so the next step sees it (no restart)
#   np_cluster_restart_slurmd             restart slurmd (only slurmd-context SPANK callbacks,
#                                         slurm_spank_slurmd_init/exit, need it)
#   np_cluster_stop                       cancel jobs, stop every daemon and stray step, remove the
#                                         directory; an EXIT/INT/TERM trap calls it
#   np_cluster_pids                       pids of this cluster's daemons and step daemons
#   np_at_exit CMD                        run CMD (eval'd) at exit, before the cluster stops
#   np_node_idle                          true when the node is idle
#   np_wait_for SECONDS CMD...            poll CMD until it succeeds, at most SECONDS
#   np_slurm_version                      the running Slurm's release as a number (2205, 2411)
#   np_host_resolves                      die unless this machine's name resolves (np_cluster_start
#                                         checks it first: Slurm looks it up at each job's end)
# Opt-ins, read by np_cluster_start (see README.md):
#   NP_ACCOUNTING=1                       also a private MariaDB and slurmdbd; the cluster, an
#                                         account and associations for NP_ACCOUNTING_USERS
#                                         (default "root nptest") are registered before slurmctld
#   NP_NODES=N                            N slurmd nodes (node1..nodeN) on this machine, each in
#                                         its own mount and UTS namespace (multiple-slurmd build)
#   NP_EPILOG=PATH / NP_EPILOG_SLURMCTLD=PATH / NP_PROLOG=PATH   Epilog= / EpilogSlurmctld= / Prolog=
#   NP_NUMAPLACE_EPILOG=1                 Epilog= is etc/numaplace-epilog, its paths in this cluster,
#                                         and EpilogSlurmctld= etc/numaplace-epilog-slurmctld
# Accounting (NP_ACCOUNTING=1):
#   np_sacct_wait JOBID [SECONDS [FIELD REGEX]]  wait until sacct shows the job finished (and FIELD,
#                                         e.g. AdminComment, matches REGEX)
#   np_db_sql SQL                         run SQL as MariaDB's root on the private server
#   np_slurmdbd_stop / np_slurmdbd_start  stop slurmdbd alone / start it again (bounded wait)
#   np_admin_comment_tool                 build a tool "TOOL JOBID <VALUE" that sets a job's
#                                         AdminComment in slurmdbd exactly (from an Epilog too);
#                                         its path in $NP_ADMIN_COMMENT
# Nodes (NP_NODES=N):
#   np_on_node NODE CMD...                run CMD in NODE's mount+UTS namespaces (its hostname,
#                                         its $np_dir/run and $np_dir/helper)
#   np_node_helper_start NODE [FLAGS...]  numaplaced for NODE, at $np_dir/helper/numaplaced.sock
#                                         as that node sees it (node-NODE/helper from outside)
#   np_node_dir NODE                      $np_dir/node-NODE (its logs, spool, run/, helper/)
# Helper (numaplaced, every path in $np_dir/helper; the cluster's stop stops it too):
#   np_helper_start [--KEY=VALUE...]     start numaplaced in the foreground, wait until it answers
#   np_helper_command [--KEY=VALUE...]   that command line, in the array np_helper_cmd
#   np_helper_alone                       np_dir for a helper without a cluster (host-only suites)
#   np_helper_stop                        SIGTERM it and wait (bounded)
#   np_helper_plugstack [ARG...]          the plugstack line that loads the plugin talking to it
#   np_numaplace ARGS...                  the numaplace command pointed at this helper
# Users:
#   np_test_user_ensure NAME              create an unprivileged user (idempotent)
#   np_run_as NAME CMD...                 run CMD as NAME with the cluster's SLURM_CONF
# Logs:
#   np_slurmd_log_grep PATTERN            grep -E slurmd.log, which also holds slurmstepd's lines
#                                         (prefixed "[JOBID.STEP]") and so the plugin's remote logs
#   np_log_grep PATTERN                   the same over slurmd.log and slurmctld.log
# Cases (PASS NAME / FAIL NAME: WHY per case, then "N passed, N failed" from np_finish):
#   np_case NAME CMD...                   one case: run CMD (usually a function calling np_expect_*)
#   np_case NAME ... np_end_case          or open a case, run checks inline, close it
#   np_run CMD...                         run CMD, output in $np_out, status in $np_rc
#   np_expect_rc N | np_expect_fail [CMD...] | np_expect_eq ACTUAL EXPECTED [WHAT]
#   np_expect_match REGEX [TEXT] | np_expect_no_match REGEX [TEXT]   (TEXT defaults to $np_out)
#   np_fail WHY                           fail the current case
#   np_finish                             print the summary line; non-zero if any case failed
# Environment: NUMAPLACE_BUILD (cmake build tree; ctest sets it), NUMAPLACE_SOURCE (checkout),
# NUMAPLACE_PLUGIN / NUMAPLACE_PROBE (override $NP_PLUGIN / $NP_PROBE), NUMAPLACE_CLUSTER_DIR
# (use this directory), NUMAPLACE_KEEP=1 (keep the directory for inspection),
# NP_ACCOUNTING_STORAGE and NP_EXTRA_SLURM_CONF (hooks, see the slurm.conf below), and the opt-ins
# above (NP_ACCOUNTING, NP_ACCOUNTING_USERS, NP_NODES, NP_EPILOG, NP_PROLOG, NP_EPILOG_SLURMCTLD).
# Sets: np_dir (the cluster directory), SLURM_CONF, NP_PLUGIN, NP_PROBE; with NP_NODES, np_nodes
# (node names), np_node_holder[NODE] and np_node_slurmd[NODE] (pids).
set -u

NUMAPLACE_SOURCE=${NUMAPLACE_SOURCE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
NUMAPLACE_BUILD=${NUMAPLACE_BUILD:-$NUMAPLACE_SOURCE/build}
export NUMAPLACE_SOURCE NUMAPLACE_BUILD
NP_PLUGIN=${NUMAPLACE_PLUGIN:-$NUMAPLACE_BUILD/plugin/numaplace.so}
NP_PROBE=${NUMAPLACE_PROBE:-$NUMAPLACE_BUILD/test/numa_probe}
NP_WORKLOAD=${NUMAPLACE_WORKLOAD:-$NUMAPLACE_BUILD/test/np_workload}
NP_HELPER=${NUMAPLACE_HELPER:-$NUMAPLACE_BUILD/daemon/numaplaced}
NP_CLI=${NUMAPLACE_CLI:-$NUMAPLACE_BUILD/cli/numaplace}
export NP_PLUGIN NP_PROBE NP_WORKLOAD NP_HELPER NP_CLI
# A command from the build tree finds the measured table in the source (installed: /usr/share).
[ -n "${NUMAPLACE_CLI:-}" ] || export NUMAPLACE_TABLE=${NUMAPLACE_TABLE:-$NUMAPLACE_SOURCE/data/sandman-spec2017.csv}
np_helper_pid=""
np_helper_cmd=()
np_passed=0
np_failed=0
np_dir=""
np_dir_owned=0
np_ctld_pid=""
np_slurmd_pid=""
np_exit_cmds=()
np_nsenter=()
np_db_pid=""
np_dbd_pid=""
np_accounting=0
np_nodes=()
declare -A np_node_holder=() np_node_slurmd=() np_node_helper=()

# The harness in parts, one concern each (test/integration/lib/).
# No external program here: a missing one must be np_require's loud error, not a missing part.
np_lib_dir=${BASH_SOURCE[0]%/*}/lib
# shellcheck source=test/integration/lib/common.sh
source "$np_lib_dir/common.sh"
# shellcheck source=test/integration/lib/cluster.sh
source "$np_lib_dir/cluster.sh"
# shellcheck source=test/integration/lib/accounting.sh
source "$np_lib_dir/accounting.sh"
# shellcheck source=test/integration/lib/nodes.sh
source "$np_lib_dir/nodes.sh"
# shellcheck source=test/integration/lib/helper.sh
source "$np_lib_dir/helper.sh"
# shellcheck source=test/integration/lib/users.sh
source "$np_lib_dir/users.sh"
# shellcheck source=test/integration/lib/assert.sh
source "$np_lib_dir/assert.sh"
