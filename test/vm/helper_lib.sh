#!/usr/bin/env bash
# numaplaced in a guest, for the cases that move real memory (migration_cases.sh,
# tier_migration_cases.sh): a helper started and stopped per set of cases, jobs with known
# footprints registered over the real protocol as root, and what numa_maps says of them.
# Sourced after test/integration/lib.sh; defines $work, $sock and the functions below.
# shellcheck disable=SC2154 # np_wait_scale and the np_ functions: test/integration/lib.sh
work=$(mktemp -d /tmp/numaplace-migration.XXXXXX)
sock=$work/numaplaced.sock
helper_pid=""
pids=()
# reap PID WHAT: wait (30 s at most) for a process already signalled to exit. One that has not
# is a failure worth seeing: its threads' kernel stacks go to the output, then it is killed.
reap() {
  local p=$1 t
  if ! np_wait_for 30 bash -c "[ ! -e /proc/$p ] || grep -q '^[0-9]* (.*) Z' /proc/$p/stat"; then
    echo "!!!! $2 (pid $p) had not exited 30 s after its signal; where its threads wait:"
    for t in /proc/"$p"/task/*; do
      echo "  thread ${t##*/} (state $(awk '{ print $3 }' "$t/stat" 2>/dev/null), $(cat "$t/wchan" 2>/dev/null)):"
      sed 's/^/    /' "$t/stack" 2>/dev/null
    done
    kill -9 "$p" 2>/dev/null
    stop_failed=1
  fi
  wait "$p" 2>/dev/null
}

# stop_helper: SIGTERM, as systemd stops it (its log's end is shown when it does not stop).
stop_helper() {
  local p=$helper_pid failed=$stop_failed
  [ -n "$p" ] || return 0
  helper_pid=""
  kill "$p" 2>/dev/null
  reap "$p" numaplaced
  if [ "$stop_failed" != "$failed" ]; then
    echo "  the end of numaplaced's log:"
    tail -15 "$work/numaplaced.log" | sed 's/^/    /'
  fi
}
stop_failed=0
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  stop_helper
  rm -rf "$work"
}
trap cleanup EXIT

start_helper() { # start_helper [--KEY=VALUE...]
  stop_helper
  # A new helper starts a new set of cases: the earlier cases' jobs go, with their memory.
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do reap "$p" "a job process"; done
  pids=()
  [ "$stop_failed" = 0 ] || np_fail "numaplaced or a job did not exit when signalled (see above)"
  stop_failed=0
  # Each case starts from an empty registry: the jobs of earlier cases are not candidates.
  rm -rf "$work/state"
  : >"$work/numaplaced.conf"
  "$NP_HELPER" --config="$work/numaplaced.conf" --socket="$sock" --state_dir="$work/state" \
    --spool_dir="$work/spool" --pid_file= --log="$work/numaplaced.log" --log_level=debug \
    --housekeeping_cpus=none --interval_ms=500 --numa_maps_interval_ms=1000 "$@" &
  helper_pid=$!
  np_wait_for 15 "$NP_CLI" --socket "$sock" ping || np_die "numaplaced did not start: $(tail "$work/numaplaced.log")"
}

# helper_call JSON: one request over the helper's socket, as slurmstepd's plugin sends it;
# succeeds when the helper answers ok (60 s at most: a helper that never answers fails the case,
# not the guest's deadline).
helper_call() {
  python3 - "$sock" "$1" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(60)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
reply = json.loads(s.recv(65536))
sys.exit(0 if reply.get("ok") else print(reply) or 1)
PY
}

# Bounded: a request that never answers fails its case instead of the whole guest's deadline.
cli() { timeout 300 "$NP_CLI" --socket "$sock" --spool "$work/spool" "$@"; }

# job JOBID CLASS CPU_NODE MEM_NODE MIB [EXTRA]: start a process with its CPUs on CPU_NODE and
# its memory on MEM_NODE, wait until it touched it, register it (with the policy $JOB_POLICY
# asked for, default none); sets $job_pid.
job() {
  local id=$1 class=$2 cnode=$3 mnode=$4 mb=$5 extra=${6:-}
  # shellcheck disable=SC2086 # extra options for np_workload
  numactl --cpunodebind="$cnode" --membind="$mnode" "$NP_WORKLOAD" --mb "$mb" --busy 0 --idle 3600 $extra \
    2>"$work/job$id.err" >/dev/null &
  job_pid=$!
  pids+=("$job_pid")
  np_wait_for 60 grep -q '^ready' "$work/job$id.err" || np_die "job $id never touched its memory"
  helper_call "$(printf '{"v":1,"op":"register","job":%s,"step":0,"uid":0,"pid":%s,"task":0,"cpus":"%s","policy":"%s","sensitivity":"%s"}' \
    "$id" "$job_pid" "$((2 * cnode))-$((2 * cnode + 1))" "${JOB_POLICY:-none}" "$class")" || np_die "registering job $id failed"
}

# mib_on PID NODE: MiB of the process's anonymous memory on NODE, from numa_maps.
mib_on() {
  python3 - "$1" "$2" <<'PY'
import re, sys
total = 0
for line in open(f"/proc/{sys.argv[1]}/numa_maps"):
    if "anon=" not in line:
        continue
    kb = int(re.search(r"kernelpagesize_kB=(\d+)", line).group(1)) if "kernelpagesize_kB" in line else 4
    m = re.search(rf"\bN{sys.argv[2]}=(\d+)", line)
    if m:
        total += int(m.group(1)) * kb
print(total // 1024)
PY
}

has_mib_on() { [ "$(mib_on "$1" "$2")" -ge 1 ]; } # has_mib_on PID NODE: a MiB or more there
has_mib_at_least() { [ "$(mib_on "$1" "$2")" -ge "$3" ]; } # has_mib_at_least PID NODE MIB

near() { # near ACTUAL EXPECTED TOLERANCE
  [ "$1" -ge $(($2 - $3)) ] && [ "$1" -le $(($2 + $3)) ]
}

# Wait until the helper has read every registered job's pages (it reads them at once on
# registration and whenever they change, checked each sample): four more samples of every job it
# tracks, counted by numaplaced itself, however slow the guest is (was: a 2-s sleep).
job_samples() { # "JOB SAMPLES" per tracked job
  cli --json status | python3 -c 'import json, sys
for j in json.load(sys.stdin)["jobs"]:
    print(j["job"], j["latest"]["samples"])'
}
sampled_since() { # sampled_since FILE: every job FILE lists, if still tracked, has four more samples
  job_samples | python3 -c 'import sys
before = dict(l.split() for l in open(sys.argv[1]))
now = dict(l.split() for l in sys.stdin)
sys.exit(0 if all(int(now[j]) >= int(n) + 4 for j, n in before.items() if j in now) else 1)' "$1"
}
settle() {
  job_samples >"$work/samples.before" || np_fail "numaplace status failed"
  np_wait_for 60 sampled_since "$work/samples.before" ||
    np_fail "numaplaced took fewer than four samples of every job in $((60 * np_wait_scale)) s"
}
# free_mb NODE: the node's free memory in MiB, as the kernel counts it.
free_mb() { awk '/MemFree/ { print int($4 / 1024) }' "/sys/devices/system/node/node$1/meminfo"; }
