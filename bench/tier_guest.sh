#!/usr/bin/env bash
# Demotion's and promotion's throughput in the hbm guest (test/vm/run --layout hbm --kernel
# trixie: DRAM nodes 0-1 with the CPUs, HBM nodes 2-3 under them, tiered by the kernel from
# HMAT), beside a move between sockets in the same boot: bench_migrate moves a buffer HBM 2 ->
# DRAM 0 and back (demotion's move, then promotion's), then DRAM 1 -> DRAM 0 and back, each
# with numaplace's mover and the raw system calls alternated round by round. Under TCG the
# rates are the emulator's, not a machine's: what the run supports is the ratio within it
# (a move between tiers against one between sockets, the mover against the raw call).
# Results go to bench/RESULTS.md by hand, with the machine.
#   bash bench/tier_guest.sh [BUILD_DIR]      (default: build)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
cd "$top"
echo "host: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
exec test/vm/run --layout hbm --kernel trixie --prealloc --timeout 1500 -- env NUMAPLACE_BUILD="$build" bash -c "
  echo \"guest: \$(nproc) CPUs, \$(uname -r), \$(numactl --hardware | head -1)\"
  for t in /sys/devices/virtual/memory_tiering/memory_tier*; do echo \"\${t##*/}: nodes \$(cat \$t/nodelist)\"; done
  # As docs/migration.md advises where numaplaced moves tiers: the kernel's own movers off.
  echo 0 >/proc/sys/kernel/numa_balancing
  echo false >/sys/kernel/mm/numa/demotion_enabled
  for pair in '2 0' '1 0'; do
    set -- \$pair
    echo \"## bench_migrate --mib 128 --rounds 8 --from \$1 --to \$2 --thp no\"
    '$build/bench/bench_migrate' --mib 128 --rounds 8 --from \$1 --to \$2 --thp no
    echo
  done"
