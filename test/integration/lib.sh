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
# NP_ACCOUNTING_STORAGE and NP_EXTRA_SLURM_CONF (hooks, see the slurm.conf below).
# Sets: np_dir (the cluster directory), SLURM_CONF, NP_PLUGIN, NP_PROBE.
set -u

NUMAPLACE_SOURCE=${NUMAPLACE_SOURCE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
NUMAPLACE_BUILD=${NUMAPLACE_BUILD:-$NUMAPLACE_SOURCE/build}
export NUMAPLACE_SOURCE NUMAPLACE_BUILD
NP_PLUGIN=${NUMAPLACE_PLUGIN:-$NUMAPLACE_BUILD/plugin/numaplace.so}
NP_PROBE=${NUMAPLACE_PROBE:-$NUMAPLACE_BUILD/test/numa_probe}
NP_WORKLOAD=${NUMAPLACE_WORKLOAD:-$NUMAPLACE_BUILD/test/np_workload}
NP_HELPER=${NUMAPLACE_HELPER:-$NUMAPLACE_BUILD/helper/numaplaced}
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
    "$np_dir"/slurmd.out "$np_dir"/munge/munged.log; do
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
  local host ctld_port slurmd_port node_line
  [ -z "$np_dir" ] || np_die "a cluster is already running in $np_dir"
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
  # Clients running as other users must reach the munge socket and read slurm.conf.
  chmod 755 "$np_dir" "$np_dir/munge"

  dd if=/dev/urandom of="$np_dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$np_dir/munge/munge.key"
  # munged forks into the background; --force because /tmp is not a directory it trusts.
  munged --force --socket="$np_dir/munge/munge.socket" --key-file="$np_dir/munge/munge.key" \
    --pid-file="$np_dir/munge/munged.pid" --log-file="$np_dir/munge/munged.log" \
    --seed-file="$np_dir/munge/munged.seed" ||
    np_die "munged did not start:$(np_tails)"
  np_wait_for 10 test -S "$np_dir/munge/munge.socket" || np_die "munged socket never appeared:$(np_tails)"

  host=$(hostname -s)
  read -r ctld_port slurmd_port < <(np_free_ports 2)
  # The node as slurmd sees it (CPUs, boards, sockets, cores, threads, RealMemory).
  node_line=$(slurmd -C | sed -n "s/^NodeName=[^ ]*/NodeName=$host/p")
  [ -n "$node_line" ] || np_die "slurmd -C printed no NodeName line"
  cat >"$np_dir/slurm.conf" <<CONF
# Generated by numaplace's test harness: a throwaway cluster of one node, all paths in here.
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
SlurmdSpoolDir=$np_dir/spool
SlurmctldPidFile=$np_dir/slurmctld.pid
SlurmdPidFile=$np_dir/slurmd.pid
SlurmctldLogFile=$np_dir/slurmctld.log
# slurmstepd logs here too, each line prefixed with [JOBID.STEP]; debug shows SPANK loading.
SlurmdLogFile=$np_dir/slurmd.log
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
# ---- HOOK(slurmdbd): accounting. The summary tests set NP_ACCOUNTING_STORAGE to
# accounting_storage/slurmdbd and add AccountingStorageHost/Port through NP_EXTRA_SLURM_CONF.
AccountingStorageType=${NP_ACCOUNTING_STORAGE:-accounting_storage/none}
${NP_EXTRA_SLURM_CONF:-}
# ---- end HOOK(slurmdbd)
KillWait=2
InactiveLimit=0
MinJobAge=600
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  chmod 644 "$np_dir/slurm.conf"
  export SLURM_CONF=$np_dir/slurm.conf
  np_write_plugstack "$@"

  slurmctld -D -i -f "$SLURM_CONF" >"$np_dir/slurmctld.out" 2>&1 &
  np_ctld_pid=$!
  np_wait_for 20 scontrol ping || np_die "slurmctld did not answer within 20 s:$(np_tails)"
  np_slurmd_start
  echo "numaplace test cluster up in $np_dir (slurmctld :$ctld_port, slurmd :$slurmd_port)"
}

np_slurmd_start() {
  slurmd -D -f "$SLURM_CONF" -N "$(hostname -s)" >>"$np_dir/slurmd.out" 2>&1 &
  np_slurmd_pid=$!
  if ! np_wait_for 30 np_node_idle; then
    np_die "node never became idle within 30 s ($(sinfo -h -o '%T %E' 2>&1)):$(np_tails)"
  fi
}

np_node_idle() {
  sinfo -h -o '%T' 2>/dev/null | grep -qx idle
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
  np_kill_wait "$(cat "$np_dir/slurmd.pid" 2>/dev/null)" "$np_slurmd_pid"
  np_slurmd_start
}

# Step daemons and tasks of this cluster: slurmstepd rewrites its command line, but it and its
# tasks carry SLURM_CONF=<our slurm.conf> in their environment.
np_step_pids() {
  [ -n "$np_dir" ] || return 0
  local environ pid text
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    if [ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ]; then continue; fi
    text=$(tr '\0' '\n' 2>/dev/null <"$environ") || continue
    grep -qxF "SLURM_CONF=$np_dir/slurm.conf" <<<"$text" || continue
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmstepd ] || grep -q '^SLURM_JOB_ID=' <<<"$text"; then
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
  np_kill_wait "$(cat "$np_dir/slurmd.pid" 2>/dev/null)" "$np_slurmd_pid"
  np_kill_wait "$(cat "$np_dir/slurmctld.pid" 2>/dev/null)" "$np_ctld_pid"
  np_kill_wait "$(cat "$np_dir/munge/munged.pid" 2>/dev/null)"
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

np_slurmd_log_grep() {
  grep -h -E -- "$1" "$np_dir/slurmd.log" 2>/dev/null
}

np_log_grep() {
  grep -h -E -- "$1" "$np_dir/slurmd.log" "$np_dir/slurmctld.log" 2>/dev/null
}

# ---- cases ------------------------------------------------------------------------------
np_out=""
np_rc=0
np_current=""
np_case_open=0
np_case_failed=0

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
    printf 'FAIL %s: %s\n' "$np_current" "$*"
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
    printf 'PASS %s\n' "$np_current"
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
