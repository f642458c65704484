#!/usr/bin/env bash
# Inside the guest: `numaplace characterize` on the layout's nodes. The figures are emulated, so
# this checks completeness (every CPU node x memory node pair, positive finite figures), units
# (every figure's key names its unit), the SLIT copied from the topology, loaders skipped where a
# node has no CPU for them (said so), the profile's round trip (--print of the written file
# prints the same matrices the run printed) and the refusals (not root; numaplaced tracking
# steps, unless --force). Never speeds.
#   characterize_cases.sh 4node|8node|cpuless
set -u
layout=${1:?usage: characterize_cases.sh 4node|8node|cpuless}
build=${NUMAPLACE_BUILD:-$PWD/build}
np=$build/cli/numaplace
CHECK_PREFIX="characterize: "
# shellcheck source=test/vm/checks.sh
source "$(dirname "$0")/checks.sh"

# nodes, CPU nodes, memory nodes, the far pair's distance
case $layout in
  4node) nodes=4 cpu_nodes=4 far="0 3 30" ;;
  8node) nodes=8 cpu_nodes=8 far="0 7 32" ;;
  cpuless) nodes=3 cpu_nodes=2 far="0 2 17" ;;
  *) echo "characterize_cases: unknown layout '$layout' (accepted: 4node, 8node, cpuless)"; exit 2 ;;
esac
read -r far_cpu far_mem far_distance <<<"$far"

dir=$(mktemp -d /var/tmp/np-characterize.XXXXXX)
chmod 755 "$dir"
profile=$dir/machine-profile.json
t0=$SECONDS
"$np" characterize --seconds 0.02 --size 8 --loaders 1 --output "$profile" >"$dir/run.out" 2>"$dir/run.err"
rc=$?
check "exits 0 as root on an idle node ($((SECONDS - t0)) s)" 0 "$rc"
[ "$rc" = 0 ] || cat "$dir/run.err"
check "progress on stderr ends at its total" yes \
  "$(tr '\r' '\n' <"$dir/run.err" | grep -Eq '^numaplace characterize: \[([0-9]+)/\1\]' && echo yes || echo no)"

j() { jq -r "$@" "$profile" 2>&1; }
check "schema 1" 1 "$(j .schema)"
check "$nodes nodes" "$nodes" "$(j '.machine.nodes | length')"
check "every CPU node x memory node pair, once" "$((cpu_nodes * nodes)) $((cpu_nodes * nodes))" \
  "$(j '[.pairs | length, (map("\(.cpu_node),\(.mem_node)") | unique | length)] | join(" ")')"
check "every pair's figures positive and finite" 0 \
  "$(j '[.pairs[] | .bandwidth_mb_s, .latency_ns, .remote_penalty, .bandwidth_ratio
         | select(type != "number" or . <= 0 or . > 1e12)] | length')"
check "every figure's key names its unit (or is a ratio)" "bandwidth_mb_s bandwidth_ratio cpu_node distance latency_ns loaded loaded_unavailable mem_node remote_penalty" \
  "$(j '[.pairs[] | keys] | unique | .[] | join(" ")')"
check "local pairs' penalty is 1" 0 \
  "$(j '[.pairs[] | select(.cpu_node == .mem_node and .remote_penalty != 1)] | length')"
check "the far pair's distance is the SLIT's" "$far_distance" \
  "$(j ".pairs[] | select(.cpu_node == $far_cpu and .mem_node == $far_mem) | .distance")"
check "interleaved bandwidth on every CPU node, none on CPU-less ones" "$cpu_nodes 0" \
  "$(j '[([.machine.nodes[] | select(.cpus > 0 and .interleaved_bandwidth_mb_s > 0)] | length),
         ([.machine.nodes[] | select(.cpus == 0 and .interleaved_bandwidth_mb_s != null)] | length)] | join(" ")')"
check "loaded figures positive, or the pair says why not" 0 \
  "$(j '[.pairs[] | select((.loaded | length) == 0 and .loaded_unavailable == "")] +
        [.pairs[].loaded[] | .bandwidth_mb_s, .latency_ns | select(type != "number" or . <= 0)] | length')"
case $layout in
  4node) # 2 CPUs a node: one loader fits beside the measurer, and on a remote node
    check "k=1 measured on every pair" "$((nodes * nodes))" "$(j '[.pairs[] | select(.loaded[0].loaders == 1)] | length')" ;;
  8node) # 1 CPU a node: no room beside a local measurer
    check "local pairs: no room for loaders, said so" "$nodes" \
      "$(j '[.pairs[] | select(.cpu_node == .mem_node and (.loaded | length) == 0 and (.loaded_unavailable | test("1 CPU|0 CPU")))] | length')" ;;
  cpuless)
    check "the CPU-less node: no loaders, said so" "$cpu_nodes" \
      "$(j '[.pairs[] | select(.mem_node == 2 and (.loaded | length) == 0 and .loaded_unavailable == "memory node 2 has no CPUs to run loaders on")] | length')" ;;
esac

"$np" characterize --print "$profile" >"$dir/print.out" 2>&1
check "--print of the written file exits 0" 0 "$?"
check "--print reproduces the run's matrices" "" \
  "$(diff <(grep -v '^Profile written to' "$dir/run.out") "$dir/print.out")"

out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$np" characterize --output "$dir/x.json" 2>&1)
rc=$?
check "refused unless root (exit 2, says why)" "2 yes" \
  "$rc $(grep -q 'run it as root' <<<"$out" && echo yes || echo no)"
echo '{"schema": 2}' >"$dir/future.json"
out=$("$np" characterize --print "$dir/future.json" 2>&1)
rc=$?
check "--print of an unknown schema fails naming it" "1 yes" \
  "$rc $(grep -q '"schema" is unknown; accepted: 1' <<<"$out" && echo yes || echo no)"

# A node where numaplaced tracks job steps: refused unless --force (then a warning). The helper
# here is a stand-in answering every request with two running steps.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(4)
while True:
    c, _ = s.accept(); c.recv(65536)
    c.sendall(b"{\"v\": 1, \"ok\": true, \"helper\": {}, \"jobs\": [{\"job_id\": 7}, {\"job_id\": 8}]}\n")
    c.close()' "$dir/helper.sock" &
helper=$!
for _ in $(seq 100); do [ -S "$dir/helper.sock" ] && break; sleep 0.1; done
out=$(NUMAPLACE_SOCKET=$dir/helper.sock "$np" characterize --output "$dir/busy.json" 2>&1)
rc=$?
check "refused while numaplaced tracks steps (exit 2, says so, writes nothing)" "2 yes no" \
  "$rc $(grep -q 'tracks 2 running job step(s).*--force' <<<"$out" && echo yes || echo no) $([ -e "$dir/busy.json" ] && echo yes || echo no)"
if [ "$layout" = cpuless ]; then # the smallest layout: one more (short) run
  out=$(NUMAPLACE_SOCKET=$dir/helper.sock "$np" characterize --force --seconds 0.01 --size 1 \
    --loaders 1 --output "$dir/busy.json" 2>&1 >/dev/null)
  rc=$?
  check "--force runs anyway, with a warning" "0 yes yes" \
    "$rc $(grep -q '^numaplace characterize: warning: numaplaced tracks 2' <<<"$out" && echo yes || echo no) $([ -s "$dir/busy.json" ] && echo yes || echo no)"
fi
kill "$helper"
wait "$helper" 2>/dev/null

rm -rf "$dir"
checks_end
