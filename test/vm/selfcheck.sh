#!/usr/bin/env bash
# Inside the guest: is it the machine the layout describes? numactl and hwloc must both see the
# configured nodes, CPUs and distance matrix, and move_pages must really move memory.
#   selfcheck.sh 4node|8node|cpuless
set -u
layout=${1:?usage: selfcheck.sh 4node|8node|cpuless}
# shellcheck source=test/vm/checks.sh
source "$(dirname "$0")/checks.sh"

case $layout in
  4node) nodes=4 cpus="0 1|2 3|4 5|6 7" dist="10 21 21 30|21 10 30 21|21 30 10 21|30 21 21 10" ;;
  8node) nodes=8 cpus="0|1|2|3|4|5|6|7"
    dist="10 12 12 12 32 32 32 32|12 10 12 12 32 32 32 32|12 12 10 12 32 32 32 32|12 12 12 10 32 32 32 32|32 32 32 32 10 12 12 12|32 32 32 32 12 10 12 12|32 32 32 32 12 12 10 12|32 32 32 32 12 12 12 10" ;;
  cpuless) nodes=3 cpus="0 1|2 3|" dist="10 21 17|21 10 17|17 17 10" ;;
  *) echo "selfcheck: unknown layout '$layout' (accepted: 4node, 8node, cpuless)"; exit 2 ;;
esac

hw=$(numactl --hardware)
check "numactl: $nodes nodes" "available: $nodes nodes (0-$((nodes - 1)))" "$(head -1 <<<"$hw")"
got_cpus=$(for ((n = 0; n < nodes; n++)); do sed -n "s/^node $n cpus: *//p" <<<"$hw"; done | paste -sd'|' -)
check "numactl: CPUs per node" "$cpus" "$got_cpus"
got_dist=$(sed -n '/^node distances:/,$p' <<<"$hw" | tail -n +3 | sed 's/^ *[0-9]*: *//; s/  */ /g; s/ *$//' | paste -sd'|' -)
check "numactl: distance matrix" "$dist" "$got_dist"
check "hwloc: NUMA nodes" "$nodes" "$(lstopo-no-graphics --only numanode 2>/dev/null | grep -c NUMANode)"
got_hwloc_dist=$(lstopo-no-graphics --distances 2>/dev/null | sed -n '/Relative latency matrix/,$p' | tail -n +3 | sed 's/^ *[0-9]* *//; s/  */ /g; s/ *$//' | head -"$nodes" | paste -sd'|' -)
check "hwloc: distance matrix" "$dist" "$got_hwloc_dist"

# move_pages really moves: 64 MiB bound to node 1, migrated to the last node, read back.
last=$((nodes - 1))
# The process says when every page is touched: an emulated guest on a busy host takes more
# than a fixed wait (a 3-s sleep once read 1446 of the 16384 pages).
touched=$(mktemp -u)
numactl --membind=1 -- python3 -c 'import sys, time; b = bytearray(64 << 20); b[::4096] = b"\x01" * (len(b) // 4096); open(sys.argv[1], "w").close(); time.sleep(300)' "$touched" &
pid=$!
for _ in $(seq 600); do [ -e "$touched" ] && break; sleep 0.2; done
rm -f "$touched"
before=$(awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^N1=/) { split($i, kv, "="); s += kv[2] } } END { print s + 0 }' "/proc/$pid/numa_maps")
migratepages "$pid" 1 "$last"
after=$(awk -v n="N$last=" '{ for (i = 2; i <= NF; i++) if (index($i, n) == 1) { split($i, kv, "="); s += kv[2] } } END { print s + 0 }' "/proc/$pid/numa_maps")
kill "$pid" 2>/dev/null
check "move_pages: >= 16384 pages on node 1 before" yes "$([ "$before" -ge 16384 ] && echo yes || echo "no ($before)")"
check "move_pages: they are on node $last after migratepages" yes "$([ "$after" -ge 16384 ] && echo yes || echo "no ($after)")"

checks_end
