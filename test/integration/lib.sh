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
# Opt-ins, read by np_cluster_start (see README.md):
#   NP_ACCOUNTING=1                       also a private MariaDB and slurmdbd; the cluster, an
#                                         account and associations for NP_ACCOUNTING_USERS
#                                         (default "root nptest") are registered before slurmctld
#   NP_NODES=N                            N slurmd nodes (node1..nodeN) on this machine, each in
#                                         its own mount and UTS namespace (multiple-slurmd build)
#   NP_EPILOG=PATH / NP_EPILOG_SLURMCTLD=PATH / NP_PROLOG=PATH   Epilog= / EpilogSlurmctld= / Prolog=
#   NP_NUMAPLACE_EPILOG=1                 Epilog= is etc/numaplace-epilog, its paths in this cluster
# Accounting (NP_ACCOUNTING=1):
#   np_sacct_wait JOBID [SECONDS [FIELD REGEX]]  wait until sacct shows the job finished (and FIELD,
#                                         e.g. AdminComment, matches REGEX)
#   np_db_sql SQL                         run SQL as MariaDB's root on the private server
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
NP_CLI=${NUMAPLACE_CLI:-$NUMAPLACE_BUILD/helper/numaplace}
export NP_PLUGIN NP_PROBE NP_WORKLOAD NP_HELPER NP_CLI
np_helper_pid=""
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

np_die() {
  printf '\n!!!! numaplace test harness: %s\n\n' "$*" >&2
  exit 1
}

np_require() {
  local prog
  for prog in "$@"; do
    command -v "$prog" >/dev/null 2>&1 ||
      np_die "required program '$prog' is not installed: run scripts/install-deps.sh as root (not skipping)"
  done
}
np_require munged slurmctld slurmd srun sbatch sinfo squeue scontrol scancel python3 runuser useradd
[ "$(id -u)" = 0 ] || np_die "must run as root (it starts munged, slurmctld and slurmd)"

# np_free_ports N: N distinct unused TCP ports, held open together while they are picked.
np_free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

