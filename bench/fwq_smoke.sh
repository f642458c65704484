#!/usr/bin/env bash
# Smoke run of bench/fwq (ctest slurm.fwq_smoke, as root): short rounds of the six configurations
# with a small job. Checks the report's shape, never a timing: every configuration has a row with
# figures or "unavailable: <why>", the migration row says why on a one-node machine, nothing is
# NaN, and each run leaves no daemon behind and khugepaged's scan interval (which numad changes)
# as it was. The attribution to what ran (sched_switch, read through tracefs) is checked in
# three runs, each in a mount namespace of its own, so the machine's mounts never change:
#   unmounted   no tracefs mounted: fwq mounts one privately, and a row per configuration
#               follows; afterwards still no tracefs is mounted
#   mounted     tracefs at /sys/kernel/tracing: fwq uses it; afterwards it is still mounted
#   no-mount    no tracefs, and no CAP_SYS_ADMIN to mount one: "unavailable: <why>" in place of
#               the attribution table, every figure of the first table still there
# Without mount namespaces (a container) one run as the machine is, either outcome accepted.
# FWQ_SMOKE_CASES="unmounted" runs only those (the emulated guest: each run there takes minutes).
#   bash bench/fwq_smoke.sh FWQ NUMAPLACED
set -euo pipefail
fwq=$1 helper=$2
[ "$(id -u)" = 0 ] || { echo "fwq_smoke: needs root (numaplaced registers processes); skipped"; exit 77; }
thp=/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs
# numad's System V message queue (key 0xdeadbeef): numad never removes it, the benchmark does
numad_queue() { ipcs -q 2>/dev/null | grep -c '^0xdeadbeef' || true; }
tracefs_mounts() { findmnt -rn -t tracefs,debugfs -o TARGET,FSTYPE || true; }
out=$(mktemp /tmp/fwq-smoke.XXXXXX)
# fwq's numaplaced directories go under a TMPDIR of this run's own: another run's (the host's
# smoke beside an emulated guest, whose /tmp shows the host's) are never taken for a leftover
export TMPDIR
TMPDIR=$(mktemp -d /tmp/fwq-smoke-tmp.XXXXXX)
trap 'rm -rf "$out" "$TMPDIR"' EXIT
passed=0 case="" wrap=()
fail() { echo "fwq_smoke: FAIL ($case): $*"; cat "$out"; exit 1; }

# check ATTRIBUTION: the report in $out, with the attribution table (yes), its reason (no), or
# either (the machine decides)
check() {
  local label rows want=2 attribution=$1
  if [ "$attribution" = either ]; then
    attribution=yes
    if grep -q '^unavailable: ' "$out"; then attribution=no; fi
  fi
  [ "$attribution" = yes ] || want=1
  for label in "a. no daemon" "b. numaplaced" "c. numaplaced" "d. numaplaced" "e. numad" "f. numad"; do
    rows=$(grep -c "^| $label" "$out" || true)
    [ "$rows" -eq "$want" ] || fail "'$label': $rows table rows, expected $want"
    grep -q "^| $label.* | [0-9][0-9.]* / " "$out" || grep -q "^| ${label}[^|]*| unavailable: ." "$out" ||
      fail "'$label' has neither detour figures nor a reason"
  done
  if [ "$attribution" = yes ]; then
    grep -q '^Context switches: sched:sched_switch, its id and format read from ' "$out" ||
      fail "the report does not say where sched_switch came from"
    if grep -q '^unavailable: ' "$out"; then fail "attribution unavailable"; fi
  else
    grep -Eq '^unavailable: no tracefs mounted, and mounting one .* failed: .+' "$out" ||
      fail "the attribution does not say why it is unavailable"
    # without CAP_SYS_ADMIN the mount namespace is refused, and the report says so
    [ "$case" != no-mount ] || grep -q '^unavailable: .*unshare(CLONE_NEWNS): Operation not permitted$' "$out" ||
      fail "the attribution does not name the refused mount namespace"
    grep -q '^| a\. no daemon | 1\.0000 | unavailable: no sched_switch record |' "$out" ||
      fail "row a does not say the other processes' time is unavailable"
  fi
  grep -q '^Machine: ' "$out" || fail "no machine description"
  grep -q '^Load average before: ' "$out" || fail "no load average"
  # an unavailable figure always says why
  if grep -Eq 'unavailable:? *(\||$)' "$out"; then fail "an 'unavailable' without a reason"; fi
  if grep -Eqi '(^|[^a-z])(nan|inf)([^a-z]|$)' "$out"; then fail "NaN or infinity in the report"; fi
  local nodes
  nodes=$(find /sys/devices/system/node -maxdepth 1 -name 'node[0-9]*' 2>/dev/null | wc -l)
  if [ "$nodes" -le 1 ]; then
    grep -q '^| c\. .*| unavailable: one NUMA node (' "$out" || fail "row c does not say one NUMA node"
  else
    if grep -q '^| c\. .*| unavailable' "$out"; then fail "row c unavailable on $nodes nodes"; fi
  fi
  # the no-daemon row is the reference: its ratio is 1
  grep -q '^| a\. no daemon | 1\.0000 |' "$out" || fail "row a's ratio is not 1.0000"
}

