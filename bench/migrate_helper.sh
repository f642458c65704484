#!/usr/bin/env bash
# Migration throughput of numaplaced, end to end, against the raw system call, run INSIDE a
# multi-NUMA guest (bench/migrate_guest.sh boots it). A real numaplaced (rate limit off, triggers
# off) and a registered low job that touched MIB MiB on node 1 with its CPUs on node 0; then,
# round by round, the same memory moves between nodes 1 and 2 two ways:
#   helper: `numaplace migrate --from S --to D --pages ALL` (socket, view, order, plan, the
#           worker's migrate_pages, the reply), timed by the client's wall clock;
#   raw:    `migratepages PID S D` (numactl's tool: one migrate_pages(2)), timed the same way.
# The two alternate who goes first and which direction each takes, so both see both directions
# equally. Also: the time from request to first page moved, as the wall time of a one-page
# request (an upper bound: it includes the reply). Prints a markdown table on stdout.
#   bash bench/migrate_helper.sh [MIB] [ROUNDS]     (defaults 256, 8)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${NUMAPLACE_BUILD:-$top/build}
helper=$build/helper/numaplaced cli=$build/helper/numaplace workload=$build/test/np_workload
mib=${1:-256} rounds=${2:-8}
[ "$(numactl --hardware | awk '/^available:/ { print $2 }')" -ge 3 ] ||
  { echo "migrate_helper: needs NUMA nodes 0-2 (run it in the guest: bench/migrate_guest.sh)" >&2; exit 77; }
for p in "$helper" "$cli" "$workload"; do [ -x "$p" ] || { echo "migrate_helper: $p is not built" >&2; exit 2; }; done

work=$(mktemp -d /tmp/numaplace-bench.XXXXXX)
helper_pid="" job_pid=""
cleanup() {
  [ -n "$job_pid" ] && kill -9 "$job_pid" 2>/dev/null
  [ -n "$helper_pid" ] && kill "$helper_pid" 2>/dev/null && wait "$helper_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
sock=$work/numaplaced.sock
"$helper" --socket="$sock" --state_dir="$work/state" --spool_dir="$work/spool" --pid_file= \
  --log="$work/numaplaced.log" --housekeeping_cpus=none --migration_rate_mb_s=0 \
  --trigger_homecoming=off --trigger_pressure=off --trigger_bandwidth=off --free_floor_mb=16 \
  --interval_ms=250 --numa_maps_interval_ms=500 &
helper_pid=$!
for _ in $(seq 100); do "$cli" --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done

numactl --cpunodebind=0 --membind=1 "$workload" --mb "$mib" --busy 0 --idle 3600 2>"$work/job.err" >/dev/null &
job_pid=$!
for _ in $(seq 600); do grep -q '^ready' "$work/job.err" && break; sleep 0.1; done
python3 - "$sock" "$job_pid" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall((json.dumps({"v": 1, "op": "register", "job": 1, "step": 0, "uid": 0, "pid": int(sys.argv[2]),
                       "task": 0, "cpus": "0-1", "policy": "none", "sensitivity": "low"}) + "\n").encode())
sys.exit(0 if json.loads(s.recv(65536)).get("ok") else 1)
PY
sleep 3 # the helper reads the job's numa_maps at its first samples

# More than the job has on S: the engine then takes the job whole (one migrate_pages), the same
# work as migratepages; the request "ends short" by design.
pages=$((mib * 256 * 2))
now_ns() { date +%s%N; }
mbps() { python3 -c "print($mib * 1048576 / ($2 - $1) * 1e3)"; } # MB/s from two ns stamps
on_node() { # MiB of the job's memory on node $1
  awk -v n="N$1=" '{ for (i = 1; i <= NF; i++) if (index($i, n) == 1) s += substr($i, length(n) + 1) } END { print int(s * 4 / 1024) }' "/proc/$job_pid/numa_maps"
}
helper_move() { # S D -> ns
  local t0 t1
  sleep 1 # untimed: the helper re-reads numa_maps every 500 ms here, so it sees the raw moves too
  t0=$(now_ns)
  "$cli" --socket "$sock" migrate --from "$1" --to "$2" --pages "$pages" >"$work/last.out"
  t1=$(now_ns)
  echo "$t0 $t1"
}
raw_move() {
  local t0 t1
  t0=$(now_ns)
  migratepages "$job_pid" "$1" "$2"
  t1=$(now_ns)
  echo "$t0 $t1"
}

declare -a helper_rates raw_rates first_ms
src=1 dst=2
for r in $(seq "$rounds"); do
  for who in $( ((r % 2)) && echo "helper raw" || echo "raw helper"); do
    [ "$(on_node "$src")" -ge $((mib * 95 / 100)) ] || { echo "migrate_helper: only $(on_node "$src") MiB on node $src before a move" >&2; exit 1; }
    if [ "$who" = helper ]; then
      read -r t0 t1 < <(helper_move "$src" "$dst")
      helper_rates+=("$(mbps "$t0" "$t1")")
    else
      read -r t0 t1 < <(raw_move "$src" "$dst")
      raw_rates+=("$(mbps "$t0" "$t1")")
    fi
    [ "$(on_node "$dst")" -ge $((mib * 95 / 100)) ] || { echo "migrate_helper: $who left only $(on_node "$dst") MiB on node $dst" >&2; exit 1; }
    tmp=$src src=$dst dst=$tmp
  done
  sleep 1
  t0=$(now_ns)
  "$cli" --socket "$sock" migrate --from "$src" --to "$dst" --pages 1 >/dev/null
  t1=$(now_ns)
  first_ms+=("$(python3 -c "print(($t1 - $t0) / 1e6)")")
  migratepages "$job_pid" "$dst" "$src" # the page back, so the next round starts whole on $src
done

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
h=$(median "${helper_rates[@]}") w=$(median "${raw_rates[@]}")
echo "| moved | rounds | raw migratepages MB/s (median) | numaplaced request MB/s (median) | ratio |"
echo "|---|---|---|---|---|"
printf '| %s MiB, node 1 <-> 2 | %s | %.0f | %.0f | %.3f |\n' "$mib" "$rounds" "$w" "$h" "$(python3 -c "print($h / $w)")"
echo
echo "raw MB/s per run: ${raw_rates[*]}"
echo "helper MB/s per run: ${helper_rates[*]}"
printf 'time from request to first page moved (one-page request, client wall clock incl. reply): median %.1f ms (runs: %s)\n' \
  "$(median "${first_ms[@]}")" "${first_ms[*]}"