np_wait_for() { # np_wait_for SECONDS CMD...: poll until CMD succeeds; 1 if it never did
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# Written to a new file and renamed, so a step starting meanwhile reads the old or the new one.
np_write_plugstack() {
  [ -n "$np_dir" ] || np_die "no cluster: call np_cluster_start first"
  local tmp="$np_dir/plugstack.conf.new"
  if [ $# -gt 0 ]; then printf '%s\n' "$@" >"$tmp"; else : >"$tmp"; fi
  chmod 644 "$tmp"
  mv -f "$tmp" "$np_dir/plugstack.conf"
}

np_tails() { # the last lines of the daemons' logs, for error messages
  local f
  for f in "$np_dir"/slurmctld.log "$np_dir"/slurmctld.out "$np_dir"/slurmd.log \
    "$np_dir"/slurmd.out "$np_dir"/munge/munged.log "$np_dir"/slurmdbd.log "$np_dir"/slurmdbd.out \
    "$np_dir"/db/mariadb.err "$np_dir"/node-*/slurmd.log "$np_dir"/node-*/slurmd.out; do
    [ -s "$f" ] && printf '\n--- %s\n%s\n' "$f" "$(tail -15 "$f")"
  done
}

np_on_exit() {
  local rc=$? cmd
  trap - EXIT INT TERM
  for cmd in "${np_exit_cmds[@]}"; do eval "$cmd" || true; done
  np_cluster_stop
  exit "$rc"
}

np_at_exit() {
  np_exit_cmds+=("$1")
}

# shellcheck disable=SC2120 # no line: an empty plugstack
np_cluster_start() {
  local host ctld_port slurmd_port dbd_port db_port node_line slurmd_paths node_lines partition_nodes
  local n i accounting_conf ports
  [ -z "$np_dir" ] || np_die "a cluster is already running in $np_dir"
  np_accounting=${NP_ACCOUNTING:-0}
  n=${NP_NODES:-1}
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || np_die "NP_NODES=$n is not a positive number"
  [ "$np_accounting" = 0 ] || np_require mariadbd mariadb-install-db mariadb slurmdbd sacctmgr sacct
  [ "$n" = 1 ] || np_require unshare nsenter mountpoint
  if [ -n "${NUMAPLACE_CLUSTER_DIR:-}" ]; then
    np_dir=$NUMAPLACE_CLUSTER_DIR
    [ -e "$np_dir" ] && [ -n "$(ls -A "$np_dir")" ] && np_die "NUMAPLACE_CLUSTER_DIR=$np_dir is not empty"
    np_dir_owned=1
  else
    np_dir=$(mktemp -d /tmp/numaplace-cluster.XXXXXX)
    np_dir_owned=1
  fi
  trap np_on_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  mkdir -p "$np_dir"/{state,spool,munge}
  [ "${NP_NUMAPLACE_EPILOG:-0}" = 0 ] || np_numaplace_epilog_write
  # Clients running as other users must reach the munge socket and read slurm.conf.
  chmod 755 "$np_dir" "$np_dir/munge"

  dd if=/dev/urandom of="$np_dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$np_dir/munge/munge.key"
  # munged forks into the background; --force because /tmp is not a directory it trusts.
  munged --force --socket="$np_dir/munge/munge.socket" --key-file="$np_dir/munge/munge.key" \
    --pid-file="$np_dir/munge/munged.pid" --log-file="$np_dir/munge/munged.log" \
    --seed-file="$np_dir/munge/munged.seed" ||
    np_die "munged did not start:$(np_tails)"

  host=$(hostname -s)
  # slurmctld, slurmd (the default), slurmdbd, MariaDB, then one per node when there are several.
  read -r -a ports < <(np_free_ports $((4 + n)))
  ctld_port=${ports[0]} slurmd_port=${ports[1]} dbd_port=${ports[2]} db_port=${ports[3]}
  # The node as slurmd sees it (CPUs, boards, sockets, cores, threads, RealMemory).
  node_line=$(slurmd -C | sed -n "s/^NodeName=[^ ]*//p")
  [ -n "$node_line" ] || np_die "slurmd -C printed no NodeName line"
  np_nodes=()
  if [ "$n" = 1 ]; then
    np_nodes=("$host")
    slurmd_paths="SlurmdSpoolDir=$np_dir/spool
SlurmdPidFile=$np_dir/slurmd.pid
# slurmstepd logs here too, each line prefixed with [JOBID.STEP]; debug shows SPANK loading.
SlurmdLogFile=$np_dir/slurmd.log"
    node_lines="NodeName=$host$node_line NodeAddr=127.0.0.1 State=UNKNOWN"
    partition_nodes=$host
  else
    # Debian builds Slurm with --enable-multiple-slurmd: one slurmd per NodeName, all on
    # 127.0.0.1, told apart by Port; %n gives each its own spool, pid and log (node-NAME/).
    slurmd_paths="SlurmdSpoolDir=$np_dir/node-%n/spool
SlurmdPidFile=$np_dir/node-%n/slurmd.pid
# slurmstepd logs here too, each line prefixed with [JOBID.STEP]; debug shows SPANK loading.
SlurmdLogFile=$np_dir/node-%n/slurmd.log"
    node_lines=""
    for ((i = 1; i <= n; i++)); do
      np_nodes+=("node$i")
      # Every node claims the machine's CPUs (fine for tests: jobs bind within them).
      node_lines+="NodeName=node$i NodeHostname=node$i$node_line NodeAddr=127.0.0.1 Port=${ports[i + 3]} State=UNKNOWN"$'\n'
      mkdir -p "$np_dir/node-node$i"/{spool,run,helper}
    done
    # Mount points: in a node's mount namespace node-NAME/run and node-NAME/helper are bound here.
    mkdir -p "$np_dir/run" "$np_dir/helper"
    partition_nodes=$(IFS=,; echo "${np_nodes[*]}")
  fi
  if [ "$np_accounting" = 0 ]; then
    accounting_conf="AccountingStorageType=${NP_ACCOUNTING_STORAGE:-accounting_storage/none}"
  else
    accounting_conf="AccountingStorageType=${NP_ACCOUNTING_STORAGE:-accounting_storage/slurmdbd}
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$dbd_port
# For accounting_storage/slurmdbd this is the munge socket (AuthInfo does not reach sacctmgr).
AccountingStoragePass=$np_dir/munge/munge.socket"
  fi
  cat >"$np_dir/slurm.conf" <<CONF
# Generated by numaplace's test harness: a throwaway cluster of ${#np_nodes[@]} node(s), all paths in here.
ClusterName=numaplace-test
# 127.0.0.1 given explicitly: works whether or not the short hostname resolves.
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$np_dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$np_dir/state
SlurmctldPidFile=$np_dir/slurmctld.pid
SlurmctldLogFile=$np_dir/slurmctld.log
$slurmd_paths
SlurmctldDebug=info
SlurmdDebug=debug
PlugStackConfig=$np_dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
# CR_Core, not CR_Core_Memory: with memory as a resource a job without --mem claims the whole
# node's memory and every job would wait for the previous one.
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
${NP_PROLOG:+Prolog=$NP_PROLOG}
${NP_EPILOG:+Epilog=$NP_EPILOG}
${NP_EPILOG_SLURMCTLD:+EpilogSlurmctld=$NP_EPILOG_SLURMCTLD}
# ---- HOOK(slurmdbd): accounting. NP_ACCOUNTING=1 starts MariaDB and slurmdbd and points this
# at it; NP_ACCOUNTING_STORAGE and NP_EXTRA_SLURM_CONF override or add lines.
$accounting_conf
${NP_EXTRA_SLURM_CONF:-}
# ---- end HOOK(slurmdbd)
KillWait=2
InactiveLimit=0
MinJobAge=600
$node_lines
PartitionName=debug Nodes=$partition_nodes Default=YES MaxTime=INFINITE State=UP
CONF
  chmod 644 "$np_dir/slurm.conf"
  export SLURM_CONF=$np_dir/slurm.conf
  np_write_plugstack "$@"
  np_wait_for 10 test -S "$np_dir/munge/munge.socket" || np_die "munged socket never appeared:$(np_tails)"

  [ "$np_accounting" = 0 ] || np_accounting_start "$dbd_port" "$db_port"
  slurmctld -D -i -f "$SLURM_CONF" >"$np_dir/slurmctld.out" 2>&1 &
  np_ctld_pid=$!
  [ "$n" = 1 ] || np_nodes_setup
  np_wait_for 20 scontrol ping || np_die "slurmctld did not answer within 20 s:$(np_tails)"
  np_slurmd_start
  echo "numaplace test cluster up in $np_dir (slurmctld :$ctld_port, ${#np_nodes[@]} slurmd (:$slurmd_port)$(
    [ "$np_accounting" = 0 ] || echo ", slurmdbd :$dbd_port, mariadb :$db_port"))"
}