# run CASE ATTRIBUTION SETUP: fwq (after "${wrap[@]}") after SETUP (shell, run in a new mount
# namespace unless empty), its report checked; that namespace's tracefs mounts are the same
# before and after fwq.
run() {
  local setup=$3 thp_before queue_before pid rc=0
  case=$1
  thp_before=$(cat "$thp" 2>/dev/null || echo none)
  queue_before=$(numad_queue)
  local fwq_cmd=("${wrap[@]}" "$fwq" "$helper" --seconds 0.3 --rounds 1 --procs 4 --mib 4 --large-mib 64
    --large-maps 64)
  if [ -z "$setup" ]; then
    "${fwq_cmd[@]}" >"$out" 2>&1 || rc=$?
  else
    # shellcheck disable=SC2016 # expanded by the inner bash
    unshare --mount --propagation private -- bash -c "set -e; $setup"'
      before=$(findmnt -rn -t tracefs,debugfs -o TARGET,FSTYPE || true)
      "$@" || exit
      after=$(findmnt -rn -t tracefs,debugfs -o TARGET,FSTYPE || true)
      [ "$before" = "$after" ] || { echo "tracefs mounts changed: [$before] -> [$after]"; exit 99; }' \
      fwq-smoke "${fwq_cmd[@]}" >"$out" 2>&1 || rc=$?
  fi
  [ "$rc" != 99 ] || fail "fwq left the mounts changed"
  [ "$rc" = 0 ] || fail "fwq exited with $rc"
  check "$2"
  [ "$(cat "$thp" 2>/dev/null || echo none)" = "$thp_before" ] || fail "khugepaged scan interval not restored"
  [ "$(numad_queue)" = "$queue_before" ] || fail "numad's message queue left behind"
  if compgen -G "$TMPDIR/np-fwq-*" >/dev/null; then fail "a numaplaced temp directory is left"; fi
  pid=$(cat /var/run/numad.pid 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q '^| e\. .*| [0-9]' "$out"; then
    fail "numad (pid $pid) still runs after the benchmark"
  fi
  echo "PASS fwq_smoke: $case"
  passed=$((passed + 1))
}

host_mounts=$(tracefs_mounts)
# Every tracefs and debugfs (whose tracing/ is a tracefs) off, in the namespace only.
unmount_all='findmnt -rn -t tracefs,debugfs -o TARGET | sort -r | xargs -r -n1 umount -l'
cases=" ${FWQ_SMOKE_CASES:-unmounted mounted no-mount} "
if unshare --mount --propagation private true 2>/dev/null && grep -qw tracefs /proc/filesystems; then
  [[ $cases != *" unmounted "* ]] || run unmounted yes "$unmount_all"
  [[ $cases != *" mounted "* ]] || run mounted yes "$unmount_all; mount -t tracefs nodev /sys/kernel/tracing"
  wrap=(setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin --)
  [[ $cases != *" no-mount "* ]] || run no-mount no "$unmount_all"
  [ "$passed" -gt 0 ] || { case=$cases; fail "FWQ_SMOKE_CASES names no case (unmounted, mounted, no-mount)"; }
else
  echo "fwq_smoke: no mount namespace or no tracefs here: one run as the machine is"
  run as-is either ""
fi
[ "$(tracefs_mounts)" = "$host_mounts" ] || fail "the machine's tracefs mounts changed"
echo "fwq_smoke: $passed passed, 0 failed"
