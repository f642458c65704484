#!/usr/bin/env bash
# Smoke run of bench/fwq (ctest slurm.fwq_smoke, as root): one short round of the six
# configurations with a small job. Checks the report's shape, never a timing: every
# configuration has a row in both tables with figures or "unavailable: <why>", the migration row
# says why on a one-node machine, nothing is NaN, and the run leaves no daemon behind and
# khugepaged's scan interval (which numad changes) as it was.
#   bash bench/fwq_smoke.sh FWQ NUMAPLACED
set -euo pipefail
fwq=$1 helper=$2
[ "$(id -u)" = 0 ] || { echo "fwq_smoke: needs root (numaplaced registers processes); skipped"; exit 77; }
thp=/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs
thp_before=$(cat "$thp" 2>/dev/null || echo none)
# numad's System V message queue (key 0xdeadbeef): numad never removes it, the benchmark does
numad_queue() { ipcs -q 2>/dev/null | grep -c '^0xdeadbeef' || true; }
queue_before=$(numad_queue)
out=$(mktemp /tmp/fwq-smoke.XXXXXX)
trap 'rm -f "$out"' EXIT
fail() { echo "fwq_smoke: FAIL: $*"; cat "$out"; exit 1; }

"$fwq" "$helper" --seconds 0.3 --rounds 1 --procs 4 --mib 4 --large-mib 64 --large-maps 64 \
  >"$out" 2>&1 || fail "fwq exited with $?"

labels=("a. no daemon" "b. numaplaced" "c. numaplaced" "d. numaplaced" "e. numad" "f. numad")
for label in "${labels[@]}"; do
  rows=$(grep -c "^| $label" "$out" || true)
  [ "$rows" -eq 2 ] || fail "'$label': $rows table rows, expected 2 (figures and attribution)"
done
grep -q '^Machine: ' "$out" || fail "no machine description"
grep -q '^Load average before: ' "$out" || fail "no load average"
# an unavailable figure always says why
if grep -Eq 'unavailable:? *(\||$)' "$out"; then fail "an 'unavailable' without a reason"; fi
grep -Eqi '(^|[^a-z])(nan|inf)([^a-z]|$)' "$out" && fail "NaN or infinity in the report"
nodes=$(find /sys/devices/system/node -maxdepth 1 -name 'node[0-9]*' 2>/dev/null | wc -l)
if [ "$nodes" -le 1 ]; then
  grep -q '^| c\. .*| unavailable: one NUMA node (' "$out" || fail "row c does not say one NUMA node"
else
  grep -q '^| c\. .*| unavailable' "$out" && fail "row c unavailable on $nodes nodes"
fi
# the no-daemon row is the reference: its ratio is 1
grep -q '^| a\. no daemon | 1\.0000 |' "$out" || fail "row a's ratio is not 1.0000"
[ "$(cat "$thp" 2>/dev/null || echo none)" = "$thp_before" ] || fail "khugepaged scan interval not restored"
[ "$(numad_queue)" = "$queue_before" ] || fail "numad's message queue left behind"
if compgen -G "/tmp/np-fwq-*" >/dev/null; then fail "a numaplaced temp directory is left"; fi
pid=$(cat /var/run/numad.pid 2>/dev/null || true)
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q '^| e\. .*| [0-9]' "$out"; then
  fail "numad (pid $pid) still runs after the benchmark"
fi
echo "fwq_smoke: 1 passed, 0 failed"