# NP_NUMAPLACE_EPILOG=1: Epilog= is numaplace's own epilog (etc/numaplace-epilog), through a
# wrapper naming every path: slurmd runs epilogs with Slurm's small environment. Each node's
# helper and spool are at $np_dir/helper as that node sees it; messages go to helper/epilog.log.
np_numaplace_epilog_write() {
  cat >"$np_dir/numaplace-epilog" <<EOF
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF=$np_dir/slurm.conf
export NUMAPLACE=$NP_CLI NUMAPLACE_SPOOL=$np_dir/helper/spool
export NUMAPLACE_SOCKET=$np_dir/helper/numaplaced.sock
export NUMAPLACE_EPILOG_LOG=$np_dir/helper/epilog.log
exec $NUMAPLACE_SOURCE/etc/numaplace-epilog
EOF
  chmod 755 "$np_dir/numaplace-epilog"
  NP_EPILOG=$np_dir/numaplace-epilog
}

# ---- accounting: a private MariaDB (TCP on 127.0.0.1:DB_PORT, socket and files in db/) and
# slurmdbd (slurmdbd.conf next to slurm.conf: slurmdbd finds it through SLURM_CONF's directory).
np_accounting_start() {
  local dbd_port=$1 db_port=$2 db=$np_dir/db users user
  mkdir -p "$db"
  # Throwaway data: no binary log, no fsync, small InnoDB files (install-db: 0.6 s, 25 MB).
  cat >"$db/my.cnf" <<CNF
[mariadbd]
user=root
datadir=$db/data
socket=$db/mariadb.sock
pid-file=$db/mariadb.pid
log-error=$db/mariadb.err
bind-address=127.0.0.1
port=$db_port
skip-name-resolve
skip-log-bin
innodb-log-file-size=8M
innodb-data-file-path=ibdata1:10M:autoextend
innodb-buffer-pool-size=64M
innodb-flush-log-at-trx-commit=0
innodb-doublewrite=0
innodb-flush-method=nosync
[client]
socket=$db/mariadb.sock
user=root
CNF
  # Run at every start of the server: slurmdbd's login over TCP (root logs in by socket only).
  cat >"$db/init.sql" <<'SQL'
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'numaplace';
GRANT ALL ON *.* TO 'slurm'@'127.0.0.1';
SQL
  mariadb-install-db --defaults-file="$db/my.cnf" --auth-root-authentication-method=socket \
    --skip-test-db >"$db/install.out" 2>&1 || np_die "mariadb-install-db failed: $(tail -20 "$db/install.out")"
  mariadbd --defaults-file="$db/my.cnf" --init-file="$db/init.sql" >"$db/mariadbd.out" 2>&1 &
  np_db_pid=$!
  np_wait_for 30 np_db_sql 'SELECT 1' || np_die "MariaDB did not answer within 30 s:$(np_tails)"

  cat >"$np_dir/slurmdbd.conf" <<CONF
# Generated by numaplace's test harness: slurmdbd of the throwaway cluster in $np_dir.
AuthType=auth/munge
AuthInfo=socket=$np_dir/munge/munge.socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$dbd_port
SlurmUser=root
PidFile=$np_dir/slurmdbd.pid
LogFile=$np_dir/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurm
StoragePass=numaplace
StorageLoc=slurm_acct_db
CONF
  chmod 600 "$np_dir/slurmdbd.conf"
  slurmdbd -D >"$np_dir/slurmdbd.out" 2>&1 &
  np_dbd_pid=$!
  np_wait_for 60 sacctmgr -n list cluster || np_die "slurmdbd did not answer within 60 s:$(np_tails)"
  # Register before slurmctld starts, so its first registration and every job are accounted.
  users=${NP_ACCOUNTING_USERS-root nptest}
  for user in $users; do np_test_user_ensure "$user"; done
  {
    echo "add cluster numaplace-test"
    echo "add account numaplace Cluster=numaplace-test Description=tests Organization=numaplace"
    # shellcheck disable=SC2086 # comma-joined list
    [ -z "$users" ] || echo "add user $(echo $users | tr ' ' ,) Account=numaplace Cluster=numaplace-test"
  } | sacctmgr -i >"$np_dir/sacctmgr.out" 2>&1 ||
    np_die "sacctmgr could not register the cluster: $(cat "$np_dir/sacctmgr.out")"
}

np_db_sql() { # np_db_sql SQL: run SQL on the private MariaDB as its root (over its socket)
  mariadb --defaults-file="$np_dir/db/my.cnf" -N -B -e "$1"
}

# np_sacct_finished JOBID [FIELD REGEX]: sacct shows JOBID's allocation in a finished state, with
# its whole record (and its FIELD matches REGEX). Found on 22.05: the step records can reach
# slurmdbd first and create a placeholder job row (JobName "allocation", no Account, WorkDir or
# SubmitLine, NodeList of the batch host only) which sacct already shows as COMPLETED; the job's
# own record follows 4-5 s after the job ended. WorkDir is empty only in the placeholder.
np_sacct_finished() {
  local state workdir
  IFS='|' read -r state workdir < <(sacct -j "$1" -X -n -P -o State,WorkDir 2>/dev/null | head -1)
  case $state in
    "" | PENDING | RUNNING | REQUEUED | RESIZING | SUSPENDED | COMPLETING) return 1 ;;
  esac
  [ -n "$workdir" ] || return 1
  [ $# -lt 3 ] || sacct -j "$1" -X -n -P -o "$2" 2>/dev/null | grep -qE -- "$3"
}

np_sacct_wait() { # np_sacct_wait JOBID [SECONDS [FIELD REGEX]]: bounded wait on np_sacct_finished
  local job=$1 secs=${2:-30}
  shift $(($# < 2 ? $# : 2))
  np_wait_for "$secs" np_sacct_finished "$job" "$@"
}

# np_admin_comment_tool: build (once per cluster) a tiny C program, set $NP_ADMIN_COMMENT to its
# path and print it (call it once outside $(...), so that a failed build stops the script):
#   TOOL JOBID [CLUSTER] <VALUE
# that stores VALUE (stdin, up to 1 MiB, byte for byte) as the job's AdminComment in slurmdbd
# through libslurm's slurmdb_job_modify(), the call behind "sacctmgr modify job", but without
# sacctmgr 22.05's lowercasing of the value. CLUSTER defaults to $SLURM_CLUSTER_NAME (set in
# Epilog scripts), then to the ClusterName of $SLURM_CONF. Works from an Epilog (the job is
# COMPLETING; "scontrol update" refuses it) and after the job has left slurmctld (it only talks
# to slurmdbd); retries for up to 30 s while the job has no row in slurmdbd yet. The column is a
# MySQL TEXT: slurmdbd silently cuts values to 65535 bytes.
np_admin_comment_tool() {
  local tool=$np_dir/bin/np-admin-comment
  [ -n "$np_dir" ] || np_die "np_admin_comment_tool: start the cluster first"
  if [ ! -x "$tool" ]; then
    np_require cc
    mkdir -p "$np_dir/bin"
    cat >"$tool.c" <<'C'
/* Generated by numaplace's test/integration/lib.sh (np_admin_comment_tool). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

/* Exported by libslurm but not declared in its public headers. */
extern slurmdb_job_rec_t *slurmdb_create_job_rec(void);
extern slurm_conf_t slurm_conf;

int main(int argc, char **argv)
{
	static char value[(1 << 20) + 1];
	size_t n;
	const char *cluster;
	uint16_t conn_flags = 0;
	void *db;
	slurmdb_job_cond_t cond = { 0 };
	slurm_selected_step_t step = { 0 };
	slurmdb_job_rec_t *job;
	List modified;
	int rc = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s JOBID [CLUSTER] <VALUE\n", argv[0]);
		return 2;
	}
	n = fread(value, 1, sizeof(value) - 1, stdin);
	value[n] = '\0';
	slurm_init(NULL);
	cluster = argc > 2 ? argv[2] : getenv("SLURM_CLUSTER_NAME");
	if (!cluster || !*cluster)
		cluster = slurm_conf.cluster_name;
	db = slurmdb_connection_get(&conn_flags);
	if (!db) {
		fprintf(stderr, "np-admin-comment: no slurmdbd connection: %s\n", slurm_strerror(errno));
		return 1;
	}
	/* As sacctmgr's "modify job where jobid=N": one job, no default time window. */
	cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
	cond.flags = JOBCOND_FLAG_NO_DEFAULT_USAGE;
	cond.cluster_list = slurm_list_create(NULL);
	slurm_list_append(cond.cluster_list, (void *)cluster);
	step.array_task_id = NO_VAL;
	step.het_job_offset = NO_VAL;
	step.step_id.job_id = (uint32_t)strtoul(argv[1], NULL, 10);
	step.step_id.step_id = NO_VAL;
	step.step_id.step_het_comp = NO_VAL;
	cond.step_list = slurm_list_create(NULL);
	slurm_list_append(cond.step_list, &step);
	job = slurmdb_create_job_rec();
	job->admin_comment = value;
	/* At the end of a job its first row may not be in slurmdbd yet: retry for up to 30 s. */
	for (int tries = 0;; tries++) {
		modified = slurmdb_job_modify(db, &cond, job);
		if (!modified) {
			fprintf(stderr, "np-admin-comment: job %s: %s\n", argv[1], slurm_strerror(errno));
			rc = 1;
			break;
		}
		if (slurm_list_count(modified) > 0)
			break;
		slurm_list_destroy(modified);
		if (tries == 120) {
			fprintf(stderr, "np-admin-comment: job %s: not in slurmdbd\n", argv[1]);
			rc = 1;
			break;
		}
		usleep(250000);
	}
	slurmdb_connection_commit(db, rc == 0);
	slurmdb_connection_close(&db);
	return rc;
}
C
    cc -O2 -Wall -o "$tool.new" "$tool.c" -lslurm >"$tool.cc.out" 2>&1 ||
      np_die "np_admin_comment_tool: cannot build $tool: $(cat "$tool.cc.out")"
    mv -f "$tool.new" "$tool"
  fi
  # shellcheck disable=SC2034 # for the caller
  NP_ADMIN_COMMENT=$tool
  echo "$tool"
}

# ---- nodes: each node's slurmd lives in its own mount and UTS namespace, held by a "holder"
# process (sleep) whose argv names the node's directory; np_on_node enters them with nsenter.
np_nodes_setup() {
  local node pid
  for node in "${np_nodes[@]}"; do
    # shellcheck disable=SC2016 # expanded by the inner bash
    unshare --mount --uts --propagation private -- bash -c '
      hostname "$1" && mount --bind "$2/node-$1/run" "$2/run" &&
        mount --bind "$2/node-$1/helper" "$2/helper" || exit 1
      exec -a "numaplace-node-holder $2/node-$1" sleep infinity' np-node "$node" "$np_dir" \
      >"$np_dir/node-$node/holder.out" 2>&1 &
    np_node_holder[$node]=$!
  done
  for node in "${np_nodes[@]}"; do
    pid=${np_node_holder[$node]}
    np_wait_for 10 grep -q "^numaplace-node-holder" "/proc/$pid/cmdline" ||
      np_die "namespaces of $node not set up: $(cat "$np_dir/node-$node/holder.out")"
  done
}

np_on_node() { # np_on_node NODE CMD...: CMD in NODE's mount and UTS namespaces, same directory
  local node=$1
  shift
  [ -n "${np_node_holder[$node]:-}" ] || np_die "np_on_node: no node '$node' (NP_NODES=N starts node1..nodeN)"
  nsenter -t "${np_node_holder[$node]}" -m -u --wd="$PWD" -- "$@"
}

# In the background, "np_on_node NODE CMD &" gives the pid of a subshell; daemons are started
# with nsenter itself (which execs CMD), so $! is the daemon.
np_node_nsenter() { # np_node_nsenter NODE: the nsenter command line, in the array np_nsenter
  [ -n "${np_node_holder[$1]:-}" ] || np_die "no node '$1' (NP_NODES=N starts node1..nodeN)"
  np_nsenter=(nsenter -t "${np_node_holder[$1]}" -m -u --wd="$PWD" --)
}

np_node_dir() {
  echo "$np_dir/node-$1"
}

# shellcheck disable=SC2120 # extra flags are optional
np_node_helper_start() { # np_node_helper_start NODE [FLAGS...]: same paths as np_helper_start
  local node=$1 h=$np_dir/helper
  shift
  [ -x "$NP_HELPER" ] || np_die "numaplaced not built at $NP_HELPER"
  [ -e "$np_dir/node-$node/helper/numaplaced.conf" ] ||
    echo "# flags from test/integration/lib.sh" >"$np_dir/node-$node/helper/numaplaced.conf"
  np_node_nsenter "$node"
  "${np_nsenter[@]}" "$NP_HELPER" --config="$h/numaplaced.conf" --socket="$h/numaplaced.sock" \
    --state_dir="$h/state" --spool_dir="$h/spool" --pid_file="$h/numaplaced.pid" \
    --log="$h/numaplaced.log" --log_level=debug --housekeeping_cpus=none "$@" \
    >>"$np_dir/node-$node/helper/numaplaced.out" 2>&1 &
  np_node_helper[$node]=$!
  np_wait_for 15 np_on_node "$node" "$NP_CLI" --socket "$h/numaplaced.sock" ping ||
    np_die "numaplaced on $node did not answer within 15 s: $(tail -20 "$np_dir/node-$node/helper/numaplaced.log" 2>/dev/null)"
}

np_node_helpers_stop() {
  local node
  for node in "${!np_node_helper[@]}"; do
    np_kill_wait "${np_node_helper[$node]}"
    wait "${np_node_helper[$node]}" 2>/dev/null || true
  done
  np_node_helper=()
}

np_slurmd_start() {
  local node
  if [ -z "${np_node_holder[*]}" ]; then
    slurmd -D -f "$SLURM_CONF" -N "$(hostname -s)" >>"$np_dir/slurmd.out" 2>&1 &
    np_slurmd_pid=$!
  else
    for node in "${np_nodes[@]}"; do
      np_node_nsenter "$node"
      "${np_nsenter[@]}" slurmd -D -f "$SLURM_CONF" -N "$node" >>"$np_dir/node-$node/slurmd.out" 2>&1 &
      np_node_slurmd[$node]=$!
      np_slurmd_pid=$!
    done
  fi
  if ! np_wait_for 30 np_node_idle; then
    np_die "node never became idle within 30 s ($(sinfo -h -o '%N %T %E' 2>&1)):$(np_tails)"
  fi
}

np_node_idle() { # every node is idle
  local states
  states=$(sinfo -h -N -o '%T' 2>/dev/null) || return 1
  [ -n "$states" ] && ! grep -qvx idle <<<"$states"
}

# Rewrite plugstack.conf. Found empirically on Slurm 22.05: srun/sbatch read it at each start
# and slurmstepd at each step ("[N.0] spank: opening plugin stack" in slurmd.log), so the next
# step sees it without restarting slurmd (see test/integration/README.md).
# shellcheck disable=SC2120 # no line: an empty plugstack
np_cluster_set_plugstack() {
  np_write_plugstack "$@"
}

np_kill_wait() { # np_kill_wait PID...: TERM, up to 5 s, then KILL
  local pid
  for pid in "$@"; do
    [ -n "$pid" ] || continue
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
}

np_cluster_restart_slurmd() {
  np_helper_stop
  np_slurmds_stop
  np_slurmd_start
}

np_slurmds_stop() {
  local node
  np_kill_wait "$(cat "$np_dir/slurmd.pid" 2>/dev/null)" "$np_slurmd_pid"
  for node in "${!np_node_slurmd[@]}"; do
    np_kill_wait "$(cat "$np_dir/node-$node/slurmd.pid" 2>/dev/null)" "${np_node_slurmd[$node]}"
  done
  np_node_slurmd=()
}

# Step daemons and tasks of this cluster: slurmstepd rewrites its command line, but it and its
# tasks carry SLURM_CONF=<our slurm.conf> in their environment. So does slurmdbd, whose command
# line ("slurmdbd -D": it has no -f) does not name the directory either.
np_step_pids() {
  [ -n "$np_dir" ] || return 0
  local environ pid text
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    if [ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ]; then continue; fi
    text=$(tr '\0' '\n' 2>/dev/null <"$environ") || continue
    grep -qxF "SLURM_CONF=$np_dir/slurm.conf" <<<"$text" || continue
    case $(cat "/proc/$pid/comm" 2>/dev/null) in
      slurmstepd | slurmdbd) echo "$pid" && continue ;;
    esac
    if grep -q '^SLURM_JOB_ID=' <<<"$text"; then
      echo "$pid"
    fi
  done
}

np_cluster_pids() {
  [ -n "$np_dir" ] || return 0
  { pgrep -f -- "$np_dir/" || true; np_step_pids; } | sort -un
}

# shellcheck disable=SC2120 # extra plugstack arguments are optional
np_helper_plugstack() {
  [ -n "$np_dir" ] || np_die "np_helper_plugstack: start the cluster first (the socket lives in it)"
  echo "optional $NP_PLUGIN helper_socket=$np_dir/helper/numaplaced.sock helper_timeout_ms=500 $*"
}

np_numaplace() {
  "$NP_CLI" --socket "$np_dir/helper/numaplaced.sock" --spool "$np_dir/helper/spool" "$@"
}

np_helper_answers() {
  "$NP_CLI" --socket "$np_dir/helper/numaplaced.sock" ping
}

# shellcheck disable=SC2120 # extra flags are optional
np_helper_start() {
  [ -n "$np_dir" ] || np_die "no cluster: call np_cluster_start first"
  [ -x "$NP_HELPER" ] || np_die "numaplaced not built at $NP_HELPER"
  mkdir -p "$np_dir/helper"
  [ -e "$np_dir/helper/numaplaced.conf" ] || echo "# flags from test/integration/lib.sh" >"$np_dir/helper/numaplaced.conf"
  "$NP_HELPER" --config="$np_dir/helper/numaplaced.conf" --socket="$np_dir/helper/numaplaced.sock" \
    --state_dir="$np_dir/helper/state" --spool_dir="$np_dir/helper/spool" \
    --pid_file="$np_dir/helper/numaplaced.pid" --log="$np_dir/helper/numaplaced.log" \
    --log_level=debug --housekeeping_cpus=none "$@" >>"$np_dir/helper/numaplaced.out" 2>&1 &
  np_helper_pid=$!
  np_wait_for 15 np_helper_answers ||
    np_die "numaplaced did not answer within 15 s: $(tail -20 "$np_dir/helper/numaplaced.log" "$np_dir/helper/numaplaced.out" 2>/dev/null)"
}

np_helper_stop() {
  [ -n "$np_helper_pid" ] || return 0
  np_kill_wait "$np_helper_pid"
  wait "$np_helper_pid" 2>/dev/null || true
  np_helper_pid=""
}

np_no_jobs() {
  [ -z "$(squeue -h -o %i 2>/dev/null)" ]
}

np_cluster_stop() {
  local jobs
  if [ -z "$np_dir" ] || [ ! -d "$np_dir" ]; then
    np_dir=""
    return 0
  fi
  if [ -n "${SLURM_CONF:-}" ] && [ "$SLURM_CONF" = "$np_dir/slurm.conf" ]; then
    jobs=$(timeout 10 squeue -h -o %i 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086 # one argument per job id
      timeout 10 scancel $jobs 2>/dev/null || true
      np_wait_for 10 np_no_jobs || true
    fi
  fi
  np_helper_stop
  np_node_helpers_stop
  np_slurmds_stop
  np_kill_wait "$(cat "$np_dir/slurmctld.pid" 2>/dev/null)" "$np_ctld_pid"
  # After slurmctld (which sends its last records to slurmdbd), slurmdbd, then its database.
  np_kill_wait "$(cat "$np_dir/slurmdbd.pid" 2>/dev/null)" "$np_dbd_pid"
  np_kill_wait "$(cat "$np_dir/db/mariadb.pid" 2>/dev/null)" "$np_db_pid"
  np_kill_wait "$(cat "$np_dir/munge/munged.pid" 2>/dev/null)"
  # The node holders last: their namespaces (and the bind mounts in them) go with the last
  # process inside, i.e. once slurmd, its steps and helpers are gone.
  np_kill_wait "${np_node_holder[@]}"
  # Whatever is left of this cluster: stray step daemons, their tasks, slurmscriptd.
  local stray
  stray=$(np_cluster_pids)
  if [ -n "$stray" ]; then
    # shellcheck disable=SC2086 # one argument per pid
    kill -9 $stray 2>/dev/null || true
    sleep 0.2
  fi
  if [ "${NUMAPLACE_KEEP:-0}" = 1 ]; then
    echo "numaplace test cluster kept in $np_dir (NUMAPLACE_KEEP=1)"
  elif [ "$np_dir_owned" = 1 ]; then
    rm -rf "$np_dir"
  fi
  np_dir=""
  np_ctld_pid=""
  np_slurmd_pid=""
  np_db_pid=""
  np_dbd_pid=""
  np_nodes=()
  np_node_holder=()
}

np_test_user_ensure() {
  id "$1" >/dev/null 2>&1 && return 0
  # Another suite may create it at the same moment: only fail if it still does not exist.
  useradd --create-home --shell /bin/bash "$1" 2>/dev/null || id "$1" >/dev/null 2>&1 ||
    np_die "cannot create the test user '$1'"
}

# Runs in the user's home when the current directory is not theirs to enter (slurmstepd
# changes into the submitter's directory as that user).
np_run_as() {
  local user=$1 dir=$PWD
  shift
  runuser -u "$user" -- test -x "$dir" 2>/dev/null || dir=$(getent passwd "$user" | cut -d: -f6)
  (cd "${dir:-/tmp}" && runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" "$@")
}

# With NP_NODES=N the slurmd logs are node-NAME/slurmd.log (all of them are searched).
np_slurmd_logs() {
  local f
  for f in "$np_dir/slurmd.log" "$np_dir"/node-*/slurmd.log; do
    [ -e "$f" ] && echo "$f"
  done
  return 0
}

np_slurmd_log_grep() {
  local logs
  mapfile -t logs < <(np_slurmd_logs)
  grep -h -E -- "$1" "${logs[@]}" /dev/null 2>/dev/null
}

np_log_grep() {
  local logs
  mapfile -t logs < <(np_slurmd_logs)
  grep -h -E -- "$1" "${logs[@]}" "$np_dir/slurmctld.log" 2>/dev/null
}

# ---- cases ------------------------------------------------------------------------------
np_out=""
np_rc=0
np_current=""
np_case_open=0
np_case_failed=0
np_case_started=$SECONDS

# np_run CMD...: run and capture stdout+stderr in $np_out and the status in $np_rc.
np_run() {
  np_rc=0
  np_out=$("$@" 2>&1) || np_rc=$?
  return 0
}

# np_case NAME: open a case (close it with np_end_case).
# np_case NAME CMD...: a whole case: run CMD in this shell; it fails on any np_fail/np_expect_*
# failure, or when CMD itself exits non-zero.
np_case() {
  [ "$np_case_open" = 0 ] || np_end_case
  np_current=$1
  np_case_started=$SECONDS
  np_case_failed=0
  np_case_open=1
  np_out=""
  np_rc=0
  shift
  if [ $# -gt 0 ]; then
    local rc=0
    "$@" || rc=$?
    [ "$rc" = 0 ] || [ "$np_case_failed" = 1 ] || np_fail "'$*' exited with status $rc"
    np_end_case
  fi
}

np_fail() {
  if [ "$np_case_failed" = 0 ]; then
    printf 'FAIL %s (%d s): %s\n' "$np_current" $((SECONDS - np_case_started)) "$*"
    [ -z "$np_out" ] || printf '  output was:\n%s\n' "$(printf '%s\n' "$np_out" | tail -20 | sed 's/^/    /')"
  else
    printf '  and: %s\n' "$*"
  fi
  np_case_failed=1
  return 0
}

np_expect_rc() {
  [ "$np_rc" = "$1" ] || np_fail "exit status $np_rc, expected $1"
}

# shellcheck disable=SC2120 # CMD is optional
np_expect_fail() { # np_expect_fail [CMD...]: CMD (or the last np_run) failed
  [ $# = 0 ] || np_run "$@"
  [ "$np_rc" != 0 ] || np_fail "${*:-the command} succeeded, expected a failure"
}

np_expect_match() { # np_expect_match REGEX [TEXT]
  local text=${2-$np_out}
  grep -qE -- "$1" <<<"$text" || np_fail "no line matches /$1/"
}

np_expect_no_match() {
  local text=${2-$np_out}
  ! grep -qE -- "$1" <<<"$text" || np_fail "a line matches /$1/"
}

np_expect_eq() { # np_expect_eq ACTUAL EXPECTED [WHAT]
  [ "$1" = "$2" ] || np_fail "${3:-value}: got '$1', expected '$2'"
}

np_end_case() {
  [ "$np_case_open" = 1 ] || return 0
  np_case_open=0
  if [ "$np_case_failed" = 0 ]; then
    np_passed=$((np_passed + 1))
    # The time says where a slow or stuck suite spends it (CI shows only this output).
    printf 'PASS %s (%d s)\n' "$np_current" $((SECONDS - np_case_started))
  else
    np_failed=$((np_failed + 1))
  fi
}

np_finish() {
  np_end_case
  if [ $((np_passed + np_failed)) = 0 ]; then
    echo "!!!! no case ran" >&2
    np_failed=1
  fi
  printf '%d passed, %d failed\n' "$np_passed" "$np_failed"
  [ "$np_failed" = 0 ]
}
